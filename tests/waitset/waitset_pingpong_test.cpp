// zipc::WaitSet wake-up paths between two processes that both wait through a
// WaitSet: a ping-pong crosses the grace poll (the peer answers while the
// channel just drained is polled) and the armed io_uring wait (it answers
// later) over and over; no message may be lost, doubled or reordered, in
// either mode, with or without readiness_fd() asked for.
#include <gtest/gtest.h>
#include <poll.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <thread>

#include "zipc/queue.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::WaitSet;

namespace waitset_pingpong_test {
namespace {

constexpr std::uint64_t kRounds = 3000;

zipc::QueueOptions small_queue() {
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 8;
  return o;
}

// Takes the next message of q through ws: try, else wait (as a user's loop does).
bool next(WaitSet& ws, zipc::Queue& q, std::uint64_t* value) {
  std::array<std::byte, 64> buf{};
  for (int sleeps = 0; sleeps < 100; ++sleeps) {
    const zipc::IoResult r = q.try_recv(buf);
    if (r.status == zipc::Status::ok) {
      if (r.size != sizeof *value) return false;
      std::memcpy(value, buf.data(), sizeof *value);
      return true;
    }
    if (r.status != zipc::Status::empty) return false;
    (void)ws.wait(100ms);
  }
  return false;  // 10 s without the message: lost
}

bool put(zipc::Queue& q, std::uint64_t v) {
  return q.send(std::as_bytes(std::span(&v, 1)), 5s) == zipc::Status::ok;
}

struct Mode {
  bool fallback;
  bool readiness_fd;
  // Every n-th round the echo side sleeps first, so that the waiter is
  // asleep in the kernel (not in its grace poll) when the answer comes.
  std::uint64_t pause_every;
};

class WaitSetPingPong : public ::testing::TestWithParam<Mode> {};

TEST_P(WaitSetPingPong, EveryRoundTripArrivesOnceAndInOrder) {
  const Mode mode = GetParam();
  zipc::test::TempName ping_name("ws.pp.ping");
  zipc::test::TempName pong_name("ws.pp.pong");
  auto ping = zipc::Queue::create(ping_name.str(), small_queue(), zipc::Role::producer);
  auto pong = zipc::Queue::create(pong_name.str(), small_queue(), zipc::Role::consumer);
  zipc::WaitSetOptions wo;
  wo.force_fallback = mode.fallback;
  // The readiness fd is then readable for readiness alone (checked at the end).
  if (mode.readiness_fd) wo.maintenance_interval = 0ns;
  auto child = zipc::test::spawn([&] {
    auto in = zipc::Queue::open(ping_name.str(), zipc::Role::consumer);
    auto out = zipc::Queue::open(pong_name.str(), zipc::Role::producer);
    WaitSet ws(wo);
    (void)ws.attach(in);
    if (mode.readiness_fd) (void)ws.readiness_fd();
    for (std::uint64_t i = 0; i < kRounds; ++i) {
      std::uint64_t v = 0;
      if (!next(ws, in, &v)) return 1;
      if (v != i) return 2;
      if (mode.pause_every != 0 && i % mode.pause_every == 0) std::this_thread::sleep_for(200us);
      if (!put(out, v)) return 3;
    }
    return 0;
  });
  WaitSet ws(wo);
  (void)ws.attach(pong);
  const int fd = mode.readiness_fd ? ws.readiness_fd() : -1;
  for (std::uint64_t i = 0; i < kRounds; ++i) {
    ASSERT_TRUE(put(ping, i)) << "round " << i;
    std::uint64_t v = ~0ull;
    ASSERT_TRUE(next(ws, pong, &v)) << "round " << i << ": the answer never came";
    ASSERT_EQ(v, i) << "an answer lost, doubled or out of order";
  }
  EXPECT_EQ(child.wait().exit_code, 0);
  if (fd >= 0) {
    // Nothing left: after a wait(0) that saw nothing, the readiness fd is not readable.
    std::array<std::byte, 64> buf{};
    EXPECT_EQ(pong.try_recv(buf).status, zipc::Status::empty);
    EXPECT_TRUE(ws.wait(0ns).empty());
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 0), 0) << "readiness fd readable with nothing to report";
  }
}

INSTANTIATE_TEST_SUITE_P(WaitSet, WaitSetPingPong,
                         ::testing::Values(Mode{false, false, 0}, Mode{false, false, 7}, Mode{false, true, 5},
                                           Mode{true, false, 7}),
                         [](const ::testing::TestParamInfo<Mode>& i) {
                           std::string n = i.param.fallback ? "Fallback" : "IoUring";
                           if (i.param.readiness_fd) n += "WithReadinessFd";
                           if (i.param.pause_every != 0) n += "AndSleepingPeer";
                           return n;
                         });

}  // namespace

}  // namespace waitset_pingpong_test
