// JetStream streams in which one origin's messages are out of its sequence
// order. An outbound bridge makes them when a connection breaks under its
// batch of asynchronous publishes: the messages written into the dying
// connection are lost, the later ones (buffered by the client while it
// reconnects) are stored, and the batch sent again stores the lost ones after
// them. Here a plain NATS client writes such a stream, so the order is exact.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <string>
#include <vector>

#include "common.hpp"

namespace zipc::bridge_test {
namespace reorder_test {
namespace {

using namespace std::chrono_literals;

// Publishes messages as an outbound bridge of host `origin` would, in the
// given order of origin sequences, each acknowledged before the next.
class FakeOrigin {
 public:
  explicit FakeOrigin(const std::string& url) {
    EXPECT_EQ(natsConnection_ConnectTo(&nc_, url.c_str()), NATS_OK);
    EXPECT_EQ(natsConnection_JetStream(&js_, nc_, nullptr), NATS_OK);
  }
  ~FakeOrigin() {
    jsCtx_Destroy(js_);
    natsConnection_Destroy(nc_);
  }
  FakeOrigin(const FakeOrigin&) = delete;
  FakeOrigin& operator=(const FakeOrigin&) = delete;

  void send(const std::string& subject, const std::vector<std::uint64_t>& seqs) {
    for (std::uint64_t seq : seqs) {
      const auto body = payload(seq);
      natsMsg* msg = nullptr;
      ASSERT_EQ(natsMsg_Create(&msg, subject.c_str(), nullptr, reinterpret_cast<const char*>(body.data()),
                               static_cast<int>(body.size())),
                NATS_OK);
      const std::string s = std::to_string(seq), id = "hostX/x.prices/" + s;
      natsMsgHeader_Set(msg, "Zipc-Origin", "hostX");
      natsMsgHeader_Set(msg, "Zipc-Channel", "x.prices");
      natsMsgHeader_Set(msg, "Zipc-Seq", s.c_str());
      natsMsgHeader_Set(msg, "Zipc-Time", "1");
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MsgId = id.c_str();
      jsPubAck* ack = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      const natsStatus st = js_PublishMsg(&ack, js_, msg, &po, &code);
      natsMsg_Destroy(msg);
      ASSERT_EQ(st, NATS_OK) << "publish " << seq << ": " << natsStatus_GetText(st) << " " << code;
      jsPubAck_Destroy(ack);
    }
  }

 private:
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
};

struct Inbound {
  TempDir dir;
  Hosts h;
  NatsServer server{dir.path()};
  std::string stream = "O" + std::to_string(::getpid());
  Bridge b{[&] {
    auto c = host_config("hostB", {server.url()}, dir.path() + "/b");
    c.mappings.push_back(
        mapping(h.b("prices"), h.subject("prices"), BridgeDirection::inbound, BridgeMode::jetstream, stream));
    return c;
  }()};
};

TEST(BridgeJetStreamOrder, MessagesStoredAfterLaterOnesOfTheirOriginAreDeliveredInOrderAndNothingIsCountedLost) {
  Inbound t;
  t.b.start();
  ASSERT_TRUE(wait_for([&] { return t.b.ready(); }, 15s)) << t.b.last_error();
  RemoteReader reader(t.h.b("prices"));
  FakeOrigin origin(t.server.url());
  // 5 and 6 land after 7..9 (a batch sent again); 12 after 13.
  origin.send(t.h.subject("prices"), {0, 1, 2, 3, 4, 7, 8, 9, 5, 6, 10, 11, 13, 12, 14});
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 15; }, 30s)) << reader.count() << " " << t.b.last_error();
  std::this_thread::sleep_for(300ms);  // a duplicate would arrive by now
  const auto seqs = reader.seqs();
  ASSERT_EQ(seqs.size(), 15u);
  for (std::uint64_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], i) << "at " << i;
  EXPECT_EQ(reader.bad(), 0u);
  EXPECT_EQ(t.b.stats(0).lost, 0u);
  EXPECT_EQ(t.b.stats(0).received, 15u);
}

TEST(BridgeJetStreamOrder, AGapThatIsNeverFilledIsCountedLostExactlyAndWhatFollowsItIsDelivered) {
  Inbound t;
  t.b.start();
  ASSERT_TRUE(wait_for([&] { return t.b.ready(); }, 15s)) << t.b.last_error();
  RemoteReader reader(t.h.b("prices"));
  FakeOrigin origin(t.server.url());
  origin.send(t.h.subject("prices"), {0, 1, 2, 5, 6});  // 3 and 4 never come
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 3; }, 30s)) << reader.count();
  // Held while the gap is waited for (seconds), then delivered.
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 5; }, 40s)) << reader.count() << " " << t.b.last_error();
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(reader.seqs(), (std::vector<std::uint64_t>{0, 1, 2, 5, 6}));
  EXPECT_EQ(t.b.stats(0).lost, 2u);
  EXPECT_EQ(t.b.stats(0).received, 5u);
}

// A `both` mapping on each host over JetStream: host B's own messages around
// the echoes it skips carry Zipc-Skip, so host A neither waits for the
// skipped sequences as a gap nor counts them lost.
TEST(BridgeJetStreamOrder, EchoesSkippedInABothMappingAreNeitherWaitedForNorCountedLost) {
  TempDir dir;
  Hosts h;
  NatsServer server(dir.path());
  const std::string stream = "E" + std::to_string(::getpid());
  auto ca = host_config("hostA", {server.url()}, dir.path() + "/a");
  ca.mappings.push_back(
      mapping(h.a("prices"), h.subject("prices"), BridgeDirection::both, BridgeMode::jetstream, stream));
  ca.mappings[0].envelope = false;
  auto cb = host_config("hostB", {server.url()}, dir.path() + "/b");
  cb.mappings.push_back(
      mapping(h.b("prices"), h.subject("prices"), BridgeDirection::both, BridgeMode::jetstream, stream));
  cb.mappings[0].envelope = false;
  Bridge a(ca), b(cb);
  a.start();
  b.start();
  ASSERT_TRUE(wait_for([&] { return a.ready() && b.ready(); }, 15s)) << a.last_error() << b.last_error();
  auto atopic = Topic::open(h.a("prices"));
  auto btopic = Topic::open(h.b("prices"));
  auto bpub = btopic.publisher();
  ASSERT_TRUE(bpub.publish(payload(1000), 5s).ok());  // B's sequence 0
  ASSERT_TRUE(wait_for([&] { return a.stats(0).received == 1; }, 15s)) << a.last_error();
  {
    auto apub = atopic.publisher();
    for (std::uint64_t i = 0; i < 50; ++i) ASSERT_TRUE(apub.publish(payload(i), 5s).ok());
  }
  ASSERT_TRUE(wait_for([&] { return b.stats(0).received == 50; }, 15s)) << b.last_error();  // B's 1..50: echoes
  ASSERT_TRUE(bpub.publish(payload(1001), 5s).ok());  // B's sequence 51, after 50 skipped
  // Without Zipc-Skip A would hold it for the reorder wait (10 s), then count 50 lost.
  ASSERT_TRUE(wait_for([&] { return a.stats(0).received == 2; }, 30s)) << a.last_error();
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(a.stats(0).lost, 0u) << "echoes B skipped were counted lost at A";
  EXPECT_EQ(b.stats(0).forwarded, 2u);
  EXPECT_EQ(atopic.next_sequence(), 52u);  // A: its 50 and B's 2, nothing of its own back
}

// After the reorder above the stream position is on a message delivered
// early; a restarted bridge resumes each origin's accounting from the message
// it delivered last, so the early ones are duplicates and nothing new waits.
TEST(BridgeJetStreamOrder, AnInboundBridgeRestartedAfterAReorderDeliversNothingTwiceAndCountsNothingLost) {
  Inbound t;
  t.b.start();
  ASSERT_TRUE(wait_for([&] { return t.b.ready(); }, 15s)) << t.b.last_error();
  RemoteReader reader(t.h.b("prices"));
  FakeOrigin origin(t.server.url());
  origin.send(t.h.subject("prices"), {0, 1, 2, 3, 4, 7, 8, 9, 5, 6});
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 10; }, 30s)) << reader.count() << " " << t.b.last_error();
  t.b.stop();
  auto c = host_config("hostB", {t.server.url()}, t.dir.path() + "/b");
  c.mappings.push_back(
      mapping(t.h.b("prices"), t.h.subject("prices"), BridgeDirection::inbound, BridgeMode::jetstream, t.stream));
  Bridge again(c);
  again.start();
  ASSERT_TRUE(wait_for([&] { return again.ready(); }, 15s)) << again.last_error();
  origin.send(t.h.subject("prices"), {10, 11, 12});
  ASSERT_TRUE(wait_for([&] { return again.stats(0).received >= 3; }, 30s))
      << again.stats(0).received << " " << again.last_error();
  std::this_thread::sleep_for(300ms);
  const auto seqs = reader.seqs();
  ASSERT_EQ(seqs.size(), 13u);
  for (std::uint64_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], i) << "at " << i;
  EXPECT_EQ(again.stats(0).lost, 0u);
  EXPECT_EQ(again.stats(0).received, 3u);
}

}  // namespace
}  // namespace reorder_test

}  // namespace zipc::bridge_test
