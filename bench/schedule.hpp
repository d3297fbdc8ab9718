// How the suite's cases are run: repetitions alternate across the transports
// of one workload and size (A B C A B C ...), and every latency run is
// bracketed by a short cache-line probe (before and after), every flat-out
// two-process throughput run by a short run of the in-process ring. A run
// whose two probes disagree by more than kProbeAgreement is
// measured again (at most kMaxRetries times); the row keeps the probe it was
// measured against and states its ratio against it. Every probe is logged
// with its time.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite.hpp"

namespace zipc::bench {

inline constexpr double kProbeAgreement = 1.25;  // max/min of a run's two brackets (either kind)
inline constexpr int kMaxRetries = 2;            // extra attempts of a run whose brackets disagree

// Both brackets measured and within kProbeAgreement of each other.
inline bool brackets_agree(double before, double after) {
  return before > 0 && after > 0 && std::max(before, after) <= kProbeAgreement * std::min(before, after);
}

struct ProbeRecord {
  double t_s = 0;           // seconds since the schedule started
  double value = 0;         // cache-line kinds: the round trip (ns); ring kinds: msgs/s ("ring-") or GB/s ("xcore-")
  double payload_gbps = 0;  // "xcore-<B>": the ring at the row's size doing the payload work
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
