#include "schedule.hpp"

#include <time.h>

#include <algorithm>
#include <map>

#include "limits.hpp"

namespace zipc::bench {

using nlohmann::json;

namespace {

double seconds_since(const timespec& t0) {
  timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec - t0.tv_sec) + static_cast<double>(t.tv_nsec - t0.tv_nsec) / 1e9;
}

bool agree(double a, double b) {
  return a > 0 && b > 0 && std::max(a, b) <= kProbeAgreement * std::min(a, b);
}

// Takes probes and remembers the last one: consecutive latency runs on the
// same CPUs share a probe (the one after a run is the one before the next).
class Prober {
 public:
  explicit Prober(std::vector<ProbeRecord>* log) : log_(log) { ::clock_gettime(CLOCK_MONOTONIC, &t0_); }

  double take(int cpu_a, int cpu_b, const std::string& at) {
    ProbeRecord p;
    p.t_s = seconds_since(t0_);
    p.ns = cacheline_probe_ns(cpu_a, cpu_b);
    p.kind = cpu_a == cpu_b ? "1cpu-yield" : "2cpu";
    p.at = at;
    log_->push_back(p);
    last_ = p.ns;
    last_a_ = cpu_a;
    last_b_ = cpu_b;
    fresh_ = true;
    return p.ns;
  }
  // The probe right before the next run: the last one if nothing ran since
  // on the same CPUs, else a new one.
  double before(int cpu_a, int cpu_b, const std::string& at) {
    if (fresh_ && last_a_ == cpu_a && last_b_ == cpu_b) {
      log_->back().at += "; before " + at;
      return last_;
    }
    return take(cpu_a, cpu_b, "before " + at);
  }
  void ran_something() { fresh_ = false; }

 private:
  std::vector<ProbeRecord>* log_;
  timespec t0_{};
  double last_ = 0;
  int last_a_ = -1, last_b_ = -1;
  bool fresh_ = false;
};

void probe_cpus(const Case& c, int* a, int* b) {
  const auto& cpus = c.config.cpus;
  *a = cpus.empty() ? 0 : cpus[0];
  *b = cpus.size() > 1 ? cpus[1] : *a;
}

}  // namespace

ScheduleOutput run_schedule(const std::vector<Case>& cases, const ScheduleOptions& opt) {
  ScheduleOutput out;
  Prober prober(&out.probes);
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
        if (!c.latency() || !opt.probes) {
          m.run = run_workload(*c.transport, c.config);
          prober.ran_something();
        } else {
          int a = 0, b = 0;
          probe_cpus(c, &a, &b);
          for (int attempt = 1; attempt <= 1 + kMaxRetries; ++attempt) {
            const std::string at = what + " attempt " + std::to_string(attempt);
            m.probe_before_ns = prober.before(a, b, at);
            m.run = run_workload(*c.transport, c.config);
            prober.ran_something();
            m.probe_after_ns = prober.take(a, b, "after " + at);
            m.attempts = attempt;
            if (!m.run.ok || agree(m.probe_before_ns, m.probe_after_ns)) break;
          }
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
  for (const auto& p : probes) a.push_back({{"t_s", p.t_s}, {"ns", p.ns}, {"kind", p.kind}, {"at", p.at}});
  return a;
}

}  // namespace zipc::bench
