#include "suite.hpp"

#include <algorithm>
#include <regex>
#include <set>

#include "limits.hpp"
#include "payload.hpp"
#include "repetitions.hpp"
#include "results.hpp"
#include "schedule.hpp"
#include "sysinfo.hpp"

namespace zipc::bench {

using nlohmann::json;

const std::vector<WorkloadInfo>& workloads() {
  static const std::vector<WorkloadInfo> w = {
      {"pingpong",
       "round trip between two processes on two CPUs (docs/design/reference.md §3)",
       {64, 128, 1024, 4096, 65536},
       {64, 128, 1024, 4096, 65536}},
      {"pingpong-1cpu", "the same ping-pong with both processes pinned to ONE CPU", {64}, {64, 1024, 65536}},
      {"stream",
       "one-way streaming, flat out, one sender one receiver (docs/design/reference.md §1, §2)",
       {100, 3000, 65536, 262144},
       {100, 3000, 65536, 262144}},
      {"stream-rate",
       "one-way at a fixed offered rate (100k msgs/s); latency from the intended send time",
       {100},
       {100, 3000}},
      {"fanout-1", "1 publisher -> 1 subscriber, every subscriber gets every message", {100}, {100, 65536}},
      {"fanout-2", "1 publisher -> 2 subscribers", {100}, {100, 65536}},
      {"fanout-4", "1 publisher -> 4 subscribers", {100}, {100, 65536}},
      {"m2m-2x2",
       "2 senders, 2 receivers, each message delivered once (docs/design/reference.md §1)",
       {100},
       {100, 3000}},
      {"m2m-4x4", "4 senders, 4 receivers, each message delivered once", {100}, {100, 3000}},
      {"reqrep",
       "request/response: Unix socket, FIFO pair, the §2 single slot (docs/design/reference.md §2)",
       {128, 262144},
       {128, 4096, 262144}},
  };
  return w;
}

std::string Case::id() const {
  return workload + "/" + transport->name() + "/" + std::to_string(config.size) + "/" + to_string(config.wait);
}

bool Case::ring_bracketed() const {
  if (config.shape != Shape::stream || config.rate > 0 || process_count(config) != 2) return false;
  return config.cpus.size() >= 2 && config.cpus[0] != config.cpus[1];
}

const char* Case::latency_probe() const {
  const auto& cpus = config.cpus;
  if (cpus.size() < 2 || cpus[0] == cpus[1]) return kProbeYield;
  return config.wait == Wait::block ? kProbeFutex : kProbeCacheLine;
}

namespace {

bool is_broadcast_capable(Transport& t, std::size_t size) {
  ChannelSpec s;
  s.name = "probe";
  s.max_message = size;
  s.receivers = 2;
  s.broadcast = true;
  std::string why;
  return t.supports(s, &why);
}

bool reqrep_transport(const Transport& t) {
  const std::string n = t.name();
  return n == "unix-stream" || n == "fifo" || n == "shm-futex-slot" || t.family() == "zipc";
}

}  // namespace

std::vector<Case> build_cases(const std::vector<std::unique_ptr<Transport>>& transports, const SuiteOptions& opt,
                              json* skipped) {
  std::vector<int> cpus = opt.cpus.empty() ? allowed_cpus() : opt.cpus;
  std::regex filter;
  const bool filtering = !opt.filter.empty();
  if (filtering) filter = std::regex(opt.filter, std::regex::ECMAScript | std::regex::icase);
  std::vector<Case> out;
  const double budget = opt.budget_s > 0 ? opt.budget_s : (opt.full ? 3.0 : 0.2);
  for (const auto& w : workloads()) {
    const auto& sizes = !opt.sizes.empty() ? opt.sizes : (opt.full ? w.full_sizes : w.default_sizes);
    for (const auto& t : transports) {
      for (std::size_t size : sizes) {
        for (Wait wait : t->waits()) {
          Case c;
          c.workload = w.name;
          c.transport = t.get();
          RunConfig& r = c.config;
          r.size = std::max(size, kMinMessage);
          r.wait = wait;
          r.budget_s = budget;
          r.tag = "zb";
          r.cpus = cpus;
          const std::uint64_t bytes_cap = opt.full ? (8ull << 30) : (1ull << 30);
          if (w.name.rfind("pingpong", 0) == 0 || w.name == "reqrep") {
            r.shape = Shape::round_trip;
            r.iterations = opt.full ? 100'000 : 20'000;
            r.warmup = opt.full ? 2'000 : 500;
            if (w.name == "pingpong-1cpu") r.cpus = {cpus.front()};
            if (w.name == "reqrep" && !reqrep_transport(*t)) continue;
          } else if (w.name.rfind("stream", 0) == 0 || w.name.rfind("fanout", 0) == 0) {
            r.shape = Shape::stream;
            r.iterations = std::min<std::uint64_t>(opt.full ? 5'000'000 : 500'000, bytes_cap / r.size);
            r.warmup = std::min<std::uint64_t>(1000, r.iterations / 10 + 1);
            if (w.name == "stream-rate") {
              r.rate = 100'000;
              r.iterations = static_cast<std::uint64_t>(r.rate * budget * 0.9);
              r.budget_s = budget * 2;
            }
            if (w.name.rfind("fanout", 0) == 0) {
              r.broadcast = true;
              r.receivers = std::stoi(w.name.substr(7));
              if (!is_broadcast_capable(*t, r.size)) continue;  // not a fan-out transport: no row, no noise
            }
          } else {
            r.shape = Shape::many;
            const int n = w.name == "m2m-2x2" ? 2 : 4;
            r.senders = r.receivers = n;
            r.iterations = opt.full ? 1'000'000 : 200'000;
            r.warmup = 100;
          }
          // Every row but the fixed-rate one runs five times, alternating with
          // the other transports of its workload and size (schedule.cpp); the
          // row is the median repetition and says how far the others fell.
          if (r.rate == 0) c.repetitions = opt.repetitions > 0 ? opt.repetitions : kDefaultRepetitions;
          if (opt.iterations) r.iterations = opt.iterations;
          if (r.warmup > r.iterations) r.warmup = r.iterations / 10;
          r.timeout_s = 20 + r.budget_s * 4;
          if (filtering && !std::regex_search(c.id(), filter)) continue;
          // Ask the transport up front, so unsupported combinations are listed, not run.
          ChannelSpec probe;
          probe.name = "probe";
          probe.max_message = r.size;
          probe.senders = r.shape == Shape::many ? r.senders : 1;
          probe.receivers = r.shape == Shape::round_trip ? 1 : r.receivers;
          probe.broadcast = r.broadcast;
          probe.wait = wait;
          std::string why;
          if (!t->supports(probe, &why)) {
            if (skipped) skipped->push_back({{"what", c.id()}, {"why", why}});
            continue;
          }
          out.push_back(std::move(c));
        }
      }
    }
  }
  return out;
}

namespace {

double rate_of(const RunResult& res) {
  return res.seconds > 0 ? static_cast<double>(res.delivered) / res.seconds : 0;
}

}  // namespace

json make_row(const Case& c, std::vector<Measured>* runs_in) {
  std::vector<Measured>& runs = *runs_in;
  const RunConfig& r = c.config;
  const bool round_trip = r.shape == Shape::round_trip;
  const double per = r.broadcast ? r.receivers : 1;
  // Percentiles once per repetition (sorts its samples).
  std::vector<Percentiles> pct;
  pct.reserve(runs.size());
  for (Measured& m : runs) pct.push_back(percentiles(m.run.latencies_ns));
  auto rate = [&](std::size_t i) { return rate_of(runs[i].run) / per; };
  std::vector<std::size_t> order(runs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // The headline figure: p50 for round trips (lower is better), the rate otherwise.
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return round_trip ? pct[a].p50 < pct[b].p50 : rate(a) < rate(b); });
  const std::size_t mid = order[order.size() / 2];
  RunResult& res = runs[mid].run;
  const Percentiles& p = pct[mid];
  const int nproc = process_count(r);
  std::set<int> distinct;
  for (int i = 0; i < nproc && !r.cpus.empty(); ++i)
    distinct.insert(r.cpus[static_cast<std::size_t>(i) % r.cpus.size()]);
  json row;
  row["workload"] = c.workload;
  row["transport"] = c.transport->name();
  row["family"] = c.transport->family();
  row["size"] = r.size;
  row["wait"] = to_string(r.wait);
  row["processes"] = nproc;
  row["cpus"] = r.cpus.empty() ? json(nullptr) : json(static_cast<int>(distinct.size()));
  row["pinning"] = r.cpus.empty()
                       ? "unpinned"
                       : (static_cast<std::size_t>(nproc) <= distinct.size() ? "one CPU each" : "shared CPUs");
  row["rt_p50_ns"] = p.p50;
  row["rt_p99_ns"] = p.p99;
  row["rt_p999_ns"] = p.p999;
  row["rt_max_ns"] = p.max;
  row["latency"] = round_trip ? "round trip" : "one way";
  row["samples"] = res.latencies_ns.size();
  row["iterations"] = round_trip ? res.sent : res.delivered;
  if (res.seconds > 0) {
    if (round_trip) {
      row["msgs_per_s"] = static_cast<double>(res.sent) / res.seconds;  // round trips per second
      row["gbytes_per_s"] = static_cast<double>(res.sent) * 2.0 * static_cast<double>(r.size) / res.seconds / 1e9;
    } else if (r.broadcast) {
      const double per_sub = static_cast<double>(res.delivered) / r.receivers;
      row["msgs_per_s"] = per_sub / res.seconds;  // published and received by every subscriber
      row["gbytes_per_s"] = static_cast<double>(res.delivered) * static_cast<double>(r.size) / res.seconds / 1e9;
    } else {
      row["msgs_per_s"] = static_cast<double>(res.delivered) / res.seconds;
      row["gbytes_per_s"] = static_cast<double>(res.delivered) * static_cast<double>(r.size) / res.seconds / 1e9;
    }
  }
  row["lost"] = res.lost;
  row["repetitions"] = runs.size();
  json rates = json::array(), runs_json = json::array();
  std::vector<double> p50s, rate_v, ratios, probes, payload_ratios;
  // A bracketed latency run's probe is the round trip of its wait class
  // (Case::latency_probe); a bracketed throughput run's, the ring at this
  // basis (Case::ring_bracketed).
  const ThroughputBasis basis = throughput_basis(r.size);
  int unsettled = 0;  // brackets still apart after the retries
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Measured& m = runs[i];
    rates.push_back(rate(i));
    p50s.push_back(pct[i].p50);
    rate_v.push_back(rate(i));
    json one = {{"rt_p50_ns", pct[i].p50}, {"rt_p99_ns", pct[i].p99}, {"msgs_per_s", rate(i)}};
    if (m.probe_before > 0 && m.probe_after > 0) {
      const double probe = (m.probe_before + m.probe_after) / 2;
      const double gbps = rate_of(m.run) * static_cast<double>(r.size) / 1e9;
      one[round_trip ? "probe_before_ns" : "ring_before"] = m.probe_before;
      one[round_trip ? "probe_after_ns" : "ring_after"] = m.probe_after;
      one["attempts"] = m.attempts;
      probes.push_back(probe);
      ratios.push_back(round_trip ? pct[i].p50 / probe : (basis.gbps ? gbps : rate(i)) / probe);
      if (!brackets_agree(m.probe_before, m.probe_after)) ++unsettled;
      if (m.payload_before_gbps > 0 && m.payload_after_gbps > 0) {
        one["payload_ring_before_gbps"] = m.payload_before_gbps;
        one["payload_ring_after_gbps"] = m.payload_after_gbps;
        payload_ratios.push_back(gbps / ((m.payload_before_gbps + m.payload_after_gbps) / 2));
      }
    }
    runs_json.push_back(one);
  }
  row["msgs_per_s_runs"] = rates;  // every repetition's rate, in run order
  row["runs"] = runs_json;         // every repetition, in run order
  row["spread"] = {{"rt_p50_ns", spread_of(p50s)}, {"msgs_per_s", spread_of(rate_v)}};
  if (!probes.empty()) {
    // The ratio is the median of each repetition's figure over its own
    // brackets, so a placement change between repetitions cancels; the
    // probe reported is the median of the repetitions' bracket means.
    row["ratio_to_limit"] = median_of(ratios);
    row["spread"]["ratio_to_limit"] = spread_of(ratios);
    if (unsettled) row["probe_unsettled_runs"] = unsettled;
    if (round_trip) {
      row["probe_ns"] = median_of(probes);
      const std::string kind = c.latency_probe();
      row["probe_kind"] = kind;
      row["ratio_basis"] = kind == kProbeFutex
                               ? "rt_p50_ns / probe_ns (each repetition against its bracketing futex round-trip probes)"
                               : "rt_p50_ns / probe_ns (each repetition against its bracketing cache-line probes)";
    } else {
      const std::string ring = std::to_string(basis.size) + " B";
      row["ring_probe"] = median_of(probes);
      row["ring_probe_unit"] = basis.gbps ? "gbytes_per_s" : "msgs_per_s";
      row["ratio_basis"] = basis.gbps ? "gbytes_per_s / ring_probe (each repetition against the cross-core copy of " +
                                            ring + " measured right before and after it)"
                                      : "msgs_per_s / ring_probe (each repetition against the in-process ring of " +
                                            ring + " measured right before and after it)";
      if (!payload_ratios.empty()) row["ratio_to_payload_ring"] = median_of(payload_ratios);
    }
  }
  if (r.rate > 0) row["offered_msgs_per_s"] = r.rate;
  return row;
}

}  // namespace zipc::bench
