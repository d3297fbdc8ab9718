// The two ring algorithms behind zipc::Queue (docs/queue.md explains both):
//  - many producers or consumers: a bounded Vyukov queue (per-cell sequence
//    words, one CAS per side per call) plus participant claims for recovery;
//  - single/single: a Lamport ring (no CAS), positions cached on each side.
#include <algorithm>

#include "platform/cpu.hpp"
#include "queue/queue_impl.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

using layout::CellHeader;
using layout::kOrphanCount;
using layout::kSeqAbandoned;
using layout::kSeqFlags;
using layout::kSeqOrphan;

namespace {
constexpr std::uint64_t kPrefetchCells = 3;  // how far ahead try_reserve fetches for writing

inline std::int64_t diff(std::uint64_t a, std::uint64_t b) noexcept {
  return static_cast<std::int64_t>(a - b);
}
}  // namespace

// ---------------------------------------------------------------- producer

Status QueueImpl::try_reserve(std::uint64_t max, std::uint64_t* first, std::uint64_t* count) noexcept {
  if (max == 0) max = 1;
  if (!mpmc) {
    std::uint64_t used = p_reserved - p_head_cache;
    if (used + max > cap) {
      // acquire: pairs with the consumer's release store of head; the blocks
      // below it are no longer read and may be overwritten.
      const std::uint64_t h = ctl->head.load(std::memory_order_acquire);
      if (h > p_reserved) return Status::corrupt;  // head ahead of us: scribbled
      if (h > p_head_cache) p_head_cache = h;      // may lag what we learnt from consumer_done()
      used = p_reserved - p_head_cache;
      if (used > cap) {
        // A producer that attached behind a predecessor which filled the
        // ring by the consumer's `done` (its head is published in batches)
        // sees the batched head more than a ring behind: `done` says where
        // the consumer really is. Only beyond that is the head scribbled.
        const std::uint64_t done = consumer_done();
        if (done > p_head_cache && done <= p_reserved) p_head_cache = done;
        used = p_reserved - p_head_cache;
        if (used > cap) return Status::corrupt;  // too far behind: scribbled
      }
      if (used == cap) {
        // The consumer publishes head in batches; what it released since is
        // in its record (read only when the ring looks full).
        const std::uint64_t done = consumer_done();
        if (done > p_head_cache && done <= p_reserved) {
          p_head_cache = done;
          used = p_reserved - done;
        }
      }
    }
    const std::uint64_t k = std::min<std::uint64_t>(max, cap - used);
    if (k == 0) return is_closed() ? Status::closed : Status::full;
    // Announce the reservation BEFORE checking closed (a Dekker pair with
    // a consumer deciding "closed and drained", see spsc_frontier()): either
    // that consumer sees this claim and waits for the commit, or we see
    // closed and take nothing. relaxed: our own line; also read by a
    // producer taking over after we died (it counts [tail, claim) as abandoned).
    me->claim.store(p_reserved + k, std::memory_order_relaxed);
    store_load_barrier();
    if (is_closed()) {
      me->claim.store(p_reserved, std::memory_order_relaxed);  // relaxed: as above
      return Status::closed;
    }
    for (std::uint64_t i = 0; i < k; ++i) {
      // relaxed: the cell is ours until the tail store publishes it.
      cell(p_reserved + i)->size.store(0, std::memory_order_relaxed);
    }
    // While the ring is at most half full, fetch for writing the first lines
    // of the cell a few ahead: the consumer read it a lap ago, and taking it
    // back now overlaps that transfer with the work until we get there. (A
    // fuller ring means a consumer close to that cell: leave it alone.)
    if (2 * (used + k) <= cap) {
      const std::byte* ahead = reinterpret_cast<const std::byte*>(cell(p_reserved + k + kPrefetchCells));
      const std::uint64_t span = std::min<std::uint64_t>(stride, 256);
      for (std::uint64_t off = 0; off < span; off += 64) platform::prefetch_for_write(ahead + off);
    }
    *first = p_reserved;
    *count = k;
    p_reserved += k;
    return Status::ok;
  }
  if (is_closed()) return Status::closed;
  for (std::uint32_t retry = 0; retry < kMaxRetries; ++retry) {
    // relaxed: only a starting guess; the CAS below validates it.
    std::uint64_t pos = ctl->tail.load(std::memory_order_relaxed);
    // acquire: pairs with the consumer's release store of seq (pos): its reads
    // of the previous lap's payload are done before we overwrite it.
    const std::uint64_t s = cell(pos)->seq.load(std::memory_order_acquire);
    if (s & kSeqFlags) return Status::full;  // previous lap still abandoned/orphaned, not yet passed
    const std::int64_t d = diff(s, pos);
    if (d < 0) return Status::full;
    if (d > 0) continue;  // another producer took pos; reload tail
    std::uint64_t k = 1;
    // acquire: as for pos above (the previous lap's reads of each block are done).
    while (k < max && k < cap && cell(pos + k)->seq.load(std::memory_order_acquire) == pos + k) ++k;
    // Claim BEFORE the CAS so survivors can tell who holds these positions
    // while the owner words below are not yet written. relaxed: the CAS's
    // release publishes both stores to whoever observes the new tail.
    me->claim_count.store(static_cast<std::uint32_t>(k), std::memory_order_relaxed);
    me->claim.store(2 * pos + 0 + 1, std::memory_order_relaxed);
    // seq_cst: release publishes the claim; acquire orders our payload writes
    // after the take-over of the positions; and it is our half of the Dekker
    // pair with close() (the closed check below).
    if (ctl->tail.compare_exchange_weak(pos, pos + k, std::memory_order_seq_cst, std::memory_order_relaxed)) {
      for (std::uint64_t i = 0; i < k; ++i) {
        // relaxed: ordered before the claim clear below by its release.
        cell(pos + i)->owner.store(owner_word(pos + i, 0), std::memory_order_relaxed);
      }
      // release: the owner words are visible before the claim disappears
      // (recovery reads claim, then re-reads owner).
      me->claim.store(0, std::memory_order_release);
      // Closed while we took them (seq_cst pair with close() and the
      // consumers' drained check: either they see our tail or we see closed)?
      // Then nobody may be left to consume them: give them back as abandoned.
      if (ctl->closed.load(std::memory_order_seq_cst) != 0) {
        for (std::uint64_t i = 0; i < k; ++i) abort(pos + i);
        wake(ctl->not_empty, true);
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
    me->claim.store(0, std::memory_order_relaxed);
  }
  me->claim.store(0, std::memory_order_release);  // release: as above
  return Status::corrupt;
}

void QueueImpl::commit(std::uint64_t pos, std::uint32_t len) noexcept {
  CellHeader* c = cell(pos);
  if (!mpmc) {
    // relaxed: producer-private until the tail store (release) in publish().
    c->size.store(len | layout::kSizeDone, std::memory_order_relaxed);
    n_sent_bytes += len;  // stored with `sent` in publish()
    return;
  }
  c->size.store(len, std::memory_order_relaxed);  // relaxed: published by the seq store below
  // Counted before the commit, with a mark saying which position: recovery
  // that abandons a dead producer's reservation at pos subtracts it again
  // when the mark shows the count ran ahead of a commit that never came
  // (docs/queue.md, "Counters"). relaxed: statistics; ordered by the seq store below.
  me->sent.store(++n_sent, std::memory_order_relaxed);
  me->sent_mark.store(pos + 1, std::memory_order_relaxed);
  n_sent_bytes += len;
  me->sent_bytes.store(n_sent_bytes, std::memory_order_relaxed);  // relaxed: statistics, single writer, own line
  // release: publishes the payload and size to the consumer that reads seq == pos + 1.
  c->seq.store(pos + 1, std::memory_order_release);
}

void QueueImpl::abort(std::uint64_t pos) noexcept {
  CellHeader* c = cell(pos);
  if (!mpmc) {
    if (pos + 1 == p_reserved && pos == p_tail) {  // the newest reservation: just give it back
      --p_reserved;
      me->claim.store(p_reserved, std::memory_order_relaxed);  // relaxed: as in try_reserve
      return;
    }
    c->size.store(layout::kSizeSkip | layout::kSizeDone, std::memory_order_relaxed);  // relaxed: as in commit
    return;
  }
  // release: consumers pass the block without reading it (pairs with their acquire of seq).
  c->seq.store((pos + 1) | kSeqAbandoned, std::memory_order_release);
}

void QueueImpl::publish(std::uint64_t committed) noexcept {
  if (!mpmc) {
    // In order: a block is published only when every earlier one is.
    const std::uint64_t old = p_tail;
    while (p_tail < p_reserved && (cell(p_tail)->size.load(std::memory_order_relaxed) & layout::kSizeDone)) {
      // release: publishes the block's payload and size to the consumer,
      // which polls this word (same cache line as the size and the first
      // payload bytes: one line transfer per message, no shared tail read).
      cell(p_tail)->seq.store(p_tail + 1, std::memory_order_release);
      ++p_tail;
    }
    if (p_tail == old) return;
    // release: the tail is read only off the hot path (closed drain, size,
    // a successor's take-over); it stays in our cache.
    ctl->tail.store(p_tail, std::memory_order_release);
  }
  if (committed > 0 && !mpmc) {  // (the many ring counts in commit())
    n_sent += committed;
    me->sent.store(n_sent, std::memory_order_relaxed);              // relaxed: statistics, single writer
    me->sent_bytes.store(n_sent_bytes, std::memory_order_relaxed);  // relaxed: as sent (same line)
  }
  wake(ctl->not_empty, committed > 1 || !mpmc);
}

bool QueueImpl::can_produce() const noexcept {
  if (is_closed()) return true;
  if (!mpmc) {
    // relaxed: a hint; try_reserve re-reads with acquire.
    std::uint64_t h = ctl->head.load(std::memory_order_relaxed);
    if (p_reserved - h < cap) return true;
    const std::uint64_t done = const_cast<QueueImpl*>(this)->consumer_done();
    return done > h && done <= p_reserved && p_reserved - done < cap;
  }
  const std::uint64_t pos = ctl->tail.load(std::memory_order_relaxed);     // relaxed: a hint
  const std::uint64_t s = cell(pos)->seq.load(std::memory_order_relaxed);  // relaxed: a hint
  return (s & kSeqFlags) == 0 && diff(s, pos) >= 0;
}

// ---------------------------------------------------------------- consumer

Status QueueImpl::try_acquire(std::uint64_t* out, std::size_t max, std::size_t* n, std::size_t size_limit,
                              std::size_t* first_size) noexcept {
  *n = 0;
  if (max == 0) max = 1;
  max = std::min<std::size_t>(max, cap);
  if (!mpmc) {
    std::size_t got = 0, passed = 0;
    bool too_big = false;
    std::uint64_t pos = c_acquired;
    while (got < max && got + passed < cap) {
      // acquire: pairs with the producer's release store of seq in publish().
      if (cell(pos)->seq.load(std::memory_order_acquire) != pos + 1) break;
      const std::uint32_t sz = cell(pos)->size.load(std::memory_order_relaxed);  // relaxed: ordered by seq
      if (sz & (layout::kSizeSkip | layout::kSizeReleased)) {
        // An aborted loan, or a block a dead predecessor already consumed.
        if (got != 0) break;
        ++pos;
        ++passed;
        continue;
      }
      // A size over the block is scribbled, not a real message: take it, and
      // recv() drops it as corrupt (reporting too_large would strand it).
      if (got == 0 && (sz & layout::kSizeMask) > size_limit && (sz & layout::kSizeMask) <= block) {
        *first_size = sz & layout::kSizeMask;
        too_big = true;
        break;
      }
      out[got++] = pos++;
    }
    const std::uint64_t from = c_acquired;
    c_acquired = from + passed + got;
    // relaxed: read only by a consumer taking over after we died; our own line.
    if (c_acquired != from) me->claim.store(c_acquired, std::memory_order_relaxed);
    if (passed) {
      for (std::uint64_t p = from; p < from + passed; ++p) release(p, false);
      released(0);
    }
    *n = got;
    if (got > 0) return Status::ok;
    if (too_big) return Status::too_large;  // the message stays queued
    flush_head();                           // about to wait, or idle: give the producer all the room
    if (!is_closed()) return Status::empty;
    // Closed: done only when nothing is published or reserved beyond us.
    return spsc_frontier(true) <= c_acquired ? Status::closed : Status::empty;
  }

  // MPMC. First give a redelivery a chance: cells of consumers that died holding them.
  // relaxed: a hint; the CAS on the cell's seq decides.
  // acquire: pairs with the recoverer's release increment (made after its
  // mark): a scan started after reading it sees the mark.
  if (const std::uint64_t hint = ctl->orphans.load(std::memory_order_acquire); (hint & kOrphanCount) != 0) {
    for (std::uint64_t i = 0; i < cap; ++i) {
      CellHeader* c = reinterpret_cast<CellHeader*>(cells + i * stride);
      std::uint64_t s = c->seq.load(std::memory_order_acquire);  // acquire: the payload of the orphan
      if ((s & kSeqFlags) != kSeqOrphan) continue;
      const std::uint64_t p = (s & ~kSeqFlags) - 1;
      if ((p & mask) != i) continue;  // scribbled
      const std::size_t sz = message_size(c);
      if (sz > size_limit && sz <= max_message()) {  // over the largest: scribbled (see try_acquire)
        *first_size = sz;
        return Status::too_large;
      }
      me->claim_count.store(1, std::memory_order_relaxed);  // relaxed: published by the CAS
      me->claim.store(2 * p + 1 + 1, std::memory_order_relaxed);
      // acq_rel: release publishes our claim; acquire the orphan's payload.
      if (c->seq.compare_exchange_strong(s, p + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
        c->owner.store(owner_word(p, 1), std::memory_order_relaxed);  // relaxed: ordered by the release below
        me->claim.store(0, std::memory_order_release);                // release: owner before claim clear
        // Count it off, never below zero (a scanner may have cleared the
        // count meanwhile). relaxed: a hint; the seq CAS above decided.
        std::uint64_t h = ctl->orphans.load(std::memory_order_relaxed);
        while ((h & kOrphanCount) != 0 &&
               !ctl->orphans.compare_exchange_weak(h, h - 1, std::memory_order_relaxed, std::memory_order_relaxed)) {
        }
        ctl->redelivered.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
        out[0] = p;
        *n = 1;
        return Status::ok;
      }
      me->claim.store(0, std::memory_order_release);  // release: as above
    }
    // None found: clear the count unless a recoverer marked an orphan since
    // we read the hint (it bumps the epoch in the high half, so a count that
    // went down and up again meanwhile does not look unchanged).
    std::uint64_t expected = hint;
    // relaxed: a hint; recover() raises it again if an orphan is ever left uncounted.
    ctl->orphans.compare_exchange_strong(expected, hint & ~kOrphanCount, std::memory_order_relaxed);
  }

  for (std::uint32_t retry = 0; retry < kMaxRetries; ++retry) {
    std::uint64_t pos = ctl->head.load(std::memory_order_relaxed);  // relaxed: a guess; the CAS validates
    // acquire: pairs with the producer's release store of seq (payload and size visible).
    const std::uint64_t s = cell(pos)->seq.load(std::memory_order_acquire);
    const bool ready = s == pos + 1 || s == ((pos + 1) | kSeqAbandoned);
    if (!ready) {
      if ((s & kSeqFlags) != 0 || diff(s, pos + 1) < 0) {
        // seq_cst (both loads): the pair with a producer's tail CAS and its
        // closed check after it (try_reserve): either we see its tail here, or
        // it sees closed and abandons what it took.
        if (ctl->closed.load(std::memory_order_seq_cst) == 0) return Status::empty;
        // Closed: done only when nothing is left in flight either.
        return ctl->tail.load(std::memory_order_seq_cst) <= pos ? Status::closed : Status::empty;
      }
      continue;  // another consumer took pos
    }
    if (!(s & kSeqAbandoned)) {
      const std::size_t sz = message_size(cell(pos));
      if (sz > size_limit && sz <= max_message()) {  // over the largest: scribbled (see try_acquire)
        *first_size = sz;
        return Status::too_large;
      }
    }
    std::uint64_t k = 1;
    while (k < max) {
      const std::uint64_t sk = cell(pos + k)->seq.load(std::memory_order_acquire);  // acquire: as above
      if (sk != pos + k + 1 && sk != ((pos + k + 1) | kSeqAbandoned)) break;
      ++k;
    }
    me->claim_count.store(static_cast<std::uint32_t>(k), std::memory_order_relaxed);  // relaxed: published by the CAS
    me->claim.store(2 * pos + 1 + 1, std::memory_order_relaxed);
    // acq_rel: release publishes the claim to recoverers that see the new head.
    if (!ctl->head.compare_exchange_weak(pos, pos + k, std::memory_order_acq_rel, std::memory_order_relaxed)) {
      // Lost the race: withdraw the claim at once (see try_reserve).
      me->claim.store(0, std::memory_order_relaxed);  // relaxed: never published by a CAS
      continue;
    }
    std::size_t got = 0;
    for (std::uint64_t i = 0; i < k; ++i) {
      CellHeader* c = cell(pos + i);
      // acquire: re-read the seq we validated before the CAS (it cannot change
      // while we hold the position; this load orders the payload reads).
      const std::uint64_t si = c->seq.load(std::memory_order_acquire);
      if (si & kSeqAbandoned) {
        // release: hands the block to the next lap's producer.
        c->seq.store(pos + i + cap, std::memory_order_release);
        continue;
      }
      c->owner.store(owner_word(pos + i, 1), std::memory_order_relaxed);  // relaxed: ordered by the release below
      out[got++] = pos + i;
    }
    me->claim.store(0, std::memory_order_release);  // release: owner words before the claim clear
    if (got < k) wake(ctl->not_full, true);         // we passed abandoned blocks: room for producers
    if (got > 0) {
      *n = got;
      return Status::ok;
    }
  }
  return Status::corrupt;
}

std::size_t QueueImpl::acquired_size(std::uint64_t pos) const noexcept {
  // relaxed: ordered after the acquire that took the position.
  return cell(pos)->size.load(std::memory_order_relaxed) & (mpmc ? 0xffffffffu : layout::kSizeMask);
}

void QueueImpl::release(std::uint64_t pos, bool counted) noexcept {
  CellHeader* c = cell(pos);
  if (!mpmc) {
    if (pos != c_head) {
      // Out of order: remember it in the cell (ours until head passes it).
      const std::uint32_t sz = c->size.load(std::memory_order_relaxed);      // relaxed: our cell
      c->size.store(sz | layout::kSizeReleased, std::memory_order_relaxed);  // relaxed: our cell
      return;
    }
    ++c_head;
    // relaxed: these cells are ours (acquired, not yet released past head).
    while (c_head < c_acquired && (cell(c_head)->size.load(std::memory_order_relaxed) & layout::kSizeReleased))
      ++c_head;
    return;
  }
  if (counted) {
    // Counted before the release, with a mark saying which position: a
    // recoverer that redelivers pos held by us (dead) subtracts the count
    // again when the mark shows it (docs/queue.md, "Counters").
    // relaxed: statistics; ordered by the seq store below.
    me->received.store(++n_received, std::memory_order_relaxed);
    me->done.store(pos + 1, std::memory_order_relaxed);
  }
  // release: our payload reads are done before the next lap's producer writes.
  c->seq.store(pos + cap, std::memory_order_release);
}

std::uint64_t QueueImpl::consumer_done() noexcept {
  // acquire: pairs with the CAS that took the single-consumer role.
  const std::uint64_t sc = ctl->single_consumer.load(std::memory_order_acquire);
  if (sc == 0) return 0;
  if (sc != peer_pid || peer_consumer == nullptr) {
    peer_pid = sc;
    peer_consumer = nullptr;
    for (std::uint32_t i = 0; i < max_participants; ++i) {
      // relaxed: a search; the owner is re-checked below.
      if (recs[i].pid.load(std::memory_order_relaxed) == sc &&
          (recs[i].role.load(std::memory_order_relaxed) & static_cast<std::uint32_t>(Role::consumer)) != 0) {
        peer_consumer = &recs[i];
        break;
      }
    }
  }
  // relaxed: only checks that the record still belongs to that consumer.
  if (peer_consumer == nullptr || peer_consumer->pid.load(std::memory_order_relaxed) != sc) return 0;
  // acquire: pairs with the consumer's release store of done.
  return peer_consumer->done.load(std::memory_order_acquire);
}

std::uint64_t QueueImpl::spsc_frontier(bool exact) noexcept {
  // The rare side of the Dekker pair with try_reserve (claim store, then
  // closed check): after this barrier a producer that did not see closed has
  // its claim visible to us.
  if (exact) heavy_barrier();
  // acquire: the producer's last published tail; nothing in flight below it.
  std::uint64_t f = ctl->tail.load(std::memory_order_acquire);
  std::uint64_t r = 0;
  if (single_p) {
    r = p_reserved;  // we are the producer too
  } else {
    // acquire: pairs with the CAS that took the single-producer role.
    const std::uint64_t sp = ctl->single_producer.load(std::memory_order_acquire);
    if (sp == 0) return f;
    if (sp != peer_producer_pid || peer_producer == nullptr) {
      peer_producer_pid = sp;
      peer_producer = nullptr;
      for (std::uint32_t i = 0; i < max_participants; ++i) {
        // relaxed: a search; the owner is re-checked below.
        if (recs[i].pid.load(std::memory_order_relaxed) == sp &&
            (recs[i].role.load(std::memory_order_relaxed) & static_cast<std::uint32_t>(Role::producer)) != 0) {
          peer_producer = &recs[i];
          break;
        }
      }
    }
    // relaxed: only checks that the record still belongs to that producer.
    if (peer_producer == nullptr || peer_producer->pid.load(std::memory_order_relaxed) != sp) return f;
    // relaxed: ordered by the barrier above (exact), else a hint.
    r = peer_producer->claim.load(std::memory_order_relaxed);
    // A dead producer's reservation is never committed (its successor counts
    // it abandoned): do not wait for it.
    if (exact && r > f && !is_alive_packed(sp)) r = f;
  }
  if (r > f && r - f <= cap) f = r;  // a claim beyond the ring is scribbled: ignored
  return f;
}

void QueueImpl::flush_head() noexcept {
  if (mpmc || c_head == c_head_pub) return;
  c_head_pub = c_head;
  // release: our reads of the blocks below c_head are done; pairs with the
  // producer's acquire load of head.
  ctl->head.store(c_head, std::memory_order_release);
  wake(ctl->not_full, true);
}

void QueueImpl::released(std::size_t count) noexcept {
  if (count > 0 && !mpmc) {  // (the many ring counts in release())
    n_received += count;
    me->received.store(n_received, std::memory_order_relaxed);  // relaxed: statistics, single writer
  }
  if (!mpmc) {
    // release: our reads of the blocks below c_head are done; pairs with the
    // producer's acquire in consumer_done() (it reads this only when the ring
    // looks full) and with a consumer taking over after we died (it starts
    // after max(head, done): a batched head never re-delivers a message).
    me->done.store(c_head, std::memory_order_release);
    // The shared head is stored every head_batch releases (and whenever the
    // ring looks empty to us, or we wait, or detach): a producer streaming
    // into a full ring then re-reads it once per batch, not once per message.
    if (c_head - c_head_pub >= head_batch) flush_head();
    return;
  }
  wake(ctl->not_full, count > 1);
}

bool QueueImpl::can_consume() const noexcept {
  // relaxed loads: hints for the wait loop; try_acquire decides.
  if (!mpmc)
    return cell(c_acquired)->seq.load(std::memory_order_relaxed) == c_acquired + 1 ||
           (is_closed() && const_cast<QueueImpl*>(this)->spsc_frontier(false) <= c_acquired);
  if ((ctl->orphans.load(std::memory_order_relaxed) & kOrphanCount) != 0) return true;
  const std::uint64_t pos = ctl->head.load(std::memory_order_relaxed);
  const std::uint64_t s = cell(pos)->seq.load(std::memory_order_relaxed);
  if (s == pos + 1 || s == ((pos + 1) | kSeqAbandoned)) return true;
  // Closed: wake when nothing is in flight any more (a producer between its
  // reservation and commit still gets to finish).
  return is_closed() && ctl->tail.load(std::memory_order_relaxed) <= pos;
}

}  // namespace zipc::detail
