// Faults: bridges SIGKILLed and restarted, nats-server restarted, a cluster
// node killed. Two hosts by name prefix (see common.hpp).
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <optional>
#include <thread>

#include "common.hpp"

namespace zipc::bridge_test {
namespace fault_test {
namespace {

using namespace std::chrono_literals;

bool log_has(const std::string& path, const std::string& text, std::size_t times = 1) {
  const std::string s = read_file(path);
  std::size_t n = 0;
  for (auto p = s.find(text); p != std::string::npos; p = s.find(text, p + 1)) ++n;
  return n >= times;
}

void expect_exactly(const RemoteReader& r, std::uint64_t n) {
  const auto seqs = r.seqs();
  EXPECT_EQ(r.bad(), 0u);
  ASSERT_EQ(seqs.size(), n) << "lost or duplicated";
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(seqs[i], i) << "at " << i;
}

// One host of a JetStream mapping of "prices" (stream <prefix><pid>): hostA
// sends its topic out, hostB receives into its own.
BridgeConfig jetstream_host(const std::string& host, const NatsServer& server, const TempDir& dir, const Hosts& h,
                            BridgeDirection direction, const std::string& prefix) {
  const bool out = direction == BridgeDirection::outbound;
  auto c = host_config(host, {server.url()}, dir.path() + (out ? "/a" : "/b"));
  c.mappings.push_back(mapping(out ? h.a("prices") : h.b("prices"), h.subject("prices"), direction,
                               BridgeMode::jetstream, prefix + std::to_string(::getpid())));
  return c;
}

// Two bridge processes of one JetStream mapping of "prices" (stream `stream`):
// hostA sends its topic out, hostB receives it; each can be killed and
// restarted with the same arguments (it resumes from its state file).
struct JetStreamBridges {
  JetStreamBridges(const TempDir& dir, const Hosts& h, const NatsServer& server, const std::string& stream)
      : args_a(bridge_args("hostA", server.url(), dir.path() + "/a", h.a("prices"), h.subject("prices"), "out",
                           "jetstream", stream)),
        args_b(bridge_args("hostB", server.url(), dir.path() + "/b", h.b("prices"), h.subject("prices"), "in",
                           "jetstream", stream)),
        log_a(dir.path() + "/a.log"),
        log_b(dir.path() + "/b.log"),
        a(args_a, log_a),
        b(args_b, log_b) {}
  bool ready() const {
    return wait_for([&] { return log_has(log_a, "ready") && log_has(log_b, "ready"); }, 15s);
  }
  std::string logs() const { return read_file(log_a) + read_file(log_b); }
  std::vector<std::string> args_a, args_b;
  std::string log_a, log_b;
  Proc a, b;
};

TEST(BridgeJetStream, BridgesKilledMidStreamAndRestartedLoseAndDuplicateNothing) {
  TempDir dir;
  Hosts h;
  NatsServer server(dir.path());
  const std::string stream = "K" + std::to_string(::getpid());
  JetStreamBridges br(dir, h, server, stream);
  ASSERT_TRUE(br.ready()) << br.logs();
  RemoteReader reader(h.b("prices"));
  auto topic = Topic::open(h.a("prices"));
  const std::uint64_t n = 12000;
  std::thread producer([&] { publish_range(topic, 0, n, 2ms); });
  ASSERT_TRUE(wait_for([&] { return reader.count() > n / 5; }, 30s)) << br.logs();
  br.a.kill(SIGKILL);
  EXPECT_EQ(br.a.wait(5s), 128 + SIGKILL);
  br.a = Proc(br.args_a, br.log_a);  // restarted: resumes from its position file
  ASSERT_TRUE(wait_for([&] { return reader.count() > n / 2; }, 30s)) << br.logs();
  br.b.kill(SIGKILL);
  EXPECT_EQ(br.b.wait(5s), 128 + SIGKILL);
  br.b = Proc(br.args_b, br.log_b);
  producer.join();
  ASSERT_TRUE(wait_for([&] { return reader.count() >= n; }, 40s)) << reader.count() << "\n" << br.logs();
  std::this_thread::sleep_for(500ms);  // a duplicate would arrive by now
  expect_exactly(reader, n);
}

// The receiving bridge killed again and again while it works through a
// backlog in full fetched batches: its state record covers a run of a batch,
// so each kill lands between the record, the deliveries of the run and the
// batch's acknowledgement.
TEST(BridgeJetStream, AReceiverKilledRepeatedlyInTheMiddleOfFullBatchesLosesAndDuplicatesNothing) {
  TempDir dir;
  Hosts h;
  NatsServer server(dir.path());
  const std::string stream = "R" + std::to_string(::getpid());
  JetStreamBridges br(dir, h, server, stream);
  ASSERT_TRUE(br.ready()) << br.logs();
  RemoteReader reader(h.b("prices"));
  auto topic = Topic::open(h.a("prices"));
  const std::uint64_t n = 30000;
  std::thread producer([&] { publish_range(topic, 0, n); });  // flat out: a backlog in the stream
  for (int kill = 1; kill <= 4; ++kill) {
    ASSERT_TRUE(wait_for([&] { return reader.count() > n * kill / 6; }, 40s)) << br.logs();
    br.b.kill(SIGKILL);
    EXPECT_EQ(br.b.wait(5s), 128 + SIGKILL);
    br.b = Proc(br.args_b, br.log_b);
  }
  producer.join();
  ASSERT_TRUE(wait_for([&] { return reader.count() >= n; }, 60s)) << reader.count() << "\n" << br.logs();
  std::this_thread::sleep_for(500ms);  // a duplicate would arrive by now
  expect_exactly(reader, n);
}

// Bridge A (a zipc-bridge process, with `extra` arguments) SIGKILLed
// mid-stream and restarted: host B counts exactly what went missing.
void killed_core_bridge_counts_its_losses(const std::vector<std::string>& extra, const char* label) {
  TempDir dir;
  Hosts h;
  NatsServer server(dir.path());
  auto args_a =
      bridge_args("hostA", server.url(), dir.path() + "/a", h.a("prices"), h.subject("prices"), "out", "core", "");
  args_a.insert(args_a.end(), extra.begin(), extra.end());
  const std::string log_a = dir.path() + "/a.log";
  Proc a(args_a, log_a);
  auto cb = host_config("hostB", {server.url()}, dir.path() + "/b");
  cb.mappings.push_back(mapping(h.b("prices"), h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  Bridge b(cb);
  b.start();
  ASSERT_TRUE(wait_for([&] { return log_has(log_a, "ready") && b.ready(); }, 15s)) << read_file(log_a);
  RemoteReader reader(h.b("prices"));
  auto topic = Topic::open(h.a("prices"));
  const std::uint64_t n = 12000;
  std::thread producer([&] { publish_range(topic, 0, n - 1, 1ms); });
  ASSERT_TRUE(wait_for([&] { return reader.count() > n / 3; }, 30s)) << read_file(log_a);
  a.kill(SIGKILL);
  EXPECT_EQ(a.wait(5s), 128 + SIGKILL);
  a = Proc(args_a, log_a);
  producer.join();
  ASSERT_TRUE(wait_for([&] { return log_has(log_a, "ready", 2); }, 15s)) << read_file(log_a);
  std::this_thread::sleep_for(300ms);
  publish_range(topic, n - 1, n);  // the last one, after everything settled: it shows any gap before it
  ASSERT_TRUE(wait_for(
      [&] {
        auto s = reader.seqs();
        return !s.empty() && s.back() == n - 1;
      },
      30s))
      << read_file(log_a);
  const auto seqs = reader.seqs();
  EXPECT_TRUE(strictly_increasing(seqs));
  EXPECT_EQ(seqs.front(), 0u);
  EXPECT_TRUE(wait_for([&] { return b.stats(0).received == seqs.size(); }, 5s))
      << b.stats(0).received;  // counted just after the local publish returns
  const auto s = b.stats(0);
  EXPECT_EQ(s.received, seqs.size());
  EXPECT_EQ(s.lost, n - seqs.size()) << "lost must be exactly the missing sequences";
  std::printf("core bridge SIGKILL (%s): %zu delivered, %llu lost, %llu duplicates dropped\n", label, seqs.size(),
              static_cast<unsigned long long>(s.lost), static_cast<unsigned long long>(s.duplicates));
}

TEST(BridgeCore, ABridgeKilledMidStreamAndRestartedCountsItsLossesExactly) {
  killed_core_bridge_counts_its_losses({}, "own threads");
}

TEST(BridgeCaller, AProgramDrivenByItsMainThreadKilledMidStreamCountsItsLossesExactly) {
  killed_core_bridge_counts_its_losses({"--threads", "caller"}, "threads caller");
}

TEST(BridgeJetStream, ANatsServerRestartedMidStreamLosesAndDuplicatesNothing) {
  TempDir dir;
  Hosts h;
  NatsServer server(dir.path());
  Bridge a(jetstream_host("hostA", server, dir, h, BridgeDirection::outbound, "R"));
  Bridge b(jetstream_host("hostB", server, dir, h, BridgeDirection::inbound, "R"));
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 15s)) << a.last_error() << b.last_error();
  RemoteReader reader(h.b("prices"));
  auto topic = Topic::open(h.a("prices"));
  const std::uint64_t n = 10000;
  std::thread producer([&] { publish_range(topic, 0, n, 2ms); });
  ASSERT_TRUE(wait_for([&] { return reader.count() > n / 4; }, 30s));
  server.kill();
  std::this_thread::sleep_for(300ms);
  server.start();
  producer.join();
  ASSERT_TRUE(wait_for([&] { return reader.count() >= n; }, 60s))
      << reader.count() << " " << a.last_error() << " | " << b.last_error();
  std::this_thread::sleep_for(500ms);
  expect_exactly(reader, n);
  EXPECT_GE(a.stats(0).reconnects, 1u);
  EXPECT_GE(b.stats(0).reconnects, 1u);
}

// A server that comes back with fewer messages than it acknowledged (here
// its store is restored from an older copy; a SIGKILL before its file store's
// asynchronous flush does the same): new messages then get stream sequences
// the inbound bridge already passed. It must follow the stream back and
// deliver them, losing nothing. (Before: it started after the old sequence
// and skipped them, and the reader stopped short.)
TEST(BridgeJetStream, AStreamThatWentBackAfterAServerRestartIsFollowedAndNothingNewIsLost) {
  TempDir dir;
  Hosts h;
  NatsServer server(dir.path());
  Bridge a(jetstream_host("hostA", server, dir, h, BridgeDirection::outbound, "B"));
  Bridge b(jetstream_host("hostB", server, dir, h, BridgeDirection::inbound, "B"));
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 15s)) << a.last_error() << b.last_error();
  RemoteReader reader(h.b("prices"));
  auto topic = Topic::open(h.a("prices"));
  publish_range(topic, 0, 100, 1ms);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 100; }, 30s)) << reader.count();
  server.stop();
  const std::string snapshot = dir.path() + "/snapshot";
  std::filesystem::copy(server.store_dir(), snapshot, std::filesystem::copy_options::recursive);
  server.start();
  publish_range(topic, 100, 200, 1ms);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 200; }, 30s)) << reader.count() << " " << b.last_error();
  server.stop();
  std::filesystem::remove_all(server.store_dir());
  std::filesystem::rename(snapshot, server.store_dir());  // the stream is back at 100 messages
  server.start();
  publish_range(topic, 200, 300, 1ms);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 300; }, 60s))
      << reader.count() << " " << a.last_error() << " | " << b.last_error();
  std::this_thread::sleep_for(300ms);
  expect_exactly(reader, 300);
  EXPECT_EQ(b.stats(0).lost, 0u);
}

// A three-node cluster; the node killed mid-stream carries host A's
// connection, or (killed_holds_b) host B's, whose inbound connection is read
// by the bridge's own loop (read_loop.hpp) and must come back on another node.
// caller: the bridge on the killed node is driven by the caller (a thread
// polling it), whose polls also carry the reconnection's handshake.
void cluster_node_killed(bool killed_holds_b, bool caller = false) {
  TempDir dir;
  Hosts h;
  const int p1 = free_port(), p2 = free_port(), p3 = free_port();
  const int c1 = free_port(), c2 = free_port(), c3 = free_port();
  NatsServer n1(dir.path(), "n1", p1, {c1, {c2, c3}, "zc"});
  NatsServer n2(dir.path(), "n2", p2, {c2, {c1, c3}, "zc"});
  NatsServer n3(dir.path(), "n3", p3, {c3, {c1, c2}, "zc"});
  const std::string n1_log = dir.path() + "/n1.log";
  ASSERT_TRUE(wait_for([&] { return log_has(n1_log, "Route connection created", 2); }, 15s)) << n1.log();
  const std::vector<std::string> first_n1 = {n1.url(), n2.url(), n3.url()}, first_n2 = {n2.url(), n3.url(), n1.url()};
  auto ca = host_config("hostA", killed_holds_b ? first_n2 : first_n1, dir.path() + "/a");
  ca.nats.randomize = false;  // the killed node n1 holds host A, or host B
  ca.mappings.push_back(mapping(h.a("prices"), h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
  auto cb = host_config("hostB", killed_holds_b ? first_n1 : first_n2, dir.path() + "/b");
  cb.nats.randomize = false;
  cb.mappings.push_back(mapping(h.b("prices"), h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  if (caller) (killed_holds_b ? cb : ca).threads = BridgeThreads::caller;
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  std::optional<Poller> polling;
  if (caller) polling.emplace(killed_holds_b ? b : a);
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 15s)) << a.last_error() << b.last_error();
  RemoteReader reader(h.b("prices"));
  auto topic = Topic::open(h.a("prices"));
  // B's interest reaches n1 over the route: probe until a message arrives.
  std::uint64_t next = 0;
  while (reader.count() == 0 && next < 500) {
    publish_range(topic, next, next + 1);
    ++next;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_GT(reader.count(), 0u) << "no route from n1 to n2";
  const std::uint64_t first = reader.seqs().front();
  const std::uint64_t n = 8000;
  std::thread producer([&] { publish_range(topic, next, n - 1, 1ms); });
  ASSERT_TRUE(wait_for([&] { return reader.count() > n / 4; }, 30s));
  n1.kill();
  producer.join();
  Bridge& moved = killed_holds_b ? b : a;
  ASSERT_TRUE(wait_for([&] { return moved.stats(0).reconnects >= 1 && moved.connected(); }, 15s)) << moved.last_error();
  std::this_thread::sleep_for(500ms);
  publish_range(topic, n - 1, n);
  ASSERT_TRUE(wait_for(
      [&] {
        auto s = reader.seqs();
        return s.back() == n - 1;
      },
      30s))
      << a.last_error() << " | " << b.last_error();
  const auto seqs = reader.seqs();
  EXPECT_TRUE(strictly_increasing(seqs));
  EXPECT_TRUE(wait_for([&] { return b.stats(0).received == seqs.size(); }, 5s))
      << b.stats(0).received;  // counted just after the local publish returns
  const auto s = b.stats(0);
  EXPECT_EQ(s.received, seqs.size());
  EXPECT_EQ(s.lost, (n - first) - seqs.size()) << "lost must be exactly the missing sequences";
  std::printf("cluster node killed (%s%s): %zu delivered, %llu lost\n", killed_holds_b ? "host B's" : "host A's",
              caller ? ", caller-driven" : "", seqs.size(), static_cast<unsigned long long>(s.lost));
}

TEST(BridgeCore, AClusterNodeKilledMidStreamIsFailedOverWithExactAccounting) {
  cluster_node_killed(false);
}

TEST(BridgeCore, AnInboundBridgesClusterNodeKilledMidStreamIsFailedOverWithExactAccounting) {
  cluster_node_killed(true);
}

TEST(BridgeCaller, ACallerDrivenOutboundBridgesClusterNodeKilledMidStreamIsFailedOverWithExactAccounting) {
  cluster_node_killed(false, /*caller=*/true);
}

TEST(BridgeCaller, ACallerDrivenInboundBridgesClusterNodeKilledMidStreamIsFailedOverWithExactAccounting) {
  cluster_node_killed(true, /*caller=*/true);
}

}  // namespace
}  // namespace fault_test

}  // namespace zipc::bridge_test
