// The benchmark suite: which workloads run over which transports, at which
// sizes, and how each run becomes a result row.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "limits.hpp"
#include "runner.hpp"
#include "transport.hpp"

namespace zipc::bench {

struct WorkloadInfo {
  std::string name;
  std::string description;
  std::vector<std::size_t> default_sizes;
  std::vector<std::size_t> full_sizes;
};
const std::vector<WorkloadInfo>& workloads();

struct SuiteOptions {
  bool full = false;
  std::string filter;              // regex over "workload/transport/size/wait"; empty: everything
  std::vector<std::size_t> sizes;  // overrides every workload's sizes
  std::uint64_t iterations = 0;    // overrides iteration counts (0: the suite's choice)
  double budget_s = 0;             // overrides the per-run time budget (0: the suite's choice)
  int repetitions = 0;             // runs per flat-out row, the median reported (0: the suite's choice, 3)
  std::vector<int> cpus;           // CPUs to pin to; empty: all allowed
};

struct Case {
  std::string workload;
  Transport* transport = nullptr;
  RunConfig config;
  int repetitions = 1;     // runs, alternating with the other transports of the same workload and size
  std::string id() const;  // "workload/transport/size/wait"
  bool latency() const { return config.shape == Shape::round_trip; }
  // A flat-out run of two processes on two CPUs: stated against the
  // in-process ring measured around it (the others against the run's limits).
  bool ring_bracketed() const;
  // The probe a latency run is bracketed with and stated against (limits.hpp):
  // kProbeYield when its processes share one CPU, else kProbeFutex for a
  // blocking row and kProbeCacheLine for a busy or adaptive one (adaptive
  // waits spin first: answered within the spin, a round trip is a cache-line
  // bounce; one that sleeps pays a wake-up, and its ratio shows it).
  const char* latency_probe() const;
};

// Every case the options select; *skipped gets {what, why} for the ones a
// transport cannot carry.
std::vector<Case> build_cases(const std::vector<std::unique_ptr<Transport>>& transports, const SuiteOptions& opt,
                              nlohmann::json* skipped);

// One repetition of a case, with the probes taken right before and right
// after it (0: not probed): the round trip of Case::latency_probe() (ns)
// around a latency run, the in-process ring (limits.hpp, ring_probe: msgs/s or GB/s, as
// throughput_basis(size) says) around a two-process throughput run.
struct Measured {
  RunResult run;
  double probe_before = 0;
  double probe_after = 0;
  double payload_before_gbps = 0;  // rows over 1 KiB: the ring doing the payload work
  double payload_after_gbps = 0;
  int attempts = 1;  // > 1: the brackets disagreed and the run was measured again
};

// The row for a case from its repetitions (every one succeeded): the median
// repetition by the row's headline figure (p50 for round trips, msgs/s
// otherwise) with its percentiles, every repetition under "runs", the spread
// of p50 and msgs/s across them, and for probed runs the probe and the ratio
// to it. Reorders *runs.
nlohmann::json make_row(const Case& c, std::vector<Measured>* runs);

}  // namespace zipc::bench
