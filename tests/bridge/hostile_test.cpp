// Inbound bridges take what arrives from the network at its word only as far
// as the bytes go: a batch whose Zipc-Count or frame sizes overstate its
// payload delivers the frames it really holds, and no more.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <cstring>

#include "common.hpp"

namespace zipc::bridge_test {
namespace {

using namespace std::chrono_literals;

// A batch frame as bridge/src/internal.hpp lays it out (a peer's bytes).
struct WireFrame {
  std::uint32_t size, skip;
  std::uint64_t seq, origin_ns;
};
static_assert(sizeof(WireFrame) == 24);

// Publishes one core NATS message as host "hostX"'s bridge would, with the
// given Zipc-Seq and (when count > 0) Zipc-Count, and the body as given.
void publish_raw(natsConnection* nc, const std::string& subject, std::uint64_t seq, std::uint64_t count,
                 const std::string& body) {
  natsMsg* msg = nullptr;
  ASSERT_EQ(natsMsg_Create(&msg, subject.c_str(), nullptr, body.data(), static_cast<int>(body.size())), NATS_OK);
  const std::string s = std::to_string(seq), c = std::to_string(count);
  natsMsgHeader_Set(msg, "Zipc-Origin", "hostX");
  natsMsgHeader_Set(msg, "Zipc-Channel", "x.prices");
  natsMsgHeader_Set(msg, "Zipc-Seq", s.c_str());
  natsMsgHeader_Set(msg, "Zipc-Time", "1");
  if (count > 0) natsMsgHeader_Set(msg, "Zipc-Count", c.c_str());
  EXPECT_EQ(natsConnection_PublishMsg(nc, msg), NATS_OK);
  natsMsg_Destroy(msg);
}

// A test payload (harness.hpp's payload()) as a message body.
std::string text(const std::vector<std::byte>& b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

std::string frame(std::uint64_t seq, std::uint32_t claimed_size, std::size_t real_size) {
  const WireFrame f{claimed_size, 0, seq, 1};
  return std::string(reinterpret_cast<const char*>(&f), sizeof(f)) + text(payload(seq, real_size));
}

TEST(BridgeHostile, ABatchThatOverstatesItsFramesDeliversTheFramesItHoldsAndCountsTheRest) {
  Pair p;
  auto cb = host_config("hostB", {p.server.url()}, p.dir.path());
  cb.mappings.push_back(mapping(p.h.b("prices"), p.h.subject("prices"), BridgeDirection::inbound, BridgeMode::core));
  Bridge b(cb);
  b.start();
  ASSERT_TRUE(wait_for([&] { return b.ready(); }, 10s)) << b.last_error();
  RemoteReader reader(p.h.b("prices"));
  natsConnection* nc = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&nc, p.server.url().c_str()), NATS_OK);
  const std::string subject = p.h.subject("prices");
  // Seq 0: "three frames", but one 9-byte frame, unpadded, ends the payload
  // (its padding would reach past the end).
  publish_raw(nc, subject, 0, 3, frame(0, 9, 9));
  // Seq 1: plain.
  publish_raw(nc, subject, 1, 0, text(payload(1)));
  // Seq 2: a frame that claims 1000 bytes and holds 8: nothing of it is delivered.
  publish_raw(nc, subject, 2, 2, frame(2, 1000, 8));
  // Seq 3: plain; it reveals seq 2 as missing.
  publish_raw(nc, subject, 3, 0, text(payload(3)));
  ASSERT_EQ(natsConnection_Flush(nc), NATS_OK);
  natsConnection_Destroy(nc);
  ASSERT_TRUE(wait_for([&] { return reader.count() >= 3; }, 10s)) << reader.count();
  std::this_thread::sleep_for(200ms);  // anything more would be here by now
  EXPECT_EQ(reader.seqs(), (std::vector<std::uint64_t>{0, 1, 3}));
  EXPECT_EQ(reader.bad(), 0u);
  EXPECT_EQ(b.stats(0).received, 3u);
  EXPECT_EQ(b.stats(0).lost, 1u) << "seq 2 never arrived whole";
}

}  // namespace
}  // namespace zipc::bridge_test
