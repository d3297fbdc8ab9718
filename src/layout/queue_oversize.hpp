// The oversize region of a queue (QueueOptions::oversize_bytes > 0): messages
// larger than a block live here, the block carries their offset and length.
//
// Placed after the cells, at the first 4096-byte boundary of the payload:
//  region offset
//  0       OversizeControl (128 bytes, then reserved to 4096)
//  4096    layout::HeapControl: zipc's TLSF heap allocator (src/heap/heap_tlsf.cpp)
//  12288   arena of params[kParamOversize] bytes (TLSF blocks, then the sentinel)
//
// A big message's cell: size word = kSizeBig (bit 31) | position tag, big_length = its
// length, big_offset = the payload's arena offset. kSizeMoved (bit 27)
// marks a cell whose big payload was handed back (released or aborted).
// Who references an allocation, at every instant (docs/guide/typed.md, "Payloads
// of any size"): the allocating producer's record (ParticipantRecord::big),
// then the cell, then the releasing consumer's record; a sweep under the
// allocator's lock frees every allocated block no live reference names.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "layout/heap_layout.hpp"
#include "layout/queue_layout.hpp"
#include "zipc/event.hpp"

namespace zipc::layout {

inline constexpr std::size_t kParamOversize = 7;                        // arena bytes of the oversize region (0: none)
inline constexpr std::uint32_t kQueueLayoutVersionOversize = 2;         // a queue with an oversize region
inline constexpr std::uint64_t kOversizeMagic = 0x5a49504342494731ull;  // "1GIBCPIZ"
inline constexpr std::uint64_t kOversizeAlign = 4096;
inline constexpr std::uint64_t kOversizeHeapOffset = 4096;
inline constexpr std::uint64_t kOversizeArenaOffset = kOversizeHeapOffset + kArenaOffset;

// Cell size-word flags of an oversize queue (it always runs the many ring,
// whose size word is otherwise the plain length, at most 16 MiB).
inline constexpr std::uint32_t kSizeBig = 1u << 31;    // payload in the region (big_offset, big_length)
inline constexpr std::uint32_t kSizeMoved = 1u << 27;  // big payload handed back: nothing to read
// Low bits of a big cell's size word: the position the producer wrote it for
// (a flag left from an earlier lap never names a live payload).
inline constexpr std::uint32_t kSizeTagMask = (1u << 26) - 1;

// ParticipantRecord::big values besides "payload arena offset + 1".
inline constexpr std::uint64_t kBigNone = 0;
inline constexpr std::uint64_t kBigAllocating = ~std::uint64_t{0};  // inside the allocator now

struct OversizeControl {
  std::uint64_t magic;
  std::uint64_t arena_size;
  // Nonzero: a participant died or a block was abandoned since the last
  // complete sweep (garbage may exist). Bumped by recover(); a sweep clears
  // it by a CAS from the value it read before collecting.
  std::atomic<std::uint64_t> sweep_needed;
  std::atomic<std::uint64_t> frees;      // big payloads handed back (the "room" key of waiting producers)
  std::atomic<std::uint64_t> reclaimed;  // blocks freed by sweeps
  std::atomic<std::uint64_t> sweeps;     // complete sweeps
  std::uint8_t pad0[kQueueLine - 48];
  Event space;  // producers waiting for room in the region
  std::uint8_t pad1[kQueueLine - sizeof(Event)];
};

static_assert(sizeof(OversizeControl) == 2 * kQueueLine, "OversizeControl is two lines (the diagram above)");
static_assert(offsetof(OversizeControl, space) == kQueueLine, "OversizeControl::space starts its second line");
static_assert(sizeof(OversizeControl) <= kOversizeHeapOffset, "OversizeControl ends before the heap control");
static_assert(sizeof(HeapControl) <= kArenaOffset, "the heap control ends before the arena");
static_assert(std::is_standard_layout_v<OversizeControl>, "OversizeControl is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<OversizeControl>, "OversizeControl is shared memory: trivially copyable");
static_assert((kSizeBig & kSizeMask) == 0 && (kSizeMoved & kSizeMask) == 0 && kSizeMoved > (16u << 20),
              "the oversize flags lie above every block length");

inline constexpr std::uint64_t queue_oversize_offset(std::uint64_t cells_end) noexcept {
  return round_up(cells_end, kOversizeAlign);
}
inline constexpr std::uint64_t queue_oversize_size(std::uint64_t arena) noexcept {
  return arena == 0 ? 0 : kOversizeArenaOffset + arena;
}

}  // namespace zipc::layout
