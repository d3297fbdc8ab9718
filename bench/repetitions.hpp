// A figure measured several times: the median a row reports, and every
// repetition with their spread, as every row carries them (so `zipc-bench
// --compare` flags a change only beyond both runs' spreads). Shared by the
// harness (suite.cpp) and the bench/extra programs.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zipc::bench {

// Repetitions of a row by default (the harness's rows and the extras'; --full
// runs more). Five, not three: `--compare` flags a change beyond both rows'
// ranges, and two medians of three draws from one and the same distribution
// land outside both ranges of three for 6% of rows (0.4% with five, 0.02%
// with seven), so over the ~165 zipc rows of a run three repetitions flag
// about ten rows that did not change (docs/design/bench.md, "How many
// repetitions").
inline constexpr int kDefaultRepetitions = 5;
inline constexpr int kFullRepetitions = 7;
inline constexpr int repetitions_for(bool full) {
  return full ? kFullRepetitions : kDefaultRepetitions;
}

// In a row's ratio_basis: its ratio_to_limit is each repetition's figure
// over a baseline measured in that same repetition (heap_map: one
// uncontended thread), so --compare judges it like a ratio to a bracketing
// probe (results.hpp, ratio_is_per_repetition).
inline constexpr const char* kSameRepetitionMark = "same_repetition";

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// {min, max, rel}: rel is (max - min) / median.
inline nlohmann::json spread_of(const std::vector<double>& v) {
  if (v.empty()) return {{"min", 0.0}, {"max", 0.0}, {"rel", 0.0}};
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double med = median_of(v);
  return {{"min", *lo}, {"max", *hi}, {"rel", med > 0 ? (*hi - *lo) / med : 0.0}};
}

// Adds "<metric>_runs", "spread": {"<metric>": spread_of(runs)} and
// "repetitions" to row; the row's own "<metric>" is the caller's.
inline void add_repetitions(nlohmann::json& row, const std::string& metric, const std::vector<double>& runs) {
  if (runs.empty()) return;
  row[metric + "_runs"] = runs;
  row["repetitions"] = runs.size();
  row["spread"] = {{metric, spread_of(runs)}};
}

}  // namespace zipc::bench
