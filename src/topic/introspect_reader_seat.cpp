// zipc stat / gc for a read-only reliable reader's seat (SegmentKind::topic_reader):
// the reader that holds it, and its position.
#include "core/introspect_map.hpp"
#include "layout/topic_reader_layout.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

void inspect_reader_seat(const ReadOnlyView& v, ChannelReport& report) {
  if (!v.fits(0, sizeof(layout::ReaderSeat))) {
    report.problem = "seat shorter than its 64 bytes";
    return;
  }
  const auto* seat = v.at<layout::ReaderSeat>(0);
  if (seat->magic != layout::kReaderSeatMagic) {
    report.problem = "no reader seat magic";
    return;
  }
  report.readable = true;
  const std::uint64_t owner = peek(seat->owner);
  if (owner == 0 || peek(seat->state) != layout::kSeatActive) return;  // free: nobody sits here
  ParticipantReport p;
  p.role = "subscriber";
  p.mode = "reliable (read-only)";
  p.process = unpack(owner);
  p.alive = is_alive_packed(owner);
  add(p.fields, "position", peek(seat->position));
  add(p.fields, "sequence", peek(seat->sequence));
  report.participants.push_back(std::move(p));
}

}  // namespace zipc::detail
