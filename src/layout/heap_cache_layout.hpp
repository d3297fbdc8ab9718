// Byte layout of a heap's thread-cache table (docs/design/heap.md, "Thread caches").
//
// The table follows the arena (HeapControl::cache_offset) and holds
// cache_slots slots. A slot belongs to one thread of one process: that thread
// alone pushes and pops its entries, without the allocation lock; the blocks
// it lists are allocated as far as the TLSF lists know, and carry a salted mark
// in their first payload word (heap_cache.cpp) so a second free is caught and a
// stale entry is told from a live one. A slot whose process died is emptied
// back into the heap by the next process that scans the table.
//
// CacheSlot (12480 bytes, 64-aligned):
//  offset  size   field
//  0       8      owner    atomic: zipc::pack(ProcessId) of the owning process, 0 = free
//  8       8      holder   atomic: (mapping id << 32) | thread id inside that process
//  16      8      bytes    atomic: block bytes listed (headers included); the owner writes
//  24      8      blocks   atomic: blocks listed; the owner writes
//  32      32     reserved
//  64      96     counts[kCacheClasses]   entries in use per size class (owner only)
//  160     12288  entries[kCacheClasses][kCacheDepth]  arena offsets of listed blocks;
//                 kNil past the count (an entry at index count may be a push or pop
//                 that a death cut short: the block's mark says which)
//  12448   32     padding
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "layout/heap_layout.hpp"

namespace zipc::layout {

inline constexpr std::uint32_t kCacheMagic = 0x48434143u;    // "CACH"
inline constexpr std::uint64_t kCacheMinArena = 8ull << 20;  // smaller heaps have no caches
inline constexpr std::uint32_t kCacheMaxSlots = 16;          // threads that cache at once
inline constexpr unsigned kCacheFlCount = 6;                 // first levels 0..5: blocks below 8 KiB
inline constexpr unsigned kCacheClasses = kCacheFlCount * kSlCount;
inline constexpr unsigned kCacheDepth = 16;                    // blocks per class
inline constexpr std::uint64_t kCacheMaxLimit = 512ull << 10;  // bytes per slot, at most

struct alignas(64) CacheSlot {
  std::atomic<std::uint64_t> owner;
  std::atomic<std::uint64_t> holder;
  std::atomic<std::uint64_t> bytes;
  std::atomic<std::uint64_t> blocks;
  std::uint8_t reserved[32];
  std::uint8_t counts[kCacheClasses];
  std::uint64_t entries[kCacheClasses][kCacheDepth];
};

static_assert(offsetof(CacheSlot, counts) == 64, "CacheSlot::counts at byte 64 (the diagram above)");
static_assert(offsetof(CacheSlot, entries) == 160, "CacheSlot::entries at byte 160 (the diagram above)");
static_assert(sizeof(CacheSlot) == 12480, "CacheSlot is 12480 bytes (the diagram above)");
static_assert(kCacheDepth < 256, "counts are bytes");
static_assert(std::is_standard_layout_v<CacheSlot>, "CacheSlot is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<CacheSlot>, "CacheSlot is shared memory: trivially copyable");

// Bytes of the table a heap with this arena gets (0: none), whole pages.
constexpr std::uint64_t cache_table_bytes(std::uint64_t arena) noexcept {
  return arena < kCacheMinArena ? 0 : (kCacheMaxSlots * sizeof(CacheSlot) + 4095) / 4096 * 4096;
}

}  // namespace zipc::layout
