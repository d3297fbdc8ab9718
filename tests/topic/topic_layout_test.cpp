// The record header's encodings, checked on headers built by hand: the
// validation every reader applies (check_record) needs no ring for this.
#include <gtest/gtest.h>

#include "layout/topic_layout.hpp"
#include "topic/topic_state.hpp"

using zipc::detail::check_record;
using zipc::detail::TopicState;
using zipc::layout::RecordHeader;
using zipc::layout::RecordKind;

namespace topic_layout_test {
namespace {
// TopicState is not movable (it holds an atomic): filled in place.
void big_ring(TopicState& s) {
  s.capacity = 1ull << 36;  // 64 GiB: holes of several claims can pass 4 GiB
  s.mask = s.capacity - 1;
  s.max_message = 1u << 30;
}
RecordHeader header(RecordKind kind, std::uint64_t position) {
  RecordHeader h{};
  h.kind = static_cast<std::uint16_t>(kind);
  h.position = position;
  return h;
}
}  // namespace

// Review finding: recovery wrote a hole's length into the 32-bit size field,
// so a hole over 4 GiB (several dead claims in a ring over 4 GiB) was read as
// a short record, and readers then took the bytes after it for a header.
TEST(TopicLayout, AHoleOver4GiBKeepsItsWholeLength) {
  TopicState s;
  big_ring(s);
  RecordHeader h = header(RecordKind::abandoned, 1ull << 20);
  const std::uint64_t body = (5ull << 30) + 8;  // 5 GiB and a bit
  zipc::layout::set_hole_body_bytes(h, body);
  const auto hc = check_record(s, h, h.position, h.position + s.capacity);
  ASSERT_TRUE(hc.ok);
  EXPECT_EQ(hc.kind, RecordKind::abandoned);
  EXPECT_EQ(hc.total, zipc::layout::record_bytes(body));
}

TEST(TopicLayout, AHoleLongerThanTheRingIsRefused) {
  TopicState s;
  big_ring(s);
  RecordHeader h = header(RecordKind::abandoned, 0);
  zipc::layout::set_hole_body_bytes(h, s.capacity);  // plus its header: over the ring
  EXPECT_FALSE(check_record(s, h, 0, 2 * s.capacity).ok);
}

TEST(TopicLayout, ADataRecordsSlackIsPaddingNotLength) {
  TopicState s;
  big_ring(s);
  RecordHeader h = header(RecordKind::data, 0);
  h.size = 100;
  h.slack = 8;
  const auto hc = check_record(s, h, 0, s.capacity);
  ASSERT_TRUE(hc.ok);
  EXPECT_EQ(hc.total, zipc::layout::record_bytes(100) + 8);
}

}  // namespace topic_layout_test
