#include "schedule.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "host_state.hpp"
#include "limits.hpp"
#include "results.hpp"

namespace zipc::bench {

using nlohmann::json;

namespace {

double seconds_since(const timespec& t0) {
  timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec - t0.tv_sec) + static_cast<double>(t.tv_nsec - t0.tv_nsec) / 1e9;
}

bool ring_kind(const std::string& kind) {
  return kind.rfind("ring-", 0) == 0 || kind.rfind("xcore-", 0) == 0;
}

// The Prober's key of a latency probe kind, before its CPUs: both
// cache-line kinds are "cacheline" (one CPU or two tell them apart).
std::string probe_key(const std::string& kind) {
  return kind == kProbeFutex ? "futex" : "cacheline";
}

void probe_cpus(const Case& c, int* a, int* b) {
  const auto& cpus = c.config.cpus;
  *a = cpus.empty() ? 0 : cpus[0];
  *b = cpus.size() > 1 ? cpus[1] : *a;
}

// Runs one repetition of c between two probes, again (at most kMaxRetries
// times) while the probes disagree.
Measured run_bracketed(const Case& c, const std::string& what, Prober* prober) {
  Measured m;
  int a = 0, b = 0;
  probe_cpus(c, &a, &b);
  const bool ring = !c.latency();
  const std::string kind = ring ? std::string() : c.latency_probe();
  const std::string key =
      (ring ? "ring " + std::to_string(throughput_basis(c.config.size).size) + " " + std::to_string(c.config.size)
            : probe_key(kind)) +
      " " + std::to_string(a) + "," + std::to_string(kind == kProbeYield ? a : b);
  const auto measure = [&](ProbeRecord* p) {
    if (!ring) {
      p->value = latency_probe_ns(kind, a, b);
      p->kind = kind;
      return;
    }
    const RingProbe r = ring_probe(c.config.size, a, b);
    p->value = r.value;
    p->payload_gbps = r.payload_gbps;
    p->kind = (r.basis.gbps ? "xcore-" : "ring-") + std::to_string(r.basis.size);
  };
  for (int attempt = 1; attempt <= 1 + kMaxRetries; ++attempt) {
    const std::string at = what + " attempt " + std::to_string(attempt);
    const ProbeRecord before = prober->before(key, at, measure);
    m.run = run_workload(*c.transport, c.config);
    prober->ran_something();
    const ProbeRecord& after = prober->take(key, "after " + at, measure);
    m.attempts = attempt;
    m.probe_before = before.value;
    m.probe_after = after.value;
    m.payload_before_gbps = before.payload_gbps;
    m.payload_after_gbps = after.payload_gbps;
    if (!m.run.ok || brackets_agree(m.probe_before, m.probe_after)) break;
  }
  return m;
}

}  // namespace

Prober::Prober() {
  ::clock_gettime(CLOCK_MONOTONIC, &t0_);
}

const ProbeRecord& Prober::take(const std::string& key, const std::string& at, const Measure& measure) {
  ProbeRecord p;
  measure(&p);
  p.t_s = seconds_since(t0_);
  p.at = at;
  log_.push_back(p);
  fresh_[key] = log_.size() - 1;
  return log_.back();
}

const ProbeRecord& Prober::before(const std::string& key, const std::string& at, const Measure& measure) {
  if (auto it = fresh_.find(key); it != fresh_.end()) {
    log_[it->second].at += "; before " + at;
    return log_[it->second];
  }
  return take(key, "before " + at, measure);
}

void Prober::note(const std::string& at, const Measure& measure) {
  ProbeRecord p;
  measure(&p);
  p.t_s = seconds_since(t0_);
  p.at = at;
  log_.push_back(p);
}

HostBrackets run_between_cacheline_probes(const std::string& what, int cpu_a, int cpu_b, int max_retries,
                                          Prober* prober, const std::function<bool()>& run, bool bandwidth) {
  HostBrackets h;
  const bool one_cpu = cpu_a == cpu_b;
  // The cache-line probe first (its brackets decide a retry), then the others.
  struct Bracket {
    std::string kind;
    int b;  // the second CPU
    double* before;
    double* after;
  };
  std::vector<Bracket> kinds = {{one_cpu ? kProbeYield : kProbeCacheLine, cpu_b, &h.before_ns, &h.after_ns}};
  if (!one_cpu) {
    kinds.push_back({kProbeFutex, cpu_b, &h.futex_before_ns, &h.futex_after_ns});
    kinds.push_back({kProbeYield, cpu_a, &h.yield_before_ns, &h.yield_after_ns});
  }
  const auto probe = [&](const Bracket& k, bool after, const std::string& at) {
    const std::string key = probe_key(k.kind) + " " + std::to_string(cpu_a) + "," + std::to_string(k.b);
    const auto measure = [&](ProbeRecord* p) {
      p->value = latency_probe_ns(k.kind, cpu_a, k.b);
      p->kind = k.kind;
    };
    *(after ? k.after : k.before) =
        (after ? prober->take(key, "after " + at, measure) : prober->before(key, at, measure)).value;
  };
  double membw = 0;
  const auto measure_membw = [&](ProbeRecord* p) {
    p->value = membw = memory_read_gbps();
    p->kind = "membw";
  };
  for (int attempt = 1; attempt <= 1 + max_retries; ++attempt) {
    const std::string at = what + " attempt " + std::to_string(attempt);
    if (bandwidth) {
      prober->note("before " + at, measure_membw);
      h.membw_before_gbps = membw;
    }
    for (const Bracket& k : kinds) probe(k, false, at);
    const double steal0 = bandwidth ? steal_ms() : -1;
    timespec t0{};
    ::clock_gettime(CLOCK_MONOTONIC, &t0);
    const bool ok = run();
    h.seconds = seconds_since(t0);
    const double steal1 = bandwidth ? steal_ms() : -1;
    h.steal_ms = steal0 >= 0 && steal1 >= steal0 ? steal1 - steal0 : -1;
    prober->ran_something();
    for (const Bracket& k : kinds) probe(k, true, at);
    if (bandwidth) {
      prober->note("after " + at, measure_membw);
      h.membw_after_gbps = membw;
    }
    h.attempts = attempt;
    if (!worth_another_attempt(ok, h.before_ns, h.after_ns, h.seconds)) break;
  }
  if (one_cpu) {
    h.one_cpu = true;
    h.yield_before_ns = h.before_ns;
    h.yield_after_ns = h.after_ns;
  }
  return h;
}

void add_host_ratio(json* row, const HostBrackets& h) {
  json& r = *row;
  if (r.contains("ratio_basis") || !is_round_trip(r)) return;
  const double p50 = num(r, "rt_p50_ns");
  if (std::isnan(p50)) return;
  const bool one_cpu = h.one_cpu || (r.contains("cpus") && r["cpus"].is_number() && r["cpus"].get<int>() == 1);
  const bool block = r.contains("wait") && r["wait"].is_string() && r["wait"].get<std::string>() == "block";
  const char* kind = one_cpu ? kProbeYield : block ? kProbeFutex : kProbeCacheLine;
  const double before = one_cpu ? h.yield_before_ns : block ? h.futex_before_ns : h.before_ns;
  const double after = one_cpu ? h.yield_after_ns : block ? h.futex_after_ns : h.after_ns;
  if (before <= 0 || after <= 0) return;
  const double probe = (before + after) / 2;
  r["probe_before_ns"] = before;
  r["probe_after_ns"] = after;
  r["probe_ns"] = probe;
  r["probe_kind"] = kind;
  if (!brackets_agree(before, after)) r["probe_unsettled_runs"] = 1;
  r["ratio_to_limit"] = p50 / probe;
  r["ratio_basis"] = std::string("rt_p50_ns / probe_ns (against the ") +
                     (one_cpu ? "one-CPU cache-line probes with sched_yield"
                      : block ? "futex round-trip probes"
                              : "cache-line probes") +
                     " right before and after its program)";
}

void add_host_bandwidth(json* row, const HostBrackets& h, int cpus) {
  json& r = *row;
  if (h.membw_before_gbps > 0 && h.membw_after_gbps > 0) {
    r["host_membw_before_gbps"] = h.membw_before_gbps;
    r["host_membw_after_gbps"] = h.membw_after_gbps;
    r["host_membw_gbps"] = (h.membw_before_gbps + h.membw_after_gbps) / 2;
    if (!brackets_agree(h.membw_before_gbps, h.membw_after_gbps)) r["host_membw_unsettled"] = true;
  }
  if (h.steal_ms >= 0 && h.seconds > 0 && cpus > 0) r["host_steal_share"] = h.steal_ms / (1000.0 * h.seconds * cpus);
}

void add_host_probes(json* row, double before_ns, double after_ns, int attempts) {
  if (before_ns <= 0 || after_ns <= 0) return;
  json& r = *row;
  r["host_probe_before_ns"] = before_ns;
  r["host_probe_after_ns"] = after_ns;
  r["host_probe_ns"] = (before_ns + after_ns) / 2;
  r["host_probe_attempts"] = attempts;
  if (!brackets_agree(before_ns, after_ns)) r["host_probe_unsettled"] = true;
}

ScheduleOutput run_schedule(const std::vector<Case>& cases, const ScheduleOptions& opt) {
  ScheduleOutput out;
  Prober& prober = out.prober;
  // Groups of one workload and size, in the order the cases came.
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::string, std::size_t> group_of;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string key = cases[i].workload + "/" + std::to_string(cases[i].config.size);
    auto [it, added] = group_of.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  std::vector<std::vector<Measured>> runs(cases.size());
  std::vector<std::string> failed(cases.size());
  std::size_t total = 0, done = 0;
  for (const Case& c : cases) total += static_cast<std::size_t>(std::max(1, c.repetitions));
  // Repetition k of every row runs in pass k over all the groups, so a row's
  // repetitions lie minutes apart and its spread includes the host's slow
  // changes (the vCPUs moving between near and far cores), not only the
  // seconds one group takes; within a group the transports still alternate.
  int passes = 1;
  for (const Case& c : cases) passes = std::max(passes, c.repetitions);
  for (int rep = 0; rep < passes; ++rep) {
    for (const auto& g : groups) {
      for (std::size_t i : g) {
        const Case& c = cases[i];
        if (rep >= std::max(1, c.repetitions) || !failed[i].empty()) continue;
        ++done;
        if (opt.progress) {
          opt.progress(done, total,
                       c.workload + " " + c.transport->name() + " " + std::to_string(c.config.size) + " B " +
                           to_string(c.config.wait) + " (rep " + std::to_string(rep + 1) + ")");
        }
        const std::string what = c.id() + " rep " + std::to_string(rep + 1);
        Measured m;
        if (opt.probes && (c.latency() || c.ring_bracketed())) {
          m = run_bracketed(c, what, &prober);
        } else {
          m.run = run_workload(*c.transport, c.config);
          prober.ran_something();
        }
        if (!m.run.ok) {
          failed[i] = m.run.error;
          continue;
        }
        runs[i].push_back(std::move(m));
      }
    }
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!failed[i].empty()) {
      out.errors.push_back({{"what", cases[i].id()}, {"error", failed[i]}});
      continue;
    }
    if (runs[i].empty()) continue;
    out.rows.push_back(make_row(cases[i], &runs[i]));
  }
  return out;
}

json probes_to_json(const std::vector<ProbeRecord>& probes) {
  json a = json::array();
  for (const auto& p : probes) {
    json one = {{"t_s", p.t_s}, {"kind", p.kind}, {"at", p.at}};
    if (p.kind == "membw") {
      one["value"] = p.value;
      one["unit"] = "gbytes_per_s";
    } else if (ring_kind(p.kind)) {
      one["value"] = p.value;
      one["unit"] = p.kind.rfind("xcore-", 0) == 0 ? "gbytes_per_s" : "msgs_per_s";
      if (p.payload_gbps > 0) one["payload_gbps"] = p.payload_gbps;
    } else {
      one["ns"] = p.value;
    }
    a.push_back(std::move(one));
  }
  return a;
}

}  // namespace zipc::bench
