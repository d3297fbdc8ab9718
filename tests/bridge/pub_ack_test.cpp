// The outbound JetStream bridge reads the stream's acknowledgements itself
// (bridge/src/pub_ack.hpp). Anyone who learns its inbox may publish there:
// only the server's forms are taken, everything else is malformed, and no
// input crashes or hangs the reader.
#include "pub_ack.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "wire.hpp"

namespace zipc::bridge_test {
namespace pub_ack_test {
namespace {

using bridge_detail::parse_pub_ack;
using bridge_detail::PubAck;
using Kind = PubAck::Kind;

constexpr const char* kStream = "ZIPC_ORDERS";

// nats-server 2.9 writes {"stream":"<name>", "seq":N} (a blank after the comma).
TEST(BridgePubAck, TheServersAcknowledgementIsReadWithItsStreamSequence) {
  const PubAck sut = parse_pub_ack(R"({"stream":"ZIPC_ORDERS", "seq":42})", kStream);
  EXPECT_EQ(sut.kind, Kind::stored);
  EXPECT_EQ(sut.stream_seq, 42u);
  EXPECT_EQ(parse_pub_ack(R"({"stream":"ZIPC_ORDERS","seq":42})", kStream).stream_seq, 42u);
  const PubAck domain = parse_pub_ack(R"({"stream":"ZIPC_ORDERS", "domain":"hub", "seq":43})", kStream);
  EXPECT_EQ(domain.kind, Kind::stored);
  EXPECT_EQ(domain.stream_seq, 43u);
}

TEST(BridgePubAck, ADuplicateIsReadAsOne) {
  const PubAck sut = parse_pub_ack(R"({"stream":"ZIPC_ORDERS", "seq":7,"duplicate": true})", kStream);
  EXPECT_EQ(sut.kind, Kind::duplicate);
  EXPECT_EQ(sut.stream_seq, 7u);
  EXPECT_EQ(parse_pub_ack(R"({"stream":"ZIPC_ORDERS","seq":7,"duplicate":true})", kStream).kind, Kind::duplicate);
}

TEST(BridgePubAck, OtherOrdersBlanksADomainAndLaterMembersAreReadToo) {
  EXPECT_EQ(parse_pub_ack(R"({"seq":3,"stream":"ZIPC_ORDERS"})", kStream).kind, Kind::stored);
  EXPECT_EQ(parse_pub_ack(R"( { "stream" : "ZIPC_ORDERS" , "seq" : 3 } )", kStream).kind, Kind::stored);
  EXPECT_EQ(parse_pub_ack(R"({"stream":"ZIPC_ORDERS","domain":"hub","seq":3})", kStream).kind, Kind::stored);
  EXPECT_EQ(parse_pub_ack(R"({"stream":"ZIPC_ORDERS","seq":3,"duplicate":false})", kStream).kind, Kind::stored);
  EXPECT_EQ(parse_pub_ack(R"({"stream":"ZIPC_ORDERS","seq":3,"later":[1,{"x":null}]})", kStream).kind, Kind::stored);
  const PubAck escaped = parse_pub_ack(R"({"stream":"ZIPC_\u004fRDERS","seq":9})", kStream);
  EXPECT_EQ(escaped.kind, Kind::stored);
  EXPECT_EQ(escaped.stream_seq, 9u);
}

TEST(BridgePubAck, AnErrorIsARefusalWithItsDescriptionMadePrintableAndShort) {
  const PubAck sut =
      parse_pub_ack(R"({"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}})", kStream);
  EXPECT_EQ(sut.kind, Kind::error);
  EXPECT_EQ(sut.description, "maximum messages exceeded");
  const PubAck hostile =
      parse_pub_ack(R"({"error":{"description":"a\nb\u0000)" + std::string(300, 'x') + R"("}})", kStream);
  EXPECT_EQ(hostile.kind, Kind::error);
  EXPECT_EQ(hostile.description.size(), 120u);
  EXPECT_EQ(hostile.description.substr(0, 4), "a?b?");
  EXPECT_EQ(parse_pub_ack(R"({"error":{}})", kStream).kind, Kind::error);
}

TEST(BridgePubAck, AnAcknowledgementForAnotherStreamIsMalformed) {
  const PubAck sut = parse_pub_ack(R"({"stream":"OTHER","seq":42})", kStream);
  EXPECT_EQ(sut.kind, Kind::malformed);
  EXPECT_STREQ(sut.problem, "for another stream");
  EXPECT_EQ(parse_pub_ack(R"({"stream":"ZIPC_ORDERSX","seq":42})", kStream).kind, Kind::malformed);
  EXPECT_EQ(parse_pub_ack(R"({"stream":"ZIPC_ORDER","seq":42})", kStream).kind, Kind::malformed);
  EXPECT_EQ(parse_pub_ack(R"({"stream":"zipc_orders","seq":42})", kStream).kind, Kind::malformed);
}

TEST(BridgePubAck, SequencesOutOfRangeOrNotPlainIntegersAreMalformed) {
  for (const char* seq : {"0", "-1", "1.5", "1e3", "\"42\"", "true", "null", "9223372036854775808",
                          "18446744073709551616", "99999999999999999999999", "[1]", "{}"}) {
    const std::string body = std::string(R"({"stream":"ZIPC_ORDERS","seq":)") + seq + "}";
    EXPECT_EQ(parse_pub_ack(body, kStream).kind, Kind::malformed) << body;
  }
  EXPECT_EQ(parse_pub_ack(R"({"stream":"ZIPC_ORDERS","seq":9223372036854775807})", kStream).kind, Kind::stored);
}

TEST(BridgePubAck, MissingMembersAndWrongTypesAreMalformed) {
  for (const char* body : {R"({"stream":"ZIPC_ORDERS"})", R"({"seq":4})", R"({})", R"({"stream":7,"seq":4})",
                           R"({"stream":"ZIPC_ORDERS","seq":4,"duplicate":"yes"})", R"({"error":"busy"})",
                           R"([{"stream":"ZIPC_ORDERS","seq":4}])", R"("ZIPC_ORDERS")", "42", "null"}) {
    EXPECT_EQ(parse_pub_ack(body, kStream).kind, Kind::malformed) << body;
  }
}

TEST(BridgePubAck, TextThatIsNotJsonOrTooLongIsMalformed) {
  for (const std::string& body : {std::string(), std::string("+ACK"), std::string(R"({"stream":"ZIPC_ORDERS","seq":4)"),
                                  std::string(R"({"stream":"ZIPC_ORDERS","seq":4}})"),
                                  std::string(R"({"stream":"ZIPC_ORDERS","seq":4} x)"), std::string("\0\0\0", 3)}) {
    EXPECT_EQ(parse_pub_ack(body, kStream).kind, Kind::malformed) << body;
  }
  const std::string padded = R"({"stream":"ZIPC_ORDERS","seq":4,"pad":")" + std::string(1024, 'p') + "\"}";
  const PubAck sut = parse_pub_ack(padded, kStream);
  EXPECT_EQ(sut.kind, Kind::malformed);
  EXPECT_STREQ(sut.problem, "too long");
  // Deep nesting within the size bound is only malformed (no recursion blow-up).
  EXPECT_EQ(parse_pub_ack(std::string(500, '[') + std::string(500, ']'), kStream).kind, Kind::malformed);
}

TEST(BridgePubAck, RandomBytesAndMutatedAcknowledgementsAreReadWithoutHarm) {
  std::mt19937_64 rng(12345);
  const std::string good = R"({"stream":"ZIPC_ORDERS","seq":4242})";
  for (int i = 0; i < 20000; ++i) {
    std::string body = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) body[rng() % body.size()] = static_cast<char>(rng() % 256);
    const PubAck sut = parse_pub_ack(body, kStream);
    if (sut.kind == Kind::stored || sut.kind == Kind::duplicate) {
      // Only an edit that keeps a valid acknowledgement of our stream passes.
      EXPECT_GE(sut.stream_seq, 1u) << body;
      EXPECT_LE(sut.stream_seq, bridge_detail::kMaxSeq) << body;
    }
    std::string noise(rng() % 64, '\0');
    for (char& c : noise) c = static_cast<char>(rng() % 256);
    EXPECT_NE(parse_pub_ack(noise, kStream).kind, Kind::stored) << noise;
  }
}

TEST(BridgePubAck, AReplySubjectNamesASequenceOnlyInTheExactTokenForm) {
  using bridge_detail::reply_token;
  const std::string prefix = "_INBOX.abc.";
  char token[21] = {};
  bridge_detail::write_reply_token(token, 42);
  EXPECT_STREQ(token, "00000000000000000042");
  EXPECT_EQ(reply_token(prefix + token, prefix), 42u);
  EXPECT_EQ(reply_token(prefix + "09223372036854775807", prefix), 9223372036854775807u);
  for (const std::string& subject : {prefix + "42", prefix + "000000000000000000042", prefix + "0000000000000000004x",
                                     prefix + "09223372036854775808", prefix + "99999999999999999999",
                                     std::string("_INBOX.abd.00000000000000000042"), prefix, std::string()}) {
    EXPECT_FALSE(reply_token(subject, prefix).has_value()) << subject;
  }
}

}  // namespace
}  // namespace pub_ack_test

}  // namespace zipc::bridge_test
