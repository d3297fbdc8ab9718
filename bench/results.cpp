#include "results.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "reference.hpp"
#include "repetitions.hpp"
#include "schedule.hpp"
#include "sysinfo.hpp"

namespace zipc::bench {

using nlohmann::json;

Percentiles percentiles(std::vector<std::uint64_t>& s) {
  Percentiles p;
  if (s.empty()) return p;
  std::sort(s.begin(), s.end());
  auto at = [&](double q) {
    const double rank = std::ceil(q * static_cast<double>(s.size()));
    const std::size_t i = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
    return static_cast<double>(s[std::min(i, s.size() - 1)]);
  };
  p.p50 = at(0.50);
  p.p99 = at(0.99);
  p.p999 = at(0.999);
  p.max = static_cast<double>(s.back());
  return p;
}

namespace {

bool starts_with(const std::string& s, const char* p) {
  return s.rfind(p, 0) == 0;
}

bool is_latency_workload(const std::string& w) {
  return starts_with(w, "pingpong") || starts_with(w, "reqrep") || starts_with(w, "rpc");
}

}  // namespace

double num(const json& row, const char* key) {
  auto it = row.find(key);
  if (it == row.end() || !it->is_number()) return std::nan("");
  return it->get<double>();
}

namespace {

// A row's latency percentile in ns: the round trip, or for rows that measure
// one way (an extra's "oneway_<p>_us", e.g. the NATS bridge) that.
double latency_ns(const json& row, const char* p) {
  const double rt = num(row, ("rt_" + std::string(p) + "_ns").c_str());
  if (!std::isnan(rt)) return rt;
  return num(row, ("oneway_" + std::string(p) + "_us").c_str()) * 1000.0;
}

template <class Map>
std::pair<std::size_t, double> nearest(const Map& m, std::size_t size) {
  std::pair<std::size_t, double> best{0, 0};
  double best_d = 1e300;
  for (auto& [k, v] : m) {
    const double d = std::fabs(std::log(static_cast<double>(std::max<std::size_t>(k, 1))) -
                               std::log(static_cast<double>(std::max<std::size_t>(size, 1))));
    if (d < best_d) {
      best_d = d;
      best = {k, v};
    }
  }
  return best;
}

std::string fixed(double v, int prec) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

std::string today_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

}  // namespace

std::string format_ns(double ns) {
  if (std::isnan(ns)) return "-";
  if (ns < 1000) return fixed(ns, 0) + " ns";
  if (ns < 1e6) return fixed(ns / 1e3, ns < 1e4 ? 2 : 1) + " us";
  if (ns < 1e9) return fixed(ns / 1e6, ns < 1e7 ? 2 : 1) + " ms";
  return fixed(ns / 1e9, 2) + " s";
}

std::string format_rate(double per_s) {
  if (std::isnan(per_s)) return "-";
  if (per_s >= 1e6) return fixed(per_s / 1e6, 2) + " M";
  if (per_s >= 1e3) return fixed(per_s / 1e3, 1) + " k";
  return fixed(per_s, 0);
}

void apply_ratio(json& row, const Limits& l) {
  // A row that states its own basis keeps it: one measured between its own
  // cache-line probes (suite.cpp), or an extra whose baseline is not a limit
  // of this machine (the NATS bridge's is raw NATS). The run-wide limits are
  // the fallback for every other row.
  if (row.contains("ratio_basis")) return;
  const std::string w = row.value("workload", "");
  const std::size_t size = row.value("size", std::size_t{0});
  if (is_latency_workload(w)) {
    // By wait class, as the probes (Case::latency_probe): a blocking round
    // trip on two CPUs against the futex round trip, the others against the
    // cache-line round trip.
    const double p50 = num(row, "rt_p50_ns");
    const bool one_cpu = row.contains("cpus") && row["cpus"].is_number() && row["cpus"].get<int>() == 1;
    const bool block = !one_cpu && row.value("wait", "") == "block" && l.futex_rtt_ns > 0;
    const double floor = one_cpu ? l.cacheline_rtt_1cpu_yield_ns : block ? l.futex_rtt_ns : l.cacheline_rtt_ns;
    if (!std::isnan(p50) && floor > 0) {
      row["ratio_to_limit"] = p50 / floor;
      row["ratio_basis"] = one_cpu ? "rt_p50_ns / cacheline_rtt_1cpu_yield_ns"
                           : block ? "rt_p50_ns / futex_rtt_ns"
                                   : "rt_p50_ns / cacheline_rtt_ns";
    }
    return;
  }
  if (size == 0) return;
  if (size <= 1024 && !l.spsc_inproc_msgs_per_s.empty()) {
    const double m = num(row, "msgs_per_s");
    auto [k, v] = nearest(l.spsc_inproc_msgs_per_s, size);
    if (!std::isnan(m) && v > 0) {
      row["ratio_to_limit"] = m / v;
      row["ratio_basis"] = "msgs_per_s / spsc_inproc_msgs_per_s[" + std::to_string(k) + "]";
    }
  } else {
    // Big messages: against the cross-core copy when measured (what any
    // transport between two CPUs can reach), else single-thread memcpy.
    const bool xcore = !l.xcore_copy_gbps.empty();
    const auto& basis = xcore ? l.xcore_copy_gbps : l.memcpy_gbps;
    if (basis.empty()) return;
    const double g = num(row, "gbytes_per_s");
    auto [k, v] = nearest(basis, size);
    if (!std::isnan(g) && v > 0) {
      row["ratio_to_limit"] = g / v;
      row["ratio_basis"] =
          std::string("gbytes_per_s / ") + (xcore ? "xcore_copy_gbps[" : "memcpy_gbps[") + std::to_string(k) + "]";
    }
  }
}

json machine_info() {
  json m;
  m["cpu_model"] = cpu_model();
  m["cores"] = static_cast<int>(std::thread::hardware_concurrency());
  m["cpus_allowed"] = static_cast<int>(allowed_cpus().size());
  m["kernel"] = kernel_release();
  m["host"] = host_name();
  m["date"] = today_iso();
#if defined(__clang__)
  m["compiler"] = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  m["compiler"] = std::string("gcc ") + __VERSION__;
#endif
#if defined(ZIPC_BENCH_LTO)
  m["lto"] = true;  // zipc and the harness built with link-time optimization
#else
  m["lto"] = false;
#endif
  return m;
}

json make_document(const json& machine, const Limits& limits, const json& config, const json& rows, const json& skipped,
                   const json& errors) {
  json d;
  d["schema"] = kSchema;
  d["machine"] = machine;
  d["limits"] = to_json(limits);
  d["config"] = config;
  d["results"] = rows;
  d["skipped"] = skipped;
  d["errors"] = errors;
  return d;
}

json read_document(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  json d;
  try {
    in >> d;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
  }
  if (!d.is_object() || !d.contains("results") || !d["results"].is_array()) {
    throw std::runtime_error(path + ": not a zipc-bench result file (no \"results\" array)");
  }
  return d;
}

void write_document(const std::string& path, const json& doc) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw std::runtime_error("cannot write " + tmp);
    out << doc.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

std::string row_key(const json& r) {
  auto s = [&](const char* k) -> std::string {
    auto it = r.find(k);
    if (it == r.end() || it->is_null()) return "-";
    return it->is_string() ? it->get<std::string>() : it->dump();
  };
  std::string key =
      s("workload") + "|" + s("transport") + "|" + s("size") + "|" + s("wait") + "|" + s("processes") + "|" + s("cpus");
  // Extras' rows told apart by more than the harness's fields (the heap
  // extras' thread and worker counts, the WaitSet extra's queue count).
  for (const char* k : {"threads", "workers", "queues"})
    if (r.contains(k) && !r[k].is_null()) key += std::string("|") + k + "=" + s(k);
  return key;
}

namespace {

bool ref_matches(const ReferenceFigure& f, const json& row) {
  const std::string w = row.value("workload", "");
  if (w != f.workload) return false;
  if (f.size && row.value("size", std::size_t{0}) != f.size) return false;
  const std::string t = row.value("transport", "");
  if (f.transports.empty()) return row.value("family", "") == "zipc" || t.rfind("zipc", 0) == 0;
  return std::find(f.transports.begin(), f.transports.end(), t) != f.transports.end();
}

std::string ratio_text(const json& r) {
  const double v = num(r, "ratio_to_limit");
  if (std::isnan(v)) return "-";
  const std::string basis = r.value("ratio_basis", "");
  if (basis.find("probe_ns") != std::string::npos) {
    // A blocking row that never slept (zipc's block wait polls before it
    // sleeps) reads far under its futex probe: two significant digits.
    const int prec = v < 0.1 ? 3 : v < 1 ? 2 : 1;
    return fixed(v, prec) + (basis.find("futex") != std::string::npos ? "x futex probe" : "x probe");
  }
  if (basis.find(kSameRepetitionMark) != std::string::npos) return fixed(v, 2) + "x one uncontended thread";
  if (basis.find("ring_probe") != std::string::npos) {
    // Stated against the ring measured around each repetition; big rows
    // also against that ring doing the harness's payload work.
    std::string t =
        fixed(v, 3) + (basis.find("cross-core") != std::string::npos ? " of xcore probe" : " of ring probe");
    const double p = num(r, "ratio_to_payload_ring");
    if (!std::isnan(p)) t += ", " + fixed(p, 2) + " of payload ring";
    return t;
  }
  if (basis.find("cacheline") != std::string::npos) return fixed(v, 1) + "x rtt";
  if (basis.find("futex") != std::string::npos) return fixed(v, 1) + "x futex rtt";
  if (basis.find("spsc") != std::string::npos) return fixed(v, 3) + " of spsc";
  if (basis.find("xcore") != std::string::npos) return fixed(v, 3) + " of xcore";
  return fixed(v, 3) + " of memcpy";
}

}  // namespace

bool is_round_trip(const json& r) {
  return r.value("latency", "") == "round trip" || is_latency_workload(r.value("workload", ""));
}

std::string spread_text(const json& r) {
  // Of the row's headline figure: p50 for round trips, msgs/s otherwise.
  const bool rt = is_round_trip(r);
  const char* metric = rt ? "rt_p50_ns" : "msgs_per_s";
  const double med = num(r, metric);
  const double w = spread_width(r, metric);
  if (std::isnan(med) || med <= 0 || w <= 0) return "-";
  return "±" + fixed(w / 2 / med * 100, 0) + "% " + (rt ? "p50" : "rate") +
         (rt && has_two_modes(r) ? ", two modes" : "");
}

namespace {
// The median of a row's repetitions' rates, or its rate without them.
double median_rate(const json& r) {
  auto runs = r.find("msgs_per_s_runs");
  if (runs == r.end() || !runs->is_array() || runs->empty()) return num(r, "msgs_per_s");
  std::vector<double> v;
  for (const auto& x : *runs)
    if (x.is_number()) v.push_back(x.get<double>());
  return v.empty() ? num(r, "msgs_per_s") : median_of(v);
}
}  // namespace

bool has_two_modes(const json& r) {
  auto sp = r.find("spread");
  if (sp == r.end() || !sp->is_object()) return false;
  auto m = sp->find("rt_p50_ns");
  if (m == sp->end() || !m->is_object()) return false;
  const double lo = m->value("min", 0.0), hi = m->value("max", 0.0);
  return lo > 0 && hi > kTwoModes * lo;
}

double spread_width(const json& row, const std::string& metric) {
  auto sp = row.find("spread");
  if (sp != row.end() && sp->is_object()) {
    auto m = sp->find(metric);
    if (m != sp->end() && m->is_object()) return m->value("max", 0.0) - m->value("min", 0.0);
  }
  // Files from before spreads were written kept every flat-out run's rate.
  auto runs = row.find("msgs_per_s_runs");
  if (metric == "msgs_per_s" && runs != row.end() && runs->is_array() && !runs->empty()) {
    double lo = 1e300, hi = -1e300;
    for (const auto& v : *runs) {
      if (!v.is_number()) continue;
      lo = std::min(lo, v.get<double>());
      hi = std::max(hi, v.get<double>());
    }
    return hi > lo ? hi - lo : 0;
  }
  return 0;
}

std::string results_table(const json& doc) {
  std::ostringstream o;
  o << "| workload | size | transport | wait | procs/cpus | p50 | p99 | p99.9 | max | msgs/s | GB/s | spread | vs "
       "limit | author's figure (author's hardware) |\n";
  o << "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : doc["results"]) {
    std::string refs;
    for (const auto& f : reference_figures()) {
      if (!ref_matches(f, r)) continue;
      if (!refs.empty()) refs += "; ";
      refs += f.text;
    }
    // An extra program's row may leave these out (null after merging, extras.cpp).
    auto text = [&](const char* key) {
      return r.contains(key) && !r[key].is_null() ? (r[key].is_string() ? r[key].get<std::string>() : r[key].dump())
                                                  : std::string("-");
    };
    o << "| " << text("workload") << " | " << text("size") << " | " << text("transport") << " | " << text("wait")
      << " | " << text("processes") << "/" << text("cpus") << " | " << format_ns(latency_ns(r, "p50")) << " | "
      << format_ns(latency_ns(r, "p99")) << " | " << format_ns(latency_ns(r, "p999")) << " | "
      << format_ns(num(r, "rt_max_ns")) << " | " << format_rate(num(r, "msgs_per_s")) << " | "
      << (std::isnan(num(r, "gbytes_per_s")) ? "-" : fixed(num(r, "gbytes_per_s"), 3)) << " | " << spread_text(r)
      << " | " << ratio_text(r) << " | " << (refs.empty() ? "" : refs) << " |\n";
  }
  return o.str();
}

json reference_rows(const json& doc) {
  json out = json::array();
  for (const auto& f : reference_figures()) {
    const json* best = nullptr;
    double best_v = -1;
    for (const auto& r : doc["results"]) {
      if (!ref_matches(f, r)) continue;
      const char* metric = f.metric.empty() ? "msgs_per_s" : f.metric.c_str();
      const double v = num(r, metric);
      if (!std::isnan(v) && v > best_v) {
        best_v = v;
        best = &r;
      }
    }
    std::string ours = "no matching row in this run";
    if (best) {
      const std::string metric = f.metric.empty() ? "msgs_per_s" : f.metric;
      ours = (*best)["transport"].get<std::string>() + " " + (*best)["workload"].get<std::string>() + " " +
             std::to_string((*best).value("size", 0)) + " B " + (*best).value("wait", "") + ": " +
             (metric == "gbytes_per_s" ? fixed(best_v, 3) + " GB/s"
                                       : format_rate(best_v) + (metric == "ops_per_s" ? " ops/s" : " msgs/s"));
      if (!f.metric.empty() && f.value > 0) ours += " (" + fixed(best_v / f.value, 2) + "x the author's figure)";
    }
    out.push_back({{"section", f.section}, {"author", f.text}, {"ours", ours}});
  }
  return out;
}

std::string reference_table(const json& doc) {
  std::ostringstream o;
  o << "| ref | author's figure (author's hardware) | ours (this machine, best matching row) |\n|---|---|---|\n";
  for (const auto& r : reference_rows(doc)) {
    o << "| " << r["section"].get<std::string>() << " | " << r["author"].get<std::string>() << " | "
      << r["ours"].get<std::string>() << " |\n";
  }
  return o.str();
}

bool ratio_is_per_repetition(const json& r) {
  return !ratio_probe(r).empty();
}

std::string ratio_probe(const json& r) {
  const std::string basis = r.value("ratio_basis", "");
  if (basis.find(kSameRepetitionMark) != std::string::npos) return kSameRepetitionMark;
  if (basis.find("ring_probe") != std::string::npos) return "ring";
  if (basis.find("probe_ns") == std::string::npos) return "";
  // Files from before the futex probes said "cache-line" in every basis;
  // every row since names its probe in probe_kind.
  std::string kind = r.value("probe_kind", "");
  if (!kind.empty()) return kind;
  return basis.find("futex") != std::string::npos ? kProbeFutex : kProbeCacheLine;
}

namespace {
// The row (an extra program's) carries the cache-line probes measured around
// its program (schedule.hpp, add_host_probes).
bool has_host_probes(const json& r) {
  const double p = num(r, "host_probe_ns");
  return !std::isnan(p) && p > 0;
}

// The row carries the memory-bandwidth probes measured around its program
// (schedule.hpp, add_host_bandwidth).
bool has_bandwidth_probes(const json& r) {
  const double b = num(r, "host_membw_gbps");
  return !std::isnan(b) && b > 0;
}

// A share of the run's CPU time the host took (steal) above which the run
// says more about the host than about the code.
constexpr double kStealShare = 0.05;

}  // namespace

Headline headline(const json& r) {
  if (is_round_trip(r) && !std::isnan(num(r, "rt_p50_ns"))) return {"rt_p50_ns", true};
  for (const char* m : kRateMetrics)
    if (!std::isnan(num(r, m))) return {m, false};
  for (const char* m : kLatencyMetrics)
    if (!std::isnan(num(r, m))) return {m, true};
  return {};
}

namespace {
// For the table: a row's p50 in ns and its rate, whichever fields it has.
double shown_p50_ns(const json& r) {
  const double l = latency_ns(r, "p50");
  if (!std::isnan(l)) return l;
  const double ms = num(r, "p50_ms");
  return std::isnan(ms) ? num(r, "check_ns") : ms * 1e6;
}
double shown_rate(const json& r) {
  const double m = num(r, "msgs_per_s");
  return std::isnan(m) ? num(r, "ops_per_s") : m;
}
}  // namespace

std::string compare_documents(const json& old_doc, const json& new_doc, double threshold, CompareSummary* sum) {
  CompareSummary s;
  std::map<std::string, const json*> old_rows;
  for (const auto& r : old_doc["results"]) old_rows[row_key(r)] = &r;
  std::ostringstream o;
  o << "| row | p50 old | p50 new | change | msgs/s old | msgs/s new | change | verdict |\n"
       "|---|---:|---:|---:|---:|---:|---:|---|\n";
  auto pct = [](double a, double b) -> std::string {
    if (std::isnan(a) || std::isnan(b) || a == 0) return "-";
    const double c = (b - a) / a * 100;
    return (c >= 0 ? "+" : "") + fixed(c, 1) + "%";
  };
  std::map<std::string, bool> seen;
  for (const auto& r : new_doc["results"]) {
    const std::string k = row_key(r);
    auto it = old_rows.find(k);
    if (it == old_rows.end()) {
      ++s.only_new;
      o << "| " << k << " | - | " << format_ns(shown_p50_ns(r)) << " | new | - | " << format_rate(shown_rate(r))
        << " | new | new row |\n";
      continue;
    }
    seen[k] = true;
    ++s.matched;
    const json& a = *it->second;
    const double l0 = shown_p50_ns(a), l1 = shown_p50_ns(r);
    const double m0 = shown_rate(a), m1 = shown_rate(r);
    bool worse = false, better = false;
    // A change counts when it passes the threshold and is wider than the
    // spread of either row's repetitions (a row without repetitions: none),
    // in the row's headline figure, the one its spread is reported for: p50
    // for round trips, msgs/s for the others (a flat-out stream's delivery
    // p50 says how full the queue happened to be, not how fast it went).
    const auto beyond = [&](double v0, double v1, const char* metric) {
      const double d = std::fabs(v1 - v0);
      return d > v0 * threshold && d > spread_width(a, metric) && d > spread_width(r, metric);
    };
    Headline h = headline(a);
    // A round trip with two modes in either run is judged by its rate (the
    // mean round trip, which weighs both modes), not by a p50 that tells
    // which mode held half the round trips (has_two_modes).
    const bool by_rate = h.metric != nullptr && std::string(h.metric) == "rt_p50_ns" &&
                         (has_two_modes(a) || has_two_modes(r)) && !std::isnan(num(a, "msgs_per_s")) &&
                         !std::isnan(num(r, "msgs_per_s"));
    if (by_rate) h = {"msgs_per_s", false};
    if (h.metric != nullptr) {
      // Judged by rate for its two modes: the median of the repetitions'
      // rates (the row's own rate is the one of its median repetition by p50).
      const auto figure = [&](const json& row) { return by_rate ? median_rate(row) : num(row, h.metric); };
      const double v0 = figure(a), v1 = figure(r);
      if (!std::isnan(v0) && !std::isnan(v1) && v0 > 0 && beyond(v0, v1, h.metric)) {
        worse |= h.lower_is_better ? v1 > v0 : v1 < v0;
        better |= h.lower_is_better ? v1 < v0 : v1 > v0;
      }
    }
    bool host = false;
    // Only ratios to the same kind of probe: an old file's blocking row
    // against the cache-line probe and a new one's against the futex probe
    // are judged by their figure alone.
    if ((worse || better) && !by_rate && ratio_is_per_repetition(a) && ratio_probe(a) == ratio_probe(r)) {
      // Lower is better for a latency row's ratio, higher for a throughput row's.
      const double q0 = num(a, "ratio_to_limit"), q1 = num(r, "ratio_to_limit");
      const bool q_worse = is_round_trip(a) ? q1 > q0 : q1 < q0;
      if (std::isnan(q0) || std::isnan(q1) || q0 <= 0 || !beyond(q0, q1, "ratio_to_limit") || q_worse != worse) {
        host = true;
        worse = better = false;
      }
    }
    if ((worse || better) && !host && has_host_probes(a) && has_host_probes(r)) {
      // An extra program's row, measured between cache-line probes: measured
      // while the host moved the vCPUs (its probes disagree), or in another
      // placement than the old row that made the figure move this way.
      const double p0 = num(a, "host_probe_ns"), p1 = num(r, "host_probe_ns");
      const bool unsettled = a.value("host_probe_unsettled", false) || r.value("host_probe_unsettled", false);
      const bool placement = !brackets_agree(p0, p1) && (p1 > p0) == worse;
      if (unsettled || placement) {
        host = true;
        worse = better = false;
      }
    }
    if ((worse || better) && !host && has_bandwidth_probes(a) && has_bandwidth_probes(r)) {
      // The same for the memory bandwidth the host gave (a row that streams
      // from memory follows it; the cache-line probe does not see it) and
      // the CPU time it took away: measured while the bandwidth moved, with
      // a bandwidth that moved the way the figure did, or with a share of
      // its CPU time stolen.
      const double b0 = num(a, "host_membw_gbps"), b1 = num(r, "host_membw_gbps");
      const bool unsettled = a.value("host_membw_unsettled", false) || r.value("host_membw_unsettled", false);
      const bool moved = !brackets_agree(b0, b1) && (b1 < b0) == worse;
      const double steal = std::max(a.value("host_steal_share", 0.0), r.value("host_steal_share", 0.0));
      if (unsettled || moved || steal > kStealShare) {
        host = true;
        worse = better = false;
      }
    }
    const char* verdict = worse ? "REGRESSION" : better ? "improved" : host ? "host moved" : "same";
    if (host) ++s.host_moved;
    if (worse) ++s.regressions;
    if (better && !worse) ++s.improvements;
    o << "| " << k << " | " << format_ns(l0) << " | " << format_ns(l1) << " | " << pct(l0, l1) << " | "
      << format_rate(m0) << " | " << format_rate(m1) << " | " << pct(m0, m1) << " | " << verdict << " |\n";
  }
  for (const auto& [k, r] : old_rows) {
    if (seen.count(k)) continue;
    ++s.only_old;
    o << "| " << k << " | " << format_ns(shown_p50_ns(*r)) << " | - | gone | " << format_rate(shown_rate(*r))
      << " | - | gone | missing in new |\n";
  }
  o << "\n"
    << s.matched << " rows compared: " << s.regressions << " regressions, " << s.improvements
    << " improvements (threshold " << fixed(threshold * 100, 0)
    << "% and wider than both rows' spreads across repetitions), " << s.host_moved
    << " moved with the probes measured around them (host moved), " << s.only_new << " new, " << s.only_old
    << " missing.\n";
  if (sum) *sum = s;
  return o.str();
}

}  // namespace zipc::bench
