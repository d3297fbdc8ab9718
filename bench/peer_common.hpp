// Helpers for the peer programs (zipc-bench-grpc, zipc-bench-zmq-reqrep):
// the extra-program contract (`[--full] --out FILE`, a JSON array of rows)
// and the same timing and row fields as the harness.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zipc::bench {

struct PeerArgs {
  bool full = false;
  std::string out;
};
// Parses [--full] --out FILE; prints usage and exits 2 on anything else.
PeerArgs parse_peer_args(int argc, char** argv, const char* what);

std::uint64_t mono_ns() noexcept;

// A round-trip row in the harness's format: percentiles of samples, rates
// from the measured wall time.
nlohmann::json round_trip_row(const std::string& workload, const std::string& transport, std::size_t size,
                              std::vector<std::uint64_t> samples, double seconds, int cpus);

// Writes rows to path (a JSON array); false on error.
bool write_rows(const std::string& path, const nlohmann::json& rows);

}  // namespace zipc::bench
