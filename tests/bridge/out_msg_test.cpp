// The core outbound natsMsg is kept and refilled from one publish to the next
// of the same payload length (bridge/src/nats_publish.hpp, OutMsg). What
// crosses the wire must be the message it holds now: its payload, its
// sequence and time, and Zipc-Count / Zipc-Skip only when this message has
// them, never left over from the one before. Checked as a real nats-server
// delivers it to a plain subscriber.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "nats_publish.hpp"

namespace zipc::bridge_test {
namespace {

using bridge_detail::OutMsg;

// A header's value as the subscriber got it; nullopt when it is absent.
std::optional<std::string> header(natsMsg* msg, const char* key) {
  const char* v = nullptr;
  if (natsMsgHeader_Get(msg, key, &v) != NATS_OK || v == nullptr) return std::nullopt;
  return std::string(v);
}

struct Wire {
  TempDir dir;
  NatsServer server{dir.path()};
  natsConnection* nc = nullptr;
  natsSubscription* sub = nullptr;
  bridge_detail::MappingRuntime m;

  Wire() {
    m.cfg.subject = "zipc.outmsg.test";
    m.cfg.channel = "hostA.prices";
    m.host_id = "hostA";
    if (natsConnection_ConnectTo(&nc, server.url().c_str()) != NATS_OK ||
        natsConnection_SubscribeSync(&sub, nc, m.cfg.subject.c_str()) != NATS_OK || natsConnection_Flush(nc) != NATS_OK)
      throw std::runtime_error("no connection to the test's nats-server");
  }
  ~Wire() {
    natsSubscription_Destroy(sub);
    natsConnection_Destroy(nc);
  }

  // Fills `out`, publishes it, and returns the message the subscriber got.
  natsMsg* round_trip(OutMsg& out, std::uint64_t seq, std::uint64_t ns, const std::string& body, std::uint64_t skip,
                      std::uint64_t count) {
    natsMsg* msg = out.fill(m, seq, ns, body.data(), body.size(), skip, count);
    EXPECT_NE(msg, nullptr);
    if (msg == nullptr) return nullptr;
    EXPECT_EQ(natsConnection_PublishMsg(nc, msg), NATS_OK);
    natsMsg* got = nullptr;
    EXPECT_EQ(natsSubscription_NextMsg(&got, sub, 5000), NATS_OK);
    return got;
  }
};

void expect_message(natsMsg* got, std::uint64_t seq, std::uint64_t ns, const std::string& body,
                    const std::optional<std::string>& skip, const std::optional<std::string>& count) {
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(std::string(natsMsg_GetData(got), static_cast<std::size_t>(natsMsg_GetDataLength(got))), body);
  EXPECT_EQ(header(got, "Zipc-Origin"), "hostA");
  EXPECT_EQ(header(got, "Zipc-Channel"), "hostA.prices");
  EXPECT_EQ(header(got, "Zipc-Seq"), std::to_string(seq));
  EXPECT_EQ(header(got, "Zipc-Time"), std::to_string(ns));
  EXPECT_EQ(header(got, "Zipc-Skip"), skip);
  EXPECT_EQ(header(got, "Zipc-Count"), count);
  natsMsg_Destroy(got);
}

TEST(BridgeOutMsg, AKeptMessageCarriesOnlyTheHeadersAndPayloadOfWhatItNowHolds) {
  Wire w;
  OutMsg out;
  const std::string batch(256, 'b'), lone(256, 'l'), other(100, 'o');
  // A batch of two after one skipped echo.
  expect_message(w.round_trip(out, 10, 1000, batch, 1, 2), 10, 1000, batch, "1", "2");
  // A lone message of the batch's length: the kept message, without the
  // batch's Zipc-Count and Zipc-Skip.
  expect_message(w.round_trip(out, 12, 1001, lone, 0, 0), 12, 1001, lone, std::nullopt, std::nullopt);
  // The same length again, with a skip: Zipc-Skip comes back, Zipc-Count stays away.
  expect_message(w.round_trip(out, 14, 1002, batch, 1, 0), 14, 1002, batch, "1", std::nullopt);
  // Another length: a new message, the same rules.
  expect_message(w.round_trip(out, 15, 1003, other, 0, 3), 15, 1003, other, std::nullopt, "3");
  expect_message(w.round_trip(out, 18, 1004, other, 0, 0), 18, 1004, other, std::nullopt, std::nullopt);
  // An empty payload.
  expect_message(w.round_trip(out, 19, 1005, "", 0, 0), 19, 1005, "", std::nullopt, std::nullopt);
}

}  // namespace
}  // namespace zipc::bridge_test
