// WaitSet::readiness_fd under epoll, level- and edge-triggered, beside a pipe.
#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "zipc/queue.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace waitset_fd_test {
namespace {

std::span<const std::byte> bytes(const char* s) {
  return std::as_bytes(std::span(s, std::strlen(s)));
}

struct EpollLoop {
  int ep = epoll_create1(EPOLL_CLOEXEC);
  ~EpollLoop() { close(ep); }
  void add(int fd, std::uint32_t events) {
    epoll_event e{};
    e.events = events;
    e.data.fd = fd;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e), 0);
  }
  // The fds epoll reports within timeout_ms.
  std::vector<int> wait(int timeout_ms) {
    std::array<epoll_event, 8> ev{};
    // The WaitSet's completions run as task work of the thread that armed
    // them, which interrupts its blocking calls (EINTR): retry, as every loop does.
    int n;
    do n = epoll_wait(ep, ev.data(), 8, timeout_ms);
    while (n < 0 && errno == EINTR);
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) fds.push_back(ev[static_cast<std::size_t>(i)].data.fd);
    return fds;
  }
};

bool contains(const std::vector<int>& v, int fd) {
  return std::find(v.begin(), v.end(), fd) != v.end();
}

class ReadinessFd : public ::testing::TestWithParam<bool> {};

TEST_P(ReadinessFd, EpollWakesOnAQueueBesideAPipe) {
  const bool edge = GetParam();
  zipc::test::TempName qn("ws.fd");
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  auto q = zipc::Queue::create(qn.str(), o);
  zipc::WaitSetOptions wo;
  wo.maintenance_interval = std::chrono::nanoseconds(0);  // readable for readiness alone (exactly checked below)
  zipc::WaitSet ws(wo);
  if (!ws.uses_io_uring()) GTEST_SKIP() << "fallback mode has no readiness fd";
  const auto qid = ws.attach(q);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EpollLoop loop;
  loop.add(ws.readiness_fd(), EPOLLIN | (edge ? EPOLLET : 0u));
  loop.add(p[0], EPOLLIN);
  EXPECT_TRUE(loop.wait(20).empty()) << "nothing ready yet";

  std::thread t([&] {
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(q.try_send(bytes("one")), zipc::Status::ok);
  });
  auto fds = loop.wait(10'000);
  t.join();
  ASSERT_TRUE(contains(fds, ws.readiness_fd()));
  EXPECT_FALSE(contains(fds, p[0]));
  auto r = ws.wait(0ns);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, qid);
  // Not drained: level mode keeps reporting the fd; edge mode reported it once.
  fds = loop.wait(20);
  EXPECT_EQ(contains(fds, ws.readiness_fd()), !edge);
  std::array<std::byte, 64> buf{};
  ASSERT_EQ(q.try_recv(buf).status, zipc::Status::ok);
  EXPECT_TRUE(ws.wait(0ns).empty());
  fds = loop.wait(20);
  EXPECT_FALSE(contains(fds, ws.readiness_fd())) << "drained and looked at: not readable";

  // The pipe alone, then the queue again: each is told apart.
  ASSERT_EQ(write(p[1], "x", 1), 1);
  fds = loop.wait(10'000);
  EXPECT_TRUE(contains(fds, p[0]));
  EXPECT_FALSE(contains(fds, ws.readiness_fd()));
  ASSERT_EQ(q.try_send(bytes("two")), zipc::Status::ok);
  fds = loop.wait(10'000);
  EXPECT_TRUE(contains(fds, ws.readiness_fd()));
  r = ws.wait(0ns);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, qid);
  close(p[0]);
  close(p[1]);
}

INSTANTIATE_TEST_SUITE_P(WaitSet, ReadinessFd, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("Edge") : std::string("Level"); });

// readiness_fd() asked for only after blocking waits (its upkeep starts at
// the first call): it is readable while the channel is reported, stops being
// readable once wait(0) finds it drained, and a later send wakes epoll.
TEST(ReadinessFdLate, AskedForAfterBlockingWaitsItKeepsTheLevelFromThenOn) {
  zipc::test::TempName qn("ws.fd.late");
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  auto q = zipc::Queue::create(qn.str(), o);
  zipc::WaitSetOptions wo;
  wo.maintenance_interval = std::chrono::nanoseconds(0);  // readable for readiness alone
  zipc::WaitSet ws(wo);
  if (!ws.uses_io_uring()) GTEST_SKIP() << "fallback mode: tests/waitset/waitset_fallback_fd_test.cpp";
  const auto qid = ws.attach(q);
  std::array<std::byte, 64> buf{};
  for (int i = 0; i < 3; ++i) {  // blocking waits, nobody asked for the fd
    std::thread t([&] {
      std::this_thread::sleep_for(5ms);
      EXPECT_EQ(q.try_send(bytes("b")), zipc::Status::ok);
    });
    const auto r = ws.wait(10s);
    t.join();
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(q.try_recv(buf).status, zipc::Status::ok);
  }
  ASSERT_EQ(q.try_send(bytes("kept")), zipc::Status::ok);
  ASSERT_EQ(ws.wait(10s).size(), 1u);  // reported, not read

  EpollLoop loop;
  loop.add(ws.readiness_fd(), EPOLLIN);
  EXPECT_TRUE(contains(loop.wait(1000), ws.readiness_fd())) << "a channel is reported: readable";
  ASSERT_EQ(ws.wait(0ns).size(), 1u);
  ASSERT_EQ(q.try_recv(buf).status, zipc::Status::ok);
  EXPECT_TRUE(ws.wait(0ns).empty());
  EXPECT_FALSE(contains(loop.wait(20), ws.readiness_fd())) << "drained and looked at: not readable";
  std::thread t([&] {
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(q.try_send(bytes("later")), zipc::Status::ok);
  });
  const auto fds = loop.wait(10'000);
  t.join();
  EXPECT_TRUE(contains(fds, ws.readiness_fd())) << "a later send wakes the loop";
  const auto r = ws.wait(0ns);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, qid);
}

}  // namespace

}  // namespace waitset_fd_test
