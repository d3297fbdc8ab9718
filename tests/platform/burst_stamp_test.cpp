// platform::BurstStamp: cheap realtime stamps for bursts of events.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"

using zipc::platform::BurstStamp;
using zipc::platform::realtime_ns;

namespace burst_stamp_test {
namespace {

// Calls now() until the tick rate is calibrated (two readings >= 1 ms apart).
void calibrate(BurstStamp& sut) {
  (void)sut.now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  (void)sut.now();
}

}  // namespace

TEST(BurstStamp, EveryStampLiesBetweenOneWindowBeforeTheCallAndItsEnd) {
  BurstStamp sut;
  calibrate(sut);
  // Slack for tick-rate calibration error and the unordered tick read.
  constexpr std::uint64_t kSlackNs = 2000;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t before = realtime_ns();
    const std::uint64_t stamp = sut.now();
    const std::uint64_t after = realtime_ns();
    ASSERT_LE(stamp, after) << "call " << i;
    ASSERT_GE(stamp + BurstStamp::kWindowNs + kSlackNs, before) << "call " << i;
  }
}

TEST(BurstStamp, StampsNeverGoBackwards) {
  BurstStamp sut;
  std::uint64_t last = 0;
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t stamp = sut.now();
    ASSERT_GE(stamp, last) << "call " << i;
    last = stamp;
    if (i == 1000) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // lets it calibrate
  }
}

TEST(BurstStamp, ABurstReusesReadingsWhereTheTickCounterIsInvariant) {
  if (!zipc::platform::cpu_ticks_invariant()) GTEST_SKIP() << "no invariant tick counter: every call reads the clock";
  BurstStamp sut;
  calibrate(sut);
  // Two calls back to back lie within one window (1 us) unless the thread is
  // preempted between them, even under a sanitizer: the second reuses the
  // first's reading. (Nothing else in the loop: an allocation per call under
  // TSan took a whole window, and the calls of a loop with it came out distinct.)
  constexpr int kPairs = 10000;
  int reused = 0;
  for (int i = 0; i < kPairs; ++i) {
    const std::uint64_t first = sut.now();
    const std::uint64_t second = sut.now();
    if (second == first) ++reused;
  }
  EXPECT_GT(reused, kPairs / 2);
}

TEST(BurstStamp, AfterAPauseTheStampIsFresh) {
  BurstStamp sut;
  calibrate(sut);
  (void)sut.now();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const std::uint64_t before = realtime_ns();
  EXPECT_GE(sut.now(), before);
}

}  // namespace burst_stamp_test
