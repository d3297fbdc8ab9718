// The liveness token (an open-file-description lock in /dev/shm/.zipc-liveness):
// held per process incarnation, dropped by the kernel at death, not inherited
// across fork, and the /proc fallback (ZIPC_LIVENESS=proc) still works.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "core/liveness_file.hpp"
#include "zipc/process.hpp"
#include "zipc_test.hpp"

namespace zipc {
namespace liveness_token_test {
namespace {

using namespace std::chrono_literals;

// The liveness file exists before this program's first ProcessId::current()
// (a named /dev/shm segment would create it; these tests may take an
// identity first).
const bool kLivenessFileReady = (detail::prepare_liveness_file(), true);

bool eventually(const std::function<bool()>& cond) {
  for (int i = 0; i < 10000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// A word written by a child through a pipe.
std::uint64_t read_word(int fd) {
  std::uint64_t w = 0;
  return ::read(fd, &w, sizeof w) == static_cast<ssize_t>(sizeof w) ? w : 0;
}

TEST(LivenessToken, EveryProcessHoldsItsOwnTokenAndAChildsDiffersFromItsParents) {
  const ProcessId me = ProcessId::current();
  ASSERT_TRUE(me.has_token()) << "the liveness file "
                              << "/dev/shm/.zipc-liveness could not be used";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto child = test::spawn([&]() -> int {
    const std::uint64_t w = pack(ProcessId::current());
    (void)::write(fds[1], &w, sizeof w);
    for (;;) ::pause();
  });
  const std::uint64_t word = read_word(fds[0]);
  ASSERT_NE(word, 0u);
  EXPECT_TRUE(unpack(word).has_token());
  EXPECT_NE(unpack(word).start_time, me.start_time) << "the child kept its parent's token";
  EXPECT_TRUE(is_alive_packed(word));
  child.kill(SIGKILL);
  (void)child.wait();
  EXPECT_FALSE(is_alive_packed(word)) << "a killed and reaped child still counts as alive";
  EXPECT_TRUE(is_alive(me));
  ::close(fds[0]);
  ::close(fds[1]);
}

// Pitfall: a forked child inherits the lock's open file description. Were it
// kept, a dead parent would look alive for as long as its child lives.
TEST(LivenessToken, ParentThatDiedIsDeadWhileTheChildItForkedLivesOn) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto parent = test::spawn([&] {
    const std::uint64_t w = pack(ProcessId::current());  // the parent takes its token first
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      for (;;) ::pause();  // lives on, holding whatever it inherited
    }
    const std::uint64_t gc = static_cast<std::uint64_t>(grandchild);
    (void)::write(fds[1], &w, sizeof w);
    (void)::write(fds[1], &gc, sizeof gc);
    return 0;  // the parent exits; its grandchild stays
  });
  const std::uint64_t word = read_word(fds[0]);
  const auto grandchild = static_cast<pid_t>(read_word(fds[0]));
  ASSERT_NE(word, 0u);
  ASSERT_GT(grandchild, 0);
  EXPECT_EQ(parent.wait().exit_code, 0);
  EXPECT_TRUE(eventually([&] { return !is_alive_packed(word); }))
      << "the dead parent still looks alive: its forked child kept the lock";
  EXPECT_EQ(::kill(grandchild, 0), 0) << "the grandchild should still live";
  ::kill(grandchild, SIGKILL);
  ::close(fds[0]);
  ::close(fds[1]);
}

// Threads that take the identity at once in a fresh process all get the same
// one (a second token would be held by our own description and then probed
// as dead).
TEST(LivenessToken, ThreadsRacingForTheFirstIdentityShareOneToken) {
  auto child = test::spawn([]() -> int {
    constexpr int kThreads = 8;
    std::atomic<int> ready{0};
    std::array<std::uint64_t, kThreads> got{};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) {
        }
        got[static_cast<std::size_t>(i)] = pack(ProcessId::current());
      });
    }
    for (auto& t : threads) t.join();
    for (const std::uint64_t w : got) {
      if (w != got[0]) return 2;
      if (!is_alive_packed(w)) return 3;
    }
    return unpack(got[0]).has_token() ? 0 : 4;
  });
  const test::ChildResult r = child.wait();
  EXPECT_EQ(r.exit_code, 0) << "2: two identities, 3: own identity judged dead, 4: no token";
}

TEST(LivenessToken, ProcFallbackIdentityIsAliveUntilKilled) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto child = test::spawn([&]() -> int {
    ::setenv("ZIPC_LIVENESS", "proc", 1);
    const ProcessId id = ProcessId::current();  // first call in the child: reads the variable
    const std::uint64_t w = pack(id);
    (void)::write(fds[1], &w, sizeof w);
    for (;;) ::pause();
  });
  const std::uint64_t word = read_word(fds[0]);
  ASSERT_NE(word, 0u);
  EXPECT_FALSE(unpack(word).has_token()) << "ZIPC_LIVENESS=proc must give a start-time identity";
  EXPECT_EQ(unpack(word).pid, child.pid());
  EXPECT_TRUE(is_alive_packed(word));
  child.kill(SIGKILL);
  (void)child.wait();
  EXPECT_FALSE(is_alive_packed(word));
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(LivenessToken, TokenNobodyHoldsIsDeadAndOurOwnIsAlive) {
  const ProcessId me = ProcessId::current();
  ASSERT_TRUE(me.has_token());
  // Another token value (a different byte of the file): nobody holds it.
  const ProcessId other{me.pid, kLivenessTokenTag | ((me.start_time + 1) & (kLivenessTokenTag - 1))};
  EXPECT_FALSE(is_alive(other));
  EXPECT_FALSE(is_alive_packed(pack(other)));
  EXPECT_TRUE(is_alive_packed(pack(me)));
}

}  // namespace

}  // namespace liveness_token_test
}  // namespace zipc
