// The receiving bridge trusts nothing it reads from NATS (docs/guide/bridge.md,
// "What the receiving bridge rejects"): anyone allowed to publish on a
// bridged subject sends status lines, malformed and out-of-range headers,
// batches that overstate their payload, oversized messages, sequence jumps
// and 200,000 origins, raw on the wire, while a real bridge keeps sending.
// Every real message arrives (within a second of being sent), every forged
// one is counted by its reason, and the origin table stays bounded.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "common.hpp"
#include "raw_nats.hpp"

namespace zipc::bridge_test {
namespace hostile_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A batch frame as bridge/src/wire.hpp lays it out (a peer's bytes).
struct WireFrame {
  std::uint32_t size, skip;
  std::uint64_t seq, origin_ns;
};
static_assert(sizeof(WireFrame) == 24);

std::string text(const std::vector<std::byte>& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

std::string frame(std::uint64_t seq, std::uint32_t claimed_size, std::size_t real_size) {
  const WireFrame f{claimed_size, 0, seq, 1};
  return std::string(reinterpret_cast<const char*>(&f), sizeof(f)) + text(payload(seq, real_size));
}

// The headers of a bridge message from origin/channel with sequence seq.
std::string bridge_headers(const std::string& origin, const std::string& channel, const std::string& seq,
                           const std::string& extra = "") {
  std::string b = "NATS/1.0\r\nZipc-Origin: " + origin + "\r\nZipc-Channel: " + channel + "\r\nZipc-Seq: " + seq +
                  "\r\nZipc-Time: 1\r\n" + extra;
  return b + "\r\n";
}

// ASan keeps freed memory in quarantine: there the RSS says nothing.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kRssMeaningful = false;
#else
constexpr bool kRssMeaningful = true;
#endif

constexpr const char* kMaxSeq = "9223372036854775807";  // 2^63-1: the largest sequence taken

// What a forger sends, with the counter each kind must land in.
struct Forged {
  std::uint64_t status = 0, header = 0, frame = 0, size = 0;
};

// Status lines with empty bodies, as the server itself would send them.
void forge_status(RawNats& f, const std::string& subject, int n, Forged& c) {
  for (int i = 0; i < n; ++i) {
    f.publish(subject, "NATS/1.0 503\r\n\r\n", "");
    f.publish(subject, "NATS/1.0 404 No Messages\r\n\r\n", "");
    f.publish(subject, "NATS/1.0 408 Request Timeout\r\n\r\n", "");
    f.publish(subject, "NATS/1.0 100 Idle Heartbeat\r\n\r\n", "");
    c.status += 4;
  }
}

// Headers that are not plain in-range decimals, or missing.
void forge_headers(RawNats& f, const std::string& subject, const std::string& origin, const std::string& channel,
                   Forged& c) {
  const char* bad[] = {"abc",
                       "-1",
                       "",
                       "0x2",
                       "+2",
                       "99999999999999999999999",
                       "2junk",
                       "18446744073709551614",
                       "18446744073709551615",
                       "9223372036854775808"};
  for (const char* v : bad) {
    f.publish(subject, bridge_headers(origin, channel, v), "x");
    ++c.header;
  }
  const char* bad_count[] = {"abc", "-1", "", "0x2", "+2", "99999999999999999999999", "2junk", "0", "1025"};
  for (const char* v : bad_count) {
    f.publish(subject, bridge_headers(origin, channel, "5", std::string("Zipc-Count: ") + v + "\r\n"), frame(5, 8, 8));
    ++c.header;
  }
  f.publish(subject, bridge_headers(origin, channel, "5", "Zipc-Skip: 18446744073709551615\r\n"), "x");
  f.publish(subject, bridge_headers(origin, channel, "5", "Zipc-Skip: 6\r\n"), "x");      // more than came before
  f.publish(subject, header_block({{"Zipc-Seq", "5"}, {"Zipc-Channel", channel}}), "x");  // no origin
  c.header += 3;
}

// Batches whose frames point past their payload.
void forge_frames(RawNats& f, const std::string& subject, const std::string& origin, const std::string& channel,
                  Forged& c) {
  f.publish(subject, bridge_headers(origin, channel, "7", "Zipc-Count: 3\r\n"), frame(7, 9, 9));
  f.publish(subject, bridge_headers(origin, channel, "8", "Zipc-Count: 1\r\n"), frame(8, 1000, 8));
  f.publish(subject, bridge_headers(origin, channel, "9", "Zipc-Count: 2\r\n"), frame(9, 8, 8) + frame(9, 8, 8));
  c.frame += 3;
}

// Reads a local topic reliably; records when each message of `origin` arrived.
class Collector {
 public:
  Collector(const std::string& topic, std::string origin, std::uint64_t n)
      : origin_(std::move(origin)), arrived_(n), count_(n, 0) {
    TopicOptions opt;
    opt.accept_existing = true;
    topic_ = Topic::open(topic, opt);
    auto sub = topic_.subscribe({From::oldest(), Delivery::reliable});
    thread_ = std::thread([this, s = std::move(sub)]() mutable {
      std::vector<std::byte> buf(1 << 17);
      while (!stop_.load()) {
        ReadResult r = s.read(buf, 20ms);
        if (!r.ok()) continue;
        const auto now = Clock::now();
        auto env = parse_envelope(std::span(buf.data(), r.size));
        others_.fetch_add(1);
        if (!env || env->origin != origin_ || env->sequence >= arrived_.size()) continue;
        others_.fetch_sub(1);
        std::lock_guard lock(mu_);
        arrived_[env->sequence] = now;
        ++count_[env->sequence];
        ++real_;
      }
    });
  }
  ~Collector() {
    stop_ = true;
    thread_.join();
  }
  [[nodiscard]] std::uint64_t real() const {
    std::lock_guard lock(mu_);
    return real_;
  }
  [[nodiscard]] std::uint64_t others() const { return others_.load(); }
  // Every real message once, each within `bound` of its send time.
  void expect_all_within(const std::vector<Clock::time_point>& sent, Clock::duration bound) const {
    std::lock_guard lock(mu_);
    Clock::duration worst{};
    for (std::size_t i = 0; i < sent.size(); ++i) {
      ASSERT_EQ(count_[i], 1u) << "real message " << i;
      worst = std::max(worst, arrived_[i] - sent[i]);
    }
    EXPECT_LT(worst, bound) << "slowest real message: "
                            << std::chrono::duration_cast<std::chrono::milliseconds>(worst).count() << " ms";
  }

 private:
  std::string origin_;
  Topic topic_;
  mutable std::mutex mu_;
  std::vector<Clock::time_point> arrived_;
  std::vector<std::uint64_t> count_;
  std::uint64_t real_ = 0;
  std::atomic<std::uint64_t> others_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Publishes n real messages into a topic, one every gap; their send times.
std::vector<Clock::time_point> send_real(Topic& t, std::uint64_t n, std::chrono::microseconds gap) {
  std::vector<Clock::time_point> sent(n);
  auto pub = t.publisher();
  for (std::uint64_t i = 0; i < n; ++i) {
    auto p = payload(i);
    sent[i] = Clock::now();
    EXPECT_TRUE(pub.publish(p, 10s).ok());
    std::this_thread::sleep_for(gap);
  }
  return sent;
}

void expect_counted(const BridgeStats& s, const Forged& c) {
  EXPECT_EQ(s.rejected_status, c.status);
  EXPECT_EQ(s.rejected_header, c.header);
  EXPECT_EQ(s.rejected_frame, c.frame);
  EXPECT_EQ(s.rejected_size, c.size);
  EXPECT_EQ(s.rejected_auth, 0u);
}

TEST(BridgeHostile, ABatchWhoseFramesPointPastItsPayloadIsRejectedWholeAndTheGapCounted) {
  Pair p;
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  cb.mappings.push_back(mapping(p.h.b("prices"), p.h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  Bridge b(cb);
  b.start();
  ASSERT_TRUE(wait_for([&] { return b.ready(); }, 10s)) << b.last_error();
  RemoteReader reader(p.h.b("prices"));
  RawNats f(p.server.port());
  const std::string subject = p.h.subject("prices");
  f.publish(subject, bridge_headers("hostX", "x.prices", "0", "Zipc-Count: 3\r\n"), frame(0, 9, 9));  // one of three
  f.publish(subject, bridge_headers("hostX", "x.prices", "1"), text(payload(1)));
  f.publish(subject, bridge_headers("hostX", "x.prices", "2", "Zipc-Count: 2\r\n"), frame(2, 1000, 8));
  f.publish(subject, bridge_headers("hostX", "x.prices", "3"), text(payload(3)));
  f.flush();
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 2 && b.stats(0).rejected_frame >= 2; }, 10s));
  std::this_thread::sleep_for(200ms);  // anything more would be here by now
  EXPECT_EQ(reader.seqs(), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(reader.bad(), 0u);
  EXPECT_EQ(b.stats(0).received, 2u);
  EXPECT_EQ(b.stats(0).rejected_frame, 2u);
  EXPECT_EQ(b.stats(0).lost, 1u) << "seq 2 never arrived whole";
}

TEST(BridgeHostile, ForgedInputAtACoreMappingIsCountedByReasonWhileEveryRealMessageArrivesWithinASecond) {
  Pair p;
  const std::string subject = p.h.subject("prices");
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path());
  ca.mappings.push_back(mapping(p.h.a("prices"), subject, BridgeDirection::outbound, BridgeMode::core));
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  auto mb = mapping(p.h.b("prices"), subject, BridgeDirection::inbound, BridgeMode::core);
  mb.topic_capacity_bytes = 16 << 20;
  mb.seq_window = 100000;
  mb.max_origins = 1000;
  cb.mappings.push_back(mb);
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s)) << a.last_error() << b.last_error();
  constexpr std::uint64_t kReal = 3000;
  constexpr std::uint64_t kOrigins = 200000;
  Collector got(p.h.b("prices"), "hostA", kReal);
  TopicOptions opt;
  opt.accept_existing = true;
  Topic ta = Topic::open(p.h.a("prices"), opt);
  const std::uint64_t rss_before = rss_bytes();

  Forged c;
  std::uint64_t forged_delivered = 0;
  std::thread forger([&] {
    RawNats f(p.server.port());
    std::this_thread::sleep_for(50ms);  // the real sender has begun
    for (int round = 0; round < 4; ++round) {
      forge_status(f, subject, 50, c);
      forge_headers(f, subject, "hostA", p.h.a("prices"), c);
      forge_frames(f, subject, "forger", "c", c);
      f.publish(subject, bridge_headers("forger", "c", std::to_string(100 + round)),
                std::string(100 << 10, 'x'));               // > max_message_size
      f.publish(subject, "", std::string(100 << 10, 'x'));  // the same, plain
      c.size += 2;
      f.publish(subject, "", "");  // empty and plain: a message of no bytes, delivered
      ++forged_delivered;
      f.flush();
    }
    // The real sender's origin jumps to the largest sequence: a new epoch
    // (not 2^63 messages lost), and its next real message another.
    f.publish(subject, bridge_headers("hostA", p.h.a("prices"), kMaxSeq), "x");
    ++forged_delivered;
    f.flush();
    // (Before the flood below evicts the real origin's state.)
    EXPECT_TRUE(wait_for([&] { return b.stats(0).epochs >= 2; }, 10s)) << b.stats(0).epochs;
    // 200,000 origins, paced (about 100,000 a second).
    for (std::uint64_t i = 0; i < kOrigins; ++i) {
      f.publish(subject, bridge_headers("o" + std::to_string(i), "c", "0"), "12345678");
      if (i % 2000 == 1999) {
        f.flush();
        std::this_thread::sleep_for(20ms);
      }
    }
    forged_delivered += kOrigins;
    f.flush();
  });
  const auto sent = send_real(ta, kReal, 1ms);
  forger.join();
  ASSERT_TRUE(wait_for([&] { return got.real() == kReal && b.stats(0).received == kReal + forged_delivered; }, 30s))
      << got.real() << " real, received " << b.stats(0).received;
  got.expect_all_within(sent, 1s);
  const BridgeStats s = b.stats(0);
  expect_counted(s, c);
  EXPECT_EQ(s.lost, 0u);
  EXPECT_EQ(s.epochs, 2u) << "the jump to 2^63-1 and the real sender's next message";
  EXPECT_GE(s.evicted, kOrigins - 1000);
  const std::uint64_t rss_after = rss_bytes();
  if (kRssMeaningful) {
    EXPECT_LT(rss_after, rss_before + (64u << 20)) << rss_before << " -> " << rss_after;
  }
  EXPECT_NE(b.last_error().find("rejected"), std::string::npos) << b.last_error();
}

TEST(BridgeHostile, ForgedInputAtAJetStreamMappingNeitherWedgesItsConsumerNorDelaysRealMessages) {
  Pair p;
  const std::string subject = p.h.subject("prices");
  const std::string stream = "H" + std::to_string(::getpid());
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path());
  ca.mappings.push_back(mapping(p.h.a("prices"), subject, BridgeDirection::outbound, BridgeMode::jetstream, stream));
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  auto mb = mapping(p.h.b("prices"), subject, BridgeDirection::inbound, BridgeMode::jetstream, stream);
  mb.seq_window = 100000;
  mb.reorder_wait = 300ms;
  cb.mappings.push_back(mb);
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s)) << a.last_error() << b.last_error();
  constexpr std::uint64_t kReal = 500;
  Collector got(p.h.b("prices"), "hostA", kReal);
  TopicOptions opt;
  opt.accept_existing = true;
  Topic ta = Topic::open(p.h.a("prices"), opt);
  Forged c;
  {
    // More stored "404 No Messages" than the consumer's 65,536
    // unacknowledged: the client would take each for the server's answer
    // and leave it unacknowledged, and the consumer would stop.
    RawNats f(p.server.port());
    for (int i = 0; i < 66000; ++i) {
      f.publish(subject, "NATS/1.0 404\r\n\r\n", "");
      if (i % 5000 == 4999) f.flush();
    }
    f.flush();
    c.status += 66000;
  }
  ASSERT_TRUE(wait_for([&] { return b.stats(0).rejected_status == c.status; }, 60s)) << b.stats(0).rejected_status;
  std::uint64_t forged_delivered = 0;
  std::thread forger([&] {
    RawNats f(p.server.port());
    for (int round = 0; round < 4; ++round) {
      std::this_thread::sleep_for(100ms);
      forge_status(f, subject, 10, c);
      forge_headers(f, subject, "hostA", p.h.a("prices"), c);
      f.publish(subject, bridge_headers("forger", "c", "1", "Zipc-Count: 1\r\n"), frame(1, 8, 8));  // no batches here
      ++c.header;
      f.publish(subject, bridge_headers("forger", "c", std::to_string(100 + round)),
                std::string(100 << 10, 'x'));               // > max_message_size
      f.publish(subject, "", std::string(100 << 10, 'x'));  // the same, plain
      c.size += 2;
      f.publish(subject, "", "");  // empty and plain: a message of no bytes, delivered
      ++forged_delivered;
      f.flush();
    }
    f.publish(subject, bridge_headers("hostA", p.h.a("prices"), kMaxSeq), "x");
    ++forged_delivered;
    f.flush();
  });
  const auto sent = send_real(ta, kReal, 2ms);
  forger.join();
  ASSERT_TRUE(wait_for([&] { return got.real() == kReal && b.stats(0).received == kReal + forged_delivered; }, 30s))
      << got.real() << " real, received " << b.stats(0).received;
  got.expect_all_within(sent, 1s);
  const BridgeStats s = b.stats(0);
  expect_counted(s, c);
  EXPECT_EQ(s.lost, 0u);
  EXPECT_EQ(s.duplicates, 0u);
  EXPECT_EQ(s.epochs, 2u);
}

// The sending JetStream bridge reads the stream's acknowledgements on an
// inbox of its own, and whoever sees the subject's messages sees their reply
// subjects and may answer first. Replies that acknowledge no message it
// published (not JSON, another stream, sequence 0, over 1 KiB, a sequence it
// never published, a subject that names no message) are counted in errors
// and ignored; a forged refusal makes it send again, which the stream's
// de-duplication absorbs. Nothing is lost or delivered twice.
TEST(BridgeHostile, ForgedAcknowledgementsAtAJetStreamSenderAreCountedAndNothingIsLostOrDuplicated) {
  Pair p;
  const std::string subject = p.h.subject("prices");
  const std::string stream = "F" + std::to_string(::getpid());
  auto ca = host_config("hostA", {p.server.url()}, p.dir.path() + "/a");
  ca.mappings.push_back(mapping(p.h.a("prices"), subject, BridgeDirection::outbound, BridgeMode::jetstream, stream));
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path() + "/b");
  cb.mappings.push_back(mapping(p.h.b("prices"), subject, BridgeDirection::inbound, BridgeMode::jetstream, stream));
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 10s)) << a.last_error() << b.last_error();
  natsConnection* nc = nullptr;
  natsSubscription* sub = nullptr;
  if (natsConnection_ConnectTo(&nc, p.server.url().c_str()) != NATS_OK ||
      natsConnection_SubscribeSync(&sub, nc, subject.c_str()) != NATS_OK || natsConnection_Flush(nc) != NATS_OK)
    throw std::runtime_error("no connection to the test's nats-server");
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> counted{0}, refusals{0};
  std::thread forger([&] {
    const std::string good = R"({"stream":")" + stream + R"(","seq":1})";
    auto answer = [&](const std::string& to, const std::string& body) {
      natsConnection_Publish(nc, to.c_str(), body.data(), static_cast<int>(body.size()));
    };
    for (std::uint64_t seen = 0; !done.load();) {
      natsMsg* m = nullptr;
      if (natsSubscription_NextMsg(&m, sub, 50) != NATS_OK) continue;
      const char* r = natsMsg_GetReply(m);
      const std::string reply = r == nullptr ? "" : r;
      natsMsg_Destroy(m);
      if (reply.size() <= 20 || seen++ % 4 != 0) continue;
      const std::string prefix = reply.substr(0, reply.size() - 20);
      answer(reply, "+ACK");
      answer(reply, R"({"stream":"OTHER","seq":1})");
      answer(reply, R"({"stream":")" + stream + R"(","seq":0})");
      answer(reply, R"({"stream":")" + stream + R"(","seq":1,"pad":")" + std::string(1100, 'p') + "\"}");
      answer(prefix + "09000000000000000000", good);
      answer(prefix + "abc", good);
      counted += 6;
      if (seen % 200 == 1) {
        answer(reply, R"({"error":{"code":503,"err_code":10077,"description":"forged refusal"}})");
        ++refusals;
      }
      natsConnection_Flush(nc);
    }
  });
  RemoteReader reader(p.h.b("prices"));
  auto topic = Topic::open(p.h.a("prices"));
  constexpr std::uint64_t kN = 2000;
  publish_range(topic, 0, kN, 200us);
  const bool all = wait_for([&] { return reader.count() >= kN; }, 60s);
  done = true;
  forger.join();
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
  ASSERT_TRUE(all) << reader.count() << " " << a.last_error() << " " << b.last_error();
  std::this_thread::sleep_for(200ms);  // nothing more may come
  expect_all_in_order(reader, kN);
  EXPECT_GT(counted.load(), 0u);
  // (The last forged replies may still be on their way to the sender.)
  EXPECT_TRUE(wait_for([&] { return a.stats(0).errors >= counted.load(); }, 10s))
      << a.stats(0).errors << " < " << counted.load() << ": " << a.last_error();
  EXPECT_TRUE(wait_for([&] { return a.stats(0).forwarded == kN; }, 10s)) << a.stats(0).forwarded;
  EXPECT_EQ(b.stats(0).received, kN);
  EXPECT_EQ(b.stats(0).lost, 0u);
  EXPECT_EQ(b.stats(0).duplicates, 0u);
}

}  // namespace
}  // namespace hostile_test

}  // namespace zipc::bridge_test
