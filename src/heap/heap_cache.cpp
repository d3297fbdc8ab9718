#include "heap/heap_cache.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <new>

#include "core/round_up.hpp"
#include "core/self_id.hpp"
#include "heap/tlsf_blocks.hpp"
#include "layout/heap_cache_layout.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

using namespace layout;
using tlsf::Blocks;

namespace {

// Crash consistency inside one thread's slot: a process can be killed between
// any two of its stores, and whoever empties the slot afterwards reads them in
// the order they were written (x86 keeps store order; this keeps the compiler
// from changing it). Nothing here synchronizes with another thread.
inline void keep_order() noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);
}

// The word a listed block carries in its first payload word: salted and tied
// to the block's offset, so user data, a stale copy or another block's mark
// does not pass for it.
std::uint64_t mark_of(const Arena& a, std::uint64_t o) noexcept {
  return ((o + 0x5a43414348454421ull) * 0x9e3779b97f4a7c15ull) ^ a.control->salt;
}
std::atomic_ref<std::uint64_t> mark_at(const Arena& a, std::uint64_t o) noexcept {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(a.base + o + kHeaderSize));
}

CacheSlot* slots_of(const Arena& a) noexcept {
  // The table follows the arena; attach checked it lies inside the mapping.
  return reinterpret_cast<CacheSlot*>(a.base + a.size);
}

std::uint64_t limit_of(const Arena& a) noexcept {
  return std::min(a.control->cache_limit, kCacheMaxLimit);  // the segment's value, bounded
}

// The size class of a block of `size` bytes, or kCacheClasses when too large.
unsigned class_of(std::uint64_t size) noexcept {
  unsigned fl, sl;
  Blocks::mapping(size, &fl, &sl);
  return fl < kCacheFlCount ? fl * kSlCount + sl : kCacheClasses;
}

// The block at arena offset o, if it is an allocated block that this slot may
// list: a sane, allocated header; returns its size (0: not such a block).
std::uint64_t allocated_size(const Blocks& b, std::uint64_t o) noexcept {
  if (!b.in_arena(o)) return 0;
  const std::uint64_t w = b.word(o);
  if (!b.sane(o, w) || (w & kFlagFree) != 0) return 0;
  return Blocks::size_of(w);
}

// Empties a slot that this thread may write (its own, or a dead one it took
// over): every listed block whose mark is intact goes back to the lists.
void empty_slot(const Arena& a, CacheSlot& s) noexcept {
  Blocks b(a);
  std::uint64_t batch[64];
  std::size_t n = 0;
  auto flush = [&] {
    (void)tlsf_deallocate_offsets(a, batch, n);
    n = 0;
  };
  for (unsigned k = 0; k < kCacheClasses; ++k) {
    // One past the count too: a push cut short by a death wrote its entry first.
    const unsigned end = std::min<unsigned>(s.counts[k] + 1u, kCacheDepth);
    for (unsigned i = 0; i < end; ++i) {
      const std::uint64_t o = s.entries[k][i];
      if (o == kNil) continue;
      if (allocated_size(b, o) != 0 && mark_at(a, o).load(std::memory_order_relaxed) == mark_of(a, o)) {
        // Unmarked before it is freed: if this process dies between the two,
        // the block is lost (one block), never freed twice.
        mark_at(a, o).store(0, std::memory_order_relaxed);
        keep_order();
        batch[n++] = o;
        if (n == std::size(batch)) flush();
      }
    }
  }
  flush();
  for (unsigned k = 0; k < kCacheClasses; ++k) {
    for (auto& e : s.entries[k]) e = kNil;
    s.counts[k] = 0;
  }
  s.bytes.store(0, std::memory_order_relaxed);   // relaxed: a statistic
  s.blocks.store(0, std::memory_order_relaxed);  // relaxed: a statistic
}

void release_slot(CacheSlot& s) noexcept {
  s.holder.store(0, std::memory_order_relaxed);  // relaxed: published by the owner store below
  // release: the emptied entries are visible to the next owner, whose claim
  // (acquire CAS) pairs with this store.
  s.owner.store(0, std::memory_order_release);
}

// The slot's statistics. Only the owner writes them, so a load and a store
// (no locked read-modify-write on every allocate and free); relaxed: readers
// (stats()) take a snapshot and nothing is published through them.
void add_counts(CacheSlot& s, std::uint64_t bytes, std::uint64_t blocks) noexcept {
  s.bytes.store(s.bytes.load(std::memory_order_relaxed) + bytes, std::memory_order_relaxed);
  s.blocks.store(s.blocks.load(std::memory_order_relaxed) + blocks, std::memory_order_relaxed);
}

// ---- the calling thread's slots ----

std::atomic<std::uint32_t> g_next_thread{1};

struct Held {
  const HeapControl* control = nullptr;
  std::uint64_t mapping_id = 0;
  std::uint64_t self = 0;  // the process that claimed it (a forked child must not use it)
  CacheSlot* slot = nullptr;
};

struct ThreadSlots {
  static constexpr unsigned kMax = 4;  // heaps one thread caches for at once
  Held held[kMax];
  std::uint32_t thread = g_next_thread.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
  bool exiting = false;

  // Thread exit: what this thread cached goes back to heaps still mapped.
  ~ThreadSlots() {
    exiting = true;
    for (Held& h : held) {
      if (h.slot == nullptr || h.self != cached_packed_self()) continue;
      Arena a;
      if (registry_find(h.control, &a) && a.mapping_id == h.mapping_id) {
        empty_slot(a, *h.slot);
        release_slot(*h.slot);
      }
      h = Held{};
    }
  }
};

thread_local ThreadSlots t_slots;

std::uint64_t holder_word(const Arena& a) noexcept {
  return (a.mapping_id << 32) | t_slots.thread;
}

// Takes a free slot, or one whose process died (emptied first); nullptr when
// every slot is held by a live thread.
CacheSlot* claim(const Arena& a) noexcept {
  const std::uint64_t me = cached_packed_self();
  CacheSlot* slots = slots_of(a);
  for (int pass = 0; pass < 2; ++pass) {
    for (std::uint32_t i = 0; i < a.cache_slots; ++i) {
      CacheSlot& s = slots[i];
      std::uint64_t owner = s.owner.load(std::memory_order_relaxed);  // relaxed: the CAS below decides
      if (owner != 0 && (pass == 0 || owner == me || is_alive_packed(owner))) continue;
      // acquire: pairs with release_slot (or the dead owner's last stores,
      // made visible by its death), so the entries read below are complete.
      if (!s.owner.compare_exchange_strong(owner, me, std::memory_order_acquire, std::memory_order_relaxed)) continue;
      if (owner != 0) empty_slot(a, s);                           // a dead process's blocks go back
      s.holder.store(holder_word(a), std::memory_order_relaxed);  // relaxed: diagnostics and close only
      return &s;
    }
  }
  return nullptr;
}

// The calling thread's slot for this mapping (claimed on first use), or
// nullptr: no caches on this heap, or none to be had.
CacheSlot* my_slot(const Arena& a) noexcept {
  if (a.cache_slots == 0 || t_slots.exiting) return nullptr;
  const std::uint64_t me = cached_packed_self();
  Held* free_entry = nullptr;
  for (Held& h : t_slots.held) {
    if (h.control == a.control) {
      if (h.mapping_id == a.mapping_id && h.self == me) return h.slot;
      h = Held{};  // a mapping since closed, or a slot of the parent before fork
    }
    if (h.slot == nullptr && free_entry == nullptr) free_entry = &h;
  }
  if (free_entry == nullptr) return nullptr;
  CacheSlot* s = claim(a);
  if (s != nullptr) *free_entry = Held{a.control, a.mapping_id, me, s};
  return s;
}

Held* held_for(const Arena& a) noexcept {
  for (Held& h : t_slots.held)
    if (h.slot != nullptr && h.control == a.control && h.mapping_id == a.mapping_id && h.self == cached_packed_self())
      return &h;
  return nullptr;
}

// Takes a block of at least `need` bytes (header included) from the slot.
void* pop(const Arena& a, CacheSlot& s, std::uint64_t need) noexcept {
  const unsigned k0 = class_of(need);
  if (k0 >= kCacheClasses) return nullptr;
  Blocks b(a);
  // The request's own class holds blocks from its lower bound up: the top one
  // may be too small. Every block one class up is large enough.
  for (unsigned k = k0; k < std::min(k0 + 2, kCacheClasses); ++k) {
    const unsigned n = s.counts[k];
    if (n == 0 || n > kCacheDepth) continue;
    const std::uint64_t o = s.entries[k][n - 1];
    const std::uint64_t size = allocated_size(b, o);
    if (size == 0 || class_of(size) != k || mark_at(a, o).load(std::memory_order_relaxed) != mark_of(a, o)) {
      // Not what this slot listed (the segment was written by someone
      // else): drop the entry, leave the block alone.
      s.counts[k] = static_cast<std::uint8_t>(n - 1);
      s.entries[k][n - 1] = kNil;
      continue;
    }
    if (size < need) continue;
    // Count, entry, mark: a death between them leaves either a listed block
    // (the entry at index count, still marked) or one lost block.
    s.counts[k] = static_cast<std::uint8_t>(n - 1);
    keep_order();
    s.entries[k][n - 1] = kNil;
    keep_order();
    mark_at(a, o).store(0, std::memory_order_relaxed);
    add_counts(s, 0 - size, 0 - std::uint64_t{1});
    return a.base + o + kHeaderSize;
  }
  return nullptr;
}

enum class Push { listed, not_cached, double_free };

// Lists the block at arena offset o in the slot, if it fits.
Push push(const Arena& a, CacheSlot& s, std::uint64_t o) noexcept {
  Blocks b(a);
  const std::uint64_t size = allocated_size(b, o);
  if (size == 0) return Push::not_cached;  // the lists' own checks say what is wrong
  if (mark_at(a, o).load(std::memory_order_relaxed) == mark_of(a, o)) return Push::double_free;
  const unsigned k = class_of(size);
  if (k >= kCacheClasses) return Push::not_cached;
  const unsigned n = s.counts[k];
  if (n >= kCacheDepth || s.bytes.load(std::memory_order_relaxed) + size > limit_of(a)) return Push::not_cached;
  // Mark, entry, count: a death between them leaves the entry at index
  // count, marked, which whoever empties the slot frees.
  mark_at(a, o).store(mark_of(a, o), std::memory_order_relaxed);
  keep_order();
  s.entries[k][n] = o;
  keep_order();
  s.counts[k] = static_cast<std::uint8_t>(n + 1);
  add_counts(s, size, 1);
  return Push::listed;
}

}  // namespace

Allocation cached_allocate(const Arena& a, std::size_t size, std::size_t align) noexcept {
  if (a.cache_slots != 0 && align <= kAlign && size < (8u << 10)) {
    if (CacheSlot* s = my_slot(a)) {
      std::uint64_t need = round_up(static_cast<std::uint64_t>(size) + kHeaderSize, kAlign);
      if (need < kMinBlock) need = kMinBlock;
      if (void* p = pop(a, *s, need)) return {p, HeapStatus::ok};
    }
  }
  Allocation r = tlsf_allocate(a, size, align);
  if (r.status == HeapStatus::out_of_memory && a.cache_slots != 0) {
    // What caches hold is free memory too: ours, and that of the dead.
    cache_flush_mine(a);
    cache_reclaim_dead(a);
    r = tlsf_allocate(a, size, align);
  }
  return r;
}

HeapStatus cached_deallocate(const Arena& a, void* p) noexcept {
  if (p == nullptr) return HeapStatus::ok;
  if (a.cache_slots != 0) {
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    const auto base = reinterpret_cast<std::uintptr_t>(a.base);
    if (addr >= base + kHeaderSize && addr < base + a.size - kHeaderSize && (addr - base) % kAlign == 0) {
      if (CacheSlot* s = my_slot(a)) {
        switch (push(a, *s, addr - base - kHeaderSize)) {
          case Push::listed: return HeapStatus::ok;
          case Push::double_free: return HeapStatus::double_free;
          case Push::not_cached: break;
        }
      }
    }
  }
  return tlsf_deallocate(a, p);
}

void cache_flush_mine(const Arena& a) noexcept {
  if (a.cache_slots == 0) return;
  if (Held* h = held_for(a)) empty_slot(a, *h->slot);
}

void cache_reclaim_dead(const Arena& a) noexcept {
  const std::uint64_t me = cached_packed_self();
  CacheSlot* slots = slots_of(a);
  for (std::uint32_t i = 0; i < a.cache_slots; ++i) {
    CacheSlot& s = slots[i];
    std::uint64_t owner = s.owner.load(std::memory_order_relaxed);  // relaxed: the CAS below decides
    if (owner == 0 || owner == me || is_alive_packed(owner)) continue;
    // acquire: as in claim; the slot is ours to empty.
    if (!s.owner.compare_exchange_strong(owner, me, std::memory_order_acquire, std::memory_order_relaxed)) continue;
    empty_slot(a, s);
    release_slot(s);
  }
}

void cache_release_mapping(const Arena& a) noexcept {
  if (a.cache_slots == 0) return;
  const std::uint64_t me = cached_packed_self();
  CacheSlot* slots = slots_of(a);
  for (std::uint32_t i = 0; i < a.cache_slots; ++i) {
    CacheSlot& s = slots[i];
    // relaxed: this process's own slots; their threads no longer use this mapping.
    if (s.owner.load(std::memory_order_relaxed) != me ||
        (s.holder.load(std::memory_order_relaxed) >> 32) != (a.mapping_id & 0xffffffffu))
      continue;
    empty_slot(a, s);
    release_slot(s);
  }
  for (Held& h : t_slots.held)
    if (h.control == a.control && h.mapping_id == a.mapping_id) h = Held{};
}

CacheTotals cache_totals(const Arena& a) noexcept {
  CacheTotals t;
  CacheSlot* slots = slots_of(a);
  for (std::uint32_t i = 0; i < a.cache_slots; ++i) {
    // relaxed: statistics of slots other threads are changing.
    if (slots[i].owner.load(std::memory_order_relaxed) == 0) continue;
    t.bytes += slots[i].bytes.load(std::memory_order_relaxed);
    t.blocks += slots[i].blocks.load(std::memory_order_relaxed);
  }
  return t;
}

void cache_init(HeapControl* c, std::byte* table, std::uint64_t table_offset, std::uint64_t arena) noexcept {
  const std::uint64_t bytes = cache_table_bytes(arena);
  if (bytes == 0) return;
  auto* slots = reinterpret_cast<CacheSlot*>(table);
  for (std::uint32_t i = 0; i < kCacheMaxSlots; ++i) {
    CacheSlot* s = ::new (static_cast<void*>(slots + i)) CacheSlot{};
    for (auto& row : s->entries)
      for (auto& e : row) e = kNil;
  }
  c->cache_offset = table_offset;
  c->cache_slots = kCacheMaxSlots;
  c->cache_limit = std::min(kCacheMaxLimit, arena / 64);
  c->cache_magic = kCacheMagic;  // published with the rest by the segment's init_state release
}

}  // namespace zipc::detail
