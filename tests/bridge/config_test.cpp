// Bad configs and unreachable servers give clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fstream>

#include "common.hpp"
#include "raw_nats.hpp"

namespace zipc::bridge_test {
namespace config_test {
namespace {

std::string error_of(const std::string& json) {
  try {
    (void)parse_bridge_config(json, "test.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::invalid_argument);
    return e.what();
  }
  return "";
}

TEST(BridgeConfig, AValidConfigIsReadFieldByField) {
  const auto c = parse_bridge_config(R"({"host_id":"a","state_dir":"/tmp/x",
    "nats":{"servers":["nats://h1:4222","nats://h2:4222"],"user":"u","password":"p","connect_timeout_ms":1500},
    "mappings":[{"kind":"queue","channel":"jobs","subject":"zipc.jobs","direction":"in","mode":"jetstream",
                 "stream":"JOBS","overflow":"drop","envelope":true,"wait":"busy",
                 "batch_bytes":4096}]})");
  EXPECT_EQ(c.host_id, "a");
  ASSERT_EQ(c.nats.servers.size(), 2u);
  EXPECT_EQ(c.nats.user, "u");
  EXPECT_EQ(c.nats.connect_timeout.count(), 1500);
  ASSERT_EQ(c.mappings.size(), 1u);
  EXPECT_EQ(c.mappings[0].kind, BridgeKind::queue);
  EXPECT_EQ(c.mappings[0].direction, BridgeDirection::inbound);
  EXPECT_EQ(c.mappings[0].mode, BridgeMode::jetstream);
  EXPECT_EQ(c.mappings[0].overflow, BridgeOverflow::drop);
  EXPECT_TRUE(c.mappings[0].envelope);
  EXPECT_EQ(c.mappings[0].wait.strategy, WaitStrategy::busy_poll);
  EXPECT_EQ(c.mappings[0].batch_bytes, 4096u);
  // Unset, the outbound reader waits adaptively (the library's default).
  const auto d = parse_bridge_config(R"({"mappings":[{"channel":"c","subject":"s"}]})");
  EXPECT_EQ(d.mappings[0].wait.strategy, WaitStrategy::adaptive);
  EXPECT_EQ(d.mappings[0].wait.strategy, BridgeMapping{}.wait.strategy);
  EXPECT_EQ(d.mappings[0].batch_bytes, 16u * 1024);
}

TEST(BridgeConfig, BadConfigsAreRefusedNamingTheFieldAndTheFile) {
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[],"colour":1})").find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[]})").find("no mappings"), std::string::npos);
  EXPECT_NE(
      error_of(R"({"mappings":[{"channel":"c","subject":"s","mode":"fast"}]})").find("mappings[0].mode is 'fast'"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[{"channel":"c","subject":"a.*"}]})").find("wildcard"), std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[{"channel":"c","subject":"s","mode":"jetstream","stream":"S"}]})")
                .find("needs state_dir"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"mappings":[{"channel":"c","subject":"s","kind":"queue","direction":"both"}]})").find("not both"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[{"channel":"c","subject":"s","envelope":"yes"}]})").find("wrong type"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[{"channel":"c","subject":"s","wait":"spin"}]})")
                .find("mappings[0].wait is 'spin'; expected one of: adaptive, busy, block"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[{"channel":"c","subject":"s","batch_bytes":100}]})")
                .find("batch_bytes 100 is outside 1024..1048576"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[{"channel":"c","subject":"s","batch_bytes":2000000}]})").find("batch_bytes"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"mappings":[]})").find("test.json"), std::string::npos);
  // Wildcards are fine inbound.
  EXPECT_EQ(error_of(R"({"mappings":[{"channel":"c","subject":"a.>","direction":"in"}]})"), "");
}

TEST(BridgeConfig, AMissingConfigFileIsNotFound) {
  try {
    (void)load_bridge_config("/nonexistent/bridge.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::not_found);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/bridge.json"), std::string::npos);
  }
}

TEST(BridgeProgram, ABadConfigFileExitsWithCodeTwoAndSaysWhy) {
  TempDir dir;
  const std::string cfg = dir.path() + "/bad.json";
  std::ofstream(cfg) << R"({"mappings":[{"channel":"c","subject":"s","direction":"sideways"}]})";
  const std::string log = dir.path() + "/bridge.log";
  Proc p({bridge_exe(), "--config", cfg}, log);
  EXPECT_EQ(p.wait(std::chrono::seconds(20)), 2);
  EXPECT_NE(read_file(log).find("mappings[0].direction is 'sideways'"), std::string::npos) << read_file(log);
}

TEST(BridgeProgram, AnUnknownWaitIsRefusedNamingTheChoices) {
  TempDir dir;
  const std::string log = dir.path() + "/bridge.log";
  Proc p({bridge_exe(), "--channel", "c", "--subject", "s", "--wait", "spin"}, log);
  EXPECT_NE(p.wait(std::chrono::seconds(20)), 0);
  const std::string out = read_file(log);
  EXPECT_NE(out.find("--wait"), std::string::npos) << out;
  EXPECT_NE(out.find("spin"), std::string::npos) << out;
}

TEST(BridgeProgram, AnUnreachableServerIsRetriedThenGivenUpWithAClearError) {
  TempDir dir;
  Hosts h;
  const std::string log = dir.path() + "/bridge.log";
  const int port = free_port();
  Proc p({bridge_exe(), "-s", "nats://127.0.0.1:" + std::to_string(port), "--channel", h.a("prices"), "--subject",
          h.subject("prices"), "--connect-timeout-ms", "700"},
         log);
  EXPECT_EQ(p.wait(std::chrono::seconds(20)), 3);
  const std::string out = read_file(log);
  EXPECT_NE(out.find("cannot connect to nats://127.0.0.1:" + std::to_string(port)), std::string::npos) << out;
  EXPECT_NE(out.find("retrying in 100 ms"), std::string::npos) << out;
  EXPECT_NE(out.find("retrying in 200 ms"), std::string::npos) << out;  // back-off doubles
  EXPECT_NE(out.find("giving up"), std::string::npos) << out;
}

TEST(Bridge, StartsBeforeTheServerAndRunsOnceItAppears) {
  TempDir dir;
  Hosts h;
  const int port = free_port();
  const std::string url = "nats://127.0.0.1:" + std::to_string(port);
  auto ca = host_config("hostA", {url}, dir.path());
  ca.mappings.push_back(mapping(h.a("prices"), h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
  auto cb = host_config("hostB", {url}, dir.path());
  cb.mappings.push_back(mapping(h.b("prices"), h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(
      wait_for([&] { return a.last_error().find("cannot connect") != std::string::npos; }, std::chrono::seconds(5)));
  EXPECT_FALSE(a.connected());
  {
    auto early = Topic::open(h.a("prices"));
    publish_range(early, 0, 10);  // kept in the topic by the bridge's reliable subscriber meanwhile
    EXPECT_EQ(a.stats(0).lag, 10u);
  }
  NatsServer server(dir.path(), "n1", port);
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, std::chrono::seconds(15))) << a.last_error();
  RemoteReader reader(h.b("prices"));
  auto topic = Topic::open(h.a("prices"));
  publish_range(topic, 10, 100);
  // The first 10 may go out before B subscribed (core keeps nothing); the rest arrive.
  ASSERT_TRUE(wait_for(
      [&] {
        auto s = reader.seqs();
        return !s.empty() && s.back() == 99;
      },
      std::chrono::seconds(10)))
      << reader.count();
  EXPECT_GE(reader.count(), 90u);
  EXPECT_EQ(a.stats(0).lag, 0u);
  EXPECT_TRUE(wait_for([&] { return a.stats(0).forwarded == 100u; }, std::chrono::seconds(5)))
      << a.stats(0).forwarded;  // counted just after the send returns
}

}  // namespace
}  // namespace config_test

namespace zipc::bridge_test {
namespace {

using namespace std::chrono_literals;

TEST(BridgeProgram, UsageErrorsExitWithCodeTwoInOneLineNamingTheFlagAndItsRange) {
  TempDir dir;
  const std::vector<std::vector<std::string>> cases{
      {"--connect-timeout-ms", "-5"},         {"--connect-timeout-ms", "nan"}, {"--stats-ms", "-1"},
      {"--stats-ms", "99999999999999999999"}, {"--batch-bytes", "-1"},         {"--bogus"}};
  for (const auto& args : cases) {
    const std::string log = dir.path() + "/usage" + std::to_string(&args - cases.data()) + ".log";
    std::vector<std::string> argv{bridge_exe(), "--channel", "c", "--subject", "s"};
    argv.insert(argv.end(), args.begin(), args.end());
    Proc p(argv, log);
    EXPECT_EQ(p.wait(std::chrono::seconds(20)), 2) << args[0];
    const std::string out = read_file(log);
    EXPECT_NE(out.find(args[0]), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  }
}

TEST(BridgeProgram, TheExitStatsLineShowsTheTotalsOfTheRun) {
  Pair p;
  const std::string log = p.dir.path() + "/bridge.log";
  Proc bridge({bridge_exe(), "-s", p.server.url(), "--host-id", "hostB", "--channel", p.h.b("prices"), "--subject",
               p.h.subject("prices"), "--direction", "in"},
              log);
  ASSERT_TRUE(wait_for([&] { return read_file(log).find("ready") != std::string::npos; }, 10s)) << read_file(log);
  {
    RawNats f(p.server.port());
    for (int i = 0; i < 5; ++i)
      f.publish(p.h.subject("prices"),
                "NATS/1.0\r\nZipc-Origin: hostA\r\nZipc-Channel: a\r\nZipc-Seq: " + std::to_string(i) + "\r\n\r\n",
                "body");
    for (int i = 0; i < 3; ++i)
      f.publish(p.h.subject("prices"), "NATS/1.0\r\nZipc-Origin: hostA\r\nZipc-Channel: a\r\nZipc-Seq: x\r\n\r\n", "b");
    f.publish(p.h.subject("prices"), "NATS/1.0 503\r\n\r\n", "");
    f.flush();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // (what the totals must show has arrived by now)
  bridge.kill(SIGTERM);
  EXPECT_EQ(bridge.wait(std::chrono::seconds(20)), 0);
  const std::string out = read_file(log);
  EXPECT_NE(out.find("received=5 lost=0"), std::string::npos) << out;
  EXPECT_NE(out.find("rejected_status=1 rejected_header=3"), std::string::npos) << out;
}

}  // namespace
}  // namespace zipc::bridge_test

}  // namespace zipc::bridge_test
