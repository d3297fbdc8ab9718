// The shared-memory layout of a zipc::Queue (the segment's payload).
//
//  payload offset                                  written by
//  0      QueueControl (768 bytes, six 128-byte lines)
//         line 0  [0,128)    config copy + closed flag    creator / close() (read-mostly)
//         line 1  [128,256)  tail: next position to reserve   producers
//         line 2  [256,384)  head: next position to acquire   consumers
//         line 3  [384,512)  not_empty Event              sleeping consumers / producers
//         line 4  [512,640)  not_full Event               sleeping producers / consumers
//         line 5  [640,768)  rare counters (redelivered, abandoned, orphan hint,
//                            retired participants' stats, single-side owners)
//         line 5 also holds the two shared stall clocks (consumers, producers)
//  768    ParticipantRecord[max_participants]  (128 bytes each; one writer per record)
//  cells  Cell[capacity], each `stride` bytes, starting at a 128-byte boundary:
//           0   8  seq    Vyukov sequence word (MPMC) / pos + 1 once published (SPSC)
//           8   8  owner  (participant slot + 1) << 48 | tag (2*pos + phase) & (2^48-1) (MPMC) /
//                         pos + 1 once committed, publish()'s mark (SPSC)
//           16  4  size   payload length (SPSC: | flag bits)
//           20  4  big_length (oversize queues; else unused)
//           24  8  big_offset (oversize queues; else unused)
//           32  block_size bytes of payload; stride = round_up(32 + block_size, 64)
//
// Positions are monotonic 64-bit counters; a position's cell is pos & (capacity - 1).
// Every value read from here is validated before use (see docs/design/queue.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/round_up.hpp"
#include "zipc/event.hpp"

namespace zipc::layout {

inline constexpr std::uint32_t kQueueMagic = 0x51504955u;  // "UIPQ"
inline constexpr std::uint32_t kQueueLayoutVersion = 1;
inline constexpr std::size_t kQueueLine = 128;

// Header params (covered by the segment header checksum; the source of truth).
enum QueueParam : std::size_t {
  kParamCapacity = 0,
  kParamBlockSize = 1,
  kParamModes = 2,  // bit 0: many producers, bit 1: many consumers
  kParamMaxParticipants = 3,
  kParamRecoveryNs = 4,
  kParamStride = 5,
  kParamLayoutVersion = 6,
  // 7: oversize region arena bytes (layout/queue_oversize.hpp)
};
inline constexpr std::uint64_t kModeMultiProducer = 1;
inline constexpr std::uint64_t kModeMultiConsumer = 2;

// Seq-word flags (MPMC). Positions stay below 2^62 for centuries.
inline constexpr std::uint64_t kSeqAbandoned = 1ull << 63;  // reserved by a dead producer: skip
inline constexpr std::uint64_t kSeqOrphan = 1ull << 62;     // held by a dead consumer: redeliver
inline constexpr std::uint64_t kSeqFlags = kSeqAbandoned | kSeqOrphan;

// The orphan hint (QueueControl::orphans): a recoverer adds kOrphanEpoch + 1
// after marking a cell; a consumer taking an orphan subtracts 1 from the count
// (never below 0); a consumer that scanned and found none clears the count,
// unless the word changed since it read it (the epoch makes that check immune
// to a take and a mark cancelling out). recover() re-counts when the count is
// 0 but an orphan exists (a recoverer killed between its mark and its add).
inline constexpr std::uint64_t kOrphanCount = 0xffffffffull;
inline constexpr std::uint64_t kOrphanEpoch = 1ull << 32;

// Cell owner word.
inline constexpr unsigned kOwnerSlotShift = 48;
inline constexpr std::uint64_t kOwnerTagMask = (1ull << kOwnerSlotShift) - 1;

// SPSC size-word flags (producer-/consumer-local bookkeeping for out-of-order loans).
inline constexpr std::uint32_t kSizeMask = (1u << 25) - 1;  // 16 MiB + 1 fits
inline constexpr std::uint32_t kSizeSkip = 1u << 29;        // aborted loan: consumer skips it
inline constexpr std::uint32_t kSizeReleased = 1u << 28;    // released out of order (consumer-side bookkeeping)

struct QueueControl {
  // line 0: read-mostly
  std::uint32_t magic;
  std::uint32_t capacity;
  std::uint32_t block_size;
  std::uint32_t stride;
  std::uint32_t modes;
  std::uint32_t max_participants;
  std::uint64_t recovery_ns;
  std::uint64_t cells_offset;
  std::atomic<std::uint32_t> closed;
  std::uint8_t pad0[kQueueLine - 44];
  // line 1
  std::atomic<std::uint64_t> tail;
  std::uint8_t pad1[kQueueLine - 8];
  // line 2
  std::atomic<std::uint64_t> head;
  std::uint8_t pad2[kQueueLine - 8];
  // line 3
  Event not_empty;
  std::uint8_t pad3[kQueueLine - sizeof(Event)];
  // line 4
  Event not_full;
  std::uint8_t pad4[kQueueLine - sizeof(Event)];
  // line 5: written only on rare events (recovery, detach)
  std::atomic<std::uint64_t> redelivered;
  std::atomic<std::uint64_t> abandoned;
  // hint: low 32 bits count cells marked kSeqOrphan not yet taken; high 32
  // bits an epoch bumped with every mark (see kOrphanCount).
  std::atomic<std::uint64_t> orphans;
  std::atomic<std::uint64_t> retired_sent;
  std::atomic<std::uint64_t> retired_received;
  std::atomic<std::uint64_t> retired_full_waits;
  std::atomic<std::uint64_t> retired_empty_waits;
  std::atomic<std::uint64_t> single_producer;  // SPSC: packed ProcessId of the producer (0: none)
  std::atomic<std::uint64_t> single_consumer;  // SPSC: packed ProcessId of the consumer
  // Shared stall clocks (src/core/recovery_wait.hpp): consumers blocked at head,
  // producers blocked at tail. Zero: no stall seen yet (also in segments
  // made before they existed).
  std::atomic<std::uint64_t> stall_consumers;
  std::atomic<std::uint64_t> stall_producers;
  // Payload bytes sent by handles whose records were freed (like retired_sent).
  std::atomic<std::uint64_t> retired_sent_bytes;
  std::uint8_t pad5[kQueueLine - 96];
};

// One per attached Queue handle. Only its owner writes it, except recovery,
// which frees the record of a dead owner.
//  0  pid          packed ProcessId (0 = free)
//  8  role         bit 0 producer, bit 1 consumer
//  12 claim_count  positions covered by claim
//  16 claim        2*pos + phase + 1 of the first position being taken (0 = none);
//                  written BEFORE the CAS that takes it (SPSC: reserved/acquired end)
//  24 sent, received, full_waits, empty_waits: this handle's statistics
//  56 done         SPSC consumer: released up to here (head is published in batches);
//                  many ring: position + 1 of the last message counted in `received`
//                  (stored just before its release; see docs/design/queue.md, "Counters")
//  64 sent_mark    many ring: position + 1 of the last message counted in `sent`
//                  (stored just before its commit)
//  72 sent_bytes   payload bytes of the messages counted in `sent` (zipc top's
//                  bytes/s; stored with `sent`, same line, same writer)
//  80 big          oversize queues: arena offset + 1 of the big payload this
//                  handle allocated (not yet in a cell) or is handing back
//                  (layout/queue_oversize.hpp); kBigAllocating inside the allocator
struct ParticipantRecord {
  std::atomic<std::uint64_t> pid;
  std::atomic<std::uint32_t> role;
  std::atomic<std::uint32_t> claim_count;
  std::atomic<std::uint64_t> claim;
  std::atomic<std::uint64_t> sent;
  std::atomic<std::uint64_t> received;
  std::atomic<std::uint64_t> full_waits;
  std::atomic<std::uint64_t> empty_waits;
  std::atomic<std::uint64_t> done;
  std::atomic<std::uint64_t> sent_mark;
  std::atomic<std::uint64_t> sent_bytes;
  std::atomic<std::uint64_t> big;  // oversize queues: the allocation this handle alone references
  std::uint8_t pad[kQueueLine - 88];
};

struct CellHeader {
  std::atomic<std::uint64_t> seq;
  std::atomic<std::uint64_t> owner;
  std::atomic<std::uint32_t> size;
  std::atomic<std::uint32_t> big_length;  // oversize queues: length of the payload in the region
  std::atomic<std::uint64_t> big_offset;  // ... and its arena offset (layout/queue_oversize.hpp)
};
inline constexpr std::size_t kCellHeader = sizeof(CellHeader);

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared uint64_t atomics are lock-free (a lock would be private to one process)");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "shared uint32_t atomics are lock-free (a lock would be private to one process)");
static_assert(sizeof(QueueControl) == 6 * kQueueLine, "QueueControl is 6 * kQueueLine bytes (the diagram above)");
static_assert(offsetof(QueueControl, closed) == 40, "QueueControl::closed at byte 40 (the diagram above)");
static_assert(offsetof(QueueControl, tail) == 1 * kQueueLine,
              "QueueControl::tail at byte 1 * kQueueLine (the diagram above)");
static_assert(offsetof(QueueControl, head) == 2 * kQueueLine,
              "QueueControl::head at byte 2 * kQueueLine (the diagram above)");
static_assert(offsetof(QueueControl, not_empty) == 3 * kQueueLine,
              "QueueControl::not_empty at byte 3 * kQueueLine (the diagram above)");
static_assert(offsetof(QueueControl, not_full) == 4 * kQueueLine,
              "QueueControl::not_full at byte 4 * kQueueLine (the diagram above)");
static_assert(offsetof(QueueControl, redelivered) == 5 * kQueueLine,
              "QueueControl::redelivered at byte 5 * kQueueLine (the diagram above)");
static_assert(offsetof(QueueControl, stall_producers) == 5 * kQueueLine + 80,
              "the stall clocks live in the rare-counter line's former padding (layout version unchanged)");
static_assert(offsetof(QueueControl, retired_sent_bytes) == 5 * kQueueLine + 88,
              "retired_sent_bytes takes former padding of the rare-counter line (layout version unchanged)");
static_assert(sizeof(ParticipantRecord) == kQueueLine, "ParticipantRecord is kQueueLine bytes (the diagram above)");
static_assert(offsetof(ParticipantRecord, claim) == 16, "ParticipantRecord::claim at byte 16 (the diagram above)");
static_assert(offsetof(ParticipantRecord, sent) == 24, "ParticipantRecord::sent at byte 24 (the diagram above)");
static_assert(offsetof(ParticipantRecord, done) == 56, "ParticipantRecord::done at byte 56 (the diagram above)");
static_assert(offsetof(ParticipantRecord, sent_mark) == 64, "the sent mark takes former padding");
static_assert(offsetof(ParticipantRecord, sent_bytes) == 72,
              "the byte count takes former padding, in the owner's own line (segments made before read 0)");
static_assert(sizeof(CellHeader) == 32, "CellHeader is 32 bytes (the diagram above)");
static_assert(offsetof(CellHeader, size) == 16, "CellHeader::size at byte 16 (the diagram above)");
static_assert(offsetof(CellHeader, big_offset) == 24, "CellHeader::big_offset at byte 24 (the diagram above)");
static_assert(offsetof(ParticipantRecord, big) == 80, "ParticipantRecord::big takes former padding");

inline constexpr std::uint64_t queue_stride(std::uint64_t block_size) noexcept {
  return round_up(kCellHeader + block_size, 64);
}
inline constexpr std::uint64_t queue_cells_offset(std::uint64_t max_participants) noexcept {
  return sizeof(QueueControl) + max_participants * sizeof(ParticipantRecord);
}
inline constexpr std::uint64_t queue_payload_size(std::uint64_t capacity, std::uint64_t block_size,
                                                  std::uint64_t max_participants) noexcept {
  return queue_cells_offset(max_participants) + capacity * queue_stride(block_size);
}

// Shared-memory structs: standard layout (offsetof and the diagram above mean what they say)
// and trivially copyable (no constructor or destructor runs on bytes another process maps).
static_assert(std::is_standard_layout_v<QueueControl>, "QueueControl is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<QueueControl>, "QueueControl is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<ParticipantRecord>, "ParticipantRecord is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<ParticipantRecord>,
              "ParticipantRecord is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<CellHeader>, "CellHeader is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<CellHeader>, "CellHeader is shared memory: trivially copyable");

}  // namespace zipc::layout
