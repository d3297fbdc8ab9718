// Crash recovery without a daemon: any survivor that stalls longer than the
// queue's recovery time looks for dead participants and takes back what they
// held (docs/design/queue.md, "Crash recovery").
#include <algorithm>
#include <vector>

#include "queue/lamport_ring.hpp"
#include "queue/queue_impl.hpp"
#include "zipc/log.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

using layout::CellHeader;
using layout::kOrphanCount;
using layout::kOrphanEpoch;
using layout::kSeqAbandoned;
using layout::kSeqFlags;
using layout::kSeqOrphan;
using layout::ParticipantRecord;

namespace {

// A record being folded and freed by one survivor.
constexpr std::uint64_t kFreeing = ~std::uint64_t{0};

// Liveness of each record's owner, computed at most once per scan (a /proc read each).
class Liveness {
 public:
  explicit Liveness(std::uint32_t n) : pid_(n, 0), alive_(n, 0) {}
  bool alive(const ParticipantRecord& r, std::uint32_t i) {
    // acquire: pairs with the release store of pid when a record is taken or freed.
    return alive_pid(r.pid.load(std::memory_order_acquire), i);
  }
  // Judges exactly this owner value of record i (a second load could see the
  // record freed and taken again since).
  bool alive_pid(std::uint64_t pid, std::uint32_t i) {
    if (pid == 0 || pid == kFreeing) return false;
    if (pid != pid_[i]) {
      pid_[i] = pid;
      alive_[i] = is_alive_packed(pid) ? 1 : 0;
    }
    return alive_[i] != 0;
  }

 private:
  std::vector<std::uint64_t> pid_;
  std::vector<std::uint8_t> alive_;
};

// Takes record r from its dead owner `pid`, to fold and free it: true for
// exactly one survivor, which alone then reads and counts what it held.
bool take_dead_record(ParticipantRecord& r, std::uint64_t pid) noexcept {
  // relaxed: a filter (no RMW on records of others); the CAS decides.
  if (pid == 0 || r.pid.load(std::memory_order_relaxed) != pid) return false;
  // acq_rel: acquire the dead owner's last stores; release our take.
  return r.pid.compare_exchange_strong(pid, kFreeing, std::memory_order_acq_rel);
}

}  // namespace

void QueueImpl::free_record(ParticipantRecord& r) noexcept {
  // relaxed: statistics; exactness needs only atomicity.
  ctl->retired_sent.fetch_add(r.sent.load(std::memory_order_relaxed), std::memory_order_relaxed);
  ctl->retired_received.fetch_add(r.received.load(std::memory_order_relaxed), std::memory_order_relaxed);
  ctl->retired_full_waits.fetch_add(r.full_waits.load(std::memory_order_relaxed), std::memory_order_relaxed);
  ctl->retired_empty_waits.fetch_add(r.empty_waits.load(std::memory_order_relaxed), std::memory_order_relaxed);
  ctl->retired_sent_bytes.fetch_add(r.sent_bytes.load(std::memory_order_relaxed), std::memory_order_relaxed);
  r.sent.store(0, std::memory_order_relaxed);  // relaxed: published by the pid store below
  r.sent_bytes.store(0, std::memory_order_relaxed);
  r.received.store(0, std::memory_order_relaxed);
  r.full_waits.store(0, std::memory_order_relaxed);
  r.empty_waits.store(0, std::memory_order_relaxed);
  r.claim.store(0, std::memory_order_relaxed);
  r.done.store(0, std::memory_order_relaxed);
  r.sent_mark.store(0, std::memory_order_relaxed);
  r.big.store(0, std::memory_order_relaxed);  // a dead owner's reference names garbage (queue_oversize.cpp)
  r.claim_count.store(0, std::memory_order_relaxed);
  r.role.store(0, std::memory_order_relaxed);
  // release: the zeroed record is complete before anyone can take it.
  r.pid.store(0, std::memory_order_release);
}

void QueueImpl::repair_orphan_hint() noexcept {
  // relaxed: a hint (see kOrphanCount); read again below before acting.
  if ((ctl->orphans.load(std::memory_order_relaxed) & kOrphanCount) != 0) return;
  // Bounded work per call (recover() runs every recovery time in each stalled
  // waiter): at most kOrphanScan cells, continuing where the last call stopped.
  constexpr std::uint64_t kOrphanScan = 4096;
  const std::uint64_t n = std::min<std::uint64_t>(cap, kOrphanScan);
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::uint64_t i = orphan_cursor++ & mask;
    auto* c = reinterpret_cast<CellHeader*>(cells + i * stride);
    // relaxed: a hint; a consumer's CAS on seq decides who takes the orphan.
    const std::uint64_t s = c->seq.load(std::memory_order_relaxed);
    if ((s & kSeqFlags) != kSeqOrphan || (((s & ~kSeqFlags) - 1) & mask) != i) continue;
    // An orphan the count does not know of: count it (release: as after a
    // mark, so that a scanner reading this sees the orphan).
    ctl->orphans.fetch_add(kOrphanEpoch + 1, std::memory_order_release);
    ctl->not_empty.notify_all();
    return;
  }
}

std::size_t QueueImpl::recover() noexcept {
  // A lost orphan count (a consumer's clear racing a recoverer, or a
  // recoverer killed between its mark and its count) is repaired even when
  // nobody is dead now.
  if (ring == RingKind::vyukov) repair_orphan_hint();
  Liveness live(max_participants);
  struct Dead {
    std::uint32_t index;
    std::uint64_t pid;  // the dead owner seen (pid and start time: never a later owner's)
  };
  std::vector<Dead> dead;
  for (std::uint32_t i = 0; i < max_participants; ++i) {
    const std::uint64_t pid = recs[i].pid.load(std::memory_order_acquire);  // acquire: as in Liveness
    // The value judged is the value kept: a live owner that detaches and
    // attaches again meanwhile must not be listed (and freed) as dead.
    if (pid != 0 && pid != kFreeing && !live.alive_pid(pid, i)) dead.push_back({i, pid});
  }
  if (dead.empty()) {  // every holder of every position is alive
    // relaxed: a hint; sweep() reads it with acquire. (A sweep that could
    // not run earlier, e.g. while a live producer was allocating.)
    if (ov != nullptr && ov->sweep_needed.load(std::memory_order_relaxed) != 0) (void)sweep();
    return 0;
  }
  // Frees the records found dead, unless one was taken again meanwhile: the
  // CAS from the dead owner seen decides (no second liveness check), and
  // exactly one survivor folds and frees each record.
  const auto free_dead = [&](std::uint64_t keep_a, std::uint64_t keep_b) {
    for (const Dead& d : dead) {
      if (d.pid != keep_a && d.pid != keep_b && take_dead_record(recs[d.index], d.pid)) free_record(recs[d.index]);
    }
  };
  if (ring == RingKind::lamport) {
    // The single/single ring keeps nothing outside [head, tail): a dead
    // side's positions are taken over when a new one attaches, which reads
    // and frees its record. So only records of dead handles without a side
    // (Role::none) are freed here: a successor may already hold the side's
    // word and be about to read its predecessor's record (freeing it first
    // would lose the dead consumer's `done`, and the successor would start
    // at a stale head).
    for (const Dead& d : dead) {
      // relaxed: role is written before the record is published (its pid CAS).
      const std::uint32_t role = recs[d.index].role.load(std::memory_order_relaxed);
      if ((role & (static_cast<std::uint32_t>(Role::producer) | static_cast<std::uint32_t>(Role::consumer))) != 0)
        continue;
      if (take_dead_record(recs[d.index], d.pid)) free_record(recs[d.index]);
    }
    return 0;
  }

  // Who holds position p in phase ph (0: a producer before commit, 1: a
  // consumer before release)? The cell's owner word if its tag matches, else
  // whoever claims p in its record (written before its CAS took p).
  auto holder_dead = [&](CellHeader* c, std::uint64_t s, std::uint64_t p, unsigned ph) -> bool {
    // acquire: pairs with the release clear of the holder's claim (its owner
    // store comes before).
    const std::uint64_t o1 = c->owner.load(std::memory_order_acquire);
    bool is_dead = true;
    const std::uint64_t tag = (2 * p + ph) & layout::kOwnerTagMask;
    const std::uint64_t slot1 = o1 >> layout::kOwnerSlotShift;
    if ((o1 & layout::kOwnerTagMask) == tag && slot1 >= 1 && slot1 <= max_participants) {
      is_dead = !live.alive(recs[slot1 - 1], static_cast<std::uint32_t>(slot1 - 1));
    } else {
      for (std::uint32_t i = 0; i < max_participants && is_dead; ++i) {
        if (!live.alive(recs[i], i)) continue;
        // acquire: pairs with the claim store published by the holder's CAS.
        const std::uint64_t cl = recs[i].claim.load(std::memory_order_acquire);
        if (cl == 0 || ((cl - 1) & 1) != ph) continue;
        const std::uint64_t from = (cl - 1) >> 1;
        const std::uint64_t n = recs[i].claim_count.load(std::memory_order_relaxed);  // relaxed: before claim
        if (p - from < n) is_dead = false;
      }
    }
    if (!is_dead) return false;
    // The holder may have written its owner word and moved on meanwhile.
    // acquire: as above.
    return c->owner.load(std::memory_order_acquire) == o1 && c->seq.load(std::memory_order_acquire) == s;
  };

  // A dead holder that counted position p just before dying (its mark says
  // p): the message it counted is abandoned (never committed) or delivered
  // again, so its count is taken back. Wrapping arithmetic keeps the sum in
  // stats() exact even while the dead record is not yet folded.
  auto uncount = [&](CellHeader* c, std::uint64_t p, unsigned ph) noexcept {
    // relaxed: the holder is dead; its last stores are all it will write.
    const std::uint64_t o = c->owner.load(std::memory_order_relaxed);
    const std::uint64_t slot1 = o >> layout::kOwnerSlotShift;
    if ((o & layout::kOwnerTagMask) != ((2 * p + ph) & layout::kOwnerTagMask) || slot1 < 1 || slot1 > max_participants)
      return;
    const ParticipantRecord& r = recs[slot1 - 1];
    if ((ph == 0 ? r.sent_mark : r.done).load(std::memory_order_relaxed) != p + 1) return;
    // relaxed: statistics.
    (ph == 0 ? ctl->retired_sent : ctl->retired_received).fetch_sub(1, std::memory_order_relaxed);
  };

  std::size_t recovered = 0;
  bool unresolved = false;
  // acquire: positions published by CASes; their claims are visible.
  const std::uint64_t head = ctl->head.load(std::memory_order_acquire);
  const std::uint64_t tail = ctl->tail.load(std::memory_order_acquire);
  for (std::uint64_t i = 0; i < cap; ++i) {
    auto* c = reinterpret_cast<CellHeader*>(cells + i * stride);
    std::uint64_t s = c->seq.load(std::memory_order_acquire);  // acquire: the state we act on
    if (s & kSeqOrphan) continue;                              // waiting for a consumer to take it
    const std::uint64_t base = s & ~kSeqFlags;
    if (s & kSeqAbandoned) {
      // A consumer was passing this block (head moved beyond it) and died?
      const std::uint64_t p = base - 1;
      if ((p & mask) != i || head <= p) continue;
      if (!holder_dead(c, s, p, 1)) continue;
      // release: hands the block to the next lap's producer.
      if (c->seq.compare_exchange_strong(s, p + cap, std::memory_order_release, std::memory_order_relaxed)) {
        ++recovered;
        ctl->not_full.notify_all();
      }
      continue;
    }
    if ((base & mask) == i) {
      // Free for lap `base`: held by a producer when tail moved past it.
      const std::uint64_t p = base;
      if (tail <= p || tail - p > cap) continue;
      if (!holder_dead(c, s, p, 0)) {
        unresolved = true;
        continue;
      }
      // release: consumers pass this block without reading it.
      if (c->seq.compare_exchange_strong(s, (p + 1) | kSeqAbandoned, std::memory_order_release,
                                         std::memory_order_relaxed)) {
        ctl->abandoned.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
        uncount(c, p, 0);
        ++recovered;
        ctl->not_empty.notify_all();
      }
    } else if (((base - 1) & mask) == i) {
      // Committed message at p: held by a consumer when head moved past it.
      const std::uint64_t p = base - 1;
      if (head <= p || head - p > cap) continue;
      if (!holder_dead(c, s, p, 1)) {
        unresolved = true;
        continue;
      }
      // release: the payload stays published to the consumer that takes the orphan.
      if (c->seq.compare_exchange_strong(s, (p + 1) | kSeqOrphan, std::memory_order_release,
                                         std::memory_order_relaxed)) {
        // release: after the mark; pairs with the consumers' acquire of the
        // hint (a scan started after reading it sees this orphan). The epoch
        // bump makes a consumer's clear based on an older read fail.
        ctl->orphans.fetch_add(kOrphanEpoch + 1, std::memory_order_release);
        uncount(c, p, 1);
        ++recovered;
        ctl->not_empty.notify_all();
      }
    }
  }
  (void)unresolved;  // live holders: nothing of the dead is among them
  // Every position a dead record could hold was resolved above (a race with a
  // live holder only leaves positions held by the living), so the dead
  // records can be reused. A record whose owner became dead after the scan
  // started is left for the next scan.
  free_dead(0, 0);
  if (ov != nullptr) {
    // The dead may have left allocations nothing names any more (a producer
    // between allocation and commit, a consumer releasing, blocks abandoned
    // above): sweep them. release: pairs with sweep()'s acquire.
    ov->sweep_needed.fetch_add(1, std::memory_order_release);
    (void)sweep();
  }
  if (recovered != 0 && detail::log_enabled(LogLevel::info)) {
    detail::log_message(LogLevel::info, name,
                        "recovered " + std::to_string(recovered) + " position(s) held by dead participants");
  }
  return recovered;
}

void QueueImpl::spsc_take_over_producer(std::uint64_t dead_pid) noexcept {
  // acquire: the dead producer's last published tail.
  std::uint64_t tail = ctl->tail.load(std::memory_order_acquire);
  const std::uint64_t head = ctl->head.load(std::memory_order_acquire);  // acquire: consumer's progress
  // It may have died between publishing blocks (their seq words) and storing
  // tail: those blocks are committed and stay; we continue after them. The
  // consumer may even have consumed them already, so head can be ahead of
  // the stale tail (by at most the ring: else scribbled, left to try_reserve).
  if (head > tail && head - tail <= cap) tail = head;
  // acquire: pairs with the release store of seq in publish().
  while (tail - head < cap && cell(tail)->seq.load(std::memory_order_acquire) == tail + 1) ++tail;
  ctl->tail.store(tail, std::memory_order_release);  // release: our starting point, as publish() would
  for (std::uint32_t i = 0; i < max_participants; ++i) {
    ParticipantRecord& r = recs[i];
    if (!take_dead_record(r, dead_pid)) continue;
    // relaxed: the owner is dead; its last claim is all it will ever write.
    LamportRing::abandon(*this, tail, r.claim.load(std::memory_order_relaxed));
    free_record(r);
  }
}

void QueueImpl::spsc_take_over_consumer(std::uint64_t dead_pid) noexcept {
  // acquire: the dead consumer's last published head.
  std::uint64_t head = ctl->head.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < max_participants; ++i) {
    ParticipantRecord& r = recs[i];
    if (!take_dead_record(r, dead_pid)) continue;
    // relaxed: the owner is dead; its last stores are all it will ever write.
    // It published head in batches: what it released beyond head was
    // delivered and must not be delivered again.
    const std::uint64_t done = r.done.load(std::memory_order_relaxed);
    // (done may exceed the shared tail by blocks published between the
    // producer's seq and tail stores: bound it by the ring, not by tail.)
    if (done > head && done - head <= cap) {
      head = done;
      // release: the producer may reuse the blocks below the new head.
      ctl->head.store(head, std::memory_order_release);
    }
    const std::uint64_t acquired = r.claim.load(std::memory_order_relaxed);  // relaxed: as above
    if (acquired > head && acquired - head <= cap) {
      std::uint64_t held = 0;
      for (std::uint64_t p = head; p < acquired; ++p) {
        const std::uint32_t sz = cell(p)->size.load(std::memory_order_relaxed);  // relaxed: ordered by tail
        if (!(sz & (layout::kSizeSkip | layout::kSizeReleased))) ++held;
      }
      ctl->redelivered.fetch_add(held, std::memory_order_relaxed);  // relaxed: a counter
    }
    free_record(r);
  }
}

}  // namespace zipc::detail
