// Alternating repetitions, rows with median and spread, rows measured
// against their bracketing probes, and --compare against the spreads.
#include <gtest/gtest.h>

#include <algorithm>

#include "results.hpp"
#include "schedule.hpp"
#include "sysinfo.hpp"
#include "transport.hpp"

namespace zipc::bench {
namespace {

using nlohmann::json;

json row_with_spread(double p50, double lo, double hi) {
  return {{"workload", "pingpong"},
          {"transport", "zipc-queue"},
          {"size", 64},
          {"wait", "busy"},
          {"processes", 2},
          {"cpus", 2},
          {"rt_p50_ns", p50},
          {"latency", "round trip"},
          {"spread", {{"rt_p50_ns", {{"min", lo}, {"max", hi}, {"rel", (hi - lo) / p50}}}}}};
}

TEST(CompareWithSpreads, AChangeInsideEitherRowsSpreadIsNotFlagged) {
  const json old_doc = {{"results", json::array({row_with_spread(400, 380, 420)})}};
  const json new_doc = {{"results", json::array({row_with_spread(460, 300, 600)})}};  // +15%, new spread 300 ns
  CompareSummary s;
  compare_documents(old_doc, new_doc, 0.10, &s);
  EXPECT_EQ(s.matched, 1);
  EXPECT_EQ(s.regressions, 0);
}

TEST(CompareWithSpreads, AChangeWiderThanBothSpreadsIsFlagged) {
  const json old_doc = {{"results", json::array({row_with_spread(400, 380, 420)})}};
  const json new_doc = {{"results", json::array({row_with_spread(600, 580, 640)})}};
  CompareSummary s;
  const std::string sut = compare_documents(old_doc, new_doc, 0.10, &s);
  EXPECT_EQ(s.regressions, 1) << sut;
}

TEST(CompareWithSpreads, AStreamRowIsJudgedByItsRateNotItsDeliveryLatency) {
  json a = row_with_spread(400, 380, 420);
  a["workload"] = "stream";
  a.erase("latency");
  a["msgs_per_s"] = 1e6;
  a["spread"]["msgs_per_s"] = {{"min", 0.95e6}, {"max", 1.05e6}};
  json b = a;
  b["rt_p50_ns"] = 700000;  // the queue happened to be full: delivery p50 in ms
  CompareSummary s;
  compare_documents({{"results", json::array({a})}}, {{"results", json::array({b})}}, 0.10, &s);
  EXPECT_EQ(s.regressions + s.improvements, 0);
  b["msgs_per_s"] = 0.5e6;  // half the rate, beyond both spreads
  compare_documents({{"results", json::array({a})}}, {{"results", json::array({b})}}, 0.10, &s);
  EXPECT_EQ(s.regressions, 1);
}

TEST(CompareWithSpreads, OlderFilesUseTheirPerRunRatesAsTheSpread) {
  json a = row_with_spread(400, 400, 400);
  a.erase("spread");
  a["msgs_per_s"] = 1e6;
  a["msgs_per_s_runs"] = {0.7e6, 1e6, 1.3e6};
  EXPECT_DOUBLE_EQ(spread_width(a, "msgs_per_s"), 0.6e6);
  EXPECT_DOUBLE_EQ(spread_width(a, "rt_p50_ns"), 0);
}

Transport* transport_named(const std::vector<std::unique_ptr<Transport>>& all, const std::string& name) {
  for (const auto& t : all)
    if (t->name() == name) return t.get();
  return nullptr;
}

Measured fake_run(std::uint64_t p50, double before, double after) {
  Measured m;
  m.run.ok = true;
  m.run.latencies_ns = {p50 - 10, p50, p50 + 10};
  m.run.sent = m.run.delivered = 3;
  m.run.seconds = 1e-5;
  m.probe_before_ns = before;
  m.probe_after_ns = after;
  return m;
}

TEST(Row, IsTheMedianRepetitionWithTheSpreadAndTheRatioToItsOwnProbes) {
  auto all = all_transports();
  Case c;
  c.workload = "pingpong";
  c.transport = transport_named(all, "pipe");
  ASSERT_NE(c.transport, nullptr);
  c.config.shape = Shape::round_trip;
  c.config.cpus = {0, 1};
  // p50s 300, 1000, 500 against probes 100, 400, 100: ratios 3, 2.5, 5.
  std::vector<Measured> runs;
  runs.push_back(fake_run(300, 100, 100));
  runs.push_back(fake_run(1000, 400, 400));
  runs.push_back(fake_run(500, 90, 110));
  const json sut = make_row(c, &runs);
  EXPECT_DOUBLE_EQ(sut["rt_p50_ns"].get<double>(), 500);
  EXPECT_DOUBLE_EQ(sut["spread"]["rt_p50_ns"]["min"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(sut["spread"]["rt_p50_ns"]["max"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(sut["probe_ns"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 3);
  ASSERT_EQ(sut["runs"].size(), 3u);
  EXPECT_DOUBLE_EQ(sut["runs"][1]["probe_before_ns"].get<double>(), 400);
  // The run-wide limit does not overwrite the row's own ratio.
  json row = sut;
  Limits l;
  l.cacheline_rtt_ns = 50;
  apply_ratio(row, l);
  EXPECT_DOUBLE_EQ(row["ratio_to_limit"].get<double>(), 3);
}

// A case of `workload` over the named transport, two short repetitions.
Case short_case(const std::vector<std::unique_ptr<Transport>>& all, const char* name, const char* workload, Shape shape,
                std::size_t size, const char* tag) {
  Case c;
  c.workload = workload;
  c.transport = transport_named(all, name);
  c.config.shape = shape;
  c.config.size = size;
  c.config.iterations = 200;
  c.config.warmup = 20;
  c.config.cpus = allowed_cpus();
  c.config.tag = tag;
  c.repetitions = 2;
  return c;
}

TEST(Schedule, RepetitionsAlternateAndEveryLatencyRunIsBracketedByProbes) {
  auto all = all_transports();
  std::vector<Case> cases;
  for (const char* name : {"pipe", "unix-stream"}) {
    cases.push_back(short_case(all, name, "pingpong", Shape::round_trip, 64, "zst"));
    ASSERT_NE(cases.back().transport, nullptr) << name;
  }
  std::vector<std::string> order;
  ScheduleOptions opt;
  opt.progress = [&](std::size_t, std::size_t, const std::string& what) { order.push_back(what); };
  const ScheduleOutput sut = run_schedule(cases, opt);
  ASSERT_TRUE(sut.errors.empty()) << sut.errors.dump();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_NE(order[0].find("pipe"), std::string::npos);
  EXPECT_NE(order[1].find("unix-stream"), std::string::npos);
  EXPECT_NE(order[2].find("pipe"), std::string::npos);
  EXPECT_NE(order[3].find("unix-stream"), std::string::npos);
  ASSERT_EQ(sut.rows.size(), 2u);
  for (const auto& row : sut.rows) {
    EXPECT_GT(row["probe_ns"].get<double>(), 0) << row.dump();
    for (const auto& run : row["runs"]) {
      EXPECT_GT(run["probe_before_ns"].get<double>(), 0);
      EXPECT_GT(run["probe_after_ns"].get<double>(), 0);
    }
  }
  // At least one probe per run plus the first; every probe has a time, in order.
  ASSERT_GE(sut.probes.size(), 5u);
  EXPECT_TRUE(std::is_sorted(sut.probes.begin(), sut.probes.end(),
                             [](const ProbeRecord& a, const ProbeRecord& b) { return a.t_s < b.t_s; }));
  const json log = probes_to_json(sut.probes);
  EXPECT_TRUE(log[0].contains("t_s") && log[0].contains("ns") && log[0].contains("at"));
}

TEST(Schedule, EachRepetitionIsOnePassOverEveryGroup) {
  auto all = all_transports();
  std::vector<Case> cases;
  for (std::size_t size : {std::size_t{64}, std::size_t{128}}) {
    for (const char* name : {"pipe", "unix-stream"}) {
      cases.push_back(short_case(all, name, "stream", Shape::stream, size, "zsp"));
      ASSERT_NE(cases.back().transport, nullptr) << name;
    }
  }
  std::vector<std::string> order;
  ScheduleOptions opt;
  opt.progress = [&](std::size_t, std::size_t, const std::string& what) { order.push_back(what); };
  const ScheduleOutput sut = run_schedule(cases, opt);
  ASSERT_TRUE(sut.errors.empty()) << sut.errors.dump();
  ASSERT_EQ(order.size(), 8u);
  // Pass 1 covers both sizes, then pass 2 covers them again.
  const char* expected[] = {"pipe 64", "unix-stream 64", "pipe 128", "unix-stream 128",
                            "pipe 64", "unix-stream 64", "pipe 128", "unix-stream 128"};
  for (std::size_t k = 0; k < order.size(); ++k) {
    EXPECT_NE(order[k].find(expected[k]), std::string::npos) << k << ": " << order[k];
    EXPECT_NE(order[k].find(k < 4 ? "(rep 1)" : "(rep 2)"), std::string::npos) << order[k];
  }
  EXPECT_EQ(sut.rows.size(), 4u);
}

}  // namespace
}  // namespace zipc::bench
