// Topic publishers, attach: taking the single-publisher word or a multi slot, moving, giving it back.
#include <algorithm>
#include <new>
#include <utility>

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

void detail::PublisherMarksDelete::operator()(PublisherMarks* marks) const noexcept {
  delete marks;
}

Publisher Topic::publisher() {
  if (!state_)
    throw Error(Errc::invalid_argument, "topic: publisher() on a detached handle (moved from, detached or default)");
  TopicState& s = *state_;
  if (s.read_only) detail::topic_fail(Errc::wrong_role, s.name(), "opened read-only: it has no publisher");
  s.me = pack(ProcessId::current());
  Publisher p;
  p.marks_.reset(new detail::PublisherMarks());  // before taking any role: a throw leaves nothing held
  p.state_ = state_;
  auto& admin = s.admin();
  auto& pub = s.pub();
  if (s.mode == layout::PublisherMode::single) {
    std::uint64_t holder = 0;
    // acq_rel: taking the role orders our reads of the log after the previous publisher's writes.
    if (!admin.single_publisher.compare_exchange_strong(holder, s.me, std::memory_order_acq_rel)) {
      if (holder == s.me || is_alive_packed(holder)) {
        detail::topic_fail(
            Errc::busy, s.name(),
            "single-publisher topic already has a live publisher (pid " + std::to_string(unpack(holder).pid) + ")");
      }
      // The previous publisher died: turn its unfinished claim into a hole
      // first. A reader may hold the recovery lock right now (settling the
      // dead publisher's commit, which recovers the claim too): wait for it,
      // a bounded while, rather than fail the attach.
      const std::uint64_t give_up_ns = platform::monotonic_ns() + s.recovery_ns / 4 + 1;
      for (;;) {
        const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);  // acquire: as in recovery
        // acquire: pairs with the claim's tail store.
        if (pub.tail.load(std::memory_order_acquire) == c || detail::recover_hole(s, c)) break;
        if (platform::monotonic_ns() >= give_up_ns) break;
        platform::yield_cpu();
      }
      // acq_rel: as above.
      if (!admin.single_publisher.compare_exchange_strong(holder, s.me, std::memory_order_acq_rel)) {
        detail::topic_fail(Errc::busy, s.name(), "another process took the publisher role first");
      }
    }
    p.slot_ = 0;
    // acquire: pairs with the previous publisher's release stores.
    const std::uint64_t tail = pub.tail.load(std::memory_order_acquire);
    const std::uint64_t cursor = pub.cursor.load(std::memory_order_acquire);
    if (tail != cursor || !detail::aligned(tail)) {
      admin.single_publisher.store(0, std::memory_order_release);  // release: we touched nothing
      p.state_.reset();
      detail::topic_fail(Errc::corrupt, s.name(), "claimed but uncommitted bytes could not be recovered");
    }
    p.tail_ = tail;
  } else {
    bool found = false;
    for (int pass = 0; pass < 2 && !found; ++pass) {
      for (std::uint32_t i = 0; i < layout::kMaxPublishers && !found; ++i) {
        auto& slot = s.control->publishers[i];
        std::uint64_t owner = slot.owner.load(std::memory_order_acquire);  // acquire: pairs with release on detach
        if (owner != 0) {
          if (pass == 0 || is_alive_packed(owner)) continue;
          // A dead publisher: reclaim its slot only when no claim of it is in flight.
          const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);        // acquire: pairs with commit
          const std::uint64_t intent = slot.intent.load(std::memory_order_relaxed);  // relaxed: after cursor
          if (intent != ~0ull && intent >= c && intent < pub.tail.load(std::memory_order_acquire)) {
            detail::recover_hole(s, c);
            continue;
          }
        }
        // acq_rel: owning the slot before publishing intents through it.
        if (slot.owner.compare_exchange_strong(owner, s.me, std::memory_order_acq_rel)) {
          slot.intent.store(~0ull, std::memory_order_release);  // release: no claim yet
          p.slot_ = i;
          found = true;
        }
      }
    }
    if (!found) detail::topic_fail(Errc::busy, s.name(), "all 64 publisher slots hold live publishers");
  }
  p.cached_oldest_ = pub.oldest.load(std::memory_order_acquire);  // acquire: pairs with the release raise
  p.cached_min_ = 0;
  if (!detail::reader_seat_path(s, 0).empty()) p.seats_ = std::make_shared<detail::ReaderSeatWatch>();
  return p;
}

Publisher::Publisher(Publisher&& o) noexcept {
  *this = std::move(o);
}

Publisher& Publisher::operator=(Publisher&& o) noexcept {
  if (this != &o) {
    this->~Publisher();
    state_ = std::move(o.state_);
    slot_ = o.slot_;
    tail_ = o.tail_;
    cached_oldest_ = o.cached_oldest_;
    cached_min_ = o.cached_min_;
    cached_generation_ = o.cached_generation_;
    next_liveness_check_ns_ = o.next_liveness_check_ns_;
    loan_ = std::exchange(o.loan_, nullptr);
    if (loan_ != nullptr) loan_->owner_ = this;
    pending_end_ = o.pending_end_;
    pending_next_ = o.pending_next_;
    pending_count_ = o.pending_count_;
    pending_since_ns_ = o.pending_since_ns_;
    mark_head_ = o.mark_head_;
    next_mark_ = o.next_mark_;
    marks_ = std::move(o.marks_);
    seats_ = std::move(o.seats_);
    o.pending_count_ = 0;
  }
  return *this;
}

Publisher::~Publisher() {
  if (loan_ != nullptr && !parked_) [[unlikely]] {
    // A loan is out: it keeps this publisher (slot, claim, mapping) until it
    // ends, then frees it (docs/guide/handles.md). Without memory, the loan is aborted.
    auto* kept = new (std::nothrow) Publisher(std::move(*this));
    if (kept != nullptr)
      kept->parked_ = true;
    else
      loan_->abort();
  }
  // Reset here, not left to the member destructor: operator= runs this
  // destructor and then assigns to the members again.
  seats_.reset();
  if (!state_) {
    marks_.reset();
    return;
  }
  flush();
  TopicState& s = *state_;
  if (s.mode == layout::PublisherMode::single) {
    std::uint64_t me = s.me;
    // release: our records and tail happen before the next publisher's takeover.
    s.admin().single_publisher.compare_exchange_strong(me, 0, std::memory_order_release);
  } else {
    auto& slot = s.control->publishers[slot_];
    // release: our last commit happens before a recoverer that reads this
    // (acquire) while our owner word still stands (recover_claim's re-read).
    slot.intent.store(~0ull, std::memory_order_release);
    std::uint64_t me = s.me;
    slot.owner.compare_exchange_strong(me, 0, std::memory_order_release);  // release: slot free for reuse
  }
  state_.reset();
  marks_.reset();  // after flush(), which reads the pending records
}

void Publisher::detach() noexcept {
  Publisher gone(std::move(*this));  // its destructor gives the slot back
}

}  // namespace zipc
