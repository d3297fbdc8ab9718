// Liveness across PID namespaces (issue [access], first part): participants
// in a new PID namespace (pid 1 there, with its own /proc) and in the host
// namespace share one queue, topic, Rpc service and heap through /dev/shm.
// No live peer is ever recovered as dead; a SIGKILLed one is recovered as
// before; what `zipc gc` reads (SegmentInfo::creator_alive) agrees. Skipped
// when this machine does not permit unshare(CLONE_NEWPID | CLONE_NEWNS).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "core/liveness_file.hpp"
#include "liveness_support.hpp"
#include "pid_namespace_support.hpp"
#include "zipc/heap.hpp"
#include "zipc/introspect.hpp"
#include "zipc/mutex.hpp"
#include "zipc/process.hpp"
#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/segment.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

namespace zipc {
namespace pid_namespace_test {
namespace {

using namespace std::chrono_literals;

// The liveness file exists before this program's first ProcessId::current()
// (a named /dev/shm segment would create it; these tests may take an
// identity first).
const bool kLivenessFileReady = (detail::prepare_liveness_file(), true);
using test::eventually;
using test::NsChild;

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// Starts body in a new PID namespace and waits for it to say ready; skips the
// test when namespaces are not permitted.
#define ZIPC_START_IN_NEW_PID_NAMESPACE(ns, body)           \
  do {                                                      \
    test::spawn_in_new_pid_namespace(ns, body);             \
    std::string why_;                                       \
    if (!(ns).wait_ready(why_)) {                           \
      if ((ns).flags[1].load() == 2) GTEST_SKIP() << why_;  \
      FAIL() << why_ << ": " << (ns).child.wait(1s).output; \
    }                                                       \
  } while (0)

TEST(PidNamespace, ProcessInAnotherPidNamespaceIsAliveUntilKilledThoughItsPidMeansNothingHere) {
  NsChild ns;
  const std::int32_t host_pid = ProcessId::current().pid;
  ZIPC_START_IN_NEW_PID_NAMESPACE(ns, [&]() {
    // Inside: we are pid 1, and the host's pid is not in our /proc (the old
    // /proc check would call the host process dead).
    if (::getpid() != 1) return 2;
    if (is_alive(ProcessId{host_pid, 0})) return 3;
    ns.flags[4].store(pack(ProcessId::current()));
    ns.flags[2].store(1);
    test::hold_until_stopped(ns.flags);
    return 0;
  });
  const std::uint64_t word = ns.flags[4].load();
  EXPECT_EQ(unpack(word).pid, 1) << "the pid recorded is the one of the child's own namespace";
  EXPECT_TRUE(unpack(word).has_token()) << "the child could not use the liveness file";
  EXPECT_TRUE(is_alive_packed(word));
  ns.kill_and_reap();
  EXPECT_TRUE(eventually([&] { return !is_alive_packed(word); }, 10s)) << "a killed process stays alive";
}

TEST(PidNamespace, QueueRecoverFromTheHostNeverTakesBackAMessageHeldInAnotherNamespace) {
  test::TempName name("pidns.q");
  QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  o.recovery_time = 10ms;
  Queue q = Queue::create(name.str(), o);
  ASSERT_EQ(q.try_send(bytes("held")), Status::ok);
  NsChild ns;
  ZIPC_START_IN_NEW_PID_NAMESPACE(ns, [&]() {
    Queue mine = Queue::open(name.str(), Role::consumer);
    QueueReadLoan loan = mine.acquire(5s);
    if (!loan) return 2;
    ns.flags[2].store(1);
    test::hold_until_stopped(ns.flags);
    return 0;
  });
  std::size_t recovered = 0;
  for (int i = 0; i < 20; ++i) {
    recovered += q.recover();
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(recovered, 0u) << "recover() took back a message from a live consumer in another PID namespace";
  const ChannelReport r = inspect_channel(name.str());
  EXPECT_EQ(r.dead_count(), 0u) << "a live participant in another namespace is reported dead";
  ns.kill_and_reap();
  EXPECT_TRUE(eventually([&] { return (recovered += q.recover()) == 1; }, 10s))
      << "the killed consumer's message was not recovered (recovered " << recovered << ")";
}

TEST(PidNamespace, QueueRecoverInsideANamespaceNeverTakesBackAMessageHeldOnTheHost) {
  test::TempName name("pidns.qr");
  QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  o.recovery_time = 10ms;
  Queue q = Queue::create(name.str(), o);
  ASSERT_EQ(q.try_send(bytes("held")), Status::ok);
  test::SharedFlags holder_flags(1);
  test::Child holder = test::spawn([&]() {
    Queue mine = Queue::open(name.str(), Role::consumer);
    QueueReadLoan loan = mine.acquire(5s);
    if (!loan) return 2;
    holder_flags[0].store(1);
    for (;;) ::pause();
  });
  ASSERT_TRUE(eventually([&] { return holder_flags[0].load() != 0; }, 30s));
  NsChild ns;
  ZIPC_START_IN_NEW_PID_NAMESPACE(ns, [&]() {
    Queue mine = Queue::open(name.str(), Role::none);
    std::size_t n = 0;
    for (int i = 0; i < 20; ++i) {
      n += mine.recover();
      std::this_thread::sleep_for(20ms);
    }
    ns.flags[4].store(n + 1);  // recovered while the holder lived, plus one
    ns.flags[2].store(1);
    test::hold_until_stopped(ns.flags);  // the host kills the holder meanwhile
    const bool got = eventually([&] { return (n += mine.recover()) >= 1; }, 10s);
    ns.flags[5].store(n + 1);
    return got ? 0 : 4;
  });
  EXPECT_EQ(ns.flags[4].load(), 1u) << "recover() in the namespace took back a message from a live host consumer";
  holder.kill(SIGKILL);
  (void)holder.wait();
  ns.flags[3].store(1);
  const test::ChildResult r = ns.child.wait(30s);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << "exit " << r.exit_code << ": " << r.output;
  EXPECT_EQ(ns.flags[5].load(), 2u) << "the killed host consumer's message was not recovered from the namespace";
}

TEST(PidNamespace, SinglePublisherTopicRefusesASecondPublisherWhileTheOneInAnotherNamespaceLives) {
  test::TempName name("pidns.t");
  TopicOptions o;
  o.capacity_bytes = 1 << 16;
  o.max_message_size = 256;
  Topic t = Topic::create(name.str(), o);
  NsChild ns;
  ZIPC_START_IN_NEW_PID_NAMESPACE(ns, [&]() {
    Topic mine = Topic::open(name.str(), o);
    Publisher pub = mine.publisher();
    Subscriber sub = mine.subscribe({From::oldest(), Delivery::reliable});
    if (pub.try_publish(bytes("from the namespace")).status != Status::ok) return 2;
    ns.flags[2].store(1);
    test::hold_until_stopped(ns.flags);
    return 0;
  });
  const ChannelReport r = inspect_channel(name.str());
  EXPECT_EQ(r.participants.size(), 2u);
  EXPECT_EQ(r.dead_count(), 0u) << "a live publisher or subscriber in another namespace is reported dead";
  try {
    Publisher second = t.publisher();
    ADD_FAILURE() << "a second single publisher replaced the live one in another PID namespace";
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::busy) << e.what();
  }
  Subscriber here = t.subscribe({From::oldest(), Delivery::reliable});
  std::array<std::byte, 256> buf{};
  EXPECT_EQ(here.read(buf, 1s).status, Status::ok);
  ns.kill_and_reap();
  EXPECT_NO_THROW({ Publisher replacement = t.publisher(); }) << "the killed publisher was not replaced";
  EXPECT_EQ(inspect_channel(name.str()).alive_count(), 1u) << "only our subscriber lives now";
}

TEST(PidNamespace, RpcServerNeverReapsALiveClientInAnotherNamespaceAndReapsItOnceKilled) {
  test::TempName name("pidns.rpc");
  RpcOptions o;
  o.recovery_time = 20ms;
  RpcServer server = RpcServer::create(name.str(), o);
  NsChild ns;
  ZIPC_START_IN_NEW_PID_NAMESPACE(ns, [&]() {
    RpcClient client = RpcClient::connect(name.str(), 5s);
    ns.flags[2].store(1);
    test::hold_until_stopped(ns.flags);
    return 0;
  });
  const auto end = std::chrono::steady_clock::now() + 1s;  // many reap intervals
  while (std::chrono::steady_clock::now() < end) (void)server.next(10ms);
  EXPECT_EQ(server.reaped_clients(), 0u) << "a live client in another PID namespace was reaped";
  EXPECT_EQ(server.connected_clients(), 1u);
  ns.kill_and_reap();
  EXPECT_TRUE(eventually(
      [&] {
        (void)server.next(10ms);
        return server.reaped_clients() == 1;
      },
      10s))
      << "the killed client was never reaped";
}

TEST(PidNamespace, RpcServiceInAnotherNamespaceAnswersAndKeepsItsNameWhileItLives) {
  test::TempName name("pidns.rpcs");
  NsChild ns;
  ZIPC_START_IN_NEW_PID_NAMESPACE(ns, [&]() {
    RpcServer server = RpcServer::create(name.str());
    ns.flags[2].store(1);
    while (ns.flags[3].load() == 0) {
      RpcRequest req = server.next(10ms);
      if (req) (void)req.reply(req.data());
    }
    return 0;
  });
  RpcClient client = RpcClient::connect(name.str(), 5s);
  const RpcResponse resp = client.call(bytes("ping"), 5s);
  EXPECT_TRUE(resp.ok()) << "status " << static_cast<int>(resp.status());
  EXPECT_THROW({ RpcServer other = RpcServer::create(name.str()); }, Error)
      << "a second server took the name of a live server in another PID namespace";
  ns.kill_and_reap();
  EXPECT_NO_THROW({ RpcServer replacement = RpcServer::create(name.str()); })
      << "the killed server's name was not taken over";
}

TEST(PidNamespace, HeapLockHeldInAnotherNamespaceIsNotStolenAndIsTakenOverOnceItsHolderIsKilled) {
  test::TempName name("pidns.heap");
  Heap h = Heap::create(name.str(), 1 << 20);
  SpinLock* lock = h.find_or_construct<SpinLock>("lock");
  ASSERT_NE(lock, nullptr);
  NsChild ns;
  ZIPC_START_IN_NEW_PID_NAMESPACE(ns, [&]() {
    Heap mine = Heap::open(name.str());
    SpinLock* l = mine.find<SpinLock>("lock");
    if (l == nullptr || l->lock() != LockResult::acquired) return 2;
    void* block = mine.allocate(100);  // the allocator's own lock, across namespaces
    if (block == nullptr) return 3;
    ns.flags[2].store(1);
    test::hold_until_stopped(ns.flags);
    return 0;
  });
  const LockResult early = lock->try_lock_for(300ms);
  EXPECT_EQ(early, LockResult::timeout) << "the lock of a live holder was taken";
  if (holds(early)) lock->unlock();  // (only when the test already failed) do not deadlock below
  void* block = h.allocate(100);
  EXPECT_NE(block, nullptr);
  EXPECT_EQ(h.stats().repairs, 0u) << "the heap was repaired after a live process in another namespace";
  ns.kill_and_reap();
  EXPECT_EQ(lock->lock(), LockResult::owner_died);
  lock->unlock();
  EXPECT_EQ(h.deallocate(block), HeapStatus::ok);
}

TEST(PidNamespace, GcSeesTheCreatorInAnotherNamespaceAliveUntilItIsKilled) {
  test::TempName name("pidns.gc");
  NsChild ns;
  ZIPC_START_IN_NEW_PID_NAMESPACE(ns, [&]() {
    Queue q = Queue::create(name.str(), QueueOptions{});
    ns.flags[2].store(1);
    test::hold_until_stopped(ns.flags);
    return 0;
  });
  // `zipc gc --dead` removes a valid segment only when !creator_alive.
  SegmentInfo info = Segment::inspect(name.str());
  EXPECT_TRUE(info.valid) << info.problem;
  EXPECT_TRUE(info.creator_alive) << "gc --dead would remove the segment of a live creator in another namespace";
  bool listed = false;
  for (const SegmentInfo& s : Segment::list()) {
    if (s.name == name.str()) {
      listed = true;
      EXPECT_TRUE(s.creator_alive);
    }
  }
  EXPECT_TRUE(listed);
  ns.kill_and_reap();
  EXPECT_TRUE(eventually([&] { return !Segment::inspect(name.str()).creator_alive; }, 10s))
      << "gc --dead would never collect the segment of a killed creator";
}

}  // namespace

}  // namespace pid_namespace_test
}  // namespace zipc
