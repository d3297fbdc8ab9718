// VyukovRing: the queue's ring whenever either side may be many (SPMC, MPSC,
// MPMC), and for every queue with an oversize region (its sweep reads the
// per-cell states).
//
// Correctness argument (a bounded Vyukov queue plus claims for recovery):
//  - Each cell has a sequence word. seq == pos: free for the producer of
//    position pos; seq == pos + 1: committed (or | kSeqAbandoned: given back),
//    for the consumer of pos; seq == pos + cap: released, free for the next
//    lap. Flag bits (kSeqFlags) mark abandoned and orphaned cells.
//  - Producers take positions with one CAS on ctl->tail (seq_cst: release
//    publishes their claim; it is also their half of the Dekker pair with
//    close()), consumers with one CAS on ctl->head (acq_rel). The CAS decides
//    who owns a position; the seq word orders the data.
//  - Producer -> consumer: commit() writes payload and size (relaxed), then
//    stores seq = pos + 1 with release; the consumer's acquire load of seq
//    pairs with it. Consumer -> next producer: release() stores seq = pos + cap
//    with release; the producer's acquire load of seq (try_reserve) pairs with
//    it (the previous lap's reads are done before it writes).
//  - Recovery: before each CAS a participant writes its claim (position and
//    count) to its record; after it, the owner word of each cell, then clears
//    the claim with release. A survivor (queue_recovery.cpp) reads claim, then
//    owner words: a dead producer's positions become abandoned, a dead
//    consumer's become orphans, redelivered by try_acquire (counted in
//    ctl->orphans).
// The single/single ring is LamportRing (lamport_ring.hpp); the API glue picks
// one per public call (rings.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "queue/queue_impl.hpp"

namespace zipc::detail {

struct VyukovRing {
  // A consumer that died holding positions leaves orphans: a closed queue
  // that looks drained may still have some to redeliver after recover().
  static constexpr bool kRedelivers = true;
  // May carry an oversize region (QueueImpl::ov).
  static constexpr bool kOversize = true;

  // ---- producer. try_reserve takes up to max consecutive positions [*first,
  // *first + *count); commit/abort each publishes it; publish() notifies.
  static Status try_reserve(QueueImpl& q, std::uint64_t max, std::uint64_t* first, std::uint64_t* count) noexcept;
  static void commit(QueueImpl& q, std::uint64_t pos, std::uint32_t len) noexcept;
  static void abort(QueueImpl& q, std::uint64_t pos) noexcept;
  static void publish(QueueImpl& q, std::uint64_t committed) noexcept;  // notify only
  [[nodiscard]] static bool can_produce(const QueueImpl& q) noexcept;   // wait predicate (a hint)

  // ---- consumer. try_acquire takes orphans first, then up to max positions
  // into out (passing abandoned blocks). When the first message is larger
  // than size_limit it takes nothing and returns too_large with *first_size.
  static Status try_acquire(QueueImpl& q, std::uint64_t* out, std::size_t max, std::size_t* n, std::size_t size_limit,
                            std::size_t* first_size) noexcept;
  // Size word of an acquired position (> block when scribbled; names the
  // oversize region when kSizeBig is set, see QueueImpl::view).
  [[nodiscard]] static std::size_t acquired_size(const QueueImpl& q, std::uint64_t pos) noexcept;
  // counted: a delivered message (false: a scribbled one dropped).
  static void release(QueueImpl& q, std::uint64_t pos, bool counted) noexcept;
  static void released(QueueImpl& q, std::size_t count) noexcept;      // notify only
  [[nodiscard]] static bool can_consume(const QueueImpl& q) noexcept;  // wait predicate (a hint)
};

}  // namespace zipc::detail
