#include "heap/heap_tlsf.hpp"

#include "core/round_up.hpp"
#include "heap/heap_lock.hpp"
#include "heap/tlsf_blocks.hpp"

#include <atomic>
#include <bit>
#include <cstring>
#include <vector>

namespace zipc::detail {

using namespace layout;

namespace {

using tlsf::Blocks;
using tlsf::kSlMask;

bool is_corrupt(const HeapControl* c) noexcept {
  // relaxed: read under alloc_lock, which orders it with the writer.
  return c->state.load(std::memory_order_relaxed) != kStateHealthy;
}

void mark_corrupt(HeapControl* c) noexcept {
  c->state.store(kStateCorrupt, std::memory_order_relaxed);  // relaxed: written under alloc_lock
}

// Walks the physical block chain and, when it is whole, rebuilds every
// derived field (prev flags, merges of adjacent free blocks, free lists,
// bitmaps, counters). The walk trusts only each block's size and free bit,
// which every protocol step writes with one 8-byte store.
bool repair(const Arena& a, HeapCheck* report) noexcept {
  HeapControl* c = a.control;
  Blocks b(a);
  // Pass 1: validate, without writing.
  std::uint64_t o = 0, blocks = 0, free_blocks = 0;
  while (o < b.end()) {
    const std::uint64_t w = b.word(o);
    if (!b.sane(o, w)) {
      if (report) report->problem = "block header at arena offset " + std::to_string(o) + " fails its check";
      return false;
    }
    ++blocks;
    if (w & kFlagFree) ++free_blocks;
    o += Blocks::size_of(w);
  }
  if (o != b.end()) {
    if (report) report->problem = "block chain overruns the sentinel";
    return false;
  }
  if (report) {
    report->blocks = blocks;
    report->free_blocks = free_blocks;
  }
  // Pass 2: rebuild.
  c->fl_bitmap = 0;
  for (auto& m : c->sl_bitmap) m = 0;
  for (auto& row : c->heads)
    for (auto& h : row) h = kNil;
  std::uint64_t free_bytes = 0, live = 0;
  std::uint64_t prev_o = kNil, prev_size = 0;
  bool prev_free = false;
  o = 0;
  while (o < b.end()) {
    const std::uint64_t w = b.word(o);
    const std::uint64_t s = Blocks::size_of(w);
    const bool is_free = (w & kFlagFree) != 0;
    if (is_free && prev_free) {
      // Two adjacent free blocks (a merge cut short): join them.
      const std::uint64_t joined = prev_size + s;
      b.set_word(prev_o, b.make(prev_o, joined, Blocks::flags_of(b.word(prev_o))));
      b.set_word(o, b.make(o, 0, kFlagPoison));
      prev_size = joined;
      o = prev_o + joined;
      continue;
    }
    if (prev_free) {
      (void)b.insert(prev_o, prev_size);  // the lists were just emptied
      free_bytes += prev_size;
    }
    b.hdr(o)->prev_size = prev_size;
    b.set_word(o, b.make(o, s, (is_free ? kFlagFree : 0) | (prev_free ? kFlagPrevFree : 0)));
    if (!is_free) ++live;
    prev_o = o;
    prev_size = s;
    prev_free = is_free;
    o += s;
  }
  if (prev_free) {
    (void)b.insert(prev_o, prev_size);  // as above
    free_bytes += prev_size;
  }
  b.hdr(b.end())->prev_size = prev_size;
  b.set_word(b.end(), b.make(b.end(), 0, prev_free ? kFlagPrevFree : 0));
  c->free_bytes = free_bytes;
  c->live_count = live;
  return true;
}

// Holds alloc_lock for a scope; recovers the heap when a holder died.
class Locked {
 public:
  explicit Locked(const Arena& a) noexcept : a_(a) {
    if (owner_lock(a.control->alloc_lock) == LockResult::owner_died) {
      // A process died inside allocate/deallocate: check and rebuild, or
      // declare the heap corrupt. Either way the lock is usable again.
      ++a.control->repairs;
      if (!is_corrupt(a.control) && !repair(a, nullptr)) mark_corrupt(a.control);
    }
  }
  ~Locked() { owner_unlock(a_.control->alloc_lock); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  const Arena& a_;
};

HeapStatus fail_corrupt(HeapControl* c) noexcept {
  mark_corrupt(c);
  return HeapStatus::corrupt;
}

}  // namespace

void tlsf_init(const Arena& a, std::uint64_t salt) noexcept {
  HeapControl* c = a.control;
  c->salt = salt;
  c->fl_bitmap = 0;
  for (auto& m : c->sl_bitmap) m = 0;
  for (auto& row : c->heads)
    for (auto& h : row) h = kNil;
  Blocks b(a);
  const std::uint64_t first = b.end();
  b.hdr(0)->prev_size = 0;
  b.set_word(0, b.make(0, first, kFlagFree));
  b.hdr(first)->prev_size = first;
  b.set_word(first, b.make(first, 0, kFlagPrevFree));
  (void)b.insert(0, first);  // empty lists
  c->free_bytes = first;
  c->live_count = 0;
  c->repairs = 0;
}

Allocation tlsf_allocate(const Arena& a, std::size_t size, std::size_t align) noexcept {
  if (align == 0) align = kAlign;
  if ((align & (align - 1)) != 0 || align > kMaxAlign) return {nullptr, HeapStatus::invalid_argument};
  if (size > a.size) return {nullptr, HeapStatus::out_of_memory};
  std::uint64_t need = round_up(static_cast<std::uint64_t>(size) + kHeaderSize, kAlign);
  if (need < kMinBlock) need = kMinBlock;
  // Room for a leading gap that is either 0 or a whole free block.
  const std::uint64_t search = align > kAlign ? need + align + kMinBlock : need;

  HeapControl* c = a.control;
  Locked lock(a);
  if (is_corrupt(c)) return {nullptr, HeapStatus::corrupt};
  Blocks b(a);
  unsigned fl, sl;
  Blocks::mapping_search(search, &fl, &sl);
  std::uint64_t o = b.find(fl, sl);
  if (o == kNil) return {nullptr, HeapStatus::out_of_memory};
  if (!b.in_arena(o)) return {nullptr, fail_corrupt(c)};
  std::uint64_t w = b.word(o);
  if (!b.sane(o, w) || !(w & kFlagFree) || Blocks::size_of(w) < search) return {nullptr, fail_corrupt(c)};
  std::uint64_t s = Blocks::size_of(w);
  // The next header is rewritten below (its prev_size, or its signed word):
  // check it first, as deallocation does, so a scribble is never re-signed.
  const std::uint64_t nw = b.word(o + s);
  if (!b.valid(o + s, nw) || !(nw & kFlagPrevFree) || (nw & kFlagPoison)) return {nullptr, fail_corrupt(c)};
  if (!b.remove(o, s)) return {nullptr, fail_corrupt(c)};
  bool prev_free = (w & kFlagPrevFree) != 0;

  if (align > kAlign) {
    const auto payload = reinterpret_cast<std::uintptr_t>(a.base) + o + kHeaderSize;
    std::uint64_t gap = round_up(payload, align) - payload;
    if (gap != 0 && gap < kMinBlock) gap += align;
    if (gap != 0) {
      // Split off the leading gap as a free block. Order keeps the chain
      // walkable: the new header first, then the shrink (one store).
      const std::uint64_t n = o + gap;
      b.hdr(n)->prev_size = gap;
      b.set_word(n, b.make(n, s - gap, kFlagFree | kFlagPrevFree));
      b.set_word(o, b.make(o, gap, kFlagFree | (prev_free ? kFlagPrevFree : 0)));
      if (!b.insert(o, gap)) return {nullptr, fail_corrupt(c)};
      o = n;
      s -= gap;
      prev_free = true;
    }
  }
  if (s - need >= kMinBlock) {
    // Split: the remainder's header first, then the shrink of o (one store
    // that also marks it used), so a walk always finds a whole chain. The
    // block after the remainder already says prev_free; only its size changes.
    const std::uint64_t r = o + need;
    b.hdr(r)->prev_size = need;
    b.set_word(r, b.make(r, s - need, kFlagFree));
    b.set_word(o, b.make(o, need, prev_free ? kFlagPrevFree : 0));
    b.hdr(r + (s - need))->prev_size = s - need;
    if (!b.insert(r, s - need)) return {nullptr, fail_corrupt(c)};
    s = need;
  } else {
    b.set_word(o, b.make(o, s, prev_free ? kFlagPrevFree : 0));
    b.set_prev(o + s, s, false);
  }
  c->free_bytes -= s;
  ++c->live_count;
  return {a.base + o + kHeaderSize, HeapStatus::ok};
}

namespace {
HeapStatus deallocate_locked(const Arena& a, std::uint64_t o) noexcept;
}  // namespace

HeapStatus tlsf_deallocate(const Arena& a, void* p) noexcept {
  if (p == nullptr) return HeapStatus::ok;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  const auto base = reinterpret_cast<std::uintptr_t>(a.base);
  if (addr < base + kHeaderSize || addr >= base + a.size - kHeaderSize || (addr - base) % kAlign != 0) {
    return HeapStatus::foreign_pointer;
  }
  Locked lock(a);
  return deallocate_locked(a, addr - base - kHeaderSize);
}

namespace {

// tlsf_deallocate's work on the block at arena offset o, alloc_lock held.
HeapStatus deallocate_locked(const Arena& a, std::uint64_t o) noexcept {
  HeapControl* c = a.control;
  if (is_corrupt(c)) return HeapStatus::corrupt;
  Blocks b(a);
  const std::uint64_t w = b.word(o);
  if (!b.valid(o, w)) return HeapStatus::corrupt_header;
  if (w & (kFlagPoison | kFlagFree)) return HeapStatus::double_free;
  if (!b.sane(o, w)) return HeapStatus::corrupt_header;
  std::uint64_t s = Blocks::size_of(w);
  std::uint64_t next = o + s;
  std::uint64_t nw = b.word(next);
  if (!b.valid(next, nw) || (nw & (kFlagPrevFree | kFlagPoison))) return fail_corrupt(c);
  bool prev_free = (w & kFlagPrevFree) != 0;
  c->free_bytes += s;
  --c->live_count;

  if (prev_free) {
    const std::uint64_t ps = b.hdr(o)->prev_size;
    if (ps < kMinBlock || ps > o) return fail_corrupt(c);
    const std::uint64_t po = o - ps;
    const std::uint64_t pw = b.word(po);
    if (!b.sane(po, pw) || !(pw & kFlagFree) || Blocks::size_of(pw) != ps || !b.remove(po, ps)) {
      return fail_corrupt(c);
    }
    // Grow the previous block over this one (one store), then poison the
    // swallowed header so a second free of p is recognised.
    b.set_word(po, b.make(po, ps + s, Blocks::flags_of(pw)));
    b.set_word(o, b.make(o, 0, kFlagPoison));
    o = po;
    s += ps;
    prev_free = (pw & kFlagPrevFree) != 0;
  }
  if ((nw & kFlagFree) && next != b.end()) {
    if (!b.sane(next, nw)) return fail_corrupt(c);
    const std::uint64_t ns = Blocks::size_of(nw);
    if (!b.remove(next, ns)) return fail_corrupt(c);
    b.set_word(o, b.make(o, s + ns, kFlagFree | (prev_free ? kFlagPrevFree : 0)));
    b.set_word(next, b.make(next, 0, kFlagPoison));
    s += ns;
    next = o + s;
    nw = b.word(next);
    if (!b.valid(next, nw)) return fail_corrupt(c);
  }
  b.set_word(o, b.make(o, s, kFlagFree | (prev_free ? kFlagPrevFree : 0)));
  b.set_prev(next, s, true);
  if (!b.insert(o, s)) return fail_corrupt(c);
  return HeapStatus::ok;
}

}  // namespace

long tlsf_sweep(const Arena& a, const SweepHooks& h) noexcept {
  HeapControl* c = a.control;
  Locked lock(a);  // nothing is allocated or freed while we decide
  if (is_corrupt(c)) return -1;
  if (!h.collect(h.ctx)) return -1;
  Blocks b(a);
  std::vector<std::uint64_t> garbage;
  try {
    for (std::uint64_t o = 0; o < b.end();) {
      const std::uint64_t w = b.word(o);
      if (!b.sane(o, w)) {
        (void)fail_corrupt(c);
        return -1;
      }
      if (!(w & kFlagFree) && !h.keep(h.ctx, o + kHeaderSize)) garbage.push_back(o);
      o += Blocks::size_of(w);
    }
  } catch (...) {
    return -1;  // no memory for the list: try again later
  }
  long freed = 0;
  for (const std::uint64_t o : garbage) {
    if (deallocate_locked(a, o) != HeapStatus::ok) return -1;
    ++freed;
  }
  return freed;
}

std::size_t tlsf_deallocate_offsets(const Arena& a, const std::uint64_t* offsets, std::size_t n) noexcept {
  if (n == 0) return 0;
  Locked lock(a);
  std::size_t freed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t o = offsets[i];
    if (o % kAlign != 0 || o >= a.size - kHeaderSize) continue;
    if (deallocate_locked(a, o) == HeapStatus::ok) ++freed;
  }
  return freed;
}

HeapStats tlsf_stats(const Arena& a) noexcept {
  HeapStats st;
  st.size = a.size;
  HeapControl* c = a.control;
  Locked lock(a);
  st.corrupt = is_corrupt(c);
  st.repairs = c->repairs;
  if (st.corrupt) return st;
  st.free_bytes = c->free_bytes;
  st.allocated_blocks = c->live_count;
  // The largest block sits in the highest non-empty list; scan that list.
  if (c->fl_bitmap != 0) {
    const unsigned fl = 63u - static_cast<unsigned>(std::countl_zero(c->fl_bitmap));
    if (fl < kFlCount && (c->sl_bitmap[fl] & kSlMask) != 0) {
      const unsigned sl = 31u - static_cast<unsigned>(std::countl_zero(c->sl_bitmap[fl] & kSlMask));
      Blocks b(a);
      std::uint64_t best = 0;
      std::uint64_t o = c->heads[fl][sl];
      for (std::uint64_t steps = 0; o != kNil && b.in_arena(o) && steps < a.size / kMinBlock; ++steps) {
        const std::uint64_t w = b.word(o);
        if (!b.sane(o, w)) break;
        if (Blocks::size_of(w) > best) best = Blocks::size_of(w);
        o = b.links(o)->next;
      }
      st.largest_free_block = best > kHeaderSize ? best - kHeaderSize : 0;
    }
  }
  return st;
}

HeapCheck tlsf_check(const Arena& a) noexcept {
  HeapCheck out;
  HeapControl* c = a.control;
  Locked lock(a);
  if (is_corrupt(c)) {
    out.problem = "heap is marked corrupt";
    return out;
  }
  Blocks b(a);
  std::uint64_t o = 0, prev_size = 0, free_sum = 0, live = 0;
  bool prev_free = false;
  while (o < b.end()) {
    const std::uint64_t w = b.word(o);
    if (!b.sane(o, w)) {
      out.problem = "block header at arena offset " + std::to_string(o) + " fails its check";
      return out;
    }
    const bool is_free = (w & kFlagFree) != 0;
    if (((w & kFlagPrevFree) != 0) != prev_free || (prev_free && b.hdr(o)->prev_size != prev_size)) {
      out.problem = "prev_free / prev_size wrong at arena offset " + std::to_string(o);
      return out;
    }
    if (is_free && prev_free) {
      out.problem = "two adjacent free blocks at arena offset " + std::to_string(o);
      return out;
    }
    ++out.blocks;
    if (is_free) {
      ++out.free_blocks;
      free_sum += Blocks::size_of(w);
    } else {
      ++live;
    }
    prev_free = is_free;
    prev_size = Blocks::size_of(w);
    o += prev_size;
  }
  if (o != b.end()) {
    out.problem = "block chain overruns the sentinel";
    return out;
  }
  // Every free block is on exactly the list its size maps to.
  std::uint64_t listed = 0, listed_bytes = 0;
  for (unsigned fl = 0; fl < kFlCount; ++fl) {
    for (unsigned sl = 0; sl < kSlCount; ++sl) {
      const bool bit = (c->sl_bitmap[fl] >> sl) & 1u;
      std::uint64_t x = c->heads[fl][sl];
      if (bit != (x != kNil)) {
        out.problem = "bitmap disagrees with list " + std::to_string(fl) + "/" + std::to_string(sl);
        return out;
      }
      std::uint64_t prev = kNil;
      while (x != kNil) {
        if (!b.in_arena(x) || listed > out.free_blocks) {
          out.problem = "free list leaves the arena or loops";
          return out;
        }
        const std::uint64_t w = b.word(x);
        unsigned f2, s2;
        Blocks::mapping(Blocks::size_of(w), &f2, &s2);
        if (!b.sane(x, w) || !(w & kFlagFree) || f2 != fl || s2 != sl || b.links(x)->prev != prev) {
          out.problem = "free list entry at arena offset " + std::to_string(x) + " is wrong";
          return out;
        }
        ++listed;
        listed_bytes += Blocks::size_of(w);
        prev = x;
        x = b.links(x)->next;
      }
    }
  }
  if (listed != out.free_blocks || listed_bytes != free_sum || free_sum != c->free_bytes || live != c->live_count) {
    out.problem = "counters disagree with the blocks";
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace zipc::detail
