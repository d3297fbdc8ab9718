// Result rows, the result file (schema in docs/design/bench.md), the markdown
// table with the authors' reference figures, and --compare.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "limits.hpp"

namespace zipc::bench {

inline constexpr const char* kSchema = "zipc-bench/1";

struct Percentiles {
  double p50 = 0, p99 = 0, p999 = 0, max = 0;
};
// Nearest-rank percentiles of the samples (sorted in place).
Percentiles percentiles(std::vector<std::uint64_t>& samples);

// Adds ratio_to_limit / ratio_basis to a row that has none (rows measured
// between their own probes have theirs) when a limit applies:
// latency workloads (pingpong*, reqrep*, rpc*): rt_p50_ns / the run's round
// trip of the row's wait class: futex for "block" on two CPUs, cache-line
// otherwise, with yield for one-CPU rows (>= 1, lower is better);
// throughput workloads: msgs_per_s / in-process SPSC ring (size <= 1 KiB) or
// gbytes_per_s / memcpy at the nearest size (<= 1, higher is better).
void apply_ratio(nlohmann::json& row, const Limits& limits);

nlohmann::json machine_info();
// The whole result document.
nlohmann::json make_document(const nlohmann::json& machine, const Limits& limits, const nlohmann::json& config,
                             const nlohmann::json& rows, const nlohmann::json& skipped, const nlohmann::json& errors);
// Throws std::runtime_error on unreadable or malformed files.
nlohmann::json read_document(const std::string& path);
void write_document(const std::string& path, const nlohmann::json& doc);

// A row's identity for --compare: workload|transport|size|wait|processes|cpus.
std::string row_key(const nlohmann::json& row);

// Markdown: the results table (with the authors' figures beside the rows they
// describe), then every reference figure with our closest row.
std::string results_table(const nlohmann::json& doc);
std::string reference_table(const nlohmann::json& doc);
// The same as data: [{section, author, ours}], stored in the document as "reference".
nlohmann::json reference_rows(const nlohmann::json& doc);

// max - min of a row's figure across its repetitions ("spread" in the row;
// for older files msgs_per_s_runs); 0 when the row has no repetitions.
double spread_width(const nlohmann::json& row, const std::string& metric);

// "±N% p50" / "±N% rate": half the spread of the row's headline figure over
// its median (", two modes" after a round trip's that has_two_modes).
std::string spread_text(const nlohmann::json& row);

// A round trip whose repetitions' p50s lie more than kTwoModes apart has two
// modes: a blocking wait that finds the answer before it sleeps in some round
// trips and is woken in the others (~0.5 us against ~30 us here). Its p50
// then says which mode held half the round trips, a coin toss between runs,
// so `--compare` judges it by its rate (the mean round trip, which weighs
// both modes) and the table says so.
inline constexpr double kTwoModes = 4.0;
bool has_two_modes(const nlohmann::json& row);

// A row's numeric field; NaN when it is absent or not a number.
double num(const nlohmann::json& row, const char* key);

// The figure a row is judged by: p50 for a round trip; else its rate
// (messages, or an extra's operations, per second); else the latency an
// extra reports (one-way p50, a recovery's p50, a liveness check). No
// metric when the row has none of them.
struct Headline {
  const char* metric = nullptr;
  bool lower_is_better = false;
};
// The figures headline() picks from besides a round trip's p50: rates
// (higher is better), then latencies (lower is better; rt_p50_ns for a row
// that is no round trip).
inline constexpr std::array<const char*, 2> kRateMetrics = {"msgs_per_s", "ops_per_s"};
inline constexpr std::array<const char*, 4> kLatencyMetrics = {"rt_p50_ns", "oneway_p50_us", "p50_ms", "check_ns"};
Headline headline(const nlohmann::json& row);

// A round-trip row (headline figure: p50) rather than a throughput row (msgs/s).
bool is_round_trip(const nlohmann::json& row);

// True when the row's ratio_to_limit is against the probes measured around
// each of its repetitions (cache-line, futex or ring) or around its extra
// program, or against a baseline measured in each of its repetitions
// (kSameRepetitionMark), not the run's limits.
bool ratio_is_per_repetition(const nlohmann::json& row);
// Which probe that ratio is against: "2cpu", "1cpu-yield", "futex" (its
// probe_kind; older files: from the basis), "ring", kSameRepetitionMark;
// empty for a ratio to the run's limits or none. --compare weighs two rows'
// ratios only when they are against the same kind.
std::string ratio_probe(const nlohmann::json& row);

struct CompareSummary {
  int matched = 0, regressions = 0, improvements = 0, only_old = 0, only_new = 0;
  int host_moved = 0;  // moved beyond the spreads, but not against the probes measured around it
};
// Markdown table of the change per row; a change in p50 latency or
// throughput is flagged when it passes threshold (0.10 = 10%) and is wider
// than both rows' spreads across their repetitions. When both rows were
// measured between their own probes of the same kind (ratio_probe) or
// against a baseline of each repetition, their ratios to those must have
// moved the same way too: a change of the figure
// that the probes moved with is the host's ("host moved"), not the code's.
// An extra program's row is the host's too when either row's program ran
// while its probes disagreed, or when the two rows' probes disagree and the
// figure moved the way the probe did (slower probe, worse figure).
std::string compare_documents(const nlohmann::json& old_doc, const nlohmann::json& new_doc, double threshold,
                              CompareSummary* summary);

std::string format_ns(double ns);
std::string format_rate(double per_s);

}  // namespace zipc::bench
