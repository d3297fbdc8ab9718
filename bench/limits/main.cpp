// zipc-limits: what this machine allows, measured in one run: cache-line round
// trip between two processes on two CPUs and on one CPU (with yield), futex
// wake round trip, memcpy bandwidth, an in-process SPSC ring. Prints a table;
// --json FILE writes the figures (the harness embeds the same under "limits").
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "../limits.hpp"
#include "../results.hpp"

int main(int argc, char** argv) {
  CLI::App app{"zipc-limits: the hardware floor every zipc benchmark is compared with"};
  std::string json_path, cpus;
  bool full = false;
  app.add_option("--json", json_path, "write the figures to this file");
  app.add_option("--cpus", cpus, "two comma-separated CPUs to use (default: the first two allowed)");
  app.add_flag("--full", full, "longer, steadier measurement");
  CLI11_PARSE(app, argc, argv);
  zipc::bench::LimitsOptions opt;
  std::stringstream ss(cpus);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) opt.cpus.push_back(std::stoi(item));
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
