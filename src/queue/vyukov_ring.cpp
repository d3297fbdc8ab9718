// VyukovRing (vyukov_ring.hpp has its correctness argument): the ring used
// whenever either side may be many, per-cell sequence words, one CAS per side
// per call, participant claims for recovery.
#include "queue/vyukov_ring.hpp"

#include <algorithm>

namespace zipc::detail {

using layout::CellHeader;
using layout::kOrphanCount;
using layout::kSeqAbandoned;
using layout::kSeqFlags;
using layout::kSeqOrphan;

namespace {
inline std::int64_t diff(std::uint64_t a, std::uint64_t b) noexcept {
  return static_cast<std::int64_t>(a - b);
}
}  // namespace

// ---------------------------------------------------------------- producer

Status VyukovRing::try_reserve(QueueImpl& q, std::uint64_t max, std::uint64_t* first, std::uint64_t* count) noexcept {
  if (max == 0) max = 1;
  if (q.is_closed()) return Status::closed;
  for (std::uint32_t retry = 0; retry < QueueImpl::kMaxRetries; ++retry) {
    // relaxed: only a starting guess; the CAS below validates it.
    std::uint64_t pos = q.ctl->tail.load(std::memory_order_relaxed);
    // acquire: pairs with the consumer's release store of seq (pos): its reads
    // of the previous lap's payload are done before we overwrite it.
    const std::uint64_t s = q.cell(pos)->seq.load(std::memory_order_acquire);
    if (s & kSeqFlags) return Status::full;  // previous lap still abandoned/orphaned, not yet passed
    const std::int64_t d = diff(s, pos);
    if (d < 0) return Status::full;
    if (d > 0) continue;  // another producer took pos; reload tail
    std::uint64_t k = 1;
    // acquire: as for pos above (the previous lap's reads of each block are done).
    while (k < max && k < q.cap && q.cell(pos + k)->seq.load(std::memory_order_acquire) == pos + k) ++k;
    // Claim BEFORE the CAS so survivors can tell who holds these positions
    // while the owner words below are not yet written. relaxed: the CAS's
    // release publishes both stores to whoever observes the new tail.
    q.me->claim_count.store(static_cast<std::uint32_t>(k), std::memory_order_relaxed);
    q.me->claim.store(2 * pos + 0 + 1, std::memory_order_relaxed);
    // seq_cst: release publishes the claim; acquire orders our payload writes
    // after the take-over of the positions; and it is our half of the Dekker
    // pair with close() (the closed check below).
    if (q.ctl->tail.compare_exchange_weak(pos, pos + k, std::memory_order_seq_cst, std::memory_order_relaxed)) {
      for (std::uint64_t i = 0; i < k; ++i) {
        // relaxed: ordered before the claim clear below by its release.
        q.cell(pos + i)->owner.store(q.owner_word(pos + i, 0), std::memory_order_relaxed);
      }
      // release: the owner words are visible before the claim disappears
      // (recovery reads claim, then re-reads owner).
      q.me->claim.store(0, std::memory_order_release);
      // Closed while we took them (seq_cst pair with close() and the
      // consumers' drained check: either they see our tail or we see closed)?
      // Then nobody may be left to consume them: give them back as abandoned.
      if (q.ctl->closed.load(std::memory_order_seq_cst) != 0) {
        for (std::uint64_t i = 0; i < k; ++i) abort(q, pos + i);
        q.wake(q.ctl->not_empty, true);
        return Status::closed;
      }
      *first = pos;
      *count = k;
      return Status::ok;
    }
    // Lost the race: withdraw the claim at once. A stale claim would make
    // recovery believe we hold the winner's positions (and never abandon
    // them if the winner dies before its owner stores) for as long as we
    // stay away. relaxed: the claim was never published by a CAS.
    q.me->claim.store(0, std::memory_order_relaxed);
  }
  q.me->claim.store(0, std::memory_order_release);  // release: as above
  return Status::corrupt;
}

void VyukovRing::commit(QueueImpl& q, std::uint64_t pos, std::uint32_t len) noexcept {
  CellHeader* c = q.cell(pos);
  c->size.store(len, std::memory_order_relaxed);  // relaxed: published by the seq store below
  // Counted before the commit, with a mark saying which position: recovery
  // that abandons a dead producer's reservation at pos subtracts it again
  // when the mark shows the count ran ahead of a commit that never came
  // (docs/design/queue.md, "Counters"). relaxed: statistics; ordered by the seq store below.
  q.me->sent.store(++q.n_sent, std::memory_order_relaxed);
  q.me->sent_mark.store(pos + 1, std::memory_order_relaxed);
  q.n_sent_bytes += len;
  q.me->sent_bytes.store(q.n_sent_bytes, std::memory_order_relaxed);  // relaxed: statistics, single writer, own line
  // release: publishes the payload and size to the consumer that reads seq == pos + 1.
  c->seq.store(pos + 1, std::memory_order_release);
}

void VyukovRing::abort(QueueImpl& q, std::uint64_t pos) noexcept {
  CellHeader* c = q.cell(pos);
  // release: consumers pass the block without reading it (pairs with their acquire of seq).
  c->seq.store((pos + 1) | kSeqAbandoned, std::memory_order_release);
}

void VyukovRing::publish(QueueImpl& q, std::uint64_t committed) noexcept {
  // (counted in commit())
  q.wake(q.ctl->not_empty, committed > 1);
}

bool VyukovRing::can_produce(const QueueImpl& q) noexcept {
  if (q.is_closed()) return true;
  const std::uint64_t pos = q.ctl->tail.load(std::memory_order_relaxed);     // relaxed: a hint
  const std::uint64_t s = q.cell(pos)->seq.load(std::memory_order_relaxed);  // relaxed: a hint
  return (s & kSeqFlags) == 0 && diff(s, pos) >= 0;
}

// ---------------------------------------------------------------- consumer

Status VyukovRing::try_acquire(QueueImpl& q, std::uint64_t* out, std::size_t max, std::size_t* n,
                               std::size_t size_limit, std::size_t* first_size) noexcept {
  *n = 0;
  if (max == 0) max = 1;
  max = std::min<std::size_t>(max, q.cap);
  // MPMC. First give a redelivery a chance: cells of consumers that died holding them.
  // relaxed: a hint; the CAS on the cell's seq decides.
  // acquire: pairs with the recoverer's release increment (made after its
  // mark): a scan started after reading it sees the mark.
  if (const std::uint64_t hint = q.ctl->orphans.load(std::memory_order_acquire); (hint & kOrphanCount) != 0) {
    for (std::uint64_t i = 0; i < q.cap; ++i) {
      CellHeader* c = reinterpret_cast<CellHeader*>(q.cells + i * q.stride);
      std::uint64_t s = c->seq.load(std::memory_order_acquire);  // acquire: the payload of the orphan
      if ((s & kSeqFlags) != kSeqOrphan) continue;
      const std::uint64_t p = (s & ~kSeqFlags) - 1;
      if ((p & q.mask) != i) continue;  // scribbled
      const std::size_t sz = q.message_size(c);
      if (sz > size_limit && sz <= q.max_message()) {  // over the largest: scribbled (see try_acquire)
        *first_size = sz;
        return Status::too_large;
      }
      q.me->claim_count.store(1, std::memory_order_relaxed);  // relaxed: published by the CAS
      q.me->claim.store(2 * p + 1 + 1, std::memory_order_relaxed);
      // acq_rel: release publishes our claim; acquire the orphan's payload.
      if (c->seq.compare_exchange_strong(s, p + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        c->owner.store(q.owner_word(p, 1), std::memory_order_relaxed);  // relaxed: ordered by the release below
        q.me->claim.store(0, std::memory_order_release);                // release: owner before claim clear
        // Count it off, never below zero (a scanner may have cleared the
        // count meanwhile). relaxed: a hint; the seq CAS above decided.
        std::uint64_t h = q.ctl->orphans.load(std::memory_order_relaxed);
        while ((h & kOrphanCount) != 0 &&
               !q.ctl->orphans.compare_exchange_weak(h, h - 1, std::memory_order_relaxed, std::memory_order_relaxed)) {
        }
        q.ctl->redelivered.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
        out[0] = p;
        *n = 1;
        return Status::ok;
      }
      q.me->claim.store(0, std::memory_order_release);  // release: as above
    }
    // None found: clear the count unless a recoverer marked an orphan since
    // we read the hint (it bumps the epoch in the high half, so a count that
    // went down and up again meanwhile does not look unchanged).
    std::uint64_t expected = hint;
    // relaxed: a hint; recover() raises it again if an orphan is ever left uncounted.
    q.ctl->orphans.compare_exchange_strong(expected, hint & ~kOrphanCount, std::memory_order_relaxed);
  }

  for (std::uint32_t retry = 0; retry < QueueImpl::kMaxRetries; ++retry) {
    std::uint64_t pos = q.ctl->head.load(std::memory_order_relaxed);  // relaxed: a guess; the CAS validates
    // acquire: pairs with the producer's release store of seq (payload and size visible).
    const std::uint64_t s = q.cell(pos)->seq.load(std::memory_order_acquire);
    const bool ready = s == pos + 1 || s == ((pos + 1) | kSeqAbandoned);
    if (!ready) {
      if ((s & kSeqFlags) != 0 || diff(s, pos + 1) < 0) {
        // seq_cst (both loads): the pair with a producer's tail CAS and its
        // closed check after it (try_reserve): either we see its tail here, or
        // it sees closed and abandons what it took.
        if (q.ctl->closed.load(std::memory_order_seq_cst) == 0) return Status::empty;
        // Closed: done only when nothing is left in flight either.
        return q.ctl->tail.load(std::memory_order_seq_cst) <= pos ? Status::closed : Status::empty;
      }
      continue;  // another consumer took pos
    }
    if (!(s & kSeqAbandoned)) {
      const std::size_t sz = q.message_size(q.cell(pos));
      if (sz > size_limit && sz <= q.max_message()) {  // over the largest: scribbled (see try_acquire)
        *first_size = sz;
        return Status::too_large;
      }
    }
    std::uint64_t k = 1;
    while (k < max) {
      const std::uint64_t sk = q.cell(pos + k)->seq.load(std::memory_order_acquire);  // acquire: as above
      if (sk != pos + k + 1 && sk != ((pos + k + 1) | kSeqAbandoned)) break;
      ++k;
    }
    q.me->claim_count.store(static_cast<std::uint32_t>(k), std::memory_order_relaxed);  // relaxed: published by the CAS
    q.me->claim.store(2 * pos + 1 + 1, std::memory_order_relaxed);
    // acq_rel: release publishes the claim to recoverers that see the new head.
    if (!q.ctl->head.compare_exchange_weak(pos, pos + k, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      // Lost the race: withdraw the claim at once (see try_reserve).
      q.me->claim.store(0, std::memory_order_relaxed);  // relaxed: never published by a CAS
      continue;
    }
    std::size_t got = 0;
    for (std::uint64_t i = 0; i < k; ++i) {
      CellHeader* c = q.cell(pos + i);
      // acquire: re-read the seq we validated before the CAS (it cannot change
      // while we hold the position; this load orders the payload reads).
      const std::uint64_t si = c->seq.load(std::memory_order_acquire);
      if (si & kSeqAbandoned) {
        // release: hands the block to the next lap's producer.
        c->seq.store(pos + i + q.cap, std::memory_order_release);
        continue;
      }
      c->owner.store(q.owner_word(pos + i, 1), std::memory_order_relaxed);  // relaxed: ordered by the release below
      out[got++] = pos + i;
    }
    q.me->claim.store(0, std::memory_order_release);  // release: owner words before the claim clear
    if (got < k) q.wake(q.ctl->not_full, true);       // we passed abandoned blocks: room for producers
    if (got > 0) {
      *n = got;
      return Status::ok;
    }
  }
  return Status::corrupt;
}

std::size_t VyukovRing::acquired_size(const QueueImpl& q, std::uint64_t pos) noexcept {
  // relaxed: ordered after the acquire that took the position.
  return q.cell(pos)->size.load(std::memory_order_relaxed);
}

void VyukovRing::release(QueueImpl& q, std::uint64_t pos, bool counted) noexcept {
  CellHeader* c = q.cell(pos);
  if (counted) {
    // Counted before the release, with a mark saying which position: a
    // recoverer that redelivers pos held by us (dead) subtracts the count
    // again when the mark shows it (docs/design/queue.md, "Counters").
    // relaxed: statistics; ordered by the seq store below.
    q.me->received.store(++q.n_received, std::memory_order_relaxed);
    q.me->done.store(pos + 1, std::memory_order_relaxed);
  }
  // release: our payload reads are done before the next lap's producer writes.
  c->seq.store(pos + q.cap, std::memory_order_release);
}

void VyukovRing::released(QueueImpl& q, std::size_t count) noexcept {
  // (counted in release())
  q.wake(q.ctl->not_full, count > 1);
}

bool VyukovRing::can_consume(const QueueImpl& q) noexcept {
  // relaxed loads: hints for the wait loop; try_acquire decides.
  if ((q.ctl->orphans.load(std::memory_order_relaxed) & kOrphanCount) != 0) return true;
  const std::uint64_t pos = q.ctl->head.load(std::memory_order_relaxed);
  const std::uint64_t s = q.cell(pos)->seq.load(std::memory_order_relaxed);
  if (s == pos + 1 || s == ((pos + 1) | kSeqAbandoned)) return true;
  // Closed: wake when nothing is in flight any more (a producer between its
  // reservation and commit still gets to finish).
  return q.is_closed() && q.ctl->tail.load(std::memory_order_relaxed) <= pos;
}

}  // namespace zipc::detail
