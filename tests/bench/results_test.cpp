// The result file (write, read back, schema fields), --compare, ratios, and
// extra programs: a missing or failing one is reported, never a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "extras.hpp"
#include "repetitions.hpp"
#include "results.hpp"
#include "schedule.hpp"
#include "sysinfo.hpp"
#include "zipc_test.hpp"

namespace zipc::bench {
namespace results_test {
namespace {

using nlohmann::json;

json sample_row(const std::string& transport, double p50, double rate) {
  return {{"workload", "pingpong"},
          {"transport", transport},
          {"family", "os"},
          {"size", 64},
          {"wait", "block"},
          {"processes", 2},
          {"cpus", 2},
          {"rt_p50_ns", p50},
          {"rt_p99_ns", p50 * 2},
          {"rt_p999_ns", p50 * 3},
          {"rt_max_ns", p50 * 4},
          {"msgs_per_s", rate},
          {"gbytes_per_s", 0.1},
          {"lost", 0}};
}

Limits sample_limits() {
  Limits l;
  l.cacheline_rtt_ns = 100;
  l.cacheline_rtt_1cpu_yield_ns = 1000;
  l.futex_rtt_ns = 30000;
  l.memcpy_gbps = {{100, 10}, {3000, 40}, {65536, 20}, {1048576, 10}};
  l.spsc_inproc_msgs_per_s = {{8, 1e7}, {100, 5e6}};
  l.xcore_copy_gbps = {{3000, 8}, {65536, 10}, {262144, 12}};
  return l;
}

std::string temp_path(const char* tag) {
  return (std::filesystem::temp_directory_path() / (zipc::test::unique_name(tag) + ".json")).string();
}

TEST(ResultFile, WrittenDocumentReadsBackWithEverySchemaField) {
  const std::string path = temp_path("doc");
  json rows = json::array({sample_row("pipe", 5000, 2e5)});
  const json sut =
      make_document(machine_info(), sample_limits(), {{"full", false}}, rows, json::array(), json::array());
  write_document(path, sut);
  const json back = read_document(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back["schema"], kSchema);
  for (const char* k : {"cpu_model", "cores", "kernel"}) EXPECT_TRUE(back["machine"].contains(k)) << k;
  for (const char* k : {"cacheline_rtt_ns", "futex_rtt_ns", "memcpy_gbps", "spsc_inproc_msgs_per_s", "xcore_copy_gbps"})
    EXPECT_TRUE(back["limits"].contains(k)) << k;
  EXPECT_DOUBLE_EQ(back["limits"]["memcpy_gbps"]["3000"].get<double>(), 40);
  ASSERT_EQ(back["results"].size(), 1u);
  const json& r = back["results"][0];
  for (const char* k : {"workload", "transport", "size", "wait", "processes", "cpus", "rt_p50_ns", "rt_p99_ns",
                        "rt_p999_ns", "rt_max_ns", "msgs_per_s", "gbytes_per_s", "lost"})
    EXPECT_TRUE(r.contains(k)) << k;
}

TEST(ResultFile, ReadingAFileThatIsNotAResultFails) {
  const std::string path = temp_path("bad");
  { std::ofstream(path) << "{\"hello\": 1}"; }
  EXPECT_THROW(read_document(path), std::runtime_error);
  std::filesystem::remove(path);
  EXPECT_THROW(read_document(path), std::runtime_error);
}

TEST(ResultFile, LimitsSurviveAJsonRoundTrip) {
  const Limits sut = limits_from_json(to_json(sample_limits()));
  EXPECT_DOUBLE_EQ(sut.cacheline_rtt_ns, 100);
  EXPECT_DOUBLE_EQ(sut.spsc_inproc_msgs_per_s.at(100), 5e6);
  EXPECT_DOUBLE_EQ(sut.memcpy_gbps.at(1048576), 10);
  EXPECT_DOUBLE_EQ(sut.xcore_copy_gbps.at(65536), 10);
}

TEST(Percentiles, AreNearestRankOverTheSamples) {
  std::vector<std::uint64_t> s;
  for (std::uint64_t i = 1000; i >= 1; --i) s.push_back(i);
  const Percentiles sut = percentiles(s);
  EXPECT_EQ(sut.p50, 500);
  EXPECT_EQ(sut.p99, 990);
  EXPECT_EQ(sut.p999, 999);
  EXPECT_EQ(sut.max, 1000);
}

TEST(Ratio, BusyLatencyIsStatedAgainstTheCacheLineRoundTrip) {
  json sut = sample_row("shm-spin-slot", 5000, 2e5);
  sut["wait"] = "busy";
  apply_ratio(sut, sample_limits());
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 50);
  EXPECT_EQ(sut["ratio_basis"].get<std::string>(), "rt_p50_ns / cacheline_rtt_ns");
}

TEST(Ratio, BlockingLatencyIsStatedAgainstTheFutexRoundTripAndOnOneCpuAgainstTheYieldRoundTrip) {
  json sut = sample_row("pipe", 45000, 2e4);
  apply_ratio(sut, sample_limits());
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 1.5);
  EXPECT_EQ(sut["ratio_basis"].get<std::string>(), "rt_p50_ns / futex_rtt_ns");
  json one_cpu = sample_row("pipe", 3000, 2e5);
  one_cpu["cpus"] = 1;
  apply_ratio(one_cpu, sample_limits());
  EXPECT_DOUBLE_EQ(one_cpu["ratio_to_limit"].get<double>(), 3);
  EXPECT_EQ(one_cpu["ratio_basis"].get<std::string>(), "rt_p50_ns / cacheline_rtt_1cpu_yield_ns");
}

TEST(Ratio, SmallMessageThroughputIsStatedAgainstTheInProcessRing) {
  json sut = {{"workload", "stream"}, {"transport", "pipe"}, {"size", 100}, {"msgs_per_s", 1e6}, {"gbytes_per_s", 0.1}};
  apply_ratio(sut, sample_limits());
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 0.2);
}

TEST(Ratio, LargeMessageThroughputIsStatedAgainstTheCrossCoreCopy) {
  json sut = {
      {"workload", "stream"}, {"transport", "pipe"}, {"size", 65536}, {"msgs_per_s", 1e4}, {"gbytes_per_s", 5.0}};
  apply_ratio(sut, sample_limits());
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 0.5);
  EXPECT_EQ(sut["ratio_basis"].get<std::string>(), "gbytes_per_s / xcore_copy_gbps[65536]");
}

TEST(Ratio, ARowWithItsOwnBasisGetsNoRatioToTheMachinesLimits) {
  // The NATS bridge's rows compare with raw NATS, not with the in-process ring.
  json sut = {{"workload", "nats-bridge"},
              {"transport", "zipc-bridge-core"},
              {"size", 100},
              {"msgs_per_s", 3e6},
              {"ratio_basis", "ratio_to_raw_nats"}};
  apply_ratio(sut, sample_limits());
  EXPECT_FALSE(sut.contains("ratio_to_limit"));
  EXPECT_EQ(sut["ratio_basis"].get<std::string>(), "ratio_to_raw_nats");
}

TEST(Ratio, LargeMessageThroughputFallsBackToMemcpyWithoutACrossCoreFigure) {
  Limits one_cpu = sample_limits();
  one_cpu.xcore_copy_gbps.clear();
  json sut = {
      {"workload", "stream"}, {"transport", "pipe"}, {"size", 65536}, {"msgs_per_s", 1e4}, {"gbytes_per_s", 5.0}};
  apply_ratio(sut, one_cpu);
  EXPECT_DOUBLE_EQ(sut["ratio_to_limit"].get<double>(), 0.25);
  EXPECT_EQ(sut["ratio_basis"].get<std::string>(), "gbytes_per_s / memcpy_gbps[65536]");
}

TEST(Compare, FlagsASlowerRowAsARegressionAndAFasterOneAsImproved) {
  json old_doc = {{"results", json::array({sample_row("pipe", 1000, 1e5), sample_row("fifo", 1000, 1e5),
                                           sample_row("gone", 1, 1)})}};
  json new_doc = {{"results", json::array({sample_row("pipe", 2000, 5e4), sample_row("fifo", 500, 2e5),
                                           sample_row("fresh", 1, 1)})}};
  CompareSummary s;
  const std::string sut = compare_documents(old_doc, new_doc, 0.10, &s);
  EXPECT_EQ(s.matched, 2);
  EXPECT_EQ(s.regressions, 1);
  EXPECT_EQ(s.improvements, 1);
  EXPECT_EQ(s.only_new, 1);
  EXPECT_EQ(s.only_old, 1);
  EXPECT_NE(sut.find("REGRESSION"), std::string::npos);
  EXPECT_NE(sut.find("+100.0%"), std::string::npos) << sut;
}

// An extra's rows that differ only in their thread or worker count are
// different rows, and a row judged by its operations per second (the heap
// extras) or its one-way latency (the WaitSet extra) is judged, not skipped.
TEST(Compare, JudgesExtrasRowsByTheirOwnFigureAndTellsThemApartByThreads) {
  auto heap = [](int threads, double ops) {
    return json{{"workload", "heap_alloc"}, {"transport", "zipc-heap"}, {"size", 0},          {"wait", "n/a"},
                {"processes", 1},           {"threads", threads},       {"workers", threads}, {"ops_per_s", ops}};
  };
  auto wakeup = [](int queues, double p50_us) {
    return json{{"workload", "wakeup-latency"},
                {"transport", "zipc-waitset"},
                {"size", 0},
                {"wait", "block"},
                {"processes", 2},
                {"queues", queues},
                {"oneway_p50_us", p50_us}};
  };
  const json old_doc = {{"results", json::array({heap(1, 50e6), heap(2, 95e6), wakeup(1, 5.0), wakeup(64, 5.0)})}};
  const json new_doc = {{"results", json::array({heap(1, 51e6), heap(2, 47e6), wakeup(1, 5.1), wakeup(64, 9.0)})}};
  CompareSummary s;
  const std::string sut = compare_documents(old_doc, new_doc, 0.10, &s);
  EXPECT_EQ(s.matched, 4) << sut;
  EXPECT_EQ(s.regressions, 2) << sut;  // two workers halved; 64 queues' p50 up 80%
  EXPECT_EQ(s.improvements, 0) << sut;
  EXPECT_NE(sut.find("threads=2"), std::string::npos) << sut;
  EXPECT_NE(sut.find("queues=64"), std::string::npos) << sut;
}

// An extra program's rows carry the cache-line probes taken around the
// program: a figure that moved the way the probe did, or one measured while
// the probe moved, is the host's; one whose probes agree is the code's.
TEST(Compare, AnExtrasRowThatMovedWithItsHostProbesIsTheHostsNotARegression) {
  auto rpc = [](const char* wait, double p50_ns, double probe_before, double probe_after) {
    json r = {{"workload", "reqrep"}, {"transport", "zipc-rpc"}, {"size", 128},        {"wait", wait},
              {"processes", 2},       {"cpus", nullptr},         {"rt_p50_ns", p50_ns}};
    add_host_probes(&r, probe_before, probe_after, 1);
    return r;
  };
  const json old_doc = {
      {"results", json::array({rpc("busy", 240, 75, 78), rpc("adaptive", 240, 75, 78), rpc("block", 240, 75, 78)})}};
  const json new_doc = {{"results", json::array({
                                        rpc("busy", 750, 450, 440),    // probe 6x slower: the host
                                        rpc("adaptive", 750, 76, 74),  // probe the same: the code
                                        rpc("block", 750, 76, 300),    // probe moved while it ran
                                    })}};
  CompareSummary s;
  const std::string sut = compare_documents(old_doc, new_doc, 0.10, &s);
  EXPECT_EQ(s.matched, 3) << sut;
  EXPECT_EQ(s.host_moved, 2) << sut;
  EXPECT_EQ(s.regressions, 1) << sut;
  EXPECT_NE(sut.find("reqrep|zipc-rpc|128|adaptive|2|- | 240 ns | 750 ns | +212.5% | - | - | - | REGRESSION"),
            std::string::npos)
      << sut;
  // A faster probe does not excuse a slower figure.
  const json faster_probe = {{"results", json::array({rpc("busy", 750, 30, 31)})}};
  compare_documents(old_doc, faster_probe, 0.10, &s);
  EXPECT_EQ(s.regressions, 1) << "probe faster, figure slower: the code's";
  EXPECT_EQ(s.host_moved, 0);
}

// heap_map states each row against the one-thread baseline of the same
// repetition (bench/extra/heap_map.cpp). Runs 27 / 28 of 2026-11-27: every
// row, one worker too, 20% slower in run 28 with the probes around the
// program agreeing; a rate that moved with that baseline is the host's, one
// whose ratio moved too is the code's.
TEST(Compare, AHeapMapRowThatMovedWithItsSameRepetitionBaselineIsTheHosts) {
  auto row = [](const char* transport, double ops, double lo, double hi, double ratio, double rlo, double rhi) {
    json r = {{"workload", "heap_map"}, {"transport", transport}, {"size", 0},
              {"wait", "busy"},         {"processes", 4},         {"threads", 1},
              {"workers", 4},           {"ops_per_s", ops},       {"ratio_to_limit", ratio}};
    r["spread"]["ops_per_s"] = {{"min", lo}, {"max", hi}};
    r["spread"]["ratio_to_limit"] = {{"min", rlo}, {"max", rhi}};
    r["ratio_basis"] =
        std::string("ops_per_s / ops_per_s of threads+std::mutex workers=1 in the ") + kSameRepetitionMark;
    return r;
  };
  const json old_doc = {
      {"results", json::array({row("processes+zipc::SpinLock", 3.49e6, 3.35e6, 3.63e6, 0.53, 0.51, 0.56),
                               row("processes+zipc::Mutex", 3.54e6, 3.46e6, 3.83e6, 0.55, 0.53, 0.58)})}};
  const json new_doc = {{"results", json::array({
                                        // the baseline slower by as much: the host's
                                        row("processes+zipc::SpinLock", 2.87e6, 2.56e6, 3.06e6, 0.54, 0.50, 0.57),
                                        // slower against its own baseline too: the code's
                                        row("processes+zipc::Mutex", 2.23e6, 2.12e6, 2.51e6, 0.35, 0.33, 0.37),
                                    })}};
  CompareSummary s;
  const std::string sut = compare_documents(old_doc, new_doc, 0.10, &s);
  EXPECT_EQ(s.matched, 2) << sut;
  EXPECT_EQ(s.host_moved, 1) << sut;
  EXPECT_EQ(s.regressions, 1) << sut;
  const auto line_of = [&](const std::string& what) {
    const std::size_t at = sut.find(what);
    return at == std::string::npos ? std::string() : sut.substr(at, sut.find('\n', at) - at);
  };
  EXPECT_NE(line_of("processes+zipc::SpinLock").find("host moved"), std::string::npos) << sut;
  EXPECT_NE(line_of("processes+zipc::Mutex").find("REGRESSION"), std::string::npos) << sut;
}

// The memory bandwidth the host gives and the CPU time it takes away move
// rows that stream from memory or oversubscribe the CPUs, while the
// cache-line probes around them agree (2026-11-26: the topic-log extra's
// two-reader row at -60% with probes of 69-95 ns in both runs).
TEST(Compare, AnExtrasRowThatMovedWithTheMemoryBandwidthOrUnderStealIsTheHosts) {
  auto log_read = [](const char* wait, double msgs_per_s, double bw_before, double bw_after, double steal = 0) {
    json r = {{"workload", "topic-log"}, {"transport", "zipc-topic"}, {"size", 100}, {"wait", wait}, {"processes", 3},
              {"cpus", nullptr},         {"msgs_per_s", msgs_per_s}};
    add_host_probes(&r, 80, 82, 1);  // the same placement in both runs
    HostBrackets h;
    h.membw_before_gbps = bw_before;
    h.membw_after_gbps = bw_after;
    h.steal_ms = steal;
    h.seconds = 10;
    add_host_bandwidth(&r, h, 2);
    return r;
  };
  const json old_doc = {{"results", json::array({log_read("busy", 10e6, 12, 12), log_read("adaptive", 10e6, 12, 12),
                                                 log_read("block", 10e6, 12, 12), log_read("spin", 10e6, 12, 12),
                                                 log_read("yield", 10e6, 12, 12)})}};
  const json new_doc = {{"results", json::array({
                                        log_read("busy", 4e6, 6, 6),          // bandwidth halved: the host
                                        log_read("adaptive", 4e6, 12, 11.5),  // bandwidth the same: the code
                                        log_read("block", 4e6, 12, 5),        // bandwidth moved while it ran
                                        log_read("spin", 4e6, 12, 12, 2000),  // 10% of 2 CPUs x 10 s stolen
                                        log_read("yield", 4e6, 24, 24),       // more bandwidth, slower: the code
                                    })}};
  CompareSummary s;
  const std::string sut = compare_documents(old_doc, new_doc, 0.10, &s);
  EXPECT_EQ(s.matched, 5) << sut;
  EXPECT_EQ(s.host_moved, 3) << sut;
  EXPECT_EQ(s.regressions, 2) << sut;
  EXPECT_NE(sut.find("topic-log|zipc-topic|100|adaptive|3|- | - | - | - | 10.00 M | 4.00 M | -60.0% | REGRESSION"),
            std::string::npos)
      << sut;
  EXPECT_NE(sut.find("|yield|3|- | - | - | - | 10.00 M | 4.00 M | -60.0% | REGRESSION"), std::string::npos) << sut;
  EXPECT_EQ(new_doc["results"][2].value("host_membw_unsettled", false), true);
  EXPECT_DOUBLE_EQ(new_doc["results"][3]["host_steal_share"].get<double>(), 0.1);
}

// A blocking round trip whose p50 flips between its two modes (found before
// sleeping / woken) from run to run is judged by its rate; a rate that moved
// beyond both spreads is still a change.
TEST(Compare, ARoundTripWithTwoModesIsJudgedByItsRate) {
  auto two_mode_row = [](double p50, double p50_lo, double p50_hi, double rate, double rate_lo, double rate_hi) {
    json r = sample_row("zipc-topic", p50, rate);
    r["spread"] = {{"rt_p50_ns", {{"min", p50_lo}, {"max", p50_hi}}},
                   {"msgs_per_s", {{"min", rate_lo}, {"max", rate_hi}}}};
    return r;
  };
  json one_mode = two_mode_row(30500, 26259, 33861, 29.7e3, 19.9e3, 29.7e3);
  json flipped = two_mode_row(480, 461, 24346, 69.9e3, 29.6e3, 104.8e3);
  EXPECT_FALSE(has_two_modes(one_mode));
  EXPECT_TRUE(has_two_modes(flipped));
  EXPECT_NE(spread_text(flipped).find("two modes"), std::string::npos) << spread_text(flipped);
  CompareSummary s;
  std::string sut =
      compare_documents({{"results", json::array({one_mode})}}, {{"results", json::array({flipped})}}, 0.10, &s);
  EXPECT_EQ(s.matched, 1);
  EXPECT_EQ(s.improvements, 0) << sut;
  EXPECT_EQ(s.regressions, 0) << sut;
  // The same p50s with rates that moved beyond both spreads: a change.
  json slower = two_mode_row(480, 461, 24346, 9e3, 8e3, 10e3);
  sut = compare_documents({{"results", json::array({one_mode})}}, {{"results", json::array({slower})}}, 0.10, &s);
  EXPECT_EQ(s.regressions, 1) << sut;
  // The rate judged is the median of the repetitions' rates, not the rate of
  // the median repetition by p50 (here 245.9 k, an outlier of its row).
  json old128 = two_mode_row(27270, 13250, 57245, 25.0e3, 4.5e3, 57.1e3);
  old128["msgs_per_s_runs"] = {4.5e3, 25.0e3, 57.1e3};
  json new128 = two_mode_row(471, 431, 22744, 245.9e3, 33.2e3, 245.9e3);
  new128["msgs_per_s_runs"] = {33.2e3, 92.9e3, 245.9e3};
  sut = compare_documents({{"results", json::array({old128})}}, {{"results", json::array({new128})}}, 0.10, &s);
  EXPECT_EQ(s.improvements, 0) << sut;
  EXPECT_EQ(s.regressions, 0) << sut;
  // Without two modes the p50 decides: 30.5 us -> 15 us beyond both spreads.
  json faster = two_mode_row(15000, 14000, 16000, 29.7e3, 19.9e3, 29.7e3);
  sut = compare_documents({{"results", json::array({one_mode})}}, {{"results", json::array({faster})}}, 0.10, &s);
  EXPECT_EQ(s.improvements, 1) << sut;
}

TEST(Compare, IdenticalDocumentsShowNoChange) {
  json doc = {{"results", json::array({sample_row("pipe", 1000, 1e5)})}};
  CompareSummary s;
  compare_documents(doc, doc, 0.10, &s);
  EXPECT_EQ(s.matched, 1);
  EXPECT_EQ(s.regressions, 0);
  EXPECT_EQ(s.improvements, 0);
}

TEST(Table, ShowsTheAuthorsFigureBesideTheRowItDescribes) {
  json doc = {{"results", json::array({sample_row("pipe", 1000, 1e5)})}};
  const std::string sut = results_table(doc);
  EXPECT_NE(sut.find("304,432"), std::string::npos) << sut;
  EXPECT_NE(sut.find("author's hardware"), std::string::npos);
  const std::string refs = reference_table(doc);
  EXPECT_NE(refs.find("pipe pingpong 64 B"), std::string::npos) << refs;
}

TEST(Table, AnExtraProgramsRowWithoutProcessesOrCpusIsShownWithDashes) {
  // What extras.cpp merges from a program that names neither.
  json row = {{"workload", "wakeup-latency"},
              {"transport", "zipc-waitset"},
              {"size", 0},
              {"wait", "block"},
              {"processes", nullptr},
              {"cpus", nullptr}};
  json doc = {{"results", json::array({row})}};
  const std::string sut = results_table(doc);
  EXPECT_NE(sut.find("| wakeup-latency | 0 | zipc-waitset | block | -/- |"), std::string::npos) << sut;
}

TEST(Table, ARowMeasuredOneWayShowsItsOneWayPercentiles) {
  // The NATS bridge extra measures one-way latency (oneway_<p>_us), not round trips.
  json row = {{"workload", "nats-bridge"},
              {"transport", "zipc-bridge-core"},
              {"size", 4096},
              {"wait", "block"},
              {"latency", "one way"},
              {"msgs_per_s", 160000.0},
              {"oneway_p50_us", 85.5},
              {"oneway_p99_us", 1130.0},
              {"oneway_p999_us", 3270.0}};
  json doc = {{"results", json::array({row})}};
  const std::string sut = results_table(doc);
  EXPECT_NE(sut.find("| 85.5 us | 1.13 ms | 3.27 ms |"), std::string::npos) << sut;
  EXPECT_FALSE(is_round_trip(row));  // --compare judges it by its rate
}

TEST(Extras, AMissingPeerProgramIsReportedNotCrashed) {
  const ExtraOutcome sut = run_extra({"nothing", "/nonexistent/zipc-bench-nothing"}, false, 10, "/tmp");
  EXPECT_FALSE(sut.ok);
  EXPECT_FALSE(sut.error.empty());
}

TEST(Extras, AProgramFollowingTheContractHasItsRowsMerged) {
  const std::string dir = (std::filesystem::temp_directory_path() / zipc::test::unique_name("extras")).string();
  std::filesystem::create_directories(dir);
  const std::string prog = dir + "/zipc-bench-fake";
  {
    std::ofstream f(prog);
    f << "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
         "echo '[{\"workload\":\"rpc\",\"transport\":\"zipc-rpc\",\"size\":128,\"rt_p50_ns\":900}]' > \"$out\"\n";
  }
  std::filesystem::permissions(prog, std::filesystem::perms::owner_all);
  const auto found = find_extras(dir);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].name, "fake");
  const ExtraOutcome sut = run_extra(found[0], false, 30, dir);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(sut.ok) << sut.error;
  ASSERT_EQ(sut.rows.size(), 1u);
  EXPECT_EQ(sut.rows[0]["family"], "zipc");
  EXPECT_EQ(sut.rows[0]["wait"], "n/a");
  EXPECT_EQ(sut.rows[0]["source"], "zipc-bench-fake");
}

// A row the program gave up on ("error" in it) is reported as an error that
// names the row, and is not a result.
TEST(Extras, ARowWrittenAsAnErrorIsReportedAndNotMerged) {
  const std::string dir = (std::filesystem::temp_directory_path() / zipc::test::unique_name("extras")).string();
  std::filesystem::create_directories(dir);
  const std::string prog = dir + "/zipc-bench-stall";
  {
    std::ofstream f(prog);
    f << "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
         "echo '[{\"workload\":\"stream\",\"transport\":\"peer\",\"size\":100,\"wait\":\"busy\",\"msgs_per_s\":5},"
         "{\"workload\":\"fanout-4\",\"transport\":\"peer\",\"size\":100,\"wait\":\"block\","
         "\"error\":\"did not finish within 40 s; killed\"}]' > \"$out\"\n";
  }
  std::filesystem::permissions(prog, std::filesystem::perms::owner_all);
  const auto found = find_extras(dir);
  ASSERT_EQ(found.size(), 1u);
  const ExtraOutcome sut = run_extra(found[0], false, 30, dir);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(sut.ok) << sut.error;
  ASSERT_EQ(sut.rows.size(), 1u);
  EXPECT_EQ(sut.rows[0]["workload"], "stream");
  ASSERT_EQ(sut.row_errors.size(), 1u);
  EXPECT_EQ(sut.row_errors[0]["what"], "fanout-4/peer/100/block");
  EXPECT_EQ(sut.row_errors[0]["error"], "did not finish within 40 s; killed");
}

// A peer program that measures once per invocation is invoked again; its
// rows are merged into the median invocation with the spread of all.
TEST(Extras, InvocationsOfAProgramWithoutSpreadsAreMergedIntoMedianAndSpread) {
  auto row = [](const char* transport, double p50, double rate) {
    return json{{"workload", "pingpong"}, {"transport", transport}, {"size", 64},
                {"wait", "busy"},         {"processes", 2},         {"cpus", 2},
                {"rt_p50_ns", p50},       {"msgs_per_s", rate}};
  };
  const std::vector<json> invocations = {
      json::array({row("iceoryx2", 300, 1.0e6), row("only-first", 10, 1)}),
      json::array({row("iceoryx2", 200, 2.0e6)}),
      json::array({row("iceoryx2", 250, 1.6e6)}),
  };
  EXPECT_TRUE(lacks_spreads(invocations[0]));
  const json sut = merge_invocations(invocations);
  ASSERT_EQ(sut.size(), 2u);
  const json& m = sut[0];
  EXPECT_EQ(m["transport"], "iceoryx2");
  EXPECT_EQ(m["rt_p50_ns"], 250);  // the median invocation by p50, whole
  EXPECT_EQ(m["msgs_per_s"], 1.6e6);
  EXPECT_EQ(m["repetitions"], 3);
  EXPECT_EQ(m["spread"]["rt_p50_ns"]["min"], 200);
  EXPECT_EQ(m["spread"]["rt_p50_ns"]["max"], 300);
  EXPECT_EQ(m["spread"]["msgs_per_s"]["max"], 2.0e6);
  EXPECT_EQ(m["msgs_per_s_runs"].size(), 3u);
  EXPECT_EQ(sut[1]["transport"], "only-first");
  EXPECT_EQ(sut[1]["repetitions"], 1);
  EXPECT_FALSE(lacks_spreads(sut));
  // A stream's row (not a round trip) is the median invocation by rate.
  auto stream = [&](double p50, double rate) {
    json r = row("iceoryx2", p50, rate);
    r["workload"] = "stream";
    return r;
  };
  const json by_rate = merge_invocations(
      {json::array({stream(100, 2e6)}), json::array({stream(900, 3e6)}), json::array({stream(500, 1e6)})});
  EXPECT_EQ(by_rate[0]["msgs_per_s"], 2e6);  // by p50 it would be the 500 ns one at 1e6
  EXPECT_EQ(by_rate[0]["rt_p50_ns"], 100);
  // What --compare reads: a change within the merged spread is no change.
  CompareSummary s;
  json moved = m;
  moved["rt_p50_ns"] = 290;
  (void)compare_documents({{"results", json::array({m})}}, {{"results", json::array({moved})}}, 0.10, &s);
  EXPECT_EQ(s.regressions, 0);
}

}  // namespace

}  // namespace results_test
}  // namespace zipc::bench

namespace zipc::bench {
namespace {

TEST(Limits, ProbeMeasuresEveryFigureAndLeavesTheCallersCpuSetAsItWas) {
  const std::vector<int> before = allowed_cpus();
  LimitsOptions opt;
  opt.scale = 0.02;
  const Limits sut = measure_limits(opt);
  EXPECT_EQ(allowed_cpus(), before);
  EXPECT_GT(sut.cacheline_rtt_1cpu_yield_ns, 0);
  if (before.size() >= 2) {
    EXPECT_GT(sut.cacheline_rtt_ns, 0);
    EXPECT_GT(sut.futex_rtt_ns, 0);
  }
  EXPECT_EQ(sut.memcpy_gbps.size(), 4u);
  EXPECT_GT(sut.spsc_inproc_msgs_per_s.at(8), 0);
  EXPECT_GT(sut.spsc_inproc_msgs_per_s.at(100), 0);
  if (before.size() >= 2) {
    for (std::size_t size : {3000u, 65536u, 262144u}) EXPECT_GT(sut.xcore_copy_gbps.at(size), 0) << size;
  } else {
    EXPECT_TRUE(sut.xcore_copy_gbps.empty());
  }
}

}  // namespace
}  // namespace zipc::bench
