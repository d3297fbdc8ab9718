// The fallback WaitSet's readiness fd (no io_uring futex waits): a timerfd
// that is readable at once while something is reported, else every
// fallback_nap, so an epoll loop (level or edge) learns of a message sent
// by another thread without a blocking wait().
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "zipc/queue.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace waitset_fallback_fd_test {
namespace {

zipc::QueueOptions small_queue() {
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  return o;
}
std::span<const std::byte> bytes(const char* s) {
  return std::as_bytes(std::span(s, std::strlen(s)));
}
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

class FallbackReadinessFd : public ::testing::TestWithParam<bool> {};

TEST_P(FallbackReadinessFd, AnEpollLoopLearnsOfAMessageSentByAnotherThread) {
  const bool edge = GetParam();
  zipc::test::TempName qn("ws.fbfd");
  auto q = zipc::Queue::create(qn.str(), small_queue());
  zipc::WaitSetOptions wo;
  wo.force_fallback = true;
  zipc::WaitSet ws(wo);
  ASSERT_FALSE(ws.uses_io_uring());
  const auto qid = ws.attach(q);
  const int fd = ws.readiness_fd();
  ASSERT_GE(fd, 0) << "the fallback has a readiness fd";
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(ep, 0);
  epoll_event e{};
  e.events = EPOLLIN | (edge ? EPOLLET : 0u);
  ASSERT_EQ(::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e), 0);

  std::thread sender([&] {
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(q.try_send(bytes("late")), zipc::Status::ok);
  });
  bool got = false, silent = false, wrong = false;
  std::array<std::byte, 64> buf{};
  for (int wakes = 0; wakes < 100'000 && !got && !silent && !wrong; ++wakes) {
    epoll_event out{};
    int n;
    do n = ::epoll_wait(ep, &out, 1, 10'000);
    while (n < 0 && errno == EINTR);
    silent = n != 1;
    for (const zipc::Ready& r : ws.wait(0ns)) {
      wrong = r.id != qid || q.try_recv(buf).status != zipc::Status::ok;
      got = !wrong;
    }
  }
  sender.join();
  ::close(ep);
  EXPECT_FALSE(silent) << "the readiness fd stayed silent for 10 s";
  EXPECT_FALSE(wrong) << "a report that was not the queue's message";
  EXPECT_TRUE(got);
}

INSTANTIATE_TEST_SUITE_P(WaitSet, FallbackReadinessFd, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Edge" : "Level"; });

// With a long nap the fd's level is exact: readable while something is
// reported, not after a wait(0) that reported nothing (until the nap passes).
TEST(FallbackReadinessFdLevel, ReadableWhileReportedAndNotAfterAnEmptyWait) {
  zipc::test::TempName qn("ws.fblvl");
  auto q = zipc::Queue::create(qn.str(), small_queue());
  zipc::WaitSetOptions wo;
  wo.force_fallback = true;
  wo.fallback_nap = std::chrono::seconds(100);
  zipc::WaitSet ws(wo);
  (void)ws.attach(q);
  const int fd = ws.readiness_fd();
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(readable(fd)) << "readable at first, so that the loop's first wait(0) sets it right";
  EXPECT_TRUE(ws.wait(0ns).empty());
  EXPECT_FALSE(readable(fd)) << "nothing reported: silent until the nap passes";
  ASSERT_EQ(q.try_send(bytes("x")), zipc::Status::ok);
  ASSERT_EQ(ws.wait(0ns).size(), 1u);
  EXPECT_TRUE(readable(fd)) << "reported (level): readable";
  EXPECT_EQ(ws.wait(0ns).size(), 1u) << "still holds the message";
  EXPECT_TRUE(readable(fd));
  std::array<std::byte, 64> buf{};
  ASSERT_EQ(q.try_recv(buf).status, zipc::Status::ok);
  EXPECT_TRUE(ws.wait(0ns).empty());
  EXPECT_FALSE(readable(fd)) << "drained and looked at: not readable";
}

}  // namespace

}  // namespace waitset_fallback_fd_test
