// The machine's own limits, measured in the same run as every benchmark, so
// results can be stated as ratios to what the hardware allows here and now.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zipc::bench {

struct Limits {
  double cacheline_rtt_ns = 0;                           // two processes, two CPUs, spinning on one line each way
  double cacheline_rtt_1cpu_yield_ns = 0;                // both on one CPU, yielding while they wait
  double futex_rtt_ns = 0;                               // futex wake round trip across CPUs (both sleep)
  std::map<std::size_t, double> memcpy_gbps;             // single thread, by copy size
  std::map<std::size_t, double> spsc_inproc_msgs_per_s;  // two threads, in-process ring, by message size
  std::map<std::size_t, double> xcore_copy_gbps;         // that ring's bytes/s for big messages, by size
  int cpus_used = 0;
  std::string note;  // e.g. "one CPU only: cross-CPU figures not measured"
};

struct LimitsOptions {
  std::vector<int> cpus;  // two CPUs to use; fewer: cross-CPU probes are skipped
  double scale = 1.0;     // >1 for longer, steadier runs (--full)
};

Limits measure_limits(const LimitsOptions& opt);

// The sizes the limits measure the in-process ring at (msgs/s), and the
// ring moving big messages at (the cross-core copy, GB/s).
inline constexpr std::array<std::size_t, 2> kRingSizes{8, 100};
inline constexpr std::array<std::size_t, 3> kXcoreSizes{3000, 65536, 262144};

// What a throughput row of `size` bytes is stated against: the in-process
// ring's msgs/s at the nearest of kRingSizes (rows up to 1 KiB), else the
// cross-core copy's GB/s at the nearest of kXcoreSizes.
struct ThroughputBasis {
  std::size_t size = 0;  // the ring's message size
  bool gbps = false;     // true: bytes/s (cross-core copy); false: msgs/s
};
ThroughputBasis throughput_basis(std::size_t size);

// A short run of that ring on cpu_a (producer) and cpu_b (consumer), tens
// of milliseconds: the harness takes one before and one after every
// two-process throughput run, for the same reason as the cache-line probe.
struct RingProbe {
  ThroughputBasis basis;
  double value = 0;         // msgs/s or GB/s, as basis says; 0 when it failed
  double payload_gbps = 0;  // big rows: the same ring at the row's own size doing
                            // the harness's payload work (fill, check every byte)
};
RingProbe ring_probe(std::size_t row_size, int cpu_a, int cpu_b);

// A short cache-line round-trip probe (a few milliseconds: 1,000 warm-up
// rounds, then the median of 40 batches of 50): two processes on cpu_a and
// cpu_b spinning on one line each way, or, with cpu_a == cpu_b, yielding to
// each other on that CPU. The harness brackets every latency run with it,
// because where the host places the two vCPUs changes within seconds. 0 when
// the probe's processes failed.
double cacheline_probe_ns(int cpu_a, int cpu_b);
// A short futex wake round-trip probe (about 30 ms here: 50 warm-up rounds,
// then the median of 400 round trips, each timed alone): two processes on
// cpu_a and cpu_b sleeping in zipc::Event (WaitStrategy::block) each way, as
// futex_rtt_ns but shorter. The harness brackets every latency run of a blocking row on two
// CPUs with it, and every extra program: a blocking hand-off is a wake-up,
// which no cache-line bounce measures. 0 when the probe's processes failed.
double futex_probe_ns(int cpu_a, int cpu_b);

// The latency probes by the name the probe log and the rows give them
// (`kind`, `probe_kind`): the cache-line round trip on two CPUs (busy and
// adaptive rows: what spinning can reach), on one CPU with sched_yield (every
// one-CPU row: each hand-off is a context switch, which blocking rows pay
// too), the futex round trip on two CPUs (blocking rows: a wake-up each way).
inline constexpr const char* kProbeCacheLine = "2cpu";
inline constexpr const char* kProbeYield = "1cpu-yield";
inline constexpr const char* kProbeFutex = "futex";
// The probe of that kind on those CPUs (ns; 0 when it failed).
double latency_probe_ns(const std::string& kind, int cpu_a, int cpu_b);

nlohmann::json to_json(const Limits& l);
Limits limits_from_json(const nlohmann::json& j);
std::string limits_table(const Limits& l);  // markdown

}  // namespace zipc::bench
