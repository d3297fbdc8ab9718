// Messages across two "hosts" through one nats-server.
#include <gtest/gtest.h>

#include <set>

#include "common.hpp"

namespace zipc::bridge_test {
namespace flow_test {
namespace {

using namespace std::chrono_literals;

// outbound_wait: how bridge A's reader of the local topic waits (the mapping's "wait").
void every_message_arrives_in_order(WaitStrategy outbound_wait) {
  Pair p;
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path());
  ca.mappings.push_back(mapping(p.h.a("prices"), p.h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
  ca.mappings.back().wait.strategy = outbound_wait;
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  cb.mappings.push_back(mapping(p.h.b("prices"), p.h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s)) << a.last_error() << b.last_error();
  RemoteReader reader(p.h.b("prices"));
  auto topic = Topic::open(p.h.a("prices"));
  const std::uint64_t n = 20000;
  publish_range(topic, 0, n);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= n; }, 30s)) << reader.count();
  expect_all_in_order(reader, n);
  EXPECT_TRUE(wait_for([&] { return a.stats(0).forwarded == n; }, std::chrono::seconds(5)))
      << a.stats(0).forwarded;  // counted just after the send returns
  EXPECT_EQ(a.stats(0).lag, 0u);
  EXPECT_TRUE(wait_for([&] { return b.stats(0).received == n; }, std::chrono::seconds(5)))
      << b.stats(0).received;  // counted just after the local publish returns
  EXPECT_EQ(b.stats(0).lost, 0u);
  EXPECT_EQ(b.stats(0).duplicates, 0u);
}

TEST(BridgeCore, RemoteReliableSubscriberReceivesEveryMessageInOrder) {
  every_message_arrives_in_order(WaitStrategy::block);  // the default
}

TEST(BridgeCore, ABusyPollingOutboundReaderDeliversEveryMessageInOrderToo) {
  every_message_arrives_in_order(WaitStrategy::busy_poll);
}

TEST(BridgeJetStream, RemoteReliableSubscriberReceivesEveryMessageInOrderExactlyOnce) {
  Pair p;
  const std::string stream = "S" + std::to_string(::getpid());
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path() + "/a");
  ca.mappings.push_back(
      mapping(p.h.a("prices"), p.h.subject("prices"), BridgeDirection::outbound, BridgeMode::jetstream, stream));
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path() + "/b");
  cb.mappings.push_back(
      mapping(p.h.b("prices"), p.h.subject("prices"), BridgeDirection::inbound, BridgeMode::jetstream, stream));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  RemoteReader reader(p.h.b("prices"));
  auto topic = Topic::open(p.h.a("prices"));
  const std::uint64_t n = 5000;
  publish_range(topic, 0, n);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= n; }, 30s))
      << reader.count() << " " << a.last_error() << " " << b.last_error();
  std::this_thread::sleep_for(200ms);  // nothing more may come
  expect_all_in_order(reader, n);
  EXPECT_TRUE(wait_for([&] { return a.stats(0).forwarded == n; }, std::chrono::seconds(5)))
      << a.stats(0).forwarded;  // counted just after the send returns
  EXPECT_EQ(b.stats(0).received, n);
  EXPECT_EQ(b.stats(0).lost, 0u);
}

// A slow local reader on host B, a small NATS pending limit, overflow=block:
// the client drops what does not fit and the sequence gaps count it exactly.
TEST(BridgeCore, LossesFromASlowReceiverAreCountedExactly) {
  Pair p;
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path());
  ca.mappings.push_back(mapping(p.h.a("prices"), p.h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  cb.nats.pending_msgs = 64;
  cb.nats.pending_bytes = 256 * 1024;  // a few batches: whole batches are dropped too
  auto mb = mapping(p.h.b("prices"), p.h.subject("prices"), BridgeDirection::inbound, BridgeMode::core);
  mb.topic_capacity_bytes = 1 << 14;  // the slow reader below holds the bridge back quickly
  mb.max_message_size = 1024;
  cb.mappings.push_back(mb);
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s));
  auto btopic = Topic::open(p.h.b("prices"));
  auto sub = btopic.subscribe({From::oldest(), Delivery::reliable});
  auto topic = Topic::open(p.h.a("prices"));
  const std::uint64_t n = 20000;
  std::thread producer([&] {
    publish_range(topic, 0, n - 1);
    // The backlog drains first, so the last one is not dropped: A has sent
    // everything and B's count has stopped moving (a fixed pause was too
    // short for a slow build, ASan, under load).
    wait_for([&] { return a.stats(0).forwarded == n - 1; }, 20s);
    std::uint64_t seen = ~std::uint64_t{0};
    for (int quiet = 0, i = 0; quiet < 3 && i < 200; ++i) {
      std::this_thread::sleep_for(100ms);
      const std::uint64_t r = b.stats(0).received;
      quiet = r == seen ? quiet + 1 : 0;
      seen = r;
    }
    publish_range(topic, n - 1, n);
  });
  std::vector<std::uint64_t> got;
  std::vector<std::byte> buf(1 << 16);
  const auto end = std::chrono::steady_clock::now() + 60s;
  // Read slowly until the last message.
  while (std::chrono::steady_clock::now() < end) {
    ReadResult r = sub.read(buf, 100ms);
    if (!r.ok()) continue;
    auto env = parse_envelope(std::span(buf.data(), r.size));
    ASSERT_TRUE(env.has_value());
    got.push_back(env->sequence);
    if (got.size() % 16 == 0) std::this_thread::sleep_for(1ms);
    if (env->sequence == n - 1) break;
  }
  producer.join();
  ASSERT_FALSE(got.empty());
  ASSERT_EQ(got.back(), n - 1) << "the last message never came";
  ASSERT_TRUE(strictly_increasing(got));
  // B counts a message just after its local publish returns, so the reader can see the last
  // one a moment before the counter does.
  EXPECT_TRUE(wait_for([&] { return b.stats(0).received == got.size(); }, std::chrono::seconds(5)))
      << b.stats(0).received << " counted, " << got.size() << " read";
  const auto s = b.stats(0);
  EXPECT_GT(s.lost, 0u) << "the test did not make the receiver slow enough";
  EXPECT_EQ(s.received, got.size());
  // Counted from the first message B saw (an earlier loss has nothing before it to reveal it).
  EXPECT_EQ(s.lost, (n - got.front()) - got.size()) << "lost must be exactly the missing sequences";
  EXPECT_TRUE(wait_for([&] { return a.stats(0).forwarded == n; }, std::chrono::seconds(5)))
      << a.stats(0).forwarded;  // counted just after the send returns
}

// A `both` mapping on each host: what arrives from NATS is never sent back.
TEST(BridgeCore, MessagesNeverLoopBack) {
  Pair p;
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path());
  ca.mappings.push_back(mapping(p.h.a("prices"), p.h.subject("prices"), BridgeDirection::both, BridgeMode::core));
  ca.mappings[0].envelope = false;
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  cb.mappings.push_back(mapping(p.h.b("prices"), p.h.subject("prices"), BridgeDirection::both, BridgeMode::core));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s));
  RemoteReader reader(p.h.b("prices"));
  auto topic = Topic::open(p.h.a("prices"));
  publish_range(topic, 0, 100);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 100; }, 10s));
  std::this_thread::sleep_for(300ms);  // a loop would show up by now
  EXPECT_EQ(reader.count(), 100u);
  EXPECT_EQ(topic.next_sequence(), 100u) << "host A got its own messages back";
  EXPECT_EQ(b.stats(0).received, 100u);
  EXPECT_EQ(b.stats(0).forwarded, 0u);
  EXPECT_EQ(a.stats(0).received, 0u);

  // Host B's own messages, between echoes it skips: they reach A, and the
  // skipped sequences are not counted lost there (Zipc-Skip).
  auto btopic = Topic::open(p.h.b("prices"));
  auto bpub = btopic.publisher();
  auto own = [&](std::uint64_t i) {
    auto pl = payload(1000 + i);
    ASSERT_TRUE(bpub.publish(pl, 5s).ok());
  };
  own(0);
  ASSERT_TRUE(wait_for([&] { return a.stats(0).received == 1; }, 10s));
  {
    auto apub = topic.publisher();
    for (std::uint64_t i = 100; i < 150; ++i) ASSERT_TRUE(apub.publish(payload(i), 5s).ok());
  }
  ASSERT_TRUE(wait_for([&] { return b.stats(0).received == 150; }, 10s));
  own(1);
  ASSERT_TRUE(wait_for([&] { return a.stats(0).received == 2; }, 10s));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(a.stats(0).lost, 0u) << "echoes B skipped were counted lost at A";
  EXPECT_EQ(b.stats(0).forwarded, 2u);
  EXPECT_EQ(topic.next_sequence(), 152u);  // A: its 150 and B's 2, nothing of its own back
}

// Wildcard inbound subject, a queue on the receiving side, envelope headers exposed.
TEST(BridgeCore, AWildcardInboundMappingFillsALocalQueueWithTheOriginHeaders) {
  Pair p;
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path());
  ca.mappings.push_back(mapping(p.h.a("prices"), p.h.subject("x.prices"), BridgeDirection::outbound, BridgeMode::core));
  ca.mappings.push_back(mapping(p.h.a("orders"), p.h.subject("x.orders"), BridgeDirection::outbound, BridgeMode::core));
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  auto mb = mapping(p.h.b("jobs"), p.h.subject("x.*"), BridgeDirection::inbound, BridgeMode::core);
  mb.kind = BridgeKind::queue;
  mb.queue_block_size = 512;
  cb.mappings.push_back(mb);
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s));
  auto t1 = Topic::open(p.h.a("prices"));
  auto t2 = Topic::open(p.h.a("orders"));
  publish_range(t1, 0, 10);
  publish_range(t2, 0, 5);
  auto q = Queue::open(p.h.b("jobs"), Role::consumer);
  std::map<std::string, std::vector<std::uint64_t>> by_channel;
  std::vector<std::byte> buf(512);
  for (int i = 0; i < 15; ++i) {
    IoResult r = q.recv(buf, 10s);
    ASSERT_TRUE(r.ok()) << i;
    auto env = parse_envelope(std::span(buf.data(), r.size));
    ASSERT_TRUE(env.has_value());
    EXPECT_EQ(env->origin, "hostA");
    EXPECT_GT(env->origin_ns, 0u);
    by_channel[std::string(env->channel)].push_back(env->sequence);
  }
  EXPECT_EQ(by_channel[p.h.a("prices")].size(), 10u);
  EXPECT_EQ(by_channel[p.h.a("orders")].size(), 5u);
  EXPECT_TRUE(strictly_increasing(by_channel[p.h.a("prices")]));
  EXPECT_EQ(b.stats(0).lost, 0u);
  Queue::remove(p.h.b("jobs"));
}

}  // namespace
}  // namespace flow_test

namespace zipc::bridge_test {
namespace {

// A local queue read by the bridge as a consumer, carried by JetStream into a
// topic on host B: every message, in order, once.
TEST(BridgeJetStream, AQueueDrainedByTheBridgeArrivesWholeAtTheRemoteTopic) {
  TempDir dir;
  Hosts h;
  NatsServer server(dir.path());
  const std::string stream = "Q" + std::to_string(::getpid());
  auto ca = host_config("hostA", {server.url()}, dir.path() + "/a");
  auto ma = mapping(h.a("jobs"), h.subject("jobs"), BridgeDirection::outbound, BridgeMode::jetstream, stream);
  ma.kind = BridgeKind::queue;
  ma.queue_block_size = 256;
  ca.mappings.push_back(ma);
  auto cb = host_config("hostB", {server.url()}, dir.path() + "/b");
  cb.mappings.push_back(
      mapping(h.b("prices"), h.subject("jobs"), BridgeDirection::inbound, BridgeMode::jetstream, stream));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  RemoteReader reader(h.b("prices"));
  auto q = Queue::open(h.a("jobs"), Role::producer);
  const std::uint64_t n = 3000;
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(q.send(payload(i), std::chrono::seconds(10)), Status::ok) << i;
  ASSERT_TRUE(wait_for([&] { return reader.count() >= n; }, std::chrono::seconds(30)))
      << reader.count() << " " << a.last_error() << " | " << b.last_error();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto seqs = reader.seqs();
  ASSERT_EQ(seqs.size(), n);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(seqs[i], i) << "at " << i;  // the queue counter is the sequence
  EXPECT_EQ(reader.bad(), 0u);
  EXPECT_TRUE(wait_for([&] { return a.stats(0).forwarded == n; }, std::chrono::seconds(5)))
      << a.stats(0).forwarded;  // counted just after the send returns
  EXPECT_EQ(q.stats().received, n);
  Queue::remove(h.a("jobs"));
}

}  // namespace
}  // namespace zipc::bridge_test

}  // namespace zipc::bridge_test
