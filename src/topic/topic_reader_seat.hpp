// Read-only reliable topic subscribers (docs/design/topic.md, "Read-only reliable
// subscribers"). The reader maps the topic PROT_READ and writes nothing in
// it: its position lives in a seat of its own (layout/topic_reader_layout.hpp)
// that publishers read with pread. A publisher adopts the seat into a
// subscriber slot of the topic (SubscriberSlot::proxy), and from then on holds
// back every record at or above the seat's position, as for any reliable
// subscriber.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "layout/topic_reader_layout.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

struct TopicState;

// Where seat k of a topic lives: next to the topic's file. Empty for a topic
// without a path (a memfd or a descriptor), which has no seats.
std::string reader_seat_path(const TopicState& s, std::uint32_t k);

// The reader's side: its seat, claimed at subscribe, given up (state left,
// file removed) when the subscriber goes.
class ReaderSeatClaim {
 public:
  // Claims the lowest free seat (or one whose reader died) and stores the
  // starting position. Throws busy (every seat held), wrong_role (no path).
  static std::unique_ptr<ReaderSeatClaim> claim(TopicState& s, std::uint64_t position, std::uint64_t sequence);
  ~ReaderSeatClaim();
  ReaderSeatClaim(const ReaderSeatClaim&) = delete;
  ReaderSeatClaim& operator=(const ReaderSeatClaim&) = delete;

  // Everything below position was read (release: pairs with the publisher's pread).
  void store(std::uint64_t position, std::uint64_t sequence) noexcept;
  // A publisher holds a slot for this seat (the reader reads the slot table).
  [[nodiscard]] bool adopted(const TopicState& s) const noexcept;
  [[nodiscard]] std::uint32_t index() const noexcept { return k_; }

 private:
  ReaderSeatClaim() = default;
  Segment segment_;
  layout::ReaderSeat* seat_ = nullptr;
  std::uint32_t k_ = 0;
  std::uint64_t me_ = 0;
};

// The publisher's side: finds seats to adopt (at most every kScanPeriodNs)
// and reads an adopted seat's position.
class ReaderSeatWatch {
 public:
  ReaderSeatWatch() { fds_.fill(-1); }
  ~ReaderSeatWatch();
  ReaderSeatWatch(const ReaderSeatWatch&) = delete;
  ReaderSeatWatch& operator=(const ReaderSeatWatch&) = delete;

  // Adopts the live seats that hold no slot yet; throttled by time. True when
  // a slot was taken (the caller's cached minimum is stale).
  bool maybe_adopt(TopicState& s, std::uint64_t now_ns) noexcept;

  enum class Seat : std::uint8_t {
    holds,     // *position holds records back
    ignore,    // says nothing usable now (a position outside [oldest, cursor], a torn or foreign seat)
    left,      // its reader left: the slot may be freed
    unstable,  // no consistent copy now (the reader is moving it): hold at the last known position
  };
  // The seat behind proxy slot (k + 1) whose owner is `owner`.
  Seat position(const TopicState& s, std::uint32_t k, std::uint64_t owner, std::uint64_t* position) noexcept;
  // A publisher waiting behind a seat polls it (a read-only reader cannot wake it).
  [[nodiscard]] bool any_adopted() const noexcept { return adopted_seen_; }
  void note_adopted() noexcept { adopted_seen_ = true; }

 private:
  struct Copy {
    std::uint64_t kind = 0;
    std::uint64_t magic = 0, topic_id = 0, owner = 0, position = 0, sequence = 0, state = 0;
  };
  enum class Read : std::uint8_t { ok, missing, foreign, unstable };
  Read read_seat(const TopicState& s, std::uint32_t k, Copy* out, bool reopen) noexcept;

  std::array<int, layout::kMaxReaderSeats> fds_{};
  std::uint64_t next_scan_ns_ = 0;
  std::uint64_t next_full_scan_ns_ = 0;
  bool adopted_seen_ = false;
};

}  // namespace zipc::detail
