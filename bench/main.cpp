// zipc-bench: the benchmark harness. Measures the machine's limits, runs every
// workload over every registered transport in real processes, runs the extra
// programs next to it, prints a markdown table and writes the result JSON.
//   zipc-bench                      # default suite (a few minutes)
//   zipc-bench --full               # long suite
//   zipc-bench --filter 'pingpong/unix' --sizes 64,4096
//   zipc-bench --compare old.json new.json
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "extras.hpp"
#include "limits.hpp"
#include "repetitions.hpp"
#include "results.hpp"
#include "schedule.hpp"
#include "suite.hpp"
#include "sysinfo.hpp"

// Where a run goes without --json: bench/CMakeLists.txt sets the build
// directory's bench-results/, so results never land in the source tree.
#ifndef ZIPC_BENCH_RESULTS_DIR
#define ZIPC_BENCH_RESULTS_DIR "bench-results"
#endif
#ifndef ZIPC_BENCH_SKIPPED_PEERS
#define ZIPC_BENCH_SKIPPED_PEERS ""
#endif

using namespace zipc::bench;
using nlohmann::json;

namespace {

template <class T>
std::vector<T> parse_list(const std::string& s) {
  std::vector<T> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    std::size_t mult = 1;
    if (!item.empty() && (item.back() == 'k' || item.back() == 'K')) {
      mult = 1024;
      item.pop_back();
    }
    out.push_back(static_cast<T>(std::stoull(item) * mult));
  }
  return out;
}

std::vector<std::string> skipped_peers() {
  std::vector<std::string> out;
  std::stringstream ss(ZIPC_BENCH_SKIPPED_PEERS);
  std::string item;
  while (std::getline(ss, item, ';'))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string help_footer() {
  std::ostringstream o;
  o << "\nWorkloads (default sizes; --full sizes):\n";
  for (const auto& w : workloads()) {
    o << "  " << w.name << std::string(w.name.size() < 15 ? 15 - w.name.size() : 1, ' ') << w.description << " [";
    for (std::size_t i = 0; i < w.default_sizes.size(); ++i) o << (i ? "," : "") << w.default_sizes[i];
    o << "]\n";
  }
  o << "\nTransports (wait modes):\n";
  for (const auto& t : all_transports()) {
    o << "  " << t->name() << std::string(t->name().size() < 16 ? 16 - t->name().size() : 1, ' ') << t->family()
      << "  ";
    bool first = true;
    for (Wait w : t->waits()) {
      o << (first ? "" : ",") << to_string(w);
      first = false;
    }
    o << "\n";
  }
  o << "\nExtra programs next to this one (run as zipc-bench-<name> [--full] --out FILE):\n";
  auto extras = find_extras(self_dir());
  if (extras.empty()) o << "  (none found)\n";
  for (const auto& e : extras) o << "  " << e.name << "\n";
  for (const auto& s : skipped_peers()) o << "  skipped at build time: " << s << "\n";
  o << "\nRows are selected with --filter, a regex over \"workload/transport/size/wait\".\n";
  return o.str();
}

std::string default_json_path(const std::string& host) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%d", &tm);
  return std::string(ZIPC_BENCH_RESULTS_DIR) + "/" + b + "-" + host + ".json";
}

struct Progress {
  bool tty = ::isatty(2);
  void show(std::size_t i, std::size_t n, const std::string& what) const {
    if (tty) {
      std::fprintf(stderr, "\r\033[K[%3zu/%zu] %s", i, n, what.c_str());
    } else {
      std::fprintf(stderr, "[%3zu/%zu] %s\n", i, n, what.c_str());
    }
    std::fflush(stderr);
  }
  void done() const {
    if (tty) std::fprintf(stderr, "\r\033[K");
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zipc-bench: zipc against every other way to move bytes between processes on this machine"};
  SuiteOptions opt;
  std::string sizes, cpus, json_path, markdown_path;
  std::vector<std::string> compare;
  bool no_extras = false, no_limits = false, list = false;
  double threshold = 0.10;
  double extra_timeout = 0;
  app.add_flag("--full", opt.full, "long suite: more sizes, longer runs");
  app.add_option("--filter", opt.filter,
                 "regex over \"workload/transport/size/wait\"; extras run if it matches their name");
  app.add_option("--sizes", sizes, "comma-separated payload sizes in bytes (k = KiB), e.g. 64,4k");
  app.add_option("--iterations", opt.iterations, "round trips / messages per sender per run");
  app.add_option("--budget", opt.budget_s, "seconds each run measures at most (default 0.2, --full 3)");
  app.add_option("--repetitions", opt.repetitions,
                 "repetitions of each row, alternating with the other transports of its workload and size; the "
                 "median is reported with the spread (default 5)");
  app.add_option("--cpus", cpus, "comma-separated CPUs to pin processes to (default: all allowed)");
  app.add_option("--json", json_path, "result file (default " ZIPC_BENCH_RESULTS_DIR "/<date>-<host>.json)");
  app.add_option("--markdown", markdown_path, "also write the tables to this file");
  app.add_option("--compare", compare, "OLD.json NEW.json: print the change per row, then exit")->expected(2);
  app.add_option("--threshold", threshold, "--compare: relative change flagged as a regression (default 0.10)");
  app.add_flag("--no-extras", no_extras, "do not run the zipc-bench-* programs");
  app.add_flag("--no-limits", no_limits, "skip the limits probe (ratios are then omitted)");
  app.add_flag("--list", list, "print the cases the options select, then exit");
  app.add_option("--extra-timeout", extra_timeout, "seconds an extra program may run (default 300, --full 900)");
  app.footer(help_footer());
  CLI11_PARSE(app, argc, argv);

  try {
    if (!compare.empty()) {
      CompareSummary s;
      std::cout << compare_documents(read_document(compare[0]), read_document(compare[1]), threshold, &s);
      return 0;
    }
    if (!sizes.empty()) opt.sizes = parse_list<std::size_t>(sizes);
    if (!cpus.empty()) opt.cpus = parse_list<int>(cpus);
    if (opt.cpus.empty()) opt.cpus = allowed_cpus();
    if (!opt.filter.empty()) std::regex check(opt.filter);  // throws on a bad pattern

    auto transports = all_transports();
    json skipped = json::array(), errors = json::array(), rows = json::array();
    for (const auto& s : skipped_peers()) {
      std::printf("skipped: %s\n", s.c_str());
      skipped.push_back({{"what", s.substr(0, s.find(':'))}, {"why", s}});
    }
    auto cases = build_cases(transports, opt, &skipped);
    if (list) {
      for (const auto& c : cases) std::printf("%s\n", c.id().c_str());
      return 0;
    }
    const json machine = machine_info();
    std::printf("zipc-bench on %s: %s, %d CPUs (using %zu), kernel %s\n", machine["host"].get<std::string>().c_str(),
                machine["cpu_model"].get<std::string>().c_str(), machine["cores"].get<int>(), opt.cpus.size(),
                machine["kernel"].get<std::string>().c_str());
    if (opt.cpus.size() < 2) {
      std::printf("note: only %zu CPU available: processes share it; cross-CPU figures are not measured\n",
                  opt.cpus.size());
    } else {
      std::printf(
          "note: %zu CPUs: two-process runs get one CPU each; fan-out and many-to-many runs with more "
          "processes than CPUs share them (the row says so)\n",
          opt.cpus.size());
    }

    Limits limits;
    if (!no_limits) {
      std::fprintf(stderr, "measuring this machine's limits...\n");
      LimitsOptions lo;
      lo.cpus = opt.cpus;
      lo.scale = opt.full ? 4.0 : 1.0;
      limits = measure_limits(lo);
      std::printf("\n## Limits of this machine (this run)\n\n%s\n", limits_table(limits).c_str());
    }

    Progress prog;
    ScheduleOptions so;
    so.probes = !no_limits;
    so.progress = [&](std::size_t k, std::size_t n, const std::string& what) { prog.show(k, n, what); };
    const std::string probes_started = machine_info()["date"].get<std::string>();
    ScheduleOutput ran = run_schedule(cases, so);
    prog.done();
    for (const auto& e : ran.errors) {
      std::printf("ERROR %s: %s\n", e["what"].get<std::string>().c_str(), e["error"].get<std::string>().c_str());
      errors.push_back(e);
    }
    for (auto& row : ran.rows) {
      if (!no_limits) apply_ratio(row, limits);
      rows.push_back(row);
    }

    if (!no_extras) {
      const std::string dir = self_dir();
      const auto extras = find_extras(dir);
      for (const auto& peer : expected_peer_programs()) {
        const std::string& name = peer.first;
        const std::string& what = peer.second;
        const bool found = std::any_of(extras.begin(), extras.end(), [&](const auto& e) { return e.name == name; });
        if (!found) {
          std::printf("skipped: %s (zipc-bench-%s not built: %s)\n", name.c_str(), name.c_str(), what.c_str());
          skipped.push_back({{"what", name}, {"why", "zipc-bench-" + name + " not built (" + what + ")"}});
        }
      }
      std::regex filter;
      if (!opt.filter.empty()) filter = std::regex(opt.filter, std::regex::ECMAScript | std::regex::icase);
      std::size_t k = 0;
      for (const auto& e : extras) {
        ++k;
        const bool name_match = opt.filter.empty() || std::regex_search(e.name, filter);
        prog.show(k, extras.size(), "extra program zipc-bench-" + e.name);
        const double timeout = extra_timeout > 0 ? extra_timeout : (opt.full ? 900 : 300);
        // Between cache-line and futex probes like the suite's latency rows
        // (once more when the cache-line ones disagree: the host moved the
        // vCPUs while it ran).
        ExtraOutcome out;
        HostBrackets host;
        const auto run_it = [&] {
          out = run_extra(e, opt.full, timeout, "/tmp");
          if (!out.ok || !lacks_spreads(out.rows)) return out.ok;
          // A program that measures once per invocation (the peers'): invoked
          // again, so that its rows carry a spread like every other row.
          std::vector<json> invocations{out.rows};
          for (int i = 1; i < repetitions_for(opt.full); ++i) {
            ExtraOutcome again = run_extra(e, opt.full, timeout, "/tmp");
            if (!again.ok) {
              out = again;
              return false;
            }
            out.seconds += again.seconds;
            for (auto& x : again.row_errors) out.row_errors.push_back(std::move(x));
            invocations.push_back(std::move(again.rows));
          }
          out.rows = merge_invocations(invocations);
          return true;
        };
        if (no_limits)
          run_it();
        else
          host = run_between_cacheline_probes("extra zipc-bench-" + e.name, opt.cpus.front(),
                                              opt.cpus.size() > 1 ? opt.cpus[1] : opt.cpus.front(), kMaxExtraRetries,
                                              &ran.prober, run_it, /*bandwidth=*/true);
        prog.done();
        if (!out.ok) {
          std::printf("ERROR extra zipc-bench-%s: %s\n", e.name.c_str(), out.error.c_str());
          errors.push_back({{"what", "zipc-bench-" + e.name}, {"error", out.error}});
          continue;
        }
        std::size_t kept = 0;
        for (auto& r : out.rows) {
          if (!name_match) {
            if (!std::regex_search(extra_row_id(r), filter)) continue;
          }
          if (!no_limits) {
            add_host_ratio(&r, host);  // round trips: against the probes of their wait class
            apply_ratio(r, limits);
            add_host_probes(&r, host.before_ns, host.after_ns, host.attempts);
            add_host_bandwidth(&r, host, static_cast<int>(std::thread::hardware_concurrency()));
          }
          rows.push_back(r);
          ++kept;
        }
        // A row the program gave up on (in any invocation) is an error, once.
        std::set<std::string> failed;
        for (const auto& x : out.row_errors) {
          const std::string what = x["what"].get<std::string>();
          if ((!name_match && !std::regex_search(what, filter)) || !failed.insert(what).second) continue;
          std::printf("ERROR extra zipc-bench-%s: %s: %s\n", e.name.c_str(), what.c_str(),
                      x["error"].get<std::string>().c_str());
          errors.push_back(x);
        }
        std::fprintf(stderr, "zipc-bench-%s: %zu rows in %.1f s\n", e.name.c_str(), kept, out.seconds);
      }
    }

    json config = {{"full", opt.full},
                   {"filter", opt.filter},
                   {"cpus", opt.cpus},
                   {"budget_s", opt.budget_s},
                   {"repetitions", opt.repetitions > 0 ? opt.repetitions : kDefaultRepetitions},
                   {"iterations", opt.iterations}};
    json doc = make_document(machine, limits, config, rows, skipped, errors);
    doc["reference"] = reference_rows(doc);
    // Every bracketing probe, in order, seconds from the start of the suite.
    doc["probes"] = {{"started", probes_started},
                     {"agreement", kProbeAgreement},
                     {"max_retries", kMaxRetries},
                     {"max_retries_extras", kMaxExtraRetries},
                     {"retry_max_seconds", kRetryMaxSeconds},
                     {"log", probes_to_json(ran.prober.log())}};
    if (json_path.empty()) json_path = default_json_path(machine["host"].get<std::string>());
    write_document(json_path, doc);

    std::ostringstream md;
    md << "## Results\n\n"
       << "Latency columns: round trip for pingpong/reqrep, one way (send to receipt) for the others. msgs/s: round "
          "trips/s for pingpong/reqrep. vs limit: latency / the probe of its wait class measured around it (futex "
          "round trip for block rows on two "
          "CPUs, else cache-line round trip), or throughput / in-process SPSC "
          "ring (<= 1 KiB) or, larger, the cross-core copy (xcore: that ring copying each message in and out; memcpy "
          "on one CPU).\n\n"
       << results_table(doc) << "\n## Reference figures (docs/design/reference.md) beside ours\n\n"
       << reference_table(doc);
    std::printf("\n%s\n", md.str().c_str());
    if (!markdown_path.empty()) {
      std::FILE* f = std::fopen(markdown_path.c_str(), "w");
      if (f) {
        std::fprintf(f, "%s", (std::string("## Limits\n\n") + limits_table(limits) + "\n" + md.str()).c_str());
        std::fclose(f);
      }
    }
    std::printf("%zu rows, %zu skipped, %zu errors; results: %s\n", rows.size(), skipped.size(), errors.size(),
                json_path.c_str());
    return errors.empty() ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipc-bench: %s\n", e.what());
    return 1;
  }
}
