// LamportRing: the queue's ring when it has exactly one producer AND exactly
// one consumer (Multiplicity::single on both sides, no oversize region).
//
// Correctness argument (a Lamport single-producer/single-consumer ring):
//  - Each side owns its positions privately in QueueImpl (producer:
//    p_reserved, p_tail, p_head_cache; consumer: c_acquired, c_head,
//    c_head_pub). No CAS: only one thread of one process moves each.
//  - Producer -> consumer: the caller writes the payload, commit() the size
//    word and the commit mark (the cell's owner word = pos + 1, relaxed);
//    publish() then stores each marked cell's seq = pos + 1 with release, in
//    position order. Reserving writes nothing into the cell (the consumer
//    may be polling its line). The consumer's acquire load of
//    seq == pos + 1 in try_acquire() pairs with it: payload and size are
//    visible. ctl->tail is stored (release) only for the off-hot-path readers
//    (closed drain, size_approx, a successor's take-over).
//  - Consumer -> producer: release() advances c_head; released() stores it to
//    the consumer's record `done` (release) on every call and to ctl->head
//    (release, flush_head()) every head_batch releases. The producer's acquire
//    load of head (try_reserve) or of `done` (consumer_done(), only when the
//    ring looks full) pairs with them: cells below are no longer read and may
//    be overwritten.
//  - Close: try_reserve stores its claim, then a store-load barrier, then
//    reads closed; frontier(exact) runs the heavy barrier, then reads the
//    claim (an asymmetric Dekker pair): a consumer never reports "closed and
//    drained" while a producer that missed closed still holds a reservation.
//  - Crash: a dead side's positions are taken over by its successor at attach
//    (queue_recovery.cpp: spsc_take_over_producer / _consumer), from `claim`
//    and `done` in its record; a producer's successor clears the commit
//    marks its predecessor left beyond the tail (committed, never published).
// The many-sided ring is VyukovRing (vyukov_ring.hpp); the API glue picks one
// per public call (rings.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "queue/queue_impl.hpp"

namespace zipc::detail {

struct LamportRing {
  // A consumer that died holding positions is taken over at attach: nothing
  // to redeliver when a closed queue looks drained.
  static constexpr bool kRedelivers = false;
  // Never carries an oversize region (one needs the per-cell states).
  static constexpr bool kOversize = false;

  // ---- producer. try_reserve takes up to max positions [*first, *first +
  // *count); commit/abort each; publish() makes them visible (in order).
  static Status try_reserve(QueueImpl& q, std::uint64_t max, std::uint64_t* first, std::uint64_t* count) noexcept;
  static void commit(QueueImpl& q, std::uint64_t pos, std::uint32_t len) noexcept;
  static void abort(QueueImpl& q, std::uint64_t pos) noexcept;
  static void publish(QueueImpl& q, std::uint64_t committed) noexcept;  // seq and tail stores, stats, notify
  [[nodiscard]] static bool can_produce(const QueueImpl& q) noexcept;   // wait predicate (a hint)

  // ---- consumer. try_acquire takes up to max deliverable positions into out
  // (skipping aborted blocks). When the first message is larger than
  // size_limit it takes nothing and returns too_large with *first_size.
  static Status try_acquire(QueueImpl& q, std::uint64_t* out, std::size_t max, std::size_t* n, std::size_t size_limit,
                            std::size_t* first_size) noexcept;
  // Size of an acquired position, or > block when the cell was scribbled.
  [[nodiscard]] static std::size_t acquired_size(const QueueImpl& q, std::uint64_t pos) noexcept;
  static void release(QueueImpl& q, std::uint64_t pos, bool counted) noexcept;  // (counted in released())
  static void released(QueueImpl& q, std::size_t count) noexcept;               // done store, batched head store, stats
  [[nodiscard]] static bool can_consume(const QueueImpl& q) noexcept;           // wait predicate (a hint)

  // ---- helpers of the two sides
  static void flush_head(QueueImpl& q) noexcept;  // consumer: publish every release now
  // Producer that leaves (detach) or takes over from a dead one: positions
  // [from, reserved) were reserved and never published. Counts them in
  // `abandoned` and clears their commit marks, or the next publish() would
  // take a mark left there for its own. A range beyond the ring is
  // scribbled and ignored.
  static void abandon(QueueImpl& q, std::uint64_t from, std::uint64_t reserved) noexcept;
  // Producer: the consumer's released-up-to from its record (0 if unknown).
  static std::uint64_t consumer_done(QueueImpl& q) noexcept;
  // Consumer: the end of what the producer published or still holds reserved
  // (max of tail and its claim). exact: after heavy_barrier(), and a dead
  // producer's reservation does not count; else a cheap hint.
  static std::uint64_t frontier(QueueImpl& q, bool exact) noexcept;
};

}  // namespace zipc::detail
