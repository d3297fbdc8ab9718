// Internal: the TLSF allocator's view of its arena's blocks (headers with
// salted checksums, free-list links, the two-level size classes); used by
// heap_tlsf.cpp only. The byte layout is layout/heap_layout.hpp's.
#pragma once

#include <atomic>
#include <cstdint>

#include "heap/heap_tlsf.hpp"
#include "layout/heap_layout.hpp"

namespace zipc::detail::tlsf {

using namespace layout;

inline constexpr std::uint32_t kSlMask = (std::uint32_t{1} << kSlCount) - 1;

class Blocks {
 public:
  explicit Blocks(const Arena& a) noexcept
      : c_(a.control), base_(a.base), end_(a.size - kHeaderSize), salt_(a.control->salt) {}

  BlockHeader* hdr(std::uint64_t o) const noexcept { return reinterpret_cast<BlockHeader*>(base_ + o); }
  FreeLinks* links(std::uint64_t o) const noexcept { return reinterpret_cast<FreeLinks*>(base_ + o + kHeaderSize); }
  std::uint64_t end() const noexcept { return end_; }  // offset of the sentinel

  // A header's word. Relaxed atomic accesses: a thread cache (heap_cache.cpp)
  // reads the header of a block it owns without the allocation lock while a
  // neighbour's free rewrites its prev_free flag under the lock; each write is
  // one whole-word store, and either value describes the same block.
  std::uint64_t word(std::uint64_t o) const noexcept {
    return std::atomic_ref<std::uint64_t>(hdr(o)->word).load(std::memory_order_relaxed);
  }
  void set_word(std::uint64_t o, std::uint64_t w) const noexcept {
    std::atomic_ref<std::uint64_t>(hdr(o)->word).store(w, std::memory_order_relaxed);
  }

  std::uint64_t make(std::uint64_t o, std::uint64_t size, std::uint64_t flags) const noexcept {
    const std::uint64_t v = size | flags;
    return v | (check_bits(o, v) << 48);
  }
  bool valid(std::uint64_t o, std::uint64_t word) const noexcept {
    return (word >> 48) == check_bits(o, word & ~(std::uint64_t{0xffff} << 48));
  }
  static std::uint64_t size_of(std::uint64_t word) noexcept { return word & kBlockSizeMask; }
  static std::uint64_t flags_of(std::uint64_t word) noexcept { return word & kFlagMask; }

  // A header at o that passes its check and describes a block inside the arena.
  bool sane(std::uint64_t o, std::uint64_t word) const noexcept {
    if (!valid(o, word) || (word & kFlagPoison) != 0) return false;
    const std::uint64_t s = size_of(word);
    return s >= kMinBlock && o < end_ && s <= end_ - o;
  }
  bool in_arena(std::uint64_t o) const noexcept { return o % kAlign == 0 && o < end_; }

  void set_prev(std::uint64_t o, std::uint64_t prev_size, bool prev_free) const noexcept {
    hdr(o)->prev_size = prev_size;
    const std::uint64_t w = word(o);
    const std::uint64_t flags = (flags_of(w) & ~kFlagPrevFree) | (prev_free ? kFlagPrevFree : 0);
    set_word(o, make(o, size_of(w), flags));
  }

  // ---- TLSF index ----
  static void mapping(std::uint64_t size, unsigned* fl, unsigned* sl) noexcept {
    if (size < (std::uint64_t{1} << kFlShift)) {
      *fl = 0;
      *sl = static_cast<unsigned>(size >> kAlignLog2);
    } else {
      const unsigned m = 63u - static_cast<unsigned>(std::countl_zero(size));
      *sl = static_cast<unsigned>((size >> (m - kSlLog2)) ^ kSlCount);
      *fl = m - kFlShift + 1;
    }
  }
  // The first list whose every block is >= size.
  static void mapping_search(std::uint64_t size, unsigned* fl, unsigned* sl) noexcept {
    if (size >= (std::uint64_t{1} << kFlShift)) {
      const unsigned m = 63u - static_cast<unsigned>(std::countl_zero(size));
      size += (std::uint64_t{1} << (m - kSlLog2)) - 1;
    }
    mapping(size, fl, sl);
  }

  // Links a free block at the head of its list; false (nothing written) when
  // the current head is not a believable offset.
  [[nodiscard]] bool insert(std::uint64_t o, std::uint64_t size) const noexcept {
    unsigned fl, sl;
    mapping(size, &fl, &sl);
    const std::uint64_t head = c_->heads[fl][sl];
    if (head != kNil && !in_arena(head)) return false;
    links(o)->next = head;
    links(o)->prev = kNil;
    if (head != kNil) links(head)->prev = o;
    c_->heads[fl][sl] = o;
    c_->fl_bitmap |= std::uint64_t{1} << fl;
    c_->sl_bitmap[fl] |= 1u << sl;
    return true;
  }

  // Unlinks a free block; false when its links are not believable.
  bool remove(std::uint64_t o, std::uint64_t size) const noexcept {
    unsigned fl, sl;
    mapping(size, &fl, &sl);
    if (fl >= kFlCount) return false;
    const std::uint64_t next = links(o)->next;
    const std::uint64_t prev = links(o)->prev;
    if ((next != kNil && !in_arena(next)) || (prev != kNil && !in_arena(prev))) return false;
    if (prev == kNil) {
      if (c_->heads[fl][sl] != o) return false;
      c_->heads[fl][sl] = next;
    } else {
      links(prev)->next = next;
    }
    if (next != kNil) links(next)->prev = prev;
    if (c_->heads[fl][sl] == kNil) {
      c_->sl_bitmap[fl] &= ~(1u << sl);
      if (c_->sl_bitmap[fl] == 0) c_->fl_bitmap &= ~(std::uint64_t{1} << fl);
    }
    return true;
  }

  // Head of the first non-empty list at or above (fl, sl), or kNil.
  std::uint64_t find(unsigned fl, unsigned sl) const noexcept {
    if (fl >= kFlCount) return kNil;
    // Masked: bits above kSlCount can only come from a scribbled bitmap.
    std::uint32_t sl_map = c_->sl_bitmap[fl] & (~0u << sl) & kSlMask;
    if (sl_map == 0) {
      const std::uint64_t fl_map = fl + 1 >= 64 ? 0 : (c_->fl_bitmap & (~std::uint64_t{0} << (fl + 1)));
      if (fl_map == 0) return kNil;
      fl = static_cast<unsigned>(std::countr_zero(fl_map));
      if (fl >= kFlCount) return kNil;
      sl_map = c_->sl_bitmap[fl] & kSlMask;
      if (sl_map == 0) return kNil;
    }
    sl = static_cast<unsigned>(std::countr_zero(sl_map));
    return c_->heads[fl][sl];
  }

 private:
  // Two multiplies: the top 16 bits depend on every bit of v, o and the salt.
  // Not cryptographic: it catches stray writes and stale headers, by chance
  // 1 in 65536 for random bytes.
  std::uint64_t check_bits(std::uint64_t o, std::uint64_t v) const noexcept {
    return (((v ^ salt_) * 0x9e3779b97f4a7c15ull + o) * 0xbf58476d1ce4e5b9ull) >> 48;
  }
  HeapControl* c_;
  std::byte* base_;
  std::uint64_t end_;
  std::uint64_t salt_;
};

}  // namespace zipc::detail::tlsf
