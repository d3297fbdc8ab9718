// How the suite's cases are run: repetitions alternate across the transports
// of one workload and size (A B C A B C ...), and every latency run is
// bracketed by a short cache-line probe (before and after). A run whose two
// probes disagree by more than kProbeAgreement is measured again (at most
// kMaxRetries times); the row keeps the probe it was measured against and
// states its ratio against it. Every probe is logged with its time.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite.hpp"

namespace zipc::bench {

inline constexpr double kProbeAgreement = 1.25;  // max/min of a run's two brackets
inline constexpr int kMaxRetries = 2;            // extra attempts of a run whose brackets disagree

struct ProbeRecord {
  double t_s = 0;    // seconds since the schedule started
  double ns = 0;     // cache-line round trip
  std::string kind;  // "2cpu" (spin, two CPUs) or "1cpu-yield"
  std::string at;    // what ran next to it: "before|after <case id> rep N attempt K"
};

struct ScheduleOptions {
  bool probes = true;  // bracket latency runs (false: --no-limits)
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
