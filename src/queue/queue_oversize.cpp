// The oversize region of a zipc::Queue: messages larger than a block live in
// a TLSF heap (src/heap/heap_tlsf.cpp) after the cells; the cell carries their
// offset and length (layout/queue_oversize.hpp, docs/guide/typed.md).
//
// Crash safety rests on one rule: at every instant each allocation is
// referenced from one of (a) the allocating producer's record, (b) its cell
// (reserved, committed, held by a consumer or orphaned), (c) the releasing
// consumer's (or aborting producer's) record. Moves write the new place
// before clearing the old one. A sweep, under the allocator's lock (nothing is
// allocated or freed meanwhile), reads every live record, then every cell,
// then every live record again, and frees each allocated block none of them
// names: what dead processes held.
#include <algorithm>
#include <cstring>
#include <vector>

#include "platform/address_space.hpp"
#include "platform/clock.hpp"
#include "queue/queue_impl.hpp"
#include "queue/queue_wait.hpp"
#include "queue/vyukov_ring.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

namespace L = layout;
using L::CellHeader;

namespace {

// A big cell names a live payload: flagged big (not handed back) and tagged
// with the position of the cell's current state.
bool names_payload(std::uint32_t size_word, std::uint64_t pos) noexcept {
  return (size_word & L::kSizeBig) != 0 && (size_word & L::kSizeMoved) == 0 &&
         (size_word & L::kSizeTagMask) == (pos & L::kSizeTagMask);
}

struct SweepState {
  QueueImpl* q;
  std::vector<std::uint64_t> refs;
  std::vector<std::uint64_t> pid;   // liveness cache per record: the pid judged ...
  std::vector<std::uint8_t> alive;  // ... and the verdict

  bool live(std::uint32_t i, std::uint64_t p) {
    if (p == 0 || p == ~std::uint64_t{0}) return false;  // free, or being freed by a recoverer
    if (pid[i] != p) {
      pid[i] = p;
      alive[i] = is_alive_packed(p) ? 1 : 0;
    }
    return alive[i] != 0;
  }

  // References held by live records; false when a live one is inside the
  // allocator (its new block is not yet named anywhere).
  bool records() {
    for (std::uint32_t i = 0; i < q->max_participants; ++i) {
      const L::ParticipantRecord& r = q->recs[i];
      // seq_cst: pairs with the seq_cst store of kBigAllocating before a
      // producer takes the allocator's lock (which we hold): either we see
      // it, or its allocation waits for our unlock. Also acquire for a
      // reference moved out of a cell (its size-word store came before).
      const std::uint64_t b = r.big.load(std::memory_order_seq_cst);
      if (b == L::kBigNone) continue;
      // acquire: pairs with the release store of pid when a record is taken.
      if (!live(i, r.pid.load(std::memory_order_acquire))) continue;
      if (b == L::kBigAllocating) return false;
      refs.push_back(b - 1);
    }
    return true;
  }

  void cells() {
    for (std::uint64_t i = 0; i < q->cap; ++i) {
      auto* c = reinterpret_cast<CellHeader*>(q->cells + i * q->stride);
      // acquire: the state we classify, and what its writer stored before it.
      const std::uint64_t s = c->seq.load(std::memory_order_acquire);
      if (s & L::kSeqAbandoned) continue;  // given up: its payload (if any) is garbage
      const std::uint64_t base = s & ~L::kSeqFlags;
      std::uint64_t p = 0;
      if ((s & L::kSeqOrphan) != 0 || ((base - 1) & q->mask) == i)
        p = base - 1;  // committed (maybe held by a consumer, or orphaned)
      else if ((base & q->mask) == i)
        p = base;  // free for lap `base`, or reserved by a producer
      else
        continue;  // scribbled: names nothing
      // acquire: pairs with big_attach's release store (offset written before).
      const std::uint32_t w = c->size.load(std::memory_order_acquire);
      if (!names_payload(w, p)) continue;
      refs.push_back(c->big_offset.load(std::memory_order_relaxed));  // relaxed: ordered by the size load
    }
  }
};

bool sweep_collect(void* ctx) noexcept {
  auto& st = *static_cast<SweepState*>(ctx);
  try {
    st.refs.clear();
    if (!st.records()) return false;
    st.cells();
    if (!st.records()) return false;  // a reference moved from a cell to a record meanwhile
    std::sort(st.refs.begin(), st.refs.end());
    return true;
  } catch (...) {
    return false;  // no memory for the list: try again later
  }
}

bool sweep_keep(void* ctx, std::uint64_t off) noexcept {
  const auto& refs = static_cast<SweepState*>(ctx)->refs;
  return std::binary_search(refs.begin(), refs.end(), off);
}

}  // namespace

QueueImpl::View QueueImpl::view(std::uint64_t pos, const std::byte** data, std::size_t* len,
                                std::uint64_t* off) const noexcept {
  const CellHeader* c = cell(pos);
  // relaxed: ordered after the acquire that took the position.
  const std::uint32_t w = c->size.load(std::memory_order_relaxed);
  if (ov == nullptr || (w & (L::kSizeBig | L::kSizeMoved)) == 0) {
    *len = w;
    *data = cell_data(pos);
    return w <= block ? View::small : View::corrupt;
  }
  if (w & L::kSizeMoved) return View::moved;  // handed back by a consumer that died after its release
  // A scribbled big cell: the caller drops it; the payload it named (if any)
  // is named by nothing any more, so the next recover() sweeps it.
  // release: pairs with sweep()'s acquire.
  const auto scribbled = [&]() noexcept {
    ov->sweep_needed.fetch_add(1, std::memory_order_release);
    return View::corrupt;
  };
  if ((w & L::kSizeTagMask) != (pos & L::kSizeTagMask)) return scribbled();
  // relaxed: ordered by the acquire of seq that took the position.
  const std::uint64_t o = c->big_offset.load(std::memory_order_relaxed);
  const std::uint64_t n = c->big_length.load(std::memory_order_relaxed);
  // Inside the arena, before the sentinel, where a block's payload can start:
  // a scribbled offset or length is an error, never a read out of bounds.
  const std::uint64_t end = ov_arena.size - L::kHeaderSize;
  if (o < L::kHeaderSize || o % L::kAlign != 0 || o >= end || n > end - o) return scribbled();
  *data = ov_arena.base + o;
  *len = n;
  *off = o;
  return View::big;
}

Status QueueImpl::big_allocate(std::size_t n, std::chrono::nanoseconds timeout, std::optional<Deadline>* dl,
                               std::uint64_t* off) noexcept {
  if ((static_cast<unsigned>(role) & static_cast<unsigned>(Role::producer)) == 0) return Status::wrong_role;
  // Never fits (header, payload, the sentinel), or longer than a cell can say.
  if (ov == nullptr || n > 0xffffffffu || n + 2 * L::kHeaderSize > ov_arena.size) return Status::too_large;
  for (;;) {
    if (is_closed()) return Status::closed;
    // seq_cst: before the allocator's lock; pairs with a sweeper's read of
    // our record under that lock (sweep_collect): it sees us allocating and
    // gives up, or our allocation waits until it is done.
    me->big.store(L::kBigAllocating, std::memory_order_seq_cst);
    const Allocation a = tlsf_allocate(ov_arena, n, L::kAlign);
    if (a.status == HeapStatus::ok) {
      *off = static_cast<std::uint64_t>(static_cast<std::byte*>(a.ptr) - ov_arena.base);
      // release: a sweeper that reads the offset finds the block allocated.
      me->big.store(*off + 1, std::memory_order_release);
      return Status::ok;
    }
    me->big.store(L::kBigNone, std::memory_order_release);  // release: as above
    if (a.status != HeapStatus::out_of_memory) return Status::corrupt;
    // Full. Garbage of dead processes first; their death may not be noticed
    // yet: look (recover()) at most once per recovery time.
    // relaxed: a hint; sweep() reads it again.
    if (ov->sweep_needed.load(std::memory_order_relaxed) != 0 && sweep() > 0) continue;
    const std::uint64_t now = platform::monotonic_ns();
    if (now - ov_last_recover >= recovery_ns) {
      ov_last_recover = now;
      if (recover() > 0 || (ov->sweep_needed.load(std::memory_order_relaxed) != 0 && sweep() > 0)) continue;
    }
    if (timeout.count() <= 0) return Status::full;
    if (!dl->has_value()) *dl = Deadline::after(timeout);
    const Deadline d = **dl;
    if (d.expired()) return Status::timeout;
    // acquire: pairs with the release increment after a free.
    const std::uint64_t key = ov->frees.load(std::memory_order_acquire);
    const Deadline slice = Deadline::at_ns(std::min(d.ns(), platform::monotonic_ns() + recovery_ns));
    (void)ov->space.wait_until(
        [&]() noexcept { return ov->frees.load(std::memory_order_acquire) != key || is_closed(); }, slice, wait);
  }
}

void QueueImpl::big_unallocate(std::uint64_t off) noexcept {
  (void)tlsf_deallocate(ov_arena, ov_arena.base + off);
  me->big.store(L::kBigNone, std::memory_order_release);  // release: after the free
  ov->frees.fetch_add(1, std::memory_order_release);      // release: pairs with waiting producers' acquire
  ov->space.notify_all();
}

void QueueImpl::big_attach(std::uint64_t pos, std::uint64_t off, std::size_t len) noexcept {
  CellHeader* c = cell(pos);
  c->big_offset.store(off, std::memory_order_relaxed);  // relaxed: published by the size store below
  c->big_length.store(static_cast<std::uint32_t>(len), std::memory_order_relaxed);
  // release: the offset before the flag that makes the cell name it.
  c->size.store(L::kSizeBig | static_cast<std::uint32_t>(pos & L::kSizeTagMask), std::memory_order_release);
  // release: the cell names the block before our record stops naming it
  // (a sweeper reads records, then cells: it finds one of the two).
  me->big.store(L::kBigNone, std::memory_order_release);
}

void QueueImpl::big_commit(std::uint64_t pos, std::size_t len) noexcept {
  CellHeader* c = cell(pos);
  c->big_length.store(static_cast<std::uint32_t>(len), std::memory_order_relaxed);  // relaxed: the seq store publishes
  // Counted as commit() counts (docs/design/queue.md, "Counters"). relaxed: statistics.
  me->sent.store(++n_sent, std::memory_order_relaxed);
  me->sent_mark.store(pos + 1, std::memory_order_relaxed);
  n_sent_bytes += len;
  me->sent_bytes.store(n_sent_bytes, std::memory_order_relaxed);
  // release: publishes the payload, offset and length to the consumer that reads seq == pos + 1.
  c->seq.store(pos + 1, std::memory_order_release);
}

void QueueImpl::big_abort(std::uint64_t pos, std::uint64_t off) noexcept {
  // seq_cst (both): our record names the block before the cell stops naming
  // it; a sweeper that reads the cell's new size word then reads our record.
  me->big.store(off + 1, std::memory_order_seq_cst);
  cell(pos)->size.store(L::kSizeMoved, std::memory_order_seq_cst);
  VyukovRing::abort(*this, pos);
  VyukovRing::publish(*this, 0);
  big_unallocate(off);
}

void QueueImpl::big_release(std::uint64_t pos, std::uint64_t off) noexcept {
  // seq_cst: as in big_abort. A consumer that dies after the size store
  // leaves a cell that says "moved": its redelivery is skipped (it had
  // finished with the message), and the sweep frees the block.
  me->big.store(off + 1, std::memory_order_seq_cst);
  cell(pos)->size.store(L::kSizeMoved, std::memory_order_seq_cst);
  VyukovRing::release(*this, pos, true);
  VyukovRing::released(*this, 1);
  big_unallocate(off);
}

long QueueImpl::sweep() noexcept {
  if (ov == nullptr) return -1;
  // acquire: pairs with recover()'s increment (the deaths it saw are behind us).
  std::uint64_t need = ov->sweep_needed.load(std::memory_order_acquire);
  if (need == 0) return 0;
  SweepState st{this, {}, {}, {}};
  try {
    st.pid.assign(max_participants, 0);
    st.alive.assign(max_participants, 0);
  } catch (...) {
    return -1;
  }
  const long freed = tlsf_sweep(ov_arena, SweepHooks{&st, &sweep_collect, &sweep_keep});
  if (freed < 0) return -1;
  // relaxed: statistics.
  ov->sweeps.fetch_add(1, std::memory_order_relaxed);
  ov->reclaimed.fetch_add(static_cast<std::uint64_t>(freed), std::memory_order_relaxed);
  // acq_rel: done, unless someone saw a new death since we read the flag.
  ov->sweep_needed.compare_exchange_strong(need, 0, std::memory_order_acq_rel, std::memory_order_relaxed);
  if (freed > 0) {
    ov->frees.fetch_add(1, std::memory_order_release);  // release: pairs with waiting producers' acquire
    ov->space.notify_all();
  }
  return freed;
}

Status QueueImpl::send_big(std::span<const std::byte> msg, std::chrono::nanoseconds timeout) noexcept {
  std::optional<Deadline> d;
  std::uint64_t off = 0;
  Status st = big_allocate(msg.size(), timeout, &d, &off);
  if (st != Status::ok) return st;
  std::memcpy(big_data(off), msg.data(), msg.size());
  std::uint64_t pos = 0, n = 0;
  st = reserve_wait<VyukovRing>(1, &pos, &n, timeout, &d);
  if (st != Status::ok) {
    big_unallocate(off);
    return st;
  }
  big_attach(pos, off, msg.size());
  big_commit(pos, msg.size());
  VyukovRing::publish(*this, 1);
  return Status::ok;
}

bool QueueImpl::big_loan(std::uint64_t pos, QueueReadLoan& l, const std::byte** data, std::size_t* len,
                         std::uint64_t* big) noexcept {
  std::uint64_t off = 0;
  const View v = view(pos, data, len, &off);
  if (v == View::small || v == View::big) {
    *big = v == View::big ? off + 1 : 0;
    return true;
  }
  VyukovRing::release(*this, pos, false);
  VyukovRing::released(*this, 0);
  if (v == View::moved) return false;
  l = QueueReadLoan(Status::corrupt);
  *data = nullptr;
  return true;
}

void init_oversize(std::byte* region, std::uint64_t arena) noexcept {
  auto* ov = new (region) L::OversizeControl{};
  ov->magic = L::kOversizeMagic;
  ov->arena_size = arena;
  auto* heap = new (region + L::kOversizeHeapOffset) L::HeapControl{};
  heap->magic = L::kHeapMagic;
  heap->version = L::kHeapVersion;
  heap->arena_offset = L::kArenaOffset;
  heap->arena_size = arena;
  heap->directory_head = L::kNil;
  std::uint64_t salt = platform::random_u64();
  if (salt == 0) salt = platform::realtime_ns() * 0x9e3779b97f4a7c15ull + 1;
  tlsf_init(Arena{heap, region + L::kOversizeArenaOffset, arena}, salt);
  // relaxed: the segment's ready flag (release) publishes the whole payload.
  heap->state.store(L::kStateHealthy, std::memory_order_relaxed);
}

}  // namespace zipc::detail

namespace zipc {

// A loan sized per message: a block, or n bytes of the region (queue.hpp).
QueueWriteLoan Queue::reserve(std::size_t n, Timeout timeout) noexcept {
  using detail::QueueImpl;
  if (!impl_) [[unlikely]]
    return QueueWriteLoan(Status::detached);
  QueueImpl& q = *impl_;
  if (n <= q.block) return reserve(timeout);
  std::optional<Deadline> d;
  std::uint64_t off = 0, pos = 0, got = 0;
  QueueWriteLoan l;
  l.status_ = q.big_allocate(n, timeout, &d, &off);
  if (l.status_ != Status::ok) return l;
  l.status_ = q.reserve_wait<detail::VyukovRing>(1, &pos, &got, timeout, &d);
  if (l.status_ != Status::ok) {
    q.big_unallocate(off);
    return l;
  }
  q.big_attach(pos, off, n);
  l.impl_ = &q;
  ++q.refs;  // the loan keeps q (docs/guide/handles.md)
  l.data_ = q.big_data(off);
  l.capacity_ = n;
  l.pos_ = pos;
  l.big_ = off + 1;
  return l;
}

}  // namespace zipc
