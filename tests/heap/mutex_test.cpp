#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "heap_support.hpp"
#include "zipc/heap.hpp"
#include "zipc/mutex.hpp"

using namespace std::chrono_literals;
using zipc::Heap;
using zipc::LockResult;

namespace mutex_test {
namespace {
struct Shared {
  zipc::Mutex mutex;
  zipc::SpinLock spin;
  zipc::ConditionVariable cv;
  std::uint64_t counter = 0;       // guarded by mutex
  std::uint64_t spin_counter = 0;  // guarded by spin
  int flag = 0;
};
}  // namespace

TEST(HeapMutex, NextLockerAfterAHolderDiesGetsTheLockWithOwnerDied) {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 1 << 16);
  auto* sut = heap.construct<zipc::Mutex>("m");
  auto child = zipc::test::spawn([&] {
    auto h = Heap::open(name.str());
    (void)h.find<zipc::Mutex>("m")->lock();
    ::_exit(0);  // dies holding it
    return 0;
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  EXPECT_EQ(sut->lock(), LockResult::owner_died);
  EXPECT_TRUE(sut->inconsistent());
  sut->unlock();
  // Not marked consistent: the next locker is told too, and the lock still works.
  EXPECT_EQ(sut->lock(), LockResult::owner_died);
  sut->mark_consistent();
  sut->unlock();
  EXPECT_EQ(sut->lock(), LockResult::acquired);
  sut->unlock();
}

TEST(HeapMutex, AHolderKilledBySigkillDoesNotBlockTheOthers) {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 1 << 16);
  auto* sut = heap.construct<zipc::Mutex>("m");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto child = zipc::test::spawn([&] {
    (void)sut->lock();
    char c = 1;
    (void)!::write(fds[1], &c, 1);
    for (;;) std::this_thread::sleep_for(1s);
    return 0;
  });
  char c;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  EXPECT_EQ(sut->try_lock_for(10ms), LockResult::timeout);
  child.kill(SIGKILL);
  (void)child.wait();
  EXPECT_EQ(sut->lock(), LockResult::owner_died);
  sut->mark_consistent();
  sut->unlock();
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(HeapMutex, MutexAndSpinLockExcludeEachOtherAcrossProcesses) {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 1 << 16);
  auto* sut = heap.construct<Shared>("s");
  const int n = zipc::test::scaled(20000);
  std::vector<zipc::test::Child> kids;
  for (int k = 0; k < 3; ++k) {
    kids.push_back(zipc::test::spawn([&] {
      for (int i = 0; i < n; ++i) {
        {
          std::lock_guard g(sut->mutex);
          sut->counter = sut->counter + 1;
        }
        {
          std::lock_guard g(sut->spin);
          sut->spin_counter = sut->spin_counter + 1;
        }
      }
      return 0;
    }));
  }
  for (auto& k : kids) EXPECT_EQ(k.wait().exit_code, 0);
  EXPECT_EQ(sut->counter, 3u * static_cast<unsigned>(n));
  EXPECT_EQ(sut->spin_counter, 3u * static_cast<unsigned>(n));
}

TEST(HeapSpinLock, ALockWhoseHoldingProcessDiedIsTakenOverWithOwnerDied) {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 1 << 16);
  auto* sut = heap.construct<zipc::SpinLock>("s");
  auto child = zipc::test::spawn([&] {
    (void)sut->lock();
    return 0;  // exits holding it
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  EXPECT_FALSE(sut->try_lock());
  EXPECT_EQ(sut->lock(), LockResult::owner_died);
  sut->unlock();
  EXPECT_EQ(sut->lock(), LockResult::acquired);
  sut->unlock();
}

TEST(HeapConditionVariable, AWaiterInOneProcessIsWokenByANotifyInAnother) {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 1 << 16);
  auto* s = heap.construct<Shared>("s");
  auto child = zipc::test::spawn([&] {
    std::this_thread::sleep_for(20ms);
    (void)s->mutex.lock();
    s->flag = 1;
    s->mutex.unlock();
    s->cv.notify_all();
    return 0;
  });
  (void)s->mutex.lock();
  const bool seen = s->cv.wait_for(s->mutex, 30s, [&] { return s->flag == 1; });
  s->mutex.unlock();
  EXPECT_TRUE(seen);
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(HeapConditionVariable, WaitForReturnsTimeoutWithTheMutexHeldAgain) {
  zipc::Mutex m;
  zipc::ConditionVariable sut;
  ASSERT_EQ(m.lock(), LockResult::acquired);
  EXPECT_EQ(sut.wait_for(m, 5ms), LockResult::timeout);
  EXPECT_FALSE(m.try_lock());  // still held by us
  m.unlock();
}

TEST(HeapSpinLock, TryLockForTimesOutWhileAnotherProcessHoldsIt) {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 1 << 16);
  auto* sut = heap.construct<zipc::SpinLock>("s");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto child = zipc::test::spawn([&] {
    (void)sut->lock();
    char c = 1;
    (void)!::write(fds[1], &c, 1);
    for (;;) std::this_thread::sleep_for(1s);
    return 0;
  });
  char c;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  EXPECT_EQ(sut->try_lock_for(5ms), LockResult::timeout);
  child.kill(SIGKILL);
  (void)child.wait();
  EXPECT_EQ(sut->lock(), LockResult::owner_died);
  sut->unlock();
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace mutex_test
