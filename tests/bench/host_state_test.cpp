// The host-state probes of the harness (bench/host_state.hpp).
#include "host_state.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

using zipc::bench::memory_read_gbps;
using zipc::bench::parse_steal_ms;
using zipc::bench::steal_ms;

TEST(HostState, StealIsTheEighthValueOfTheCpuLineInClockTicks) {
  const std::string stat =
      "cpu  4705 356 584 3699176 23 0 12 250 0 0\n"
      "cpu0 1393 280 255 1845136 10 0 7 125 0 0\n"
      "intr 1462898 0\n";
  EXPECT_DOUBLE_EQ(parse_steal_ms(stat, 100), 2500.0);
  EXPECT_DOUBLE_EQ(parse_steal_ms(stat, 1000), 250.0);
}

TEST(HostState, StealIsUnknownWithoutACompleteCpuLine) {
  EXPECT_LT(parse_steal_ms("cpu0 1 2 3 4 5 6 7 8\n", 100), 0);  // per-CPU lines only
  EXPECT_LT(parse_steal_ms("cpu  1 2 3 4 5\n", 100), 0);        // a kernel without steal
  EXPECT_LT(parse_steal_ms("", 100), 0);
  EXPECT_LT(parse_steal_ms("cpu  1 2 3 4 5 6 7 8\n", 0), 0);
}

TEST(HostState, ThisMachinesStealTimeIsReadAndNeverGoesBack) {
  const double a = steal_ms();
  ASSERT_GE(a, 0) << "/proc/stat has no steal value";
  EXPECT_GE(steal_ms(), a);
}

TEST(HostState, MemoryBandwidthIsMeasured) {
  const double gbps = memory_read_gbps();
  // Any machine this runs on reads memory at more than 0.1 GB/s and less
  // than 10 TB/s; outside that the probe's timing or arithmetic is broken.
  EXPECT_GT(gbps, 0.1);
  EXPECT_LT(gbps, 10000.0);
}
