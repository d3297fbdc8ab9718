// The strict reading of a message from NATS (bridge/src/wire.hpp): headers
// are plain in-range decimals, batches hold exactly the frames they claim.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "wire.hpp"

namespace zipc::bridge_detail {
namespace wire_test {
namespace {

TEST(BridgeWire, ADecimalIsDigitsOnlyWithoutSignBlanksTrailingBytesOrOverflow) {
  for (const char* bad :
       {"", "abc", "-1", "+2", "0x2", "2junk", " 2", "2 ", "1e3", "18446744073709551616", "99999999999999999999999"})
    EXPECT_FALSE(parse_decimal(bad)) << "'" << bad << "'";
  EXPECT_EQ(parse_decimal("0"), 0u);
  EXPECT_EQ(parse_decimal("42"), 42u);
  EXPECT_EQ(parse_decimal("18446744073709551615"), ~std::uint64_t{0});
}

std::string frame(std::uint64_t seq, std::uint32_t size, std::uint32_t skip = 0) {
  const Frame f{size, skip, seq, 7};
  std::string s(reinterpret_cast<const char*>(&f), sizeof(f));
  s.append((size + 7) / 8 * 8, 'p');
  return s;
}

RawHeaders bridge(const char* seq) {
  RawHeaders r;
  r.origin = "hostA";
  r.channel = "prices";
  r.seq = seq;
  r.time = "5";
  return r;
}

TEST(BridgeWire, AMessageWithoutZipcHeadersIsPlainAndAStatusLineWithNoBodyIsNotData) {
  Headers h;
  EXPECT_EQ(check_message(RawHeaders{}, "x", 1, true, &h), Reject::none);
  EXPECT_FALSE(h.has_seq);
  RawHeaders st;
  st.status = "503";
  EXPECT_EQ(check_message(st, "", 0, true, &h), Reject::status);
  EXPECT_EQ(check_message(st, "x", 1, true, &h), Reject::none) << "a body: data, whatever the status";
}

TEST(BridgeWire, SequencesAndSkipsOutOfRangeAndMissingNamesAreRejected) {
  Headers h;
  EXPECT_EQ(check_message(bridge("9223372036854775807"), "x", 1, true, &h), Reject::none);
  EXPECT_EQ(h.seq, 9223372036854775807u);
  EXPECT_EQ(check_message(bridge("9223372036854775808"), "x", 1, true, &h), Reject::header);
  EXPECT_EQ(check_message(bridge("18446744073709551615"), "x", 1, true, &h), Reject::header);
  RawHeaders r = bridge("5");
  r.skip = "6";
  EXPECT_EQ(check_message(r, "x", 1, true, &h), Reject::header) << "nothing was skipped before 0";
  r.skip = "5";
  EXPECT_EQ(check_message(r, "x", 1, true, &h), Reject::none);
  r = bridge("5");
  r.origin.reset();
  EXPECT_EQ(check_message(r, "x", 1, true, &h), Reject::header);
  r = bridge("5");
  r.channel = std::string_view("a\nb");
  EXPECT_EQ(check_message(r, "x", 1, true, &h), Reject::header);
  r = bridge("5");
  r.time = "soon";
  EXPECT_EQ(check_message(r, "x", 1, true, &h), Reject::header);
}

TEST(BridgeWire, ABatchHoldsExactlyTheFramesItClaimsInIncreasingOrder) {
  Headers h;
  RawHeaders r = bridge("10");
  const std::string two = frame(10, 5) + frame(11, 8) + std::string(16, '\0');  // zeros after: ignored
  r.count = "2";
  EXPECT_EQ(check_message(r, two.data(), two.size(), true, &h), Reject::none);
  EXPECT_EQ(h.count, 2u);
  EXPECT_EQ(check_message(r, two.data(), two.size(), false, &h), Reject::header) << "JetStream: never batched";
  r.count = "3";
  EXPECT_EQ(check_message(r, two.data(), two.size() - 16, true, &h), Reject::frame);
  for (const char* bad : {"0", "1025", "abc", "-1", "", "0x2", "+2", "2junk"}) {
    r.count = bad;
    EXPECT_EQ(check_message(r, two.data(), two.size(), true, &h), Reject::header) << bad;
  }
  r.count = "1";
  const std::string past = frame(10, 1000).substr(0, sizeof(Frame) + 8);
  EXPECT_EQ(check_message(r, past.data(), past.size(), true, &h), Reject::frame);
  const std::string other_first = frame(9, 8);
  EXPECT_EQ(check_message(r, other_first.data(), other_first.size(), true, &h), Reject::frame);
  r.count = "2";
  const std::string backwards = frame(10, 8) + frame(10, 8);
  EXPECT_EQ(check_message(r, backwards.data(), backwards.size(), true, &h), Reject::frame);
  const std::string unpadded = frame(10, 8) + frame(11, 3).substr(0, sizeof(Frame) + 3);
  EXPECT_EQ(check_message(r, unpadded.data(), unpadded.size(), true, &h), Reject::none) << "the last one's padding";
}

}  // namespace

}  // namespace wire_test
}  // namespace zipc::bridge_detail
