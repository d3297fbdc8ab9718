// How the suite's cases are run: repetitions alternate across the transports
// of one workload and size (A B C A B C ...), and every latency run is
// bracketed by a short probe of its wait class (before and after: the
// cache-line round trip for busy and adaptive rows, the futex round trip for
// blocking ones, Case::latency_probe), every flat-out
// two-process throughput run by a short run of the in-process ring. A run
// whose two probes disagree by more than kProbeAgreement is
// measured again (at most kMaxRetries times); the row keeps the probe it was
// measured against and states its ratio against it. Every probe is logged
// with its time.
#pragma once

#include <time.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suite.hpp"

namespace zipc::bench {

inline constexpr double kProbeAgreement = 1.25;  // max/min of a run's two brackets (either kind)
inline constexpr int kMaxRetries = 2;            // extra attempts of a run whose brackets disagree
inline constexpr int kMaxExtraRetries = 2;       // the same for an extra program (seconds to a minute each)
// A run longer than this is not tried again, whatever its brackets say: the
// host moves the vCPUs every few seconds, so probes around minutes of work
// nearly always disagree, and show only the host at the run's two edges.
// (The suite's runs take well under it; Aeron's and the bridge's programs
// take two to three minutes, which a retry tripled.)
inline constexpr double kRetryMaxSeconds = 30;

// Both brackets measured and within kProbeAgreement of each other.
inline bool brackets_agree(double before, double after) {
  return before > 0 && after > 0 && std::max(before, after) <= kProbeAgreement * std::min(before, after);
}

// Whether an extra program that ran `seconds` between these brackets is run
// again: it succeeded, the brackets disagree, and it ran no longer than
// kRetryMaxSeconds.
inline bool worth_another_attempt(bool ok, double before, double after, double seconds) {
  return ok && !brackets_agree(before, after) && seconds <= kRetryMaxSeconds;
}

struct ProbeRecord {
  double t_s = 0;           // seconds since the schedule started
  double value = 0;         // latency kinds: the round trip (ns); ring kinds: msgs/s ("ring-") or GB/s ("xcore-")
  double payload_gbps = 0;  // "xcore-<B>": the ring at the row's size doing the payload work
  std::string kind;         // "2cpu" (spin, two CPUs), "1cpu-yield", "futex" (two CPUs), "ring-<B>", "xcore-<B>"
  std::string at;           // what ran next to it: "before|after <case id> rep N attempt K"
};

// Takes probes, logs them with their time since the Prober was made, and
// remembers those taken since the last run: consecutive runs that take the
// same probe (same kind, same CPUs) share one (the one after a run is the one
// before the next), also when other probes were taken in between.
class Prober {
 public:
  using Measure = std::function<void(ProbeRecord*)>;  // fills value and kind
  Prober();
  // `key` names the probe (kind and CPUs).
  const ProbeRecord& take(const std::string& key, const std::string& at, const Measure& measure);
  // The probe right before the next run: the last one of this key if
  // nothing ran since it was taken, else a new one.
  const ProbeRecord& before(const std::string& key, const std::string& at, const Measure& measure);
  // Logs a probe that no run shares (memory bandwidth, in this process).
  void note(const std::string& at, const Measure& measure);
  void ran_something() { fresh_.clear(); }
  const std::vector<ProbeRecord>& log() const { return log_; }

 private:
  std::vector<ProbeRecord> log_;
  timespec t0_{};
  std::map<std::string, std::size_t> fresh_;  // key -> index in log_ of its probe taken since the last run
};

// The latency probes (ns) around the kept attempt of a run, and what the
// host gave around it: memory read bandwidth (GB/s, host_state.hpp) before
// and after, steal time during it (ms, all CPUs; -1 unknown) and its length.
struct HostBrackets {
  double before_ns = 0, after_ns = 0;              // cache-line, two CPUs (one CPU: with yield)
  double futex_before_ns = 0, futex_after_ns = 0;  // futex round trip, two CPUs (one CPU: 0)
  double yield_before_ns = 0, yield_after_ns = 0;  // cache-line with yield on the first CPU
  bool one_cpu = false;                            // run on one CPU: every probe is the yield probe
  int attempts = 0;
  double membw_before_gbps = 0, membw_after_gbps = 0;
  double steal_ms = -1;
  double seconds = 0;
};
// Runs `run` (returns false on failure) between two cache-line probes on
// cpu_a and cpu_b, again (at most max_retries times) while they disagree,
// and between two probes of each other latency kind (futex on cpu_a and
// cpu_b, yield on cpu_a; none of them when cpu_a == cpu_b); with
// `bandwidth`, also between two memory-bandwidth probes, with the steal
// time counted. The extra programs are run this way: their round-trip rows
// are stated against the probes of their wait class (add_host_ratio), they
// say which placement of the vCPUs, and which memory bandwidth, they were
// measured in, and --compare can tell the host's move from the code's.
HostBrackets run_between_cacheline_probes(const std::string& what, int cpu_a, int cpu_b, int max_retries,
                                          Prober* prober, const std::function<bool()>& run, bool bandwidth = false);
// States an extra's round-trip row (rt_p50_ns, no ratio_basis of its own)
// against the brackets of its wait class, as the harness's own rows
// (Case::latency_probe): `cpus` 1 (or h.one_cpu) -> the yield probes, `wait` "block" ->
// the futex probes, else the cache-line probes. Writes probe_before_ns,
// probe_after_ns, probe_ns (their mean), probe_kind, ratio_to_limit,
// ratio_basis, and probe_unsettled_runs (1) when they disagree. Nothing when
// either bracket is 0 (the run-wide limits then apply, results.hpp).
void add_host_ratio(nlohmann::json* row, const HostBrackets& h);
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
