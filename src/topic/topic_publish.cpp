// Topic publishers: claim room at the tail, write, commit by moving the cursor; the public calls.
#include <algorithm>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/stream_copy.hpp"
#include "sync/use_check.hpp"
#include "topic/topic_durable.hpp"
#include "topic/topic_publisher_marks.hpp"
#include "topic/topic_reader_seat.hpp"
#include "topic/topic_state.hpp"
#include "zipc/process.hpp"

namespace zipc {

using detail::TopicState;
using layout::RecordHeader;
using layout::RecordKind;

namespace {

// Per thread, not per publisher: a stamp is about time, so one window serves
// every topic this thread publishes to (and Publisher keeps its size).
platform::BurstStamp& publish_stamp() noexcept {
  static thread_local platform::BurstStamp stamp;
  return stamp;
}

constexpr std::uint64_t kLivenessPeriodNs = 10'000'000;    // how often a blocked publisher checks subscribers
constexpr std::uint64_t kSliceNs = detail::kStallSliceNs;  // longest sleep before re-checking peers
constexpr std::uint64_t kSeatPollNs = 200'000;             // see seat_slice
constexpr std::uint64_t kCommitBatchNs = 100'000;          // ... or once the oldest of them is this old
constexpr std::uint32_t kAgeCheckEvery = 4;                // ... as seen on the first 4 commits and every 4th

Deadline slice(Deadline d) noexcept {
  const Deadline s = Deadline::after(std::chrono::nanoseconds(kSliceNs));
  return (d.is_never() || s.ns() < d.ns()) ? s : d;
}

// A read-only reader cannot wake a publisher waiting for room (waking is a
// write to the topic): while seats are adopted, a waiting publisher re-reads
// them this often.
Deadline seat_slice(Deadline d) noexcept {
  const Deadline s = Deadline::after(std::chrono::nanoseconds(kSeatPollNs));
  return (d.is_never() || s.ns() < d.ns()) ? s : d;
}

}  // namespace

// ---------------------------------------------------------------- claim

Status Publisher::reserve(std::size_t size, Deadline deadline, TopicWriteLoan& loan) noexcept {
  if (!state_) [[unlikely]]
    return Status::detached;
  if (loan_ != nullptr) [[unlikely]]
    return Status::busy;  // one loan at a time
  TopicState& s = *state_;
  if (size > s.max_message) return Status::too_large;
  auto& pub = s.pub();
  const std::uint64_t rec = layout::record_bytes(size);
  const bool multi = s.mode == layout::PublisherMode::multi;
  for (;;) {
    // relaxed: single mode reads its own value; multi mode validates it with the CAS below.
    const std::uint64_t p = multi ? pub.tail.load(std::memory_order_relaxed) : tail_;
    if (!detail::aligned(p)) return Status::corrupt;
    const std::uint64_t room = s.capacity - s.index(p);
    const std::uint64_t record = room >= rec ? p : p + room;
    const std::uint64_t end = record + rec;
    if (end > cached_oldest_ + s.capacity) {
      Status st = make_room(end, false);
      if (st == Status::full && pending_count_ != 0) {
        flush();  // our own unpublished commits may be what fills the ring
        st = make_room(end, false);
      }
      if (st == Status::full) {
        const std::uint64_t now = platform::monotonic_ns();
        if (now >= next_liveness_check_ns_) {
          next_liveness_check_ns_ = now + kLivenessPeriodNs;
          cached_min_ = 0;
          st = make_room(end, true);
        }
      }
      if (st == Status::full && !deadline.expired()) {
        const std::uint64_t want_end = end;
        while (st == Status::full && !deadline.expired()) {
          (void)s.barrier.wait(
              s.events().space,
              [&] {
                // relaxed: a hint that ends the wait; close() notifies this event.
                if (s.admin().closed.load(std::memory_order_relaxed) != 0) {
                  st = Status::closed;
                  return true;
                }
                st = make_room(want_end, false);
                return st != Status::full;
              },
              seats_ && seats_->any_adopted() ? seat_slice(deadline) : slice(deadline), s.wait);
          // Room may wait on a frontier stuck at a dead publisher's claim.
          if (st == Status::full) detail::poll_stuck_claim(s);
          if (st == Status::full) {
            const std::uint64_t now = platform::monotonic_ns();
            if (now >= next_liveness_check_ns_) {
              next_liveness_check_ns_ = now + kLivenessPeriodNs;
              cached_min_ = 0;
              st = make_room(want_end, true);
            }
          }
        }
        if (st == Status::ok) continue;  // recompute: in multi mode the tail moved
      }
      // relaxed: no room, and closed: say closed rather than full.
      if (st == Status::full && s.admin().closed.load(std::memory_order_relaxed) != 0) return Status::closed;
      if (st != Status::ok) return st;
    }
    if (multi) {
      auto& slot = s.control->publishers[slot_];
      // release: our previous commit (its cursor store) happens before a
      // recoverer that reads this intent (acquire) and so looks for the claim
      // it replaced in vain; the CAS (release) below publishes it for claims.
      slot.intent.store(p, std::memory_order_release);
      detail::test_point(detail::TestPoint::before_claim_cas, p);
      std::uint64_t expect = p;
      // acq_rel: release publishes our intent to recoverers; acquire orders after earlier claims.
      if (!pub.tail.compare_exchange_weak(expect, end, std::memory_order_acq_rel)) {
        // Lost: p is another publisher's claim now. An intent left at p would
        // make recovery take us for the owner of that claim (alive) and never
        // abandon it if that publisher dies while we wait for room.
        // release: as the intent store above (our last commit happens before
        // a recoverer that reads this); one that still sees p retries later.
        slot.intent.store(~0ull, std::memory_order_release);
        continue;
      }
    } else {
      tail_ = end;
      // relaxed: only recovery reads the tail, after this process died (nothing left to order).
      pub.tail.store(end, std::memory_order_relaxed);
      note_record_start(record);
    }
    // release: orders our load of oldest (the room check) before the overwrites below, so a
    // lossy reader that sees our bytes also sees the raise that made room (seqlock writer side).
    detail::fence_release();
    if (record != p) {
      auto* pad = reinterpret_cast<RecordHeader*>(s.at(p));
      if (room >= layout::kRecordHeaderSize) {
        pad->size = static_cast<std::uint32_t>(room - layout::kRecordHeaderSize);
        pad->kind = static_cast<std::uint16_t>(RecordKind::padding);
        pad->slack = 0;
        pad->sequence = 0;
        pad->publish_ns = 0;
        // release: a reader peeking this tag also sees the kind (padding: it takes the cursor path).
        detail::tag_of(s, p).store(p, std::memory_order_release);
      }
    }
    // Fetch for writing the lines a few records ahead, so that their
    // read-for-ownership (they were written a lap ago and left the cache)
    // overlaps the work until we get there instead of stalling our stores
    // then. Never the next record's line: a reader right behind polls it.
    // Streaming mode: only the header line of the record four ahead (the one
    // line of a record written with normal stores; fetching lines that
    // non-temporal stores will write would only add traffic). Otherwise up
    // to 256 B from the start of the record four ahead (a whole record at 100 B).
    if (s.streaming_stores && size >= detail::kStreamMin) {
      platform::prefetch_for_write(s.at(end + 4 * rec));
    } else {
      const std::uint64_t ahead = end + std::min<std::uint64_t>(4 * rec, 4096);
      const std::uint64_t span = std::min<std::uint64_t>(rec, 256);
      for (std::uint64_t off = 0; off < span; off += 64) platform::prefetch_for_write(s.at(ahead + off));
    }
    // The header is written at commit, in one burst with the tag: a reader
    // right behind polls this line, and every store to it before the commit
    // would pull it back from that reader. Only a tag that already reads as
    // this record (old payload bytes that happen to match) must be spoiled now.
    // relaxed: an invalid tag until the commit stores the real one (release).
    auto tag = detail::tag_of(s, record);
    if (tag.load(std::memory_order_relaxed) == record) tag.store(~0ull, std::memory_order_relaxed);
    loan.owner_ = this;
    loan.payload_ = s.at(record) + layout::kRecordHeaderSize;
    loan.size_ = size;
    loan.position_ = p;
    loan.record_ = record;
    loan.end_ = end;
    loan.status_ = Status::ok;
    loan_ = &loan;
    // Closed? Checked after our claim is in the tail (Dekker with a reader's
    // drained check, Subscriber::empty_or_closed): either that reader sees
    // our claim and waits for it, or we see closed here and give the claim
    // back as an aborted record. Only a compiler barrier here: the reader
    // side pays (membarrier, then a re-check after any store buffer drained).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    // relaxed: ordered by the barriers above and on the reader's side.
    if (s.admin().closed.load(std::memory_order_relaxed) != 0) [[unlikely]] {
      (void)finish(loan, 0, true);
      return Status::closed;
    }
    return Status::ok;
  }
}

Status Publisher::await_token(std::uint64_t position) noexcept {
  TopicState& s = *state_;
  auto& pub = s.pub();
  // A predecessor that neither commits nor dies (or a scribbled cursor) must
  // not hold us forever: give up after this long without progress.
  const std::uint64_t give_up_ns = std::max<std::uint64_t>(8 * s.recovery_ns, 2'000'000'000ull);
  std::uint64_t last_cursor = ~0ull, last_progress_ns = 0;  // set on the first pass (last_cursor differs)
  for (;;) {
    // acquire: pairs with the previous committer's release store; we now own the token.
    std::uint64_t c = pub.cursor.load(std::memory_order_acquire);
    if (c == position) return Status::ok;
    const std::uint64_t now = platform::monotonic_ns();
    // relaxed: a sanity check; claims never run more than a ring ahead of the cursor.
    const std::uint64_t t = pub.tail.load(std::memory_order_relaxed);
    const bool insane = c > position || position - c > s.capacity || t < position || !detail::aligned(c);
    if (c != last_cursor) {
      last_cursor = c;
      last_progress_ns = now;
    }
    if (insane || now - last_progress_ns > give_up_ns) {
      // Disown the claim so that recovery turns it into a hole once the cursor reaches it.
      // release: pairs with recover_claim's acquire load (nothing of ours was committed at the claim).
      s.control->publishers[slot_].intent.store(~0ull, std::memory_order_release);
      return insane ? Status::corrupt : Status::timeout;
    }
    // Until the cursor moves (or the give-up time): the one recovery-sliced
    // wait, on the shared stall clock of the frontier.
    const auto moved = [&]() noexcept {
      c = pub.cursor.load(std::memory_order_acquire);  // acquire: as above
      return c != last_cursor;
    };
    (void)detail::recovery_sliced_wait(
        detail::cursor_stall(s), Deadline::at_ns(last_progress_ns + give_up_ns + 1), moved,
        // relaxed: the stall clock's key only.
        [&]() noexcept { return pub.cursor.load(std::memory_order_relaxed); },
        [&](Deadline d) noexcept {
          return s.barrier.wait(
              s.events().commit,
              [&] {
                c = pub.cursor.load(std::memory_order_acquire);  // acquire: as above
                return c >= position;
              },
              d, s.wait);
        },
        [&]() noexcept { detail::recover_frontier(s); });
  }
}

CommitResult Publisher::finish(TopicWriteLoan& loan, std::size_t n, bool abort) noexcept {
  TopicState& s = *state_;
  auto& pub = s.pub();
  const bool multi = s.mode == layout::PublisherMode::multi;
  loan_ = nullptr;
  loan.owner_ = nullptr;  // whatever happens below, the loan is spent
  auto* h = reinterpret_cast<RecordHeader*>(s.at(loan.record_));
  // The header's fields, stored together just before the tag (after the
  // commit token in multi mode): a reader right behind polls that line.
  auto size = static_cast<std::uint32_t>(loan.size_);  // as claimed; trimmed below
  auto kind = static_cast<std::uint16_t>(RecordKind::data);
  std::uint16_t slack = 0;
  std::uint64_t end = loan.end_;
  if (!abort && n < loan.size_) {
    const std::uint64_t used = layout::record_bytes(n);
    const std::uint64_t leftover = layout::record_bytes(loan.size_) - used;
    size = static_cast<std::uint32_t>(n);
    if (!multi) {
      end = loan.record_ + used;  // we are the only claimant: give the rest back
      tail_ = end;
      pub.tail.store(end, std::memory_order_relaxed);  // relaxed: as in reserve
    } else if (leftover >= layout::kRecordHeaderSize) {
      auto* filler = reinterpret_cast<RecordHeader*>(s.at(loan.record_ + used));
      filler->size = static_cast<std::uint32_t>(leftover - layout::kRecordHeaderSize);
      filler->kind = static_cast<std::uint16_t>(RecordKind::aborted);
      filler->slack = 0;
      filler->sequence = 0;
      filler->publish_ns = 0;
      filler->position = loan.record_ + used;
    } else {
      slack = static_cast<std::uint16_t>(leftover);
    }
  }
  if (multi) {
    if (Status st = await_token(loan.position_); st != Status::ok) return {st, 0};
  }
  // relaxed: we hold the commit token (single publisher, or the cursor acquire above).
  const std::uint64_t seq = pending_count_ != 0 ? pending_next_ : pub.next_sequence.load(std::memory_order_relaxed);
  const std::uint64_t next = abort ? seq : seq + 1;
  if (abort) {
    kind = static_cast<std::uint16_t>(RecordKind::aborted);
    size = static_cast<std::uint32_t>(loan.end_ - loan.record_ - layout::kRecordHeaderSize);
    slack = 0;
  } else {
    h->sequence = seq;
  }
  h->size = size;
  h->kind = kind;
  h->slack = slack;
  if (!multi && s.streaming_stores) {
    // Bulk mode: make commits visible in batches, so the fence that orders the
    // streaming stores is paid once per batch (docs/design/topic.md). flush() stamps
    // the batch with one clock read; the batch's age is checked on its first
    // kAgeCheckEvery commits (so a slow publisher's commit shows its
    // predecessors at once, as with a check on every commit) and on every
    // kAgeCheckEvery-th after (a clock read costs a fifth of a 100 B commit).
    bool old_enough = false;
    if (pending_count_ < kAgeCheckEvery || pending_count_ % kAgeCheckEvery == 0) {
      const std::uint64_t now = publish_stamp().now();
      if (pending_count_ == 0) pending_since_ns_ = now;
      old_enough = now - pending_since_ns_ >= kCommitBatchNs;
    }
    if (!abort) count_commit(size);
    marks_->pending_records[pending_count_++] = loan.record_;
    pending_end_ = end;
    pending_next_ = next;
    if (pending_count_ >= detail::kCommitBatch || old_enough) flush();
    return {Status::ok, abort ? 0 : seq};
  }
  if (!abort) {
    count_commit(size);
    // A single publisher stamps bursts with one clock read per microsecond
    // (platform::BurstStamp): the stamp is within 1 us of the commit. Multi
    // mode reads the clock each time, under the commit token, so stamps
    // follow the commit order across publishers.
    h->publish_ns = multi ? platform::realtime_ns() : publish_stamp().now();
  }
  // The streaming stores of the payload (copy_in) are weakly ordered: fence them
  // before the tag, which already publishes the record to a reader right behind.
  if (s.streaming_stores) detail::stream_fence();
  // release: the record is complete; a reader right behind may take it from here.
  detail::tag_of(s, loan.record_).store(loan.record_, std::memory_order_release);
  publish_commit(end, next);
  return {Status::ok, abort ? 0 : seq};
}

// Statistics in this publisher's own slot line (read by `zipc top`): no
// other process writes it, so plain load + store, relaxed.
void Publisher::count_commit(std::uint32_t size) noexcept {
  auto& slot = state_->control->publishers[slot_];
  const std::uint64_t messages = slot.messages.load(std::memory_order_relaxed) + 1;
  slot.messages.store(messages, std::memory_order_relaxed);
  // A publisher that never needs room still adopts new read-only readers' seats soon.
  if (messages % 1024 == 0 && seats_) (void)seats_->maybe_adopt(*state_, platform::monotonic_ns());
  slot.bytes.store(slot.bytes.load(std::memory_order_relaxed) + size, std::memory_order_relaxed);
}

void Publisher::publish_commit(std::uint64_t end, std::uint64_t next) noexcept {
  TopicState& s = *state_;
  // (Streaming stores were fenced by the caller, before the tags.)
  detail::write_commit_pair(s, end, next, s.mode == layout::PublisherMode::multi);
  if (s.mode == layout::PublisherMode::multi) {
    s.barrier.wake(s.events().commit, true);
    // A publisher waiting for room may be waiting for this commit (claims
    // fill the ring), not for a reader: one load when nobody waits.
    s.barrier.wake(s.events().space, true);
  }
  s.barrier.wake(s.events().data, true);
}

void Publisher::flush() noexcept {
  ZIPC_USE_CHECK(this, );  // (debug builds) another thread inside: flushed by its next commit instead
  if (!state_ || pending_count_ == 0) return;
  // Streaming mode stamps a record when its batch becomes visible (now). Its
  // header was written at commit and is still in this core's cache; the stamp
  // goes into the same line just before the tag, which publishes both.
  const std::uint64_t stamp = publish_stamp().now();
  detail::stream_fence();  // the streaming stores before the tags that publish them
  for (std::uint32_t i = 0; i < pending_count_; ++i) {
    const std::uint64_t record = marks_->pending_records[i];
    reinterpret_cast<RecordHeader*>(state_->at(record))->publish_ns = stamp;
    // release: as in finish (the stamp above included).
    detail::tag_of(*state_, record).store(record, std::memory_order_release);
  }
  pending_count_ = 0;
  publish_commit(pending_end_, pending_next_);
}

// ---------------------------------------------------------------- public calls

namespace {
void copy_in(const TopicState& s, std::byte* dst, std::span<const std::byte> m) noexcept {
  if (s.streaming_stores && m.size() >= detail::kStreamMin) {
    detail::stream_copy(dst, m.data(), m.size());  // publish_commit fences before the cursor store
  } else if (!m.empty()) {
    std::memcpy(dst, m.data(), m.size());
  }
}
}  // namespace

CommitResult Publisher::try_publish(std::span<const std::byte> message) noexcept {
  ZIPC_USE_CHECK(this, (CommitResult{Status::busy, 0}));
  TopicWriteLoan loan;
  const Status st = reserve(message.size(), Deadline::at_ns(0), loan);
  if (st != Status::ok) return {st, 0};
  copy_in(*state_, loan.payload_, message);
  return finish(loan, message.size(), false);
}

CommitResult Publisher::publish(std::span<const std::byte> message, std::chrono::nanoseconds timeout) noexcept {
  ZIPC_USE_CHECK(this, (CommitResult{Status::busy, 0}));
  TopicWriteLoan loan;
  // Try first: the deadline (a clock read) is only needed when we must wait.
  Status st = reserve(message.size(), Deadline::at_ns(0), loan);
  if (st == Status::full && timeout.count() > 0) {  // <= 0: try once (docs/guide/timeouts.md)
    st = reserve(message.size(), Deadline::after(timeout), loan);
    if (st == Status::full) st = Status::timeout;
  }
  if (st != Status::ok) return {st, 0};
  copy_in(*state_, loan.payload_, message);
  return finish(loan, message.size(), false);
}

TopicWriteLoan Publisher::try_reserve(std::size_t size) noexcept {
  TopicWriteLoan loan;
  ZIPC_USE_CHECK(this, (loan.status_ = Status::busy, std::move(loan)));
  loan.status_ = reserve(size, Deadline::at_ns(0), loan);
  return loan;
}

TopicWriteLoan Publisher::reserve(std::size_t size, std::chrono::nanoseconds timeout) noexcept {
  TopicWriteLoan loan;
  ZIPC_USE_CHECK(this, (loan.status_ = Status::busy, std::move(loan)));
  Status st = reserve(size, Deadline::at_ns(0), loan);  // try first, as in publish
  if (st == Status::full && timeout.count() > 0) {      // <= 0: try once (docs/guide/timeouts.md)
    st = reserve(size, Deadline::after(timeout), loan);
    if (st == Status::full) st = Status::timeout;
  }
  loan.status_ = st;
  return loan;
}

// ---------------------------------------------------------------- TopicWriteLoan

TopicWriteLoan::TopicWriteLoan(TopicWriteLoan&& o) noexcept {
  *this = std::move(o);
}

TopicWriteLoan& TopicWriteLoan::operator=(TopicWriteLoan&& o) noexcept {
  if (this != &o) {
    if (owner_ != nullptr) abort();
    // Field by field, every one: reserve() just filled o (see platform::keep_apart).
    owner_ = o.owner_;
    if (owner_ != nullptr) owner_->loan_ = this;
    platform::keep_apart();
    payload_ = o.payload_;
    platform::keep_apart();
    size_ = o.size_;
    platform::keep_apart();
    position_ = o.position_;
    platform::keep_apart();
    record_ = o.record_;
    platform::keep_apart();
    end_ = o.end_;
    platform::keep_apart();
    status_ = o.status_;
    o.owner_ = nullptr;
  }
  return *this;
}

CommitResult TopicWriteLoan::commit(std::size_t n) noexcept {
  // No loan held (ended, moved from, default): detached; a failed reserve: its reason.
  if (owner_ == nullptr) return {status_ == Status::ok ? Status::detached : status_, 0};
  if (n > size_) return {Status::too_large, 0};  // the loan is kept
  Publisher* p = owner_;
  CommitResult r;
  {
    ZIPC_USE_CHECK(p, (CommitResult{Status::busy, 0}));  // (debug builds; the loan is kept; ends before p may go)
    r = p->finish(*this, n, false);
  }
  payload_ = nullptr;  // data() is empty once the loan ended
  size_ = 0;
  if (p->parked_) [[unlikely]]
    delete p;  // its handle went while we were out (docs/guide/handles.md)
  return r;
}

void TopicWriteLoan::abort() noexcept {
  if (owner_ == nullptr) return;
  Publisher* p = owner_;
  (void)p->finish(*this, 0, true);
  owner_ = nullptr;
  payload_ = nullptr;
  size_ = 0;
  if (p->parked_) [[unlikely]]
    delete p;
}

}  // namespace zipc
