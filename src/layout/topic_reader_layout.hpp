// Byte layout of a topic reader seat (SegmentKind::topic_reader): where a
// read-only reliable subscriber publishes its position, next to the topic it
// reads (path: the topic's path + ".ro<k>", k < kMaxReaderSeats).
//
// The reader creates and writes its seat; publishers only read it, with
// pread (never a mapping: a seat's owner could shrink the file under a
// mapping and crash them with SIGBUS). A publisher takes a subscriber slot of
// the topic on the reader's behalf (SubscriberSlot::proxy = k + 1) and holds
// its records back while the seat's position is below them.
//
// Payload (at segment offset 4096), 64 bytes:
//  offset  size  field
//  0       8     magic      kReaderSeatMagic
//  8       8     topic_id   the topic's incarnation (its segment header checksum)
//  16      8     owner      atomic: packed ProcessId of the reader, 0 = none
//  24      8     position   atomic: every record below it was read (release)
//  32      8     sequence   atomic: the next sequence to read (statistics)
//  40      8     state      atomic: kSeatActive, kSeatLeft
//  48      16    reserved
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace zipc::layout {

inline constexpr std::uint64_t kReaderSeatMagic = 0x5441455352444152ull;  // "RDRSEAT" little-endian bytes
inline constexpr std::uint32_t kMaxReaderSeats = 16;
inline constexpr std::uint64_t kSeatActive = 1;
inline constexpr std::uint64_t kSeatLeft = 2;

struct ReaderSeat {
  std::uint64_t magic;
  std::uint64_t topic_id;
  std::atomic<std::uint64_t> owner;
  std::atomic<std::uint64_t> position;
  std::atomic<std::uint64_t> sequence;
  std::atomic<std::uint64_t> state;
  std::uint64_t reserved[2];
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared uint64_t atomics are lock-free (a lock would be private to one process)");
static_assert(sizeof(ReaderSeat) == 64, "ReaderSeat is 64 bytes (the diagram above)");
static_assert(offsetof(ReaderSeat, owner) == 16, "ReaderSeat::owner at byte 16 (the diagram above)");
static_assert(offsetof(ReaderSeat, position) == 24, "ReaderSeat::position at byte 24 (the diagram above)");
static_assert(offsetof(ReaderSeat, state) == 40, "ReaderSeat::state at byte 40 (the diagram above)");
static_assert(std::is_standard_layout_v<ReaderSeat>,
              "shared-memory structs are standard layout (offsetof and the diagram above mean what they say)");

}  // namespace zipc::layout
