// The message of the typed examples and of the serialization benchmark:
// a 1 KiB market snapshot (two ids, a symbol, 124 price levels).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace zipc_example {

inline constexpr std::size_t kLevels = 124;
inline constexpr char kSymbol[] = "ZIPC.EXAMPLE";

struct Snapshot {
  std::uint64_t id;
  std::uint64_t ts;
  char symbol[16];
  double levels[kLevels];
};
static_assert(sizeof(Snapshot) == 1024, "the example message is 1 KiB");

// The value of level i in message id (what every reader checks).
inline double level_value(std::uint64_t id, std::size_t i) {
  return static_cast<double>(id) * 0.25 + static_cast<double>(i);
}

inline void fill(Snapshot& s, std::uint64_t id) {
  s.id = id;
  s.ts = id * 1000;
  std::memcpy(s.symbol, kSymbol, sizeof kSymbol);
  for (std::size_t i = 0; i < kLevels; ++i) s.levels[i] = level_value(id, i);
}

// Reads every level (as a consumer would) and says whether the message is
// the one numbered id. *sum accumulates, so the compiler cannot skip reads.
inline bool check_levels(std::uint64_t id, std::span<const double> levels, double* sum) {
  if (levels.size() != kLevels) return false;
  double s = 0;
  for (double v : levels) s += v;
  *sum += s;
  return levels[0] == level_value(id, 0) && levels[kLevels - 1] == level_value(id, kLevels - 1);
}

}  // namespace zipc_example
