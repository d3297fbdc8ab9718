// Alternating repetitions, rows with median and spread, rows measured
// against their bracketing probes, and --compare against the spreads.
#include <gtest/gtest.h>

#include <algorithm>

#include "limits.hpp"
#include "results.hpp"
#include "schedule.hpp"
#include "sysinfo.hpp"
#include "transport.hpp"

namespace zipc::bench {
namespace schedule_test {
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

json probed_row(double p50, double probe) {
  json r = row_with_spread(p50, p50 * 0.98, p50 * 1.02);
  r["ratio_to_limit"] = p50 / probe;
  r["ratio_basis"] = "rt_p50_ns / probe_ns (each repetition against its bracketing cache-line probes)";
  r["spread"]["ratio_to_limit"] = {{"min", p50 / probe * 0.98}, {"max", p50 / probe * 1.02}};
  return r;
}

TEST(CompareWithSpreads, AChangeTheProbesMovedWithIsTheHostsNotARegression) {
  // 400 -> 600 ns while the probe went 100 -> 150 ns: the ratio stayed at 4.
  CompareSummary s;
  const std::string out = compare_documents({{"results", json::array({probed_row(400, 100)})}},
                                            {{"results", json::array({probed_row(600, 150)})}}, 0.10, &s);
  EXPECT_EQ(s.regressions, 0) << out;
  EXPECT_EQ(s.host_moved, 1) << out;
  EXPECT_NE(out.find("host moved"), std::string::npos);
  // The same move with the probe unchanged is a regression.
  compare_documents({{"results", json::array({probed_row(400, 100)})}},
                    {{"results", json::array({probed_row(600, 100)})}}, 0.10, &s);
  EXPECT_EQ(s.regressions, 1);
  EXPECT_EQ(s.host_moved, 0);
  // A row without its own probes is judged by its figure alone.
  json plain_old = probed_row(400, 100), plain_new = probed_row(600, 150);
  plain_old.erase("ratio_basis");
  plain_new.erase("ratio_basis");
  compare_documents({{"results", json::array({plain_old})}}, {{"results", json::array({plain_new})}}, 0.10, &s);
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
  m.probe_before = before;
  m.probe_after = after;
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

TEST(Row, ABlockingRowIsStatedAgainstTheFutexProbesAroundEachRepetition) {
  auto all = all_transports();
  Case c;
  c.workload = "pingpong";
  c.transport = transport_named(all, "pipe");
  ASSERT_NE(c.transport, nullptr);
  c.config.shape = Shape::round_trip;
  c.config.wait = Wait::block;
  c.config.cpus = {0, 1};
  ASSERT_STREQ(c.latency_probe(), kProbeFutex);
  // p50s 40, 60, 45 us against futex probes of 20, 40, 30 us: ratios 2, 1.5, 1.5.
  std::vector<Measured> runs;
  runs.push_back(fake_run(40'000, 20'000, 20'000));
  runs.push_back(fake_run(60'000, 40'000, 40'000));
  runs.push_back(fake_run(45'000, 30'000, 30'000));
  const json sut = make_row(c, &runs);
  EXPECT_EQ(sut["probe_kind"], "futex");
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(sut["probe_ns"].get<double>(), 30'000);
  EXPECT_NE(sut["ratio_basis"].get<std::string>().find("futex round-trip probes"), std::string::npos)
      << sut["ratio_basis"];
  EXPECT_EQ(ratio_probe(sut), "futex");
  EXPECT_NE(results_table({{"results", json::array({sut})}}).find("1.5x futex probe"), std::string::npos);
  // A blocking wait that caught the reply before it slept reads far under 1, legibly.
  json polled = sut;
  polled["ratio_to_limit"] = 240.0 / 78'000;
  EXPECT_NE(results_table({{"results", json::array({polled})}}).find("0.003x futex probe"), std::string::npos);

  // The same transport busy-polling, or on one CPU, keeps the cache-line probe.
  Case busy = c;
  busy.config.wait = Wait::busy;
  EXPECT_STREQ(busy.latency_probe(), kProbeCacheLine);
  Case adaptive = c;
  adaptive.config.wait = Wait::adaptive;
  EXPECT_STREQ(adaptive.latency_probe(), kProbeCacheLine);
  Case one_cpu = c;
  one_cpu.config.cpus = {0};
  EXPECT_STREQ(one_cpu.latency_probe(), kProbeYield);
  std::vector<Measured> busy_runs;
  busy_runs.push_back(fake_run(400, 100, 100));
  const json b = make_row(busy, &busy_runs);
  EXPECT_EQ(b["probe_kind"], "2cpu");
  EXPECT_DOUBLE_EQ(b["ratio_to_limit"].get<double>(), 4);
  EXPECT_NE(b["ratio_basis"].get<std::string>().find("cache-line probes"), std::string::npos);
}

// A probe taken since the last run stands for the next run that takes the
// same one, also when probes of other kinds were taken in between.
TEST(Prober, SharesEachKindsProbeUntilSomethingRuns) {
  Prober sut;
  int measured = 0;
  const auto fake = [&](double v, const char* kind) {
    return [&measured, v, kind](ProbeRecord* p) {
      ++measured;
      p->value = v;
      p->kind = kind;
    };
  };
  sut.take("cacheline 0,1", "after run one", fake(100, "2cpu"));
  sut.take("futex 0,1", "after run one", fake(30'000, "futex"));
  EXPECT_DOUBLE_EQ(sut.before("cacheline 0,1", "run two", fake(1, "2cpu")).value, 100);
  EXPECT_DOUBLE_EQ(sut.before("futex 0,1", "run two", fake(2, "futex")).value, 30'000);
  EXPECT_EQ(measured, 2);
  EXPECT_NE(sut.log()[1].at.find("before run two"), std::string::npos) << sut.log()[1].at;
  sut.ran_something();
  EXPECT_DOUBLE_EQ(sut.before("futex 0,1", "run three", fake(3, "futex")).value, 3);
  EXPECT_EQ(measured, 3);
  const json log = probes_to_json(sut.log());
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[1]["kind"], "futex");
  EXPECT_DOUBLE_EQ(log[1]["ns"].get<double>(), 30'000);
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
  ASSERT_GE(sut.prober.log().size(), 5u);
  EXPECT_TRUE(std::is_sorted(sut.prober.log().begin(), sut.prober.log().end(),
                             [](const ProbeRecord& a, const ProbeRecord& b) { return a.t_s < b.t_s; }));
  const json log = probes_to_json(sut.prober.log());
  EXPECT_TRUE(log[0].contains("t_s") && log[0].contains("ns") && log[0].contains("at"));
  // Both rows block on two CPUs: bracketed by the futex probe, not the cache line.
  if (allowed_cpus().size() >= 2) {
    for (const auto& p : log) EXPECT_EQ(p["kind"], "futex") << p.dump();
    for (const auto& row : sut.rows) {
      EXPECT_EQ(row["probe_kind"], "futex") << row.dump();
      EXPECT_NE(row["ratio_basis"].get<std::string>().find("futex"), std::string::npos);
    }
  }
}

TEST(Schedule, BusyAndBlockingRunsOfOneGroupAreBracketedByTheProbesOfTheirWaitClass) {
  if (allowed_cpus().size() < 2) GTEST_SKIP() << "needs two CPUs";
  auto all = all_transports();
  std::vector<Case> cases;
  cases.push_back(short_case(all, "shm-futex-slot", "pingpong", Shape::round_trip, 64, "zsw"));
  ASSERT_NE(cases.back().transport, nullptr);
  cases.back().config.wait = Wait::busy;
  cases.back().repetitions = 1;
  cases.push_back(cases.back());
  cases.back().config.wait = Wait::block;
  const ScheduleOutput sut = run_schedule(cases, {});
  ASSERT_TRUE(sut.errors.empty()) << sut.errors.dump();
  ASSERT_EQ(sut.rows.size(), 2u);
  EXPECT_EQ(sut.rows[0]["probe_kind"], "2cpu");
  EXPECT_EQ(sut.rows[1]["probe_kind"], "futex");
  // Each run's brackets are of its own kind, in the log's order.
  std::vector<std::string> kinds;
  for (const auto& p : sut.prober.log()) kinds.push_back(p.kind);
  const std::size_t first_futex = std::find(kinds.begin(), kinds.end(), "futex") - kinds.begin();
  ASSERT_LT(first_futex, kinds.size());
  EXPECT_GE(first_futex, 2u) << "the busy run's two cache-line probes come first";
  for (std::size_t k = 0; k < kinds.size(); ++k) EXPECT_EQ(kinds[k], k < first_futex ? "2cpu" : "futex") << k;
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

TEST(Schedule, EveryTwoProcessStreamRunIsBracketedByRingProbes) {
  if (allowed_cpus().size() < 2) GTEST_SKIP() << "needs two CPUs";
  auto all = all_transports();
  std::vector<Case> cases;
  for (const char* name : {"pipe", "unix-stream"}) {
    cases.push_back(short_case(all, name, "stream", Shape::stream, 3000, "zsr"));
    ASSERT_NE(cases.back().transport, nullptr) << name;
    ASSERT_TRUE(cases.back().ring_bracketed());
  }
  const ScheduleOutput sut = run_schedule(cases, {});
  ASSERT_TRUE(sut.errors.empty()) << sut.errors.dump();
  ASSERT_EQ(sut.rows.size(), 2u);
  for (const auto& row : sut.rows) {
    EXPECT_GT(row["ring_probe"].get<double>(), 0) << row.dump();
    EXPECT_EQ(row["ring_probe_unit"], "gbytes_per_s");
    EXPECT_NE(row["ratio_basis"].get<std::string>().find("ring_probe"), std::string::npos);
    EXPECT_GT(row["ratio_to_payload_ring"].get<double>(), 0);
    for (const auto& run : row["runs"]) {
      EXPECT_GT(run["ring_before"].get<double>(), 0);
      EXPECT_GT(run["ring_after"].get<double>(), 0);
      EXPECT_GT(run["payload_ring_before_gbps"].get<double>(), 0);
    }
  }
  const json log = probes_to_json(sut.prober.log());
  ASSERT_FALSE(log.empty());
  for (const auto& p : log) {
    EXPECT_EQ(p["kind"], "xcore-3000") << p.dump();
    EXPECT_EQ(p["unit"], "gbytes_per_s");
    EXPECT_GT(p["value"].get<double>(), 0);
    EXPECT_FALSE(p.contains("ns"));
  }
  // A run on one CPU, or with more than two processes, is not bracketed.
  Case one_cpu = cases[0];
  one_cpu.config.cpus = {0, 0};
  EXPECT_FALSE(one_cpu.ring_bracketed());
  Case fanout = cases[0];
  fanout.config.receivers = 2;
  EXPECT_FALSE(fanout.ring_bracketed());
  Case paced = cases[0];
  paced.config.rate = 1000;
  EXPECT_FALSE(paced.ring_bracketed());
}

Measured fake_stream_run(std::uint64_t messages, double ring_before, double ring_after, double payload = 0) {
  Measured m;
  m.run.ok = true;
  m.run.latencies_ns = {100, 200, 300};
  m.run.sent = m.run.delivered = messages;
  m.run.seconds = 1.0;
  m.probe_before = ring_before;
  m.probe_after = ring_after;
  m.payload_before_gbps = m.payload_after_gbps = payload;
  return m;
}

// The extra programs run between two cache-line probes, the one after a run
// being the one before the next, and their rows carry them.
TEST(Schedule, AnExtraProgramRunsBetweenCacheLineProbesThatItsRowsCarry) {
  if (allowed_cpus().size() < 2) GTEST_SKIP() << "needs two CPUs";
  const auto cpus = allowed_cpus();
  Prober prober;
  int runs = 0;
  const HostBrackets first =
      run_between_cacheline_probes("extra one", cpus[0], cpus[1], 1, &prober, [&] { return ++runs > 0; });
  // No retry for the second: were its own brackets to disagree (a loaded
  // machine), its kept attempt would start after its own first probe, not
  // after the first program's (seen under ctest -j2 with both CPUs busy).
  const HostBrackets second =
      run_between_cacheline_probes("extra two", cpus[0], cpus[1], 0, &prober, [&] { return ++runs > 0; });
  EXPECT_EQ(runs, first.attempts + second.attempts);
  EXPECT_GT(first.before_ns, 0);
  EXPECT_GT(first.after_ns, 0);
  EXPECT_EQ(second.before_ns, first.after_ns) << "the probe after one program is the one before the next";
  EXPECT_GT(first.futex_before_ns, 0);
  EXPECT_GT(first.yield_after_ns, 0);
  EXPECT_EQ(second.futex_before_ns, first.futex_after_ns);
  EXPECT_EQ(second.yield_before_ns, first.yield_after_ns);
  // Three kinds, each taken once before the first program and after every attempt.
  ASSERT_EQ(prober.log().size(), static_cast<std::size_t>(3 * (1 + first.attempts + second.attempts)));
  EXPECT_NE(prober.log()[0].at.find("before extra one attempt 1"), std::string::npos) << prober.log()[0].at;
  EXPECT_EQ(prober.log()[0].kind, "2cpu");
  EXPECT_EQ(prober.log()[1].kind, "futex");
  EXPECT_EQ(prober.log()[2].kind, "1cpu-yield");

  json row = {{"workload", "heap_alloc"}};
  add_host_probes(&row, 100, 400, 2);
  EXPECT_DOUBLE_EQ(row["host_probe_ns"].get<double>(), 250);
  EXPECT_EQ(row["host_probe_attempts"], 2);
  EXPECT_TRUE(row.value("host_probe_unsettled", false)) << "100 and 400 ns disagree";
  json settled = {{"workload", "heap_alloc"}};
  add_host_probes(&settled, 100, 110, 1);
  EXPECT_FALSE(settled.contains("host_probe_unsettled"));
  json unmeasured = {{"workload", "heap_alloc"}};
  add_host_probes(&unmeasured, 0, 110, 1);
  EXPECT_FALSE(unmeasured.contains("host_probe_ns")) << "a failed probe is not recorded";
}

// An extra program is run again only when it succeeded, its brackets
// disagree, and it was short: one of minutes is kept as it is.
TEST(Schedule, OnlyAShortExtraProgramWhoseBracketsDisagreeIsRunAgain) {
  EXPECT_TRUE(worth_another_attempt(true, 100, 400, 5));
  EXPECT_TRUE(worth_another_attempt(true, 100, 400, kRetryMaxSeconds));
  EXPECT_FALSE(worth_another_attempt(true, 100, 400, kRetryMaxSeconds + 1)) << "a long program is not run again";
  EXPECT_FALSE(worth_another_attempt(true, 100, 110, 5)) << "brackets that agree";
  EXPECT_FALSE(worth_another_attempt(false, 100, 400, 5)) << "a failed program is reported, not run again";
  EXPECT_TRUE(worth_another_attempt(true, 0, 110, 5)) << "a failed probe cannot vouch for the host";
}

// The same with the memory-bandwidth probes and steal time around each
// program: the bandwidth probes are logged too, but the cache-line probe
// after one program is still the one before the next (run 21 of 2026-11-27
// recorded each extra's bandwidth probe as its cache-line probe before).
TEST(Schedule, AnExtraProgramRunsBetweenBandwidthProbesTooWithoutTakingThemForCacheLineProbes) {
  if (allowed_cpus().size() < 2) GTEST_SKIP() << "needs two CPUs";
  const auto cpus = allowed_cpus();
  Prober prober;
  const HostBrackets first = run_between_cacheline_probes(
      "extra one", cpus[0], cpus[1], 0, &prober, [] { return true; }, true);
  const HostBrackets second = run_between_cacheline_probes(
      "extra two", cpus[0], cpus[1], 0, &prober, [] { return true; }, true);
  EXPECT_EQ(second.before_ns, first.after_ns) << "the cache-line probe after one program is the one before the next";
  EXPECT_GT(first.membw_before_gbps, 0);
  EXPECT_GT(second.membw_after_gbps, 0);
  EXPECT_GE(first.steal_ms, 0);
  EXPECT_GE(first.seconds, 0);
  std::size_t membw = 0, cacheline = 0;
  for (const auto& p : prober.log()) (p.kind == "membw" ? membw : cacheline) += 1;
  EXPECT_EQ(membw, 4u);
  EXPECT_EQ(cacheline, 3u * 3u);  // cache-line, futex and yield, before the first and after each
  json row = {{"workload", "topic-log"}};
  add_host_bandwidth(&row, first, 2);
  EXPECT_GT(row["host_membw_gbps"].get<double>(), 0);
  EXPECT_TRUE(row.contains("host_steal_share"));
}

// An extra's round-trip rows are stated against the probes of their wait
// class measured around its program; its other rows keep the run's limits.
TEST(HostRatio, AnExtrasRoundTripIsStatedAgainstTheProbesOfItsWaitClassAroundItsProgram) {
  HostBrackets h;
  h.before_ns = 90;
  h.after_ns = 110;  // cache-line: 100
  h.futex_before_ns = 30'000;
  h.futex_after_ns = 50'000;  // futex: 40 us, brackets 1.67x apart
  h.yield_before_ns = h.yield_after_ns = 2'000;
  const auto row = [](const char* wait, json cpus) {
    return json{{"workload", "pingpong"}, {"transport", "iceoryx2"}, {"size", 64},
                {"wait", wait},           {"processes", 2},          {"cpus", cpus},
                {"rt_p50_ns", 800},       {"latency", "round trip"}};
  };
  json busy = row("busy", 2);
  add_host_ratio(&busy, h);
  EXPECT_EQ(busy["probe_kind"], "2cpu");
  EXPECT_DOUBLE_EQ(busy["probe_ns"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(busy["probe_before_ns"].get<double>(), 90);
  EXPECT_DOUBLE_EQ(busy["ratio_to_limit"].get<double>(), 8);
  EXPECT_NE(busy["ratio_basis"].get<std::string>().find("cache-line probes right before and after its program"),
            std::string::npos)
      << busy["ratio_basis"];
  EXPECT_FALSE(busy.contains("probe_unsettled_runs"));
  EXPECT_EQ(ratio_probe(busy), "2cpu");

  json block = row("block", 2);
  block["rt_p50_ns"] = 60'000;
  add_host_ratio(&block, h);
  EXPECT_EQ(block["probe_kind"], "futex");
  EXPECT_DOUBLE_EQ(block["ratio_to_limit"].get<double>(), 1.5);
  EXPECT_NE(block["ratio_basis"].get<std::string>().find("futex"), std::string::npos);
  EXPECT_EQ(block["probe_unsettled_runs"], 1) << "30 and 50 us disagree";

  json one_cpu = row("block", 1);
  add_host_ratio(&one_cpu, h);
  EXPECT_EQ(one_cpu["probe_kind"], "1cpu-yield");
  EXPECT_DOUBLE_EQ(one_cpu["ratio_to_limit"].get<double>(), 0.4);

  json unknown_wait = row("n/a", nullptr);  // an rpc row, unpinned: the cache-line probes
  add_host_ratio(&unknown_wait, h);
  EXPECT_EQ(unknown_wait["probe_kind"], "2cpu");

  // A harness with one CPU took only yield probes: every row is stated against them.
  HostBrackets one;
  one.one_cpu = true;
  one.before_ns = one.after_ns = one.yield_before_ns = one.yield_after_ns = 1'000;
  json on_one = row("block", 2);
  add_host_ratio(&on_one, one);
  EXPECT_EQ(on_one["probe_kind"], "1cpu-yield");
  EXPECT_DOUBLE_EQ(on_one["ratio_to_limit"].get<double>(), 0.8);

  // The run-wide limits do not overwrite it.
  Limits l;
  l.cacheline_rtt_ns = 50;
  l.futex_rtt_ns = 1'000;
  apply_ratio(block, l);
  EXPECT_DOUBLE_EQ(block["ratio_to_limit"].get<double>(), 1.5);

  // A throughput row, a row with its own basis, or missing probes: left to
  // the run's limits (or to its own basis).
  json stream = {{"workload", "stream"}, {"transport", "iceoryx2"}, {"size", 100},
                 {"wait", "busy"},       {"msgs_per_s", 1e6},       {"rt_p50_ns", 5'000}};
  add_host_ratio(&stream, h);
  EXPECT_FALSE(stream.contains("ratio_basis"));
  json own = row("busy", 2);
  own["ratio_basis"] = "ratio_to_raw_nats";
  add_host_ratio(&own, h);
  EXPECT_EQ(own["ratio_basis"], "ratio_to_raw_nats");
  EXPECT_FALSE(own.contains("probe_ns"));
  json unprobed = row("block", 2);
  add_host_ratio(&unprobed, HostBrackets{});
  EXPECT_FALSE(unprobed.contains("ratio_basis"));
  apply_ratio(unprobed, l);
  EXPECT_EQ(unprobed["ratio_basis"], "rt_p50_ns / futex_rtt_ns");
  EXPECT_DOUBLE_EQ(unprobed["ratio_to_limit"].get<double>(), 0.8);
}

// An old file's blocking row was stated against the cache-line probe, a new
// one's against the futex probe: their ratios are not compared, the figure is.
TEST(CompareWithSpreads, RatiosToDifferentProbesAreNotWeighedAgainstEachOther) {
  json old_row = probed_row(40'000, 100);  // ratio 400 to the cache-line probe (old basis, no probe_kind)
  old_row["wait"] = "block";
  json new_row = probed_row(60'000, 20'000);  // +50%, ratio 3 to the futex probe
  new_row["wait"] = "block";
  new_row["probe_kind"] = "futex";
  new_row["ratio_basis"] = "rt_p50_ns / probe_ns (each repetition against its bracketing futex round-trip probes)";
  EXPECT_EQ(ratio_probe(old_row), "2cpu");
  EXPECT_EQ(ratio_probe(new_row), "futex");
  CompareSummary s;
  const std::string out =
      compare_documents({{"results", json::array({old_row})}}, {{"results", json::array({new_row})}}, 0.10, &s);
  EXPECT_EQ(s.regressions, 1) << out;
  EXPECT_EQ(s.host_moved, 0) << out;
  // Two rows against the futex probe are weighed as before: the probe moved with the figure.
  json before = new_row;
  before["rt_p50_ns"] = 40'000;
  before["ratio_to_limit"] = 3.0;
  before["spread"] = probed_row(40'000, 13'333)["spread"];
  compare_documents({{"results", json::array({before})}}, {{"results", json::array({new_row})}}, 0.10, &s);
  EXPECT_EQ(s.regressions, 0);
  EXPECT_EQ(s.host_moved, 1);
}

TEST(Row, AThroughputRowIsStatedAgainstTheRingMeasuredAroundEachRepetition) {
  auto all = all_transports();
  Case c = short_case(all, "pipe", "stream", Shape::stream, 100, "zrr");
  ASSERT_NE(c.transport, nullptr);
  c.config.cpus = {0, 1};
  // 10 M, 30 M, 20 M msgs/s against rings of 100 M, 60 M, 40 M: ratios 0.1, 0.5, 0.5.
  std::vector<Measured> runs;
  runs.push_back(fake_stream_run(10'000'000, 100e6, 100e6));
  runs.push_back(fake_stream_run(30'000'000, 50e6, 70e6));
  runs.push_back(fake_stream_run(20'000'000, 40e6, 40e6));
  json sut = make_row(c, &runs);
  EXPECT_DOUBLE_EQ(sut["msgs_per_s"].get<double>(), 20e6);
  EXPECT_DOUBLE_EQ(sut["ring_probe"].get<double>(), 60e6);
  EXPECT_EQ(sut["ring_probe_unit"], "msgs_per_s");
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 0.5);
  EXPECT_FALSE(sut.contains("ratio_to_payload_ring"));
  EXPECT_EQ(sut["probe_unsettled_runs"].get<int>(), 1);  // 70 M / 50 M: brackets 1.4x apart
  Limits l;
  l.spsc_inproc_msgs_per_s[100] = 1e9;
  apply_ratio(sut, l);
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 0.5);  // kept, not the run-wide 0.02

  // Big messages: GB/s against the cross-core copy, and against the payload ring.
  c.config.size = 4000;
  std::vector<Measured> big;
  big.push_back(fake_stream_run(5'000'000, 40, 40, 20));  // 20 GB/s: 0.5 and 1.0
  const json b = make_row(c, &big);
  EXPECT_EQ(b["ring_probe_unit"], "gbytes_per_s");
  EXPECT_DOUBLE_EQ(b["ratio_to_limit"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(b["ratio_to_payload_ring"].get<double>(), 1.0);
  EXPECT_NE(b["ratio_basis"].get<std::string>().find("cross-core copy of 3000 B"), std::string::npos);
}

TEST(ThroughputBasis, SmallRowsUseTheNearestRingAndBigRowsTheNearestCrossCoreCopy) {
  EXPECT_EQ(throughput_basis(8).size, 8u);
  EXPECT_FALSE(throughput_basis(8).gbps);
  EXPECT_EQ(throughput_basis(64).size, 100u);
  EXPECT_EQ(throughput_basis(1024).size, 100u);
  EXPECT_TRUE(throughput_basis(1025).gbps);
  EXPECT_EQ(throughput_basis(4096).size, 3000u);
  EXPECT_EQ(throughput_basis(65536).size, 65536u);
  EXPECT_EQ(throughput_basis(std::size_t{1} << 20).size, 262144u);
}

}  // namespace

}  // namespace schedule_test
}  // namespace zipc::bench
