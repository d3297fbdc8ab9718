// Per-thread caches of freed small blocks for a zipc heap (docs/design/heap.md,
// "Thread caches"; byte layout in src/layout/heap_cache_layout.hpp).
//
// A thread that frees a block below 8 KiB keeps it in its own slot of the
// heap's cache table and hands it out again to its next allocation of that
// size class, without the allocation lock: two threads (or processes) that
// allocate and free on one heap stop taking turns on one lock and one set of
// free lists. The slot lives in the segment, so blocks a killed process had
// cached go back to the heap when another process next scans the table
// (claiming a slot, stats(), check(), or running out of memory).
#pragma once

#include <cstddef>
#include <cstdint>

#include "heap/heap_tlsf.hpp"

namespace zipc::detail {

// Allocate / free through the calling thread's slot, else the TLSF lists.
// Same contract as tlsf_allocate / tlsf_deallocate.
Allocation cached_allocate(const Arena& a, std::size_t size, std::size_t align) noexcept;
HeapStatus cached_deallocate(const Arena& a, void* p) noexcept;

// Returns the calling thread's cached blocks of this mapping to the lists.
void cache_flush_mine(const Arena& a) noexcept;
// Empties the slots of processes that died into the lists.
void cache_reclaim_dead(const Arena& a) noexcept;
// Empties and frees every slot this process holds through this mapping (the
// mapping is going away).
void cache_release_mapping(const Arena& a) noexcept;

struct CacheTotals {
  std::uint64_t bytes = 0;   // block bytes listed in all slots, headers included
  std::uint64_t blocks = 0;  // blocks listed
};
// A snapshot: other threads' slots change while it is read.
CacheTotals cache_totals(const Arena& a) noexcept;

// Sets up an empty table for a heap being created (cache_table_bytes(arena)
// bytes at table); writes the control block's cache fields.
void cache_init(layout::HeapControl* c, std::byte* table, std::uint64_t table_offset, std::uint64_t arena) noexcept;

}  // namespace zipc::detail
