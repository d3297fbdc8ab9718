// How the suite's cases are run: repetitions alternate across the transports
// of one workload and size (A B C A B C ...), and every latency run is
// bracketed by a short cache-line probe (before and after), every flat-out
// two-process throughput run by a short run of the in-process ring. A run
// whose two probes disagree by more than kProbeAgreement is
// measured again (at most kMaxRetries times); the row keeps the probe it was
// measured against and states its ratio against it. Every probe is logged
// with its time.
#pragma once

#include <time.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite.hpp"

namespace zipc::bench {

inline constexpr double kProbeAgreement = 1.25;  // max/min of a run's two brackets (either kind)
inline constexpr int kMaxRetries = 2;            // extra attempts of a run whose brackets disagree
inline constexpr int kMaxExtraRetries = 2;       // the same for an extra program (seconds to a minute each)

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

// Takes probes, logs them with their time since the Prober was made, and
// remembers the last one: consecutive runs that take the same probe (same
// kind, same CPUs) share one (the one after a run is the one before the next).
class Prober {
 public:
  using Measure = std::function<void(ProbeRecord*)>;  // fills value and kind
  Prober();
  // `key` names the probe (kind and CPUs).
  const ProbeRecord& take(const std::string& key, const std::string& at, const Measure& measure);
  // The probe right before the next run: the last one if nothing ran since
  // and it is the same probe, else a new one.
  const ProbeRecord& before(const std::string& key, const std::string& at, const Measure& measure);
  // Logs a probe that moves nothing (memory bandwidth, in this process): the
  // last cache-line probe still stands for the next run.
  void note(const std::string& at, const Measure& measure);
  void ran_something() { fresh_ = false; }
  const std::vector<ProbeRecord>& log() const { return log_; }

 private:
  std::vector<ProbeRecord> log_;
  timespec t0_{};
  std::string last_key_;
  std::size_t last_index_ = 0;  // the last probe take() logged (note() logs others after it)
  bool fresh_ = false;
};

// The cache-line probes (ns) around the kept attempt of a run, and what the
// host gave around it: memory read bandwidth (GB/s, host_state.hpp) before
// and after, steal time during it (ms, all CPUs; -1 unknown) and its length.
struct HostBrackets {
  double before_ns = 0, after_ns = 0;
  int attempts = 0;
  double membw_before_gbps = 0, membw_after_gbps = 0;
  double steal_ms = -1;
  double seconds = 0;
};
// Runs `run` (returns false on failure) between two cache-line probes on
// cpu_a and cpu_b, again (at most max_retries times) while they disagree;
// with `bandwidth`, also between two memory-bandwidth probes, with the steal
// time counted. The extra programs are run this way: their rows say which
// placement of the vCPUs, and which memory bandwidth, they were measured
// in, and --compare can tell the host's move from the code's.
HostBrackets run_between_cacheline_probes(const std::string& what, int cpu_a, int cpu_b, int max_retries,
                                          Prober* prober, const std::function<bool()>& run, bool bandwidth = false);
// Writes an extra's brackets into one of its rows: host_probe_before_ns,
// host_probe_after_ns, host_probe_ns (their mean), host_probe_attempts, and
// host_probe_unsettled when they still disagree. Nothing when either is 0.
void add_host_probes(nlohmann::json* row, double before_ns, double after_ns, int attempts);
// The same for the bandwidth brackets: host_membw_before_gbps,
// host_membw_after_gbps, host_membw_gbps (their mean), host_membw_unsettled
// when they disagree by more than kProbeAgreement; and host_steal_share,
// the share of the run's CPU time (cpus x seconds) the host took, when known.
void add_host_bandwidth(nlohmann::json* row, const HostBrackets& h, int cpus);

struct ScheduleOptions {
  bool probes = true;  // bracket latency and two-process throughput runs (false: --no-limits)
  std::function<void(std::size_t done, std::size_t total, const std::string& what)> progress;
};

struct ScheduleOutput {
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json errors = nlohmann::json::array();  // {what, error}
  Prober prober;                                    // every probe taken; its clock started with the schedule
};

// Runs every case (grouped by workload and size, repetitions alternating
// within each group) and returns one row per case that succeeded.
ScheduleOutput run_schedule(const std::vector<Case>& cases, const ScheduleOptions& opt);

nlohmann::json probes_to_json(const std::vector<ProbeRecord>& probes);

}  // namespace zipc::bench
