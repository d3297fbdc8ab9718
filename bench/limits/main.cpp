// zipc-limits: what this machine allows, measured in one run: cache-line round
// trip between two processes on two CPUs and on one CPU (with yield), futex
// wake round trip, memcpy bandwidth, an in-process SPSC ring. Prints a table;
// --json FILE writes the figures (the harness embeds the same under "limits").
// --probes N prints N pairs of the short probes the harness brackets runs
// with (cache-line and futex, two CPUs), to see how far two neighbours differ.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "../limits.hpp"
#include "../results.hpp"
#include "../sysinfo.hpp"

int main(int argc, char** argv) {
  CLI::App app{"zipc-limits: the hardware floor every zipc benchmark is compared with"};
  std::string json_path, cpus;
  bool full = false;
  int probes = 0;
  app.add_option("--json", json_path, "write the figures to this file");
  app.add_option("--cpus", cpus, "two comma-separated CPUs to use (default: the first two allowed)");
  app.add_flag("--full", full, "longer, steadier measurement");
  app.add_option("--probes", probes,
                 "print N short cache-line and futex probes (the harness's brackets) instead of the limits")
      ->check(CLI::Range(1, 10000));
  CLI11_PARSE(app, argc, argv);
  zipc::bench::LimitsOptions opt;
  std::stringstream ss(cpus);
  std::string item;
  try {
    while (std::getline(ss, item, ','))
      if (!item.empty()) opt.cpus.push_back(std::stoi(item));
  } catch (const std::exception&) {
    std::fprintf(stderr, "zipc-limits: --cpus: \"%s\" is not a CPU number\n", item.c_str());
    return 2;
  }
  if (probes > 0) {
    const std::vector<int> all = opt.cpus.empty() ? zipc::bench::allowed_cpus() : opt.cpus;
    if (all.size() < 2) {
      std::fprintf(stderr, "zipc-limits: --probes needs two CPUs (%zu allowed)\n", all.size());
      return 2;
    }
    // Each probe beside the one before it, as the harness compares a run's
    // two brackets (kProbeAgreement).
    std::printf("| probe | cache-line ns | x previous | futex ns | x previous |\n|---:|---:|---:|---:|---:|\n");
    double last_c = 0, last_f = 0;
    const auto apart = [](double a, double b) { return a > 0 && b > 0 ? std::max(a, b) / std::min(a, b) : 0.0; };
    for (int k = 1; k <= probes; ++k) {
      const double c = zipc::bench::cacheline_probe_ns(all[0], all[1]);
      const double f = zipc::bench::futex_probe_ns(all[0], all[1]);
      std::printf("| %d | %.1f | %.2f | %.0f | %.2f |\n", k, c, apart(c, last_c), f, apart(f, last_f));
      last_c = c;
      last_f = f;
    }
    return 0;
  }
  opt.scale = full ? 4.0 : 1.0;
  const auto limits = zipc::bench::measure_limits(opt);
  std::printf("%s", zipc::bench::limits_table(limits).c_str());
  if (!json_path.empty()) {
    nlohmann::json doc = {{"machine", zipc::bench::machine_info()}, {"limits", zipc::bench::to_json(limits)}};
    std::ofstream out(json_path);
    out << doc.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "zipc-limits: cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::printf("wrote %s\n", json_path.c_str());
  }
  return 0;
}
