// A server with a small max_payload: core batches are cut to what it takes, and a
// message larger than it takes is dropped, counted and named, never retried
// forever (which would stall the mapping behind it).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <thread>
#include <vector>

#include "common.hpp"

namespace zipc::bridge_test {
namespace limit_test {
namespace {

using namespace std::chrono_literals;

// A nats-server that takes at most 16384 bytes a message, and two hosts.
struct SmallServer {
  TempDir dir;
  NatsServer server{dir.path(), "n1", {"-c", write_config(dir.path())}};
  Hosts h;
  static std::string write_config(const std::string& d) {
    std::ofstream(d + "/small.conf") << "max_payload: 16384\n";
    return d + "/small.conf";
  }
};

// 1000-byte messages, and message too_large of 20000 bytes: over the limit.
std::size_t size_of(std::uint64_t i, std::uint64_t too_large) {
  return i == too_large ? 20000 : 1000;
}

// Reads the remote topic until `want` messages arrived (30 s at most), each
// checked whole against its sequence; `between` runs before each read.
std::vector<std::uint64_t> read_all(Subscriber& sub, std::uint64_t want, std::uint64_t too_large,
                                    const std::function<void()>& between) {
  std::vector<std::uint64_t> got;
  std::vector<std::byte> buf(32768);
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (got.size() < want && std::chrono::steady_clock::now() < end) {
    between();
    for (ReadResult r = sub.read(buf, 10ms); r.ok(); r = sub.read(buf, 0ms)) {
      auto env = parse_envelope(std::span(buf.data(), r.size));
      EXPECT_TRUE(env.has_value());
      if (!env) return got;
      const auto expected = payload(env->sequence, size_of(env->sequence, too_large));
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), env->payload.begin(), env->payload.end()))
          << "at " << env->sequence;
      got.push_back(env->sequence);
    }
  }
  return got;
}

// Publishes messages 0..n-1 into a local topic, message too_large over the
// server's limit; `after(i)` runs after each.
void publish_all(const std::string& channel, std::uint64_t n, std::uint64_t too_large,
                 const std::function<void(std::uint64_t)>& after) {
  auto topic = Topic::open(channel);
  auto pub = topic.publisher();
  for (std::uint64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(pub.publish(payload(i, size_of(i, too_large)), 5s).ok()) << i;
    after(i);
  }
}

// The remote reader got every message but too_large, in order.
void expect_all_but(const std::vector<std::uint64_t>& got, std::uint64_t n, std::uint64_t too_large) {
  ASSERT_EQ(got.size(), n - 1);
  for (std::uint64_t i = 0; i < n - 1; ++i) ASSERT_EQ(got[i], i < too_large ? i : i + 1) << "at " << i;
}

TEST(BridgeLimit, BatchesAreCutToTheServersMaxPayloadAndATooLargeMessageIsDroppedAndNamed) {
  SmallServer s;
  auto ca = host_config("hostA", {s.server.url()}, s.dir.path());
  ca.threads = BridgeThreads::caller;
  auto ma = mapping(s.h.a("prices"), s.h.subject("prices"), BridgeDirection::outbound, BridgeMode::core);
  ma.batch_bytes = 64 * 1024;  // far over the server's limit
  ca.mappings.push_back(ma);
  auto cb = host_config("hostB", {s.server.url()}, s.dir.path());
  cb.mappings.push_back(mapping(s.h.b("prices"), s.h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for(
      [&] {
        a.poll(1ms);
        return a.ready() && b.ready();
      },
      10s))
      << a.last_error() << b.last_error();
  auto btopic = Topic::open(s.h.b("prices"));
  auto sub = btopic.subscribe({From::oldest(), Delivery::reliable});
  const std::uint64_t n = 600, too_large = 300;
  ASSERT_NO_FATAL_FAILURE(publish_all(s.h.a("prices"), n, too_large, [&](std::uint64_t i) {
    if (i % 200 == 199) a.poll();  // 200 messages, ~200 KB, in one pump
  }));
  ASSERT_NO_FATAL_FAILURE(expect_all_but(read_all(sub, n - 1, too_large, [&] { a.poll(1ms); }), n, too_large));
  EXPECT_EQ(a.stats(0).forwarded, n - 1);
  EXPECT_EQ(a.stats(0).lost, 1u) << "the message over max_payload is counted at the sender";
  EXPECT_EQ(a.stats(0).lag, 0u);
  EXPECT_NE(a.last_error().find("max_payload (16384 bytes): dropped"), std::string::npos) << a.last_error();
  EXPECT_NE(a.last_error().find("message 300 "), std::string::npos) << a.last_error();
  EXPECT_EQ(b.stats(0).lost, 1u) << "and seen as one gap at the receiver";
  EXPECT_EQ(b.stats(0).duplicates, 0u);
}

// A dropped message announced echoes skipped just before it: the next message
// announces them instead, so that the receiver counts only the dropped one
// lost. Host X's message comes back into host A's `both` topic as an echo.
TEST(BridgeLimit, TheEchoesADroppedMessageAnnouncedPassToTheNextAndOnlyItIsCountedLost) {
  SmallServer s;
  const std::string x_channel = s.h.base + ".hostX.prices";
  auto cx = host_config("hostX", {s.server.url()}, s.dir.path());
  cx.mappings.push_back(mapping(x_channel, s.h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
  auto ca = host_config("hostA", {s.server.url()}, s.dir.path());
  ca.mappings.push_back(mapping(s.h.a("prices"), s.h.subject("prices"), BridgeDirection::both, BridgeMode::core));
  auto cb = host_config("hostB", {s.server.url()}, s.dir.path());
  cb.mappings.push_back(mapping(s.h.b("prices"), s.h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  Bridge x(cx), a(ca), b(cb);
  x.start();
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return x.ready() && a.ready() && b.ready(); }, 10s)) << a.last_error();
  auto atopic = Topic::open(s.h.a("prices"));
  auto apub = atopic.publisher();
  ASSERT_TRUE(apub.publish(payload(0, 1000), 5s).ok());  // A's 0: B counts from here
  ASSERT_TRUE(wait_for([&] { return b.stats(0).received == 1; }, 10s));
  {
    auto xtopic = Topic::open(x_channel);
    ASSERT_TRUE(xtopic.publisher().publish(payload(0, 1000), 5s).ok());
  }
  ASSERT_TRUE(wait_for([&] { return atopic.next_sequence() == 2 && b.stats(0).received == 2; }, 10s))
      << "host X's message did not reach A (as its 1, an echo) and B";
  ASSERT_TRUE(apub.publish(payload(2, 20000), 5s).ok());  // over the server's limit
  ASSERT_TRUE(apub.publish(payload(3, 1000), 5s).ok());
  ASSERT_TRUE(wait_for([&] { return b.stats(0).received == 3; }, 10s)) << a.last_error();
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(a.stats(0).lost, 1u);
  EXPECT_EQ(b.stats(0).lost, 1u) << "the echo before the dropped message was counted lost too";
  EXPECT_EQ(a.stats(0).loops, 0u);
  Topic::remove(x_channel);
}

// JetStream: a message larger than the server takes would fail its whole
// batch again and again. It is dropped, counted and named at the sender, and
// announced as skipped (Zipc-Skip), so that the receiver neither waits for it
// nor holds back what follows.
TEST(BridgeLimit, AJetStreamMessageLargerThanTheServerTakesIsDroppedNamedAndSkipped) {
  SmallServer s;
  const std::string stream = "L" + std::to_string(::getpid());
  auto ca = host_config("hostA", {s.server.url()}, s.dir.path() + "/a");
  ca.mappings.push_back(
      mapping(s.h.a("prices"), s.h.subject("prices"), BridgeDirection::outbound, BridgeMode::jetstream, stream));
  auto cb = host_config("hostB", {s.server.url()}, s.dir.path() + "/b");
  cb.mappings.push_back(
      mapping(s.h.b("prices"), s.h.subject("prices"), BridgeDirection::inbound, BridgeMode::jetstream, stream));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s)) << a.last_error() << b.last_error();
  auto btopic = Topic::open(s.h.b("prices"));
  auto sub = btopic.subscribe({From::oldest(), Delivery::reliable});
  const std::uint64_t n = 200, too_large = 77;
  ASSERT_NO_FATAL_FAILURE(publish_all(s.h.a("prices"), n, too_large, [](std::uint64_t) {}));
  ASSERT_NO_FATAL_FAILURE(expect_all_but(read_all(sub, n - 1, too_large, [] {}), n, too_large));
  EXPECT_TRUE(wait_for([&] { return a.stats(0).forwarded == n - 1; }, 5s)) << a.stats(0).forwarded;
  EXPECT_EQ(a.stats(0).lost, 1u);
  EXPECT_NE(a.last_error().find("message 77 (20000 bytes)"), std::string::npos) << a.last_error();
  EXPECT_NE(a.last_error().find("max_payload (16384 bytes): dropped"), std::string::npos) << a.last_error();
  EXPECT_EQ(b.stats(0).lost, 0u) << "announced as skipped, not a gap";
  EXPECT_EQ(b.stats(0).duplicates, 0u);
}

// A JetStream queue mapping: the too-large messages are skipped too, also
// the last one before a restart (its skip is kept with the saved position).
TEST(BridgeLimit, AJetStreamQueueSkipsTooLargeMessagesAlsoAcrossARestart) {
  SmallServer s;
  const std::string stream = "LQ" + std::to_string(::getpid());
  auto ca = host_config("hostA", {s.server.url()}, s.dir.path() + "/a");
  auto ma = mapping(s.h.a("jobs"), s.h.subject("jobs"), BridgeDirection::outbound, BridgeMode::jetstream, stream);
  ma.kind = BridgeKind::queue;
  ma.queue_block_size = 32768;
  ca.mappings.push_back(ma);
  auto cb = host_config("hostB", {s.server.url()}, s.dir.path() + "/b");
  cb.mappings.push_back(
      mapping(s.h.b("prices"), s.h.subject("jobs"), BridgeDirection::inbound, BridgeMode::jetstream, stream));
  Bridge b(cb);
  b.start();
  RemoteReader reader(s.h.b("prices"));
  const auto size = [](std::uint64_t i) { return i == 40 || i == 99 ? std::size_t{20000} : std::size_t{1000}; };
  {
    Bridge a(ca);
    a.start();
    ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s)) << a.last_error() << b.last_error();
    auto q = Queue::open(s.h.a("jobs"), Role::producer);
    for (std::uint64_t i = 0; i < 100; ++i) ASSERT_EQ(q.send(payload(i, size(i)), 10s), Status::ok) << i;
    ASSERT_TRUE(wait_for([&] { return reader.count() >= 98 && a.stats(0).lost == 2; }, 20s))
        << reader.count() << " " << a.last_error();
    EXPECT_NE(a.last_error().find("message 99 (20000 bytes)"), std::string::npos) << a.last_error();
  }  // stopped after the batch that ended with message 99, which it skipped
  Bridge a(ca);
  a.start();
  ASSERT_TRUE(wait_for([&] { return a.ready(); }, 10s)) << a.last_error();
  {
    auto q = Queue::open(s.h.a("jobs"), Role::producer);
    ASSERT_EQ(q.send(payload(100, 1000), 10s), Status::ok);
  }
  // Under the receiver's reorder wait (10 s): had the skip been forgotten, 100 would wait for 99.
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 99; }, 5s)) << reader.count() << " " << b.last_error();
  const auto seqs = reader.seqs();
  std::vector<std::uint64_t> expected;
  for (std::uint64_t i = 0; i <= 100; ++i)
    if (i != 40 && i != 99) expected.push_back(i);
  EXPECT_EQ(seqs, expected);
  EXPECT_EQ(b.stats(0).lost, 0u);
  Queue::remove(s.h.a("jobs"));
}

}  // namespace
}  // namespace limit_test

}  // namespace zipc::bridge_test
