// The machine's own limits, measured in the same run as every benchmark, so
// results can be stated as ratios to what the hardware allows here and now.
#pragma once

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

// A short cache-line round-trip probe (a few milliseconds: 1,000 warm-up
// rounds, then the median of 40 batches of 50): two processes on cpu_a and
// cpu_b spinning on one line each way, or, with cpu_a == cpu_b, yielding to
// each other on that CPU. The harness brackets every latency run with it,
// because where the host places the two vCPUs changes within seconds. 0 when
// the probe's processes failed.
double cacheline_probe_ns(int cpu_a, int cpu_b);
nlohmann::json to_json(const Limits& l);
Limits limits_from_json(const nlohmann::json& j);
std::string limits_table(const Limits& l);  // markdown

}  // namespace zipc::bench
