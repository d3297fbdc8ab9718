// Topic publishers, room: moving `oldest` past what every reliable subscriber has read (drop marks, liveness).
#include <algorithm>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/stream_copy.hpp"
#include "topic/topic_durable.hpp"
#include "topic/topic_publisher_marks.hpp"
#include "topic/topic_reader_seat.hpp"
#include "topic/topic_state.hpp"
#include "zipc/process.hpp"

namespace zipc {

using detail::TopicState;
using layout::RecordHeader;

namespace {

// Raises drop_intent to at least v (seq_cst: see make_room).
void raise_intent(layout::PublisherLine& pub, std::uint64_t v) noexcept {
  std::uint64_t cur = pub.drop_intent.load(std::memory_order_seq_cst);
  // seq_cst: the Dekker store against joining subscribers (docs/design/topic.md).
  while (cur < v && !pub.drop_intent.compare_exchange_weak(cur, v, std::memory_order_seq_cst)) {
  }
}

}  // namespace

// Every so often (an eighth of a batch of room) a single publisher notes the
// start of a record it claims. These are positions it chose itself, not read
// from the ring, so make_room may drop up to one without validating headers.
void Publisher::note_record_start(std::uint64_t record) noexcept {
  if (record < next_mark_) return;
  marks_->drop_marks[mark_head_ % detail::kDropMarks] = record;
  ++mark_head_;
  next_mark_ = record + std::max<std::uint64_t>(state_->capacity / 64, layout::kRecordAlign);
}

// The highest noted record start in [lo, hi], or 0 when there is none.
std::uint64_t Publisher::drop_mark(std::uint64_t lo, std::uint64_t hi) const noexcept {
  std::uint64_t best = 0;
  const std::uint64_t n = std::min<std::uint64_t>(mark_head_, detail::kDropMarks);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t m = marks_->drop_marks[i];
    if (m >= lo && m <= hi && m > best) best = m;
  }
  return best;
}

Status Publisher::make_room(std::uint64_t needed_end, bool may_wait_for_liveness) noexcept {
  TopicState& s = *state_;
  auto& pub = s.pub();
  const std::uint64_t target = needed_end - s.capacity;
  for (int round = 0; round < 64; ++round) {
    // acquire: pairs with the release raise by another publisher.
    std::uint64_t o = pub.oldest.load(std::memory_order_acquire);
    cached_oldest_ = o;
    if (o >= target) return Status::ok;
    // acquire: pairs with the commit's release store; [o, c) are complete records.
    const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);
    if (c < o || c - o > s.capacity || !detail::aligned(o) || !detail::aligned(c)) return Status::corrupt;
    if (c < target) return Status::full;  // uncommitted claims fill the ring
    // Read-only reliable readers' seats: adopted before anything is dropped
    // (at most every 1 ms; the clock read is per make_room call, not per message).
    if (seats_) (void)seats_->maybe_adopt(s, platform::monotonic_ns());
    // seq_cst: Dekker with joining subscribers (they store their position, then read drop_intent).
    const std::uint64_t gen = s.admin().subscriber_generation.load(std::memory_order_seq_cst);
    if (gen != cached_generation_ || cached_min_ < target) {
      std::uint64_t m = ~0ull;
      for (std::uint32_t i = 0; i < s.max_subscribers; ++i) {
        auto& slot = s.subscribers[i];
        // acquire: pairs with the subscriber's release stores of owner/mode/position.
        const std::uint64_t owner = slot.owner.load(std::memory_order_acquire);
        if (owner == 0 || owner == layout::kParkedOwner) continue;          // free, or a durable position released
        if (slot.mode.load(std::memory_order_acquire) != 1) continue;       // acquire: as owner
        std::uint64_t pos = slot.position.load(std::memory_order_acquire);  // acquire: the reader is done below it
        // acquire: a claimer stores proxy before the mode (a plain subscriber's is 0).
        if (const std::uint32_t proxy = slot.proxy.load(std::memory_order_acquire); proxy != 0) {
          std::uint64_t seat_pos = 0;
          // No watch, or a seat read mid-move: hold at the slot's position, the
          // last one a publisher read (positions only grow: never past the reader).
          const auto seat =
              seats_ ? seats_->position(s, proxy - 1, owner, &seat_pos) : detail::ReaderSeatWatch::Seat::unstable;
          if (seat == detail::ReaderSeatWatch::Seat::left) {
            std::uint64_t expect = owner;
            // acq_rel: its reader left; only that reader's id is replaced (a new claimer's is not).
            (void)slot.owner.compare_exchange_strong(expect, 0, std::memory_order_acq_rel);
            continue;
          }
          if (seat == detail::ReaderSeatWatch::Seat::unstable) {
            // pos: the slot's position, loaded above.
          } else if (seat == detail::ReaderSeatWatch::Seat::ignore) {
            // Nothing usable (a position outside [oldest, cursor]): holds nothing back,
            // but a dead reader's slot is still freed below.
            pos = ~0ull;
          } else {
            pos = seat_pos;
            slot.position.store(pos, std::memory_order_relaxed);  // relaxed: for zipc stat (lag) only
          }
        }
        if (pos < target && may_wait_for_liveness && (owner == layout::kOrphanOwner || !is_alive_packed(owner))) {
          // A durable subscriber's position is held for its grace (then parked).
          // acquire: pairs with the attacher's release store of the flag.
          if (slot.durable.load(std::memory_order_acquire) != 0) {
            if (detail::durable_hold(s, slot, owner, pos)) m = std::min(m, pos);
            continue;
          }
          std::uint64_t expect = owner;
          // acq_rel: we free the slot; its owner is dead and cannot race with us.
          // Owner 0 alone frees it: we never write its mode, which a joiner may
          // already be rewriting for itself (publishers skip owner-0 slots).
          if (slot.owner.compare_exchange_strong(expect, 0, std::memory_order_acq_rel)) {
            detail::test_point(detail::TestPoint::subscriber_slot_freed, i);
          }
          continue;
        }
        m = std::min(m, pos);
      }
      cached_min_ = m;
      cached_generation_ = gen;
    }
    // Records may be dropped up to `limit`: committed, and read by every reliable subscriber.
    const std::uint64_t limit = std::min(c, cached_min_);
    if (limit < target) return Status::full;  // a reliable subscriber has not read that far
    // Drop every record that starts below target (whatever its size: one may
    // end far past target), then on up to a batch (an eighth of the ring) so
    // this walk is rare; the batch only decides where to stop, never blocks.
    const std::uint64_t batch = std::min(limit, std::max(target, o + s.capacity / 8));
    std::uint64_t np = o;
    bool lapped = false;
    // Single mode: a record start we noted ourselves in [target, batch] saves
    // walking the old headers (a cache miss each: they were written a lap ago).
    const std::uint64_t mark = s.mode == layout::PublisherMode::single ? drop_mark(target, batch) : 0;
    if (mark > o) np = mark;
    while (np < batch && mark <= o) {
      const std::uint64_t p = detail::skip_implicit_padding(s, np);
      if (p >= limit) {  // only implicit padding left below the limit
        if (p == limit) np = p;
        break;
      }
      const RecordHeader h = detail::header_at(s, p);
      const detail::RecordCheck hc = detail::check_record(s, h, p, c);
      detail::fence_acquire();                                // the copy before re-checking oldest
      if (pub.oldest.load(std::memory_order_acquire) != o) {  // acquire, after the fence: as in sequence_at
        lapped = true;
        break;
      }
      if (!hc.ok) return Status::corrupt;
      const std::uint64_t e = p + hc.total;
      if (e > limit) break;                  // not read by every reliable subscriber yet
      if (np >= target && e > batch) break;  // enough dropped: keep the record crossing the batch end
      np = e;
    }
    if (lapped) continue;
    if (np < target) {
      if (np == o) return Status::full;
      // Progress anyway: drop what we can and retry.
    }
    raise_intent(pub, np);
    // seq_cst: after announcing the intent, a joiner we missed has bumped the generation.
    if (s.admin().subscriber_generation.load(std::memory_order_seq_cst) != cached_generation_) {
      cached_min_ = 0;  // force a rescan next round
      cached_generation_ = ~0ull;
      continue;
    }
    // acq_rel: release publishes the raise to lossy readers re-checking oldest.
    if (pub.oldest.compare_exchange_strong(o, np, std::memory_order_acq_rel)) {
      // release: orders the raise before the overwrites that follow (seqlock writer side).
      detail::fence_release();
      cached_oldest_ = np;
      if (np >= target) return Status::ok;
    }
  }
  return Status::full;
}

}  // namespace zipc
