// BridgeThreads::caller: no bridge worker threads; the application's threads
// move the messages through Bridge::poll(). Real nats-server, two "hosts".
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "common.hpp"
#include "zipc/error.hpp"

namespace zipc::bridge_test {
namespace caller_test {
namespace {

using namespace std::chrono_literals;

BridgeConfig caller_config(const Pair& p, const std::string& host) {
  auto c = host_config(host, {p.server.url()}, p.dir.path());
  c.threads = BridgeThreads::caller;
  return c;
}

// Until both are ready(), polling the caller-driven ones (their polls make
// the subscriptions and read the server's confirmation).
bool ready_polling(Bridge& a, Bridge& b) {
  return wait_for(
      [&] {
        for (Bridge* x : {&a, &b})
          if (x->config().threads == BridgeThreads::caller) x->poll(1ms);
        return a.ready() && b.ready();
      },
      10s);
}

// The sender's last polls, until the remote reader has n messages; adds what they moved.
bool poll_until_all_arrived(Bridge& a, const RemoteReader& reader, std::uint64_t n, std::uint64_t& moved) {
  return wait_for(
      [&] {
        moved += a.poll(1ms);
        return reader.count() >= n;
      },
      30s);
}

// Host A -> host B on "prices", core, both bridges caller-driven and started.
struct CallerDriven {
  Bridge a, b;
  explicit CallerDriven(const Pair& p)
      : a(config(p, "hostA", BridgeDirection::outbound)), b(config(p, "hostB", BridgeDirection::inbound)) {
    a.start();
    b.start();
  }
  static BridgeConfig config(const Pair& p, const std::string& host, BridgeDirection dir) {
    auto c = caller_config(p, host);
    const std::string channel = dir == BridgeDirection::outbound ? p.h.a("prices") : p.h.b("prices");
    c.mappings.push_back(mapping(channel, p.h.subject("prices"), dir, BridgeMode::core));
    return c;
  }
};

TEST(BridgeCaller, EveryMessageArrivesInOrderMovedByTheApplicationsThreads) {
  Pair p;
  CallerDriven both(p);
  Bridge &a = both.a, &b = both.b;
  ASSERT_TRUE(ready_polling(a, b)) << a.last_error() << b.last_error();
  RemoteReader reader(p.h.b("prices"));
  std::uint64_t moved_out = 0;
  const std::uint64_t n = 20000;
  {
    Poller receiving(b);
    auto topic = Topic::open(p.h.a("prices"));
    auto pub = topic.publisher();
    // The sending application: publishes, and polls now and then and
    // whenever its topic is full (only its polls empty it).
    for (std::uint64_t i = 0; i < n; ++i) {
      auto msg = payload(i);
      CommitResult r;
      while ((r = pub.try_publish(msg)).status == Status::full) moved_out += a.poll();
      ASSERT_TRUE(r.ok()) << to_string(r.status);
      if (i % 50 == 0) moved_out += a.poll();
    }
    ASSERT_TRUE(poll_until_all_arrived(a, reader, n, moved_out)) << reader.count();
    ASSERT_TRUE(wait_for([&] { return receiving.moved() >= n; }, 5s)) << receiving.moved();
    EXPECT_EQ(receiving.moved(), n) << "B's polls say how many messages they published locally";
  }
  expect_all_in_order(reader, n);
  EXPECT_EQ(moved_out, n) << "A's polls say how many messages they read locally";
  EXPECT_EQ(a.stats(0).forwarded, n);
  EXPECT_EQ(a.stats(0).lag, 0u);
  EXPECT_EQ(b.stats(0).received, n);
  EXPECT_EQ(b.stats(0).lost, 0u);
  EXPECT_EQ(b.stats(0).duplicates, 0u);
}

// Host A with threads of its own -> host B, caller-driven, into a 16 KiB
// topic with a reliable subscriber that holds it back until it reads: a few
// dozen messages fill it. Both bridges started and ready.
struct IntoASmallTopic {
  Pair p;
  Bridge a, b;
  Topic btopic;
  Subscriber sub;

  IntoASmallTopic() : a(config_a(p)), b(config_b(p)) {
    a.start();
    b.start();
    if (!ready_polling(a, b)) throw std::runtime_error("bridges not ready: " + a.last_error() + b.last_error());
    btopic = Topic::open(p.h.b("prices"));
    sub = btopic.subscribe({From::oldest(), Delivery::reliable});
  }
  static BridgeConfig config_a(const Pair& p) {
    auto ca = host_config("hostA", {p.server.url()}, p.dir.path());
    ca.mappings.push_back(mapping(p.h.a("prices"), p.h.subject("prices"), BridgeDirection::outbound, BridgeMode::core));
    return ca;
  }
  static BridgeConfig config_b(const Pair& p) {
    auto cb = caller_config(p, "hostB");
    auto mb = mapping(p.h.b("prices"), p.h.subject("prices"), BridgeDirection::inbound, BridgeMode::core);
    mb.topic_capacity_bytes = 1 << 14;
    mb.max_message_size = 1024;
    cb.mappings.push_back(mb);
    return cb;
  }
};

TEST(BridgeCaller, AFullLocalChannelHoldsTheMessageAndThePollReturns) {
  IntoASmallTopic t;
  Bridge &a = t.a, &b = t.b;
  Topic& btopic = t.btopic;
  const std::uint64_t n = 2000;
  auto topic = Topic::open(t.p.h.a("prices"));
  publish_range(topic, 0, n);
  ASSERT_TRUE(wait_for([&] { return a.stats(0).forwarded == n; }, 10s)) << a.stats(0).forwarded;
  // Everything is at B's NATS connection or in its full topic. This thread is
  // the reader that has to make room: each poll must come back to it.
  for (int i = 0; i < 200; ++i) b.poll(1ms);
  const std::uint64_t stuck = btopic.next_sequence();
  EXPECT_GT(stuck, 0u) << "received " << b.stats(0).received << " lost " << b.stats(0).lost << " errors "
                       << b.stats(0).errors << " " << b.last_error();
  EXPECT_LT(stuck, n) << "the topic was meant to fill up";
  std::vector<std::uint64_t> got;
  std::vector<std::byte> buf(2048);
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (got.size() < n && std::chrono::steady_clock::now() < end) {
    for (ReadResult r = t.sub.read(buf, 0ms); r.ok(); r = t.sub.read(buf, 0ms)) {
      auto env = parse_envelope(std::span(buf.data(), r.size));
      ASSERT_TRUE(env.has_value());
      got.push_back(env->sequence);
    }
    b.poll(1ms);
  }
  ASSERT_EQ(got.size(), n);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], i) << "at " << i;
  EXPECT_EQ(b.stats(0).received, n);
  EXPECT_EQ(b.stats(0).lost, 0u);
  EXPECT_EQ(b.stats(0).duplicates, 0u);
}

// Messages of varying size, read a few dozen at a time: batches of varying
// length, most of them sent in a kept message a little longer than their
// frames (nats_publish.hpp, OutMsg). Each arrives exactly as it was sent.
TEST(BridgeCaller, MessagesOfVaryingSizeArriveExactlyAsSentInBatchesOfVaryingLength) {
  Pair p;
  CallerDriven both(p);
  Bridge &a = both.a, &b = both.b;
  ASSERT_TRUE(ready_polling(a, b)) << a.last_error() << b.last_error();
  auto btopic = Topic::open(p.h.b("prices"));
  auto sub = btopic.subscribe({From::oldest(), Delivery::reliable});
  const std::uint64_t n = 6000;
  auto size_of = [](std::uint64_t i) { return std::size_t{8 + (i * 7919) % 600}; };
  {
    auto atopic = Topic::open(p.h.a("prices"));
    auto pub = atopic.publisher();
    for (std::uint64_t i = 0; i < n; ++i) {
      CommitResult r;
      while ((r = pub.try_publish(payload(i, size_of(i)))).status == Status::full) a.poll();
      ASSERT_TRUE(r.ok()) << to_string(r.status);
      if (i % 37 == 0) a.poll();
    }
  }
  std::uint64_t got = 0;
  std::vector<std::byte> buf(4096);
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (got < n && std::chrono::steady_clock::now() < end) {
    a.poll(1ms);
    b.poll(1ms);
    for (ReadResult r = sub.read(buf, 0ms); r.ok(); r = sub.read(buf, 0ms), ++got) {
      auto env = parse_envelope(std::span(buf.data(), r.size));
      ASSERT_TRUE(env.has_value()) << "at " << got;
      ASSERT_EQ(env->sequence, got);
      const auto want = payload(got, size_of(got));
      ASSERT_EQ(env->payload.size(), want.size()) << "at " << got;
      ASSERT_TRUE(std::equal(want.begin(), want.end(), env->payload.begin())) << "at " << got;
    }
  }
  EXPECT_EQ(got, n);
  EXPECT_EQ(a.stats(0).forwarded, n);
  EXPECT_EQ(b.stats(0).received, n);
  EXPECT_EQ(b.stats(0).lost, 0u);
  EXPECT_EQ(b.stats(0).duplicates, 0u) << "the zeros after a batch's frames were read as frames";
  EXPECT_EQ(b.stats(0).loops, 0u);
}

TEST(BridgeCaller, StoppingWithAMessageHeldNeitherBlocksNorPublishesIt) {
  IntoASmallTopic t;  // its subscriber never reads: the topic fills
  Bridge& b = t.b;
  Topic& btopic = t.btopic;
  auto topic = Topic::open(t.p.h.a("prices"));
  publish_range(topic, 0, 500);
  ASSERT_TRUE(wait_for(
      [&] {
        b.poll(1ms);
        return b.stats(0).received > 0 && btopic.next_sequence() == b.stats(0).received;
      },
      10s));
  for (int i = 0; i < 50; ++i) b.poll(1ms);  // full by now: a message is held
  const std::uint64_t in_topic = btopic.next_sequence();
  ASSERT_LT(in_topic, 500u) << "the topic was meant to fill up";
  EXPECT_EQ(b.stats(0).lost, 0u) << "a held message is not lost while the bridge runs";
  b.stop();  // returns, and the held message is given up (counted; freed)
  EXPECT_EQ(btopic.next_sequence(), in_topic);
  EXPECT_EQ(b.poll(1ms), 0u) << "a stopped bridge moves nothing";
}

TEST(BridgeCaller, AQueueIsDrainedToTheRemoteTopicByPolls) {
  Pair p;
  auto ca = caller_config(p, "hostA");
  auto ma = mapping(p.h.a("jobs"), p.h.subject("jobs"), BridgeDirection::outbound, BridgeMode::core);
  ma.kind = BridgeKind::queue;
  ca.mappings.push_back(ma);
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  cb.mappings.push_back(mapping(p.h.b("jobs"), p.h.subject("jobs"), BridgeDirection::inbound, BridgeMode::core));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(ready_polling(a, b)) << a.last_error() << b.last_error();
  RemoteReader reader(p.h.b("jobs"));
  auto q = Queue::open(p.h.a("jobs"), Role::producer);
  const std::uint64_t n = 3000;
  std::uint64_t moved = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    auto msg = payload(i);
    Status s;
    while ((s = q.try_send(msg)) == Status::full) moved += a.poll();
    ASSERT_EQ(s, Status::ok);
  }
  ASSERT_TRUE(poll_until_all_arrived(a, reader, n, moved)) << reader.count();
  expect_all_in_order(reader, n);
  EXPECT_EQ(moved, n);
  EXPECT_EQ(a.stats(0).forwarded, n);
  EXPECT_EQ(b.stats(0).lost, 0u);
  Queue::remove(p.h.a("jobs"));
  Queue::remove(p.h.b("jobs"));
}

TEST(BridgeCaller, PollOnABridgeWithItsOwnThreadsIsRefused) {
  BridgeConfig c;
  c.mappings.push_back(mapping("x", "zipc.x", BridgeDirection::outbound, BridgeMode::core));
  Bridge b(c);
  try {
    b.poll();
    FAIL() << "poll() on an own-threads bridge returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("threads of its own"), std::string::npos) << e.what();
  }
}

TEST(BridgeCaller, OnlyCoreMappingsOneWayAreTakenAndTheConfigSaysSo) {
  auto refused = [](BridgeMapping m) -> std::string {
    BridgeConfig c;
    c.state_dir = "/tmp";
    c.threads = BridgeThreads::caller;
    c.mappings.push_back(std::move(m));
    try {
      validate(c);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refused(mapping("c", "s", BridgeDirection::outbound, BridgeMode::jetstream, "S")).find("threads 'caller'"),
            std::string::npos);
  EXPECT_NE(refused(mapping("c", "s", BridgeDirection::both, BridgeMode::core)).find("both ways"), std::string::npos);
  EXPECT_EQ(refused(mapping("c", "s", BridgeDirection::inbound, BridgeMode::core)), "");
  EXPECT_EQ(parse_bridge_config(R"({"threads":"caller","mappings":[{"channel":"c","subject":"s"}]})").threads,
            BridgeThreads::caller);
  EXPECT_EQ(parse_bridge_config(R"({"mappings":[{"channel":"c","subject":"s"}]})").threads, BridgeThreads::own);
  try {
    (void)parse_bridge_config(R"({"threads":"some","mappings":[{"channel":"c","subject":"s"}]})");
    FAIL() << "threads 'some' was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("threads is 'some'; expected one of: own, caller"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace caller_test

}  // namespace zipc::bridge_test
