// The core outbound natsMsgs are kept and refilled from one publish to the
// next (bridge/src/nats_publish.hpp, OutMsg): a lone message at its length, a
// batch in any kept batch message up to 1/16 longer. What crosses the wire
// must be the message it holds now: its payload (then zeros, for a batch),
// its sequence and time, and Zipc-Count / Zipc-Skip only when this message
// has them, never left over from the one before. Checked as a real
// nats-server delivers it to a plain subscriber.
#include <gtest/gtest.h>
#include <nats/nats.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "nats_publish.hpp"
#include "pub_ack.hpp"

namespace zipc::bridge_test {
namespace out_msg_test {
namespace {

using bridge_detail::JsOutMsg;
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
                      std::uint64_t count, std::size_t limit = 1 << 20) {
    natsMsg* msg = out.fill(m, seq, ns, body.data(), body.size(), skip, count, limit);
    EXPECT_NE(msg, nullptr);
    if (msg == nullptr) return nullptr;
    EXPECT_EQ(natsConnection_PublishMsg(nc, msg), NATS_OK);
    natsMsg* got = nullptr;
    EXPECT_EQ(natsSubscription_NextMsg(&got, sub, 5000), NATS_OK);
    return got;
  }
};

// `length`: the payload's length on the wire, body then zeros (a batch in a
// kept message up to 1/16 longer); a lone message is exactly its body.
void expect_message(natsMsg* got, std::uint64_t seq, std::uint64_t ns, const std::string& body, std::size_t length,
                    const std::optional<std::string>& skip, const std::optional<std::string>& count) {
  ASSERT_NE(got, nullptr);
  const std::string data(natsMsg_GetData(got), static_cast<std::size_t>(natsMsg_GetDataLength(got)));
  EXPECT_EQ(data, body + std::string(length - body.size(), '\0'));
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
  const std::string b256(256, 'b'), l256(256, 'l'), b250(250, 'c'), b300(300, 'd'), b310(310, 'e'), l100(100, 'o');
  // A batch of two after one skipped echo: the first batch, its own length.
  expect_message(w.round_trip(out, 10, 1000, b256, 1, 2), 10, 1000, b256, 256, "1", "2");
  // A lone message of the batch's length: exact, without the batch's
  // Zipc-Count and Zipc-Skip.
  expect_message(w.round_trip(out, 12, 1001, l256, 0, 0), 12, 1001, l256, 256, std::nullopt, std::nullopt);
  // A shorter batch with a skip: in the kept 256 bytes, zeros after it.
  expect_message(w.round_trip(out, 14, 1002, b250, 2, 3), 14, 1002, b250, 256, "2", "3");
  // The kept batch message again, now without Zipc-Skip.
  expect_message(w.round_trip(out, 17, 1003, b256, 0, 2), 17, 1003, b256, 256, std::nullopt, "2");
  // A longer batch: a new message with room (300 + 300/16, to 8 bytes) for the next.
  expect_message(w.round_trip(out, 19, 1004, b300, 0, 4), 19, 1004, b300, 312, std::nullopt, "4");
  expect_message(w.round_trip(out, 23, 1005, b310, 0, 4), 23, 1005, b310, 312, std::nullopt, "4");
  // A much shorter batch does not ride in it.
  expect_message(w.round_trip(out, 27, 1006, b250, 0, 2), 27, 1006, b250, 264, std::nullopt, "2");
  // Lone messages are always exact: another length, and an empty one.
  expect_message(w.round_trip(out, 29, 1007, l100, 0, 0), 29, 1007, l100, 100, std::nullopt, std::nullopt);
  expect_message(w.round_trip(out, 30, 1008, "", 3, 0), 30, 1008, "", 0, "3", std::nullopt);
  expect_message(w.round_trip(out, 34, 1009, l100, 0, 0), 34, 1009, l100, 100, std::nullopt, std::nullopt);
  // The kept lone message with a skip, then without.
  expect_message(w.round_trip(out, 36, 1010, l100, 1, 0), 36, 1010, l100, 100, "1", std::nullopt);
  expect_message(w.round_trip(out, 37, 1011, l100, 0, 0), 37, 1011, l100, 100, std::nullopt, std::nullopt);
  // A batch's room stops at the limit it is given (the server's max_payload less the headers').
  expect_message(w.round_trip(out, 38, 1012, b300, 0, 4, 300), 38, 1012, b300, 300, std::nullopt, "4");
  // A kept message longer than the limit now given is not used: a new one, as long as the limit allows.
  expect_message(w.round_trip(out, 42, 1013, b310, 0, 4), 42, 1013, b310, 328, std::nullopt, "4");
  expect_message(w.round_trip(out, 46, 1014, b310, 0, 4, 320), 46, 1014, b310, 320, std::nullopt, "4");
}

// The JetStream outbound message is kept too (JsOutMsg): its reply subject
// names the message's sequence (written in place, the client's copy of it),
// and its Nats-Msg-Id, sequence, time and Zipc-Skip are this message's.
TEST(BridgeOutMsg, AKeptJetStreamMessageCarriesTheReplyAndIdOfWhatItNowHolds) {
  Wire w;
  const std::string prefix = "_INBOX.outmsgtest.";
  JsOutMsg sut(prefix);
  auto round_trip = [&](std::uint64_t seq, std::uint64_t ns, const std::string& body, std::uint64_t skip) {
    const std::string id = "hostA/hostA.prices/" + std::to_string(seq);
    natsMsg* msg = sut.fill(w.m, seq, ns, body.data(), body.size(), skip, id.c_str());
    EXPECT_NE(msg, nullptr);
    if (msg == nullptr) return;
    EXPECT_EQ(natsConnection_PublishMsg(w.nc, msg), NATS_OK);
    natsMsg* got = nullptr;
    ASSERT_EQ(natsSubscription_NextMsg(&got, w.sub, 5000), NATS_OK);
    const char* reply = natsMsg_GetReply(got);
    ASSERT_NE(reply, nullptr);
    EXPECT_EQ(bridge_detail::reply_token(reply, prefix), seq) << reply;
    EXPECT_EQ(header(got, "Nats-Msg-Id"), id);
    expect_message(got, seq, ns, body, body.size(), skip != 0 ? std::optional(std::to_string(skip)) : std::nullopt,
                   std::nullopt);
  };
  const std::string a(100, 'a'), b(100, 'b'), c(4096, 'c');
  round_trip(1, 1000, a, 0);
  round_trip(2, 1001, b, 0);  // the kept message: another reply, id and payload
  round_trip(10, 1002, b, 7);
  round_trip(11, 1003, a, 0);  // its Zipc-Skip gone again
  round_trip(12, 1004, c, 0);  // another length: a new message
  round_trip(9223372036854775807ULL, 1005, c, 1);
  round_trip(13, 1006, "", 0);
}

}  // namespace
}  // namespace out_msg_test

}  // namespace zipc::bridge_test
