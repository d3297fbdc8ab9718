#include "peer_common.hpp"

#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "results.hpp"

namespace zipc::bench {

PeerArgs parse_peer_args(int argc, char** argv, const char* what) {
  PeerArgs a;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--full") == 0) {
      a.full = true;
    } else if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      a.out = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--full] --out FILE\n  %s\n", argv[0], what);
      std::exit(2);
    }
  }
  if (a.out.empty()) {
    std::fprintf(stderr, "usage: %s [--full] --out FILE\n  %s\n", argv[0], what);
    std::exit(2);
  }
  return a;
}

std::uint64_t mono_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

nlohmann::json round_trip_row(const std::string& workload, const std::string& transport, std::size_t size,
                              std::vector<std::uint64_t> samples, double seconds, int cpus) {
  nlohmann::json row;
  const std::size_t n = samples.size();
  const Percentiles p = percentiles(samples);
  row["workload"] = workload;
  row["transport"] = transport;
  row["family"] = "peer";
  row["size"] = size;
  row["wait"] = "block";
  row["processes"] = 2;
  row["cpus"] = cpus;
  row["rt_p50_ns"] = p.p50;
  row["rt_p99_ns"] = p.p99;
  row["rt_p999_ns"] = p.p999;
  row["rt_max_ns"] = p.max;
  row["latency"] = "round trip";
  row["iterations"] = n;
  row["samples"] = n;
  if (seconds > 0) {
    row["msgs_per_s"] = static_cast<double>(n) / seconds;
    row["gbytes_per_s"] = static_cast<double>(n) * 2.0 * static_cast<double>(size) / seconds / 1e9;
  }
  row["lost"] = 0;
  return row;
}

bool write_rows(const std::string& path, const nlohmann::json& rows) {
  std::ofstream out(path);
  out << rows.dump(2) << "\n";
  return static_cast<bool>(out);
}

}  // namespace zipc::bench
