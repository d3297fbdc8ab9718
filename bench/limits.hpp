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
nlohmann::json to_json(const Limits& l);
Limits limits_from_json(const nlohmann::json& j);
std::string limits_table(const Limits& l);  // markdown

}  // namespace zipc::bench
