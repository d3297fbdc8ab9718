// TLSF allocator over a heap arena (layout in src/layout/heap_layout.hpp).
// Internal to the library; zipc::Heap and zipc::detail::heap_* call it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layout/heap_layout.hpp"
#include "zipc/heap.hpp"

namespace zipc::detail {

// A process-local, validated view of one mapped heap.
struct Arena {
  layout::HeapControl* control = nullptr;
  std::byte* base = nullptr;
  std::uint64_t size = 0;  // sentinel included
  // Thread caches (heap_cache.hpp): slots in the table after the arena, as
  // validated when the heap was attached (0: none), and this mapping's id in
  // this process (slots are tied to a mapping).
  std::uint32_t cache_slots = 0;
  std::uint64_t mapping_id = 0;
};

// Builds the empty heap (one free block and the sentinel). Creator only.
void tlsf_init(const Arena& a, std::uint64_t salt) noexcept;
Allocation tlsf_allocate(const Arena& a, std::size_t size, std::size_t align) noexcept;
HeapStatus tlsf_deallocate(const Arena& a, void* p) noexcept;
// Frees the blocks at these arena offsets under one hold of the lock (a thread
// cache emptied); each is checked as tlsf_deallocate checks. Returns how many
// were freed.
std::size_t tlsf_deallocate_offsets(const Arena& a, const std::uint64_t* offsets, std::size_t n) noexcept;
HeapStats tlsf_stats(const Arena& a) noexcept;
HeapCheck tlsf_check(const Arena& a) noexcept;

// Garbage collection for an arena whose allocations are referenced from
// elsewhere (a queue's oversize region, src/queue/queue_oversize.cpp). With the
// allocation lock held (nothing is allocated or freed meanwhile):
// collect(ctx) gathers the live references (false: give up for now), then
// every allocated block whose payload offset (from a.base) keep(ctx, offset)
// refuses is freed. Returns the number of blocks freed, or -1 (gave up,
// corrupt arena, no memory).
struct SweepHooks {
  void* ctx = nullptr;
  bool (*collect)(void* ctx) noexcept = nullptr;
  bool (*keep)(void* ctx, std::uint64_t payload_offset) noexcept = nullptr;
};
long tlsf_sweep(const Arena& a, const SweepHooks& h) noexcept;

// Process-local registry of mapped heaps: control block address -> arena.
// Lets the allocator trust nothing it reads from the segment about its own
// bounds, and makes a stale control pointer an error instead of a crash.
bool registry_add(const Arena& a) noexcept;
void registry_remove(const layout::HeapControl* c) noexcept;
bool registry_find(const layout::HeapControl* c, Arena* out) noexcept;
// A new mapping id (unique in this process, never 0).
std::uint64_t next_mapping_id() noexcept;

}  // namespace zipc::detail
