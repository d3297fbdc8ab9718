// Extra benchmark programs: every zipc-bench-<name> next to zipc-bench is run
// as `zipc-bench-<name> [--full] --out FILE` and its rows are merged (the
// contract is in docs/design/bench.md, "Adding a workload that is not a
// one-way channel").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zipc::bench {

struct ExtraProgram {
  std::string name;  // "rpc" for zipc-bench-rpc
  std::string path;
};

// Programs named zipc-bench-* in dir (not zipc-bench itself), sorted.
std::vector<ExtraProgram> find_extras(const std::string& dir);

// Peer programs the suite expects; each missing one is reported as skipped.
const std::vector<std::pair<std::string, std::string>>& expected_peer_programs();

struct ExtraOutcome {
  bool ok = false;
  std::string error;  // when !ok
  nlohmann::json rows = nlohmann::json::array();
  // Rows the program wrote as failed ({"workload", ..., "error": "why"}: a row
  // it killed after a time limit, say), as {"what", "error"}; not in rows.
  nlohmann::json row_errors = nlohmann::json::array();
  double seconds = 0;
};
// "workload/transport/size/wait": what --filter matches an extra's row by,
// and what an error names it by.
std::string extra_row_id(const nlohmann::json& row);

// Runs one program with a hard timeout; validates the rows it wrote.
ExtraOutcome run_extra(const ExtraProgram& p, bool full, double timeout_s, const std::string& tmp_dir);

// True when some row carries no "spread": a program (a peer's) that measures
// once per invocation. The harness then invokes it again (kDefaultRepetitions
// in all) and merges the invocations, so every row has a spread.
bool lacks_spreads(const nlohmann::json& rows);
// The rows of several invocations of one program, merged per row (row_key):
// the invocation whose headline figure (p50 of a round trip, else its rate)
// is the median, with every invocation's figures under "<metric>_runs", their
// spread under "spread" (every figure a headline can be, kRateMetrics and
// kLatencyMetrics: whichever all of them have) and "repetitions". A row
// some invocations lack is merged from those that have it.
nlohmann::json merge_invocations(const std::vector<nlohmann::json>& invocations);

// The directory holding the running executable.
std::string self_dir();

}  // namespace zipc::bench
