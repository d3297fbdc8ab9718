// A figure measured several times: the median the row reports, and every
// repetition with their spread, as zipc-bench's own rows carry them (so
// `zipc-bench --compare` flags a change only beyond both runs' spreads).
// Shared by the bench/extra programs.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zipc::bench {

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Adds "<metric>_runs", "spread": {"<metric>": {min, max, rel}} and
// "repetitions" to row; the row's own "<metric>" is the caller's.
inline void add_repetitions(nlohmann::json& row, const std::string& metric, const std::vector<double>& runs) {
  if (runs.empty()) return;
  const auto [lo, hi] = std::minmax_element(runs.begin(), runs.end());
  const double med = median_of(runs);
  row[metric + "_runs"] = runs;
  row["repetitions"] = runs.size();
  row["spread"] = {{metric, {{"min", *lo}, {"max", *hi}, {"rel", med > 0 ? (*hi - *lo) / med : 0.0}}}};
}

}  // namespace zipc::bench
