// A hostile process overwrites the queue's segment with random bytes while
// others send and receive. Calls may fail (corrupt, timeout, ...), but nobody
// crashes, hangs, or touches memory outside the mapping (run under ASan).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "queue_test_util.hpp"
#include "zipc/queue.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Queue;
using zipc::Role;

namespace queue_scribble_test {
namespace {

using Clock = std::chrono::steady_clock;

double run_seconds() {
  return 0.5 * zipc::test::stress_scale();
}

int producer_body(const std::string& name, Clock::time_point end) {
  auto q = Queue::open(name, Role::producer);
  std::vector<std::byte> buf(q.block_size(), std::byte{0x5a});
  std::uint64_t i = 0;
  while (Clock::now() < end) {
    switch (i++ % 4) {
      case 0: (void)q.send(std::span(buf).first(i % buf.size()), 2ms); break;
      case 1:
        if (auto loan = q.reserve(2ms)) {
          std::memset(loan.data().data(), 0x33, loan.size());  // every byte the loan promises
          (void)loan.commit(loan.size() / 2);
        }
        break;
      case 2: {
        std::span<const std::byte> one(buf);
        std::vector<std::span<const std::byte>> msgs(5, one);
        (void)q.send_batch(msgs, 2ms);
        break;
      }
      default: (void)q.recover();
    }
  }
  (void)q.stats();
  return 0;
}

int consumer_body(const std::string& name, Clock::time_point end) {
  auto q = Queue::open(name, Role::consumer);
  std::vector<std::byte> buf(q.block_size());
  std::uint64_t i = 0, sum = 0;
  while (Clock::now() < end) {
    switch (i++ % 3) {
      case 0: {
        auto r = q.recv(buf, 2ms);
        if (r.ok()) sum += static_cast<std::uint8_t>(buf[r.size / 2]);
        break;
      }
      case 1:
        if (auto loan = q.acquire(2ms)) {
          for (std::size_t k = 0; k < loan.size(); ++k) sum += static_cast<std::uint8_t>(loan.data()[k]);
        }
        break;
      default:
        (void)q.recv_batch(8, 2ms, [&](std::span<const std::byte> m) {
          for (std::byte b : m) sum += static_cast<std::uint8_t>(b);
        });
    }
  }
  (void)q.size_approx();
  volatile std::uint64_t sink = sum;  // keeps the reads; only surviving matters
  (void)sink;
  return 0;
}

int scribbler_body(const std::string& name, Clock::time_point end, std::uint64_t seed) {
  auto seg = zipc::Segment::open(name, zipc::SegmentKind::queue);
  std::mt19937_64 rng(seed);
  std::byte* p = seg.payload();
  const std::size_t n = seg.payload_size();
  while (Clock::now() < end) {
    const std::size_t at = rng() % n;
    const std::size_t len = std::min<std::size_t>(1 + rng() % 16, n - at);
    for (std::size_t k = 0; k < len; ++k) p[at + k] = static_cast<std::byte>(rng());
    if (rng() % 64 == 0) std::this_thread::sleep_for(50us);
  }
  return 0;
}

void scribble(const zipc::test::QueueMode& mode) {
  zipc::test::TempName name("qx");
  auto opt = zipc::test::queue_options(mode, 16, 64);
  opt.recovery_time = 5ms;
  auto sut = Queue::create(name.str(), opt, Role::none);
  const auto end =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(run_seconds()));
  const std::uint64_t seed = zipc::test::test_seed();
  auto prod = zipc::test::spawn([&] { return producer_body(name.str(), end); });
  auto cons = zipc::test::spawn([&] { return consumer_body(name.str(), end); });
  auto scr = zipc::test::spawn([&] { return scribbler_body(name.str(), end, seed); });
  for (auto* k : {&prod, &cons, &scr}) {
    auto r = k->wait(std::chrono::seconds(120));
    EXPECT_TRUE(r.exited) << "signal " << r.signal << (r.timed_out ? " (hung)" : "") << " " << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  (void)sut.stats();
  (void)sut.recover();
}

}  // namespace

TEST(QueueScribble, RandomBytesOverASingleModeQueueCauseErrorsOnlyNeverCrashes) {
  scribble(zipc::test::kSpsc);
}
TEST(QueueScribble, RandomBytesOverAMultiModeQueueCauseErrorsOnlyNeverCrashes) {
  scribble(zipc::test::kMpmc);
}

}  // namespace queue_scribble_test
