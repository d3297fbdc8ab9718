// How the suite's cases are run: repetitions alternate across the transports
// of one workload and size (A B C A B C ...), and every latency run is
// bracketed by a short cache-line probe (before and after), every flat-out
// two-process throughput run by a short run of the in-process ring. A run
// whose two probes disagree by more than kProbeAgreement (kRingAgreement) is
// measured again (at most kMaxRetries times); the row keeps the probe it was
// measured against and states its ratio against it. Every probe is logged
// with its time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite.hpp"

namespace zipc::bench {

inline constexpr double kProbeAgreement = 1.25;  // max/min of a run's two brackets
inline constexpr double kRingAgreement = 1.25;   // the same for a throughput run's ring probes
inline constexpr int kMaxRetries = 2;            // extra attempts of a run whose brackets disagree

struct ProbeRecord {
  double t_s = 0;           // seconds since the schedule started
  double ns = 0;            // cache-line probes: the round trip
  double value = 0;         // ring probes: msgs/s ("ring-<size>") or GB/s ("xcore-<size>")
  double payload_gbps = 0;  // "xcore-<size>": the ring at the row's size doing the payload work
  std::string kind;         // "2cpu" (spin, two CPUs), "1cpu-yield", "ring-<B>" or "xcore-<B>"
  std::string at;           // what ran next to it: "before|after <case id> rep N attempt K"
};

struct ScheduleOptions {
  bool probes = true;  // bracket latency and two-process throughput runs (false: --no-limits)
  std::function<void(std::size_t done, std::size_t total, const std::string& what)> progress;
};

struct ScheduleOutput {
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json errors = nlohmann::json::array();  // {what, error}
  std::vector<ProbeRecord> probes;
};

// Runs every case (grouped by workload and size, repetitions alternating
// within each group) and returns one row per case that succeeded.
ScheduleOutput run_schedule(const std::vector<Case>& cases, const ScheduleOptions& opt);

nlohmann::json probes_to_json(const std::vector<ProbeRecord>& probes);

}  // namespace zipc::bench
