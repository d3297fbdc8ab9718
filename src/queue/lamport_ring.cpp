// LamportRing (lamport_ring.hpp has its correctness argument): the
// single-producer/single-consumer ring, no CAS, positions cached on each side.
#include "queue/lamport_ring.hpp"

#include <algorithm>

#include "platform/cpu.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

using layout::CellHeader;

namespace {
constexpr std::uint64_t kPrefetchCells = 3;  // how far ahead try_reserve fetches for writing
}  // namespace

// ---------------------------------------------------------------- producer

Status LamportRing::try_reserve(QueueImpl& q, std::uint64_t max, std::uint64_t* first, std::uint64_t* count) noexcept {
  if (max == 0) max = 1;
  std::uint64_t used = q.p_reserved - q.p_head_cache;
  if (used + max > q.cap) {
    // acquire: pairs with the consumer's release store of head; the blocks
    // below it are no longer read and may be overwritten.
    const std::uint64_t h = q.ctl->head.load(std::memory_order_acquire);
    if (h > q.p_reserved) return Status::corrupt;  // head ahead of us: scribbled
    if (h > q.p_head_cache) q.p_head_cache = h;    // may lag what we learnt from consumer_done()
    used = q.p_reserved - q.p_head_cache;
    if (used > q.cap) {
      // A producer that attached behind a predecessor which filled the
      // ring by the consumer's `done` (its head is published in batches)
      // sees the batched head more than a ring behind: `done` says where
      // the consumer really is. Only beyond that is the head scribbled.
      const std::uint64_t done = consumer_done(q);
      if (done > q.p_head_cache && done <= q.p_reserved) q.p_head_cache = done;
      used = q.p_reserved - q.p_head_cache;
      if (used > q.cap) return Status::corrupt;  // too far behind: scribbled
    }
    if (used == q.cap) {
      // The consumer publishes head in batches; what it released since is
      // in its record (read only when the ring looks full).
      const std::uint64_t done = consumer_done(q);
      if (done > q.p_head_cache && done <= q.p_reserved) {
        q.p_head_cache = done;
        used = q.p_reserved - done;
      }
    }
  }
  const std::uint64_t k = std::min<std::uint64_t>(max, q.cap - used);
  if (k == 0) return q.is_closed() ? Status::closed : Status::full;
  // Announce the reservation BEFORE checking closed (a Dekker pair with
  // a consumer deciding "closed and drained", see frontier()): either
  // that consumer sees this claim and waits for the commit, or we see
  // closed and take nothing. relaxed: our own line; also read by a
  // producer taking over after we died (it counts [tail, claim) as abandoned).
  q.me->claim.store(q.p_reserved + k, std::memory_order_relaxed);
  q.store_load_barrier();
  if (q.is_closed()) {
    q.me->claim.store(q.p_reserved, std::memory_order_relaxed);  // relaxed: as above
    return Status::closed;
  }
  // Nothing is written into the reserved cells here: the consumer may be
  // polling the first one's line (seq), and a store to it now would wait for
  // that line while the caller writes its payload behind it (a 64 B loan
  // ping-pong: ~330 ns a round trip instead of ~250 ns). commit() marks the
  // cell for publish() (its owner word) once the payload is written.
  // While the ring is at most half full, fetch for writing the first lines
  // of the cell a few ahead: the consumer read it a lap ago, and taking it
  // back now overlaps that transfer with the work until we get there. (A
  // fuller ring means a consumer close to that cell: leave it alone.)
  if (2 * (used + k) <= q.cap) {
    const std::byte* ahead = reinterpret_cast<const std::byte*>(q.cell(q.p_reserved + k + kPrefetchCells));
    const std::uint64_t span = std::min<std::uint64_t>(q.stride, 256);
    for (std::uint64_t off = 0; off < span; off += 64) platform::prefetch_for_write(ahead + off);
  }
  *first = q.p_reserved;
  *count = k;
  q.p_reserved += k;
  return Status::ok;
}

void LamportRing::commit(QueueImpl& q, std::uint64_t pos, std::uint32_t len) noexcept {
  CellHeader* c = q.cell(pos);
  // relaxed (both): producer-private until publish() stores seq (release).
  c->size.store(len, std::memory_order_relaxed);
  // The commit mark publish() looks for: position + 1 is unique to this lap
  // (the mark of the lap before is a ring smaller), so no reservation needs
  // to clear it first.
  c->owner.store(pos + 1, std::memory_order_relaxed);
  q.n_sent_bytes += len;  // stored with `sent` in publish()
}

void LamportRing::abort(QueueImpl& q, std::uint64_t pos) noexcept {
  CellHeader* c = q.cell(pos);
  if (pos + 1 == q.p_reserved && pos == q.p_tail) {  // the newest reservation: just give it back
    --q.p_reserved;
    q.me->claim.store(q.p_reserved, std::memory_order_relaxed);  // relaxed: as in try_reserve
    return;
  }
  c->size.store(layout::kSizeSkip, std::memory_order_relaxed);  // relaxed: as in commit
  c->owner.store(pos + 1, std::memory_order_relaxed);           // relaxed: as in commit; publish() passes it
}

void LamportRing::publish(QueueImpl& q, std::uint64_t committed) noexcept {
  // In order: a block is published only when every earlier one is.
  const std::uint64_t old = q.p_tail;
  // relaxed: our own commit marks (commit(), abort()).
  while (q.p_tail < q.p_reserved && q.cell(q.p_tail)->owner.load(std::memory_order_relaxed) == q.p_tail + 1) {
    // release: publishes the block's payload and size to the consumer,
    // which polls this word (same cache line as the size and the first
    // payload bytes: one line transfer per message, no shared tail read).
    q.cell(q.p_tail)->seq.store(q.p_tail + 1, std::memory_order_release);
    ++q.p_tail;
  }
  if (q.p_tail == old) return;
  // release: the tail is read only off the hot path (closed drain, size,
  // a successor's take-over); it stays in our cache.
  q.ctl->tail.store(q.p_tail, std::memory_order_release);
  if (committed > 0) {
    q.n_sent += committed;
    q.me->sent.store(q.n_sent, std::memory_order_relaxed);              // relaxed: statistics, single writer
    q.me->sent_bytes.store(q.n_sent_bytes, std::memory_order_relaxed);  // relaxed: as sent (same line)
  }
  q.wake(q.ctl->not_empty, true);
}

bool LamportRing::can_produce(const QueueImpl& q) noexcept {
  if (q.is_closed()) return true;
  // relaxed: a hint; try_reserve re-reads with acquire.
  std::uint64_t h = q.ctl->head.load(std::memory_order_relaxed);
  if (q.p_reserved - h < q.cap) return true;
  const std::uint64_t done = consumer_done(const_cast<QueueImpl&>(q));
  return done > h && done <= q.p_reserved && q.p_reserved - done < q.cap;
}

// ---------------------------------------------------------------- consumer

Status LamportRing::try_acquire(QueueImpl& q, std::uint64_t* out, std::size_t max, std::size_t* n,
                                std::size_t size_limit, std::size_t* first_size) noexcept {
  *n = 0;
  if (max == 0) max = 1;
  max = std::min<std::size_t>(max, q.cap);
  std::size_t got = 0, passed = 0;
  bool too_big = false;
  std::uint64_t pos = q.c_acquired;
  while (got < max && got + passed < q.cap) {
    // acquire: pairs with the producer's release store of seq in publish().
    if (q.cell(pos)->seq.load(std::memory_order_acquire) != pos + 1) break;
    const std::uint32_t sz = q.cell(pos)->size.load(std::memory_order_relaxed);  // relaxed: ordered by seq
    if (sz & (layout::kSizeSkip | layout::kSizeReleased)) {
      // An aborted loan, or a block a dead predecessor already consumed.
      if (got != 0) break;
      ++pos;
      ++passed;
      continue;
    }
    // A size over the block is scribbled, not a real message: take it, and
    // recv() drops it as corrupt (reporting too_large would strand it).
    if (got == 0 && (sz & layout::kSizeMask) > size_limit && (sz & layout::kSizeMask) <= q.block) {
      *first_size = sz & layout::kSizeMask;
      too_big = true;
      break;
    }
    out[got++] = pos++;
  }
  const std::uint64_t from = q.c_acquired;
  q.c_acquired = from + passed + got;
  // relaxed: read only by a consumer taking over after we died; our own line.
  if (q.c_acquired != from) q.me->claim.store(q.c_acquired, std::memory_order_relaxed);
  if (passed) {
    for (std::uint64_t p = from; p < from + passed; ++p) release(q, p, false);
    released(q, 0);
  }
  *n = got;
  if (got > 0) return Status::ok;
  if (too_big) return Status::too_large;  // the message stays queued
  flush_head(q);                          // about to wait, or idle: give the producer all the room
  if (!q.is_closed()) return Status::empty;
  // Closed: done only when nothing is published or reserved beyond us.
  return frontier(q, true) <= q.c_acquired ? Status::closed : Status::empty;
}

std::size_t LamportRing::acquired_size(const QueueImpl& q, std::uint64_t pos) noexcept {
  // relaxed: ordered after the acquire that took the position.
  return q.cell(pos)->size.load(std::memory_order_relaxed) & layout::kSizeMask;
}

void LamportRing::release(QueueImpl& q, std::uint64_t pos, bool /*counted*/) noexcept {
  CellHeader* c = q.cell(pos);
  if (pos != q.c_head) {
    // Out of order: remember it in the cell (ours until head passes it).
    const std::uint32_t sz = c->size.load(std::memory_order_relaxed);      // relaxed: our cell
    c->size.store(sz | layout::kSizeReleased, std::memory_order_relaxed);  // relaxed: our cell
    return;
  }
  ++q.c_head;
  // relaxed: these cells are ours (acquired, not yet released past head).
  while (q.c_head < q.c_acquired && (q.cell(q.c_head)->size.load(std::memory_order_relaxed) & layout::kSizeReleased))
    ++q.c_head;
}

std::uint64_t LamportRing::consumer_done(QueueImpl& q) noexcept {
  // acquire: pairs with the CAS that took the single-consumer role.
  const std::uint64_t sc = q.ctl->single_consumer.load(std::memory_order_acquire);
  if (sc == 0) return 0;
  if (sc != q.peer_pid || q.peer_consumer == nullptr) {
    q.peer_pid = sc;
    q.peer_consumer = nullptr;
    for (std::uint32_t i = 0; i < q.max_participants; ++i) {
      // relaxed: a search; the owner is re-checked below.
      if (q.recs[i].pid.load(std::memory_order_relaxed) == sc &&
          (q.recs[i].role.load(std::memory_order_relaxed) & static_cast<std::uint32_t>(Role::consumer)) != 0) {
        q.peer_consumer = &q.recs[i];
        break;
      }
    }
  }
  // relaxed: only checks that the record still belongs to that consumer.
  if (q.peer_consumer == nullptr || q.peer_consumer->pid.load(std::memory_order_relaxed) != sc) return 0;
  // acquire: pairs with the consumer's release store of done.
  return q.peer_consumer->done.load(std::memory_order_acquire);
}

std::uint64_t LamportRing::frontier(QueueImpl& q, bool exact) noexcept {
  // The rare side of the Dekker pair with try_reserve (claim store, then
  // closed check): after this barrier a producer that did not see closed has
  // its claim visible to us.
  if (exact) q.heavy_barrier();
  // acquire: the producer's last published tail; nothing in flight below it.
  std::uint64_t f = q.ctl->tail.load(std::memory_order_acquire);
  std::uint64_t r = 0;
  if (q.single_p) {
    r = q.p_reserved;  // we are the producer too
  } else {
    // acquire: pairs with the CAS that took the single-producer role.
    const std::uint64_t sp = q.ctl->single_producer.load(std::memory_order_acquire);
    if (sp == 0) return f;
    if (sp != q.peer_producer_pid || q.peer_producer == nullptr) {
      q.peer_producer_pid = sp;
      q.peer_producer = nullptr;
      for (std::uint32_t i = 0; i < q.max_participants; ++i) {
        // relaxed: a search; the owner is re-checked below.
        if (q.recs[i].pid.load(std::memory_order_relaxed) == sp &&
            (q.recs[i].role.load(std::memory_order_relaxed) & static_cast<std::uint32_t>(Role::producer)) != 0) {
          q.peer_producer = &q.recs[i];
          break;
        }
      }
    }
    // relaxed: only checks that the record still belongs to that producer.
    if (q.peer_producer == nullptr || q.peer_producer->pid.load(std::memory_order_relaxed) != sp) return f;
    // relaxed: ordered by the barrier above (exact), else a hint.
    r = q.peer_producer->claim.load(std::memory_order_relaxed);
    // A dead producer's reservation is never committed (its successor counts
    // it abandoned): do not wait for it.
    if (exact && r > f && !is_alive_packed(sp)) r = f;
  }
  if (r > f && r - f <= q.cap) f = r;  // a claim beyond the ring is scribbled: ignored
  return f;
}

void LamportRing::flush_head(QueueImpl& q) noexcept {
  if (q.c_head == q.c_head_pub) return;
  q.c_head_pub = q.c_head;
  // release: our reads of the blocks below c_head are done; pairs with the
  // producer's acquire load of head.
  q.ctl->head.store(q.c_head, std::memory_order_release);
  q.wake(q.ctl->not_full, true);
}

void LamportRing::abandon(QueueImpl& q, std::uint64_t from, std::uint64_t reserved) noexcept {
  if (reserved <= from || reserved - from > q.cap) return;
  q.ctl->abandoned.fetch_add(reserved - from, std::memory_order_relaxed);  // relaxed: a counter
  // relaxed: these cells are the producer side's until its next publish (release).
  for (std::uint64_t p = from; p < reserved; ++p) q.cell(p)->owner.store(0, std::memory_order_relaxed);
}

void LamportRing::released(QueueImpl& q, std::size_t count) noexcept {
  if (count > 0) {
    q.n_received += count;
    q.me->received.store(q.n_received, std::memory_order_relaxed);  // relaxed: statistics, single writer
  }
  // release: our reads of the blocks below c_head are done; pairs with the
  // producer's acquire in consumer_done() (it reads this only when the ring
  // looks full) and with a consumer taking over after we died (it starts
  // after max(head, done): a batched head never re-delivers a message).
  q.me->done.store(q.c_head, std::memory_order_release);
  // The shared head is stored every head_batch releases (and whenever the
  // ring looks empty to us, or we wait, or detach): a producer streaming
  // into a full ring then re-reads it once per batch, not once per message.
  if (q.c_head - q.c_head_pub >= q.head_batch) flush_head(q);
}

bool LamportRing::can_consume(const QueueImpl& q) noexcept {
  // relaxed loads: hints for the wait loop; try_acquire decides.
  return q.cell(q.c_acquired)->seq.load(std::memory_order_relaxed) == q.c_acquired + 1 ||
         (q.is_closed() && frontier(const_cast<QueueImpl&>(q), false) <= q.c_acquired);
}

}  // namespace zipc::detail
