// Topic publishers: claim room at the tail, write, commit by moving the cursor.
#include <algorithm>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/stream_copy.hpp"
#include "topic/topic_durable.hpp"
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
constexpr std::uint32_t kCommitBatch = 256;                // streaming mode: commits made visible together
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

// Raises drop_intent to at least v (seq_cst: see make_room).
void raise_intent(layout::PublisherLine& pub, std::uint64_t v) noexcept {
  std::uint64_t cur = pub.drop_intent.load(std::memory_order_seq_cst);
  // seq_cst: the Dekker store against joining subscribers (docs/topic.md).
  while (cur < v && !pub.drop_intent.compare_exchange_weak(cur, v, std::memory_order_seq_cst)) {
  }
}

}  // namespace

// ---------------------------------------------------------------- attach

Publisher Topic::publisher() {
  TopicState& s = *state_;
  if (s.read_only) detail::topic_fail(Errc::wrong_role, s.name(), "opened read-only: it has no publisher");
  s.me = pack(ProcessId::current());
  Publisher p;
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
      // The previous publisher died: turn its unfinished claim into a hole first.
      detail::recover_hole(s, pub.cursor.load(std::memory_order_acquire));  // acquire: as in recovery
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
    loan_out_ = o.loan_out_;
    pending_end_ = o.pending_end_;
    pending_next_ = o.pending_next_;
    pending_count_ = o.pending_count_;
    pending_since_ns_ = o.pending_since_ns_;
    pending_records_ = o.pending_records_;
    drop_marks_ = o.drop_marks_;
    mark_head_ = o.mark_head_;
    next_mark_ = o.next_mark_;
    seats_ = std::move(o.seats_);
    o.pending_count_ = 0;
  }
  return *this;
}

Publisher::~Publisher() {
  // Reset here, not left to the member destructor: operator= runs this
  // destructor and then assigns to the members again.
  seats_.reset();
  if (!state_) return;
  flush();
  TopicState& s = *state_;
  if (s.mode == layout::PublisherMode::single) {
    std::uint64_t me = s.me;
    // release: our records and tail happen before the next publisher's takeover.
    s.admin().single_publisher.compare_exchange_strong(me, 0, std::memory_order_release);
  } else {
    auto& slot = s.control->publishers[slot_];
    slot.intent.store(~0ull, std::memory_order_relaxed);  // relaxed: the owner release below publishes it
    std::uint64_t me = s.me;
    slot.owner.compare_exchange_strong(me, 0, std::memory_order_release);  // release: slot free for reuse
  }
  state_.reset();
}

// ---------------------------------------------------------------- room

// Every so often (an eighth of a batch of room) a single publisher notes the
// start of a record it claims. These are positions it chose itself, not read
// from the ring, so make_room may drop up to one without validating headers.
void Publisher::note_record_start(std::uint64_t record) noexcept {
  if (record < next_mark_) return;
  drop_marks_[mark_head_ % drop_marks_.size()] = record;
  ++mark_head_;
  next_mark_ = record + std::max<std::uint64_t>(state_->capacity / 64, layout::kRecordAlign);
}

// The highest noted record start in [lo, hi], or 0 when there is none.
std::uint64_t Publisher::drop_mark(std::uint64_t lo, std::uint64_t hi) const noexcept {
  std::uint64_t best = 0;
  const std::uint64_t n = std::min<std::uint64_t>(mark_head_, drop_marks_.size());
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t m = drop_marks_[i];
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
      RecordHeader h;
      detail::racy_copy(&h, s.at(p), sizeof h);
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

// ---------------------------------------------------------------- claim

Status Publisher::reserve(std::size_t size, Deadline deadline, TopicWriteLoan& loan) noexcept {
  if (!state_ || loan_out_) return Status::corrupt;
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
      slot.intent.store(p, std::memory_order_relaxed);  // relaxed: published by the CAS (release) below
      detail::test_point(detail::TestPoint::before_claim_cas, p);
      std::uint64_t expect = p;
      // acq_rel: release publishes our intent to recoverers; acquire orders after earlier claims.
      if (!pub.tail.compare_exchange_weak(expect, end, std::memory_order_acq_rel)) {
        // Lost: p is another publisher's claim now. An intent left at p would
        // make recovery take us for the owner of that claim (alive) and never
        // abandon it if that publisher dies while we wait for room.
        // relaxed: coherence suffices; a recoverer that still sees p retries later.
        slot.intent.store(~0ull, std::memory_order_relaxed);
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
    loan_out_ = true;
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
      s.control->publishers[slot_].intent.store(~0ull, std::memory_order_relaxed);  // relaxed: a hint for recovery
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
  loan_out_ = false;
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
    // streaming stores is paid once per batch (docs/topic.md). flush() stamps
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
    pending_records_[pending_count_++] = loan.record_;
    pending_end_ = end;
    pending_next_ = next;
    if (pending_count_ >= kCommitBatch || old_enough) flush();
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
  auto& pub = s.pub();
  // (Streaming stores were fenced by the caller, before the tags.)
  // relaxed + release fence: the version is odd while (cursor, next_sequence) change.
  const std::uint64_t v = pub.commit_version.load(std::memory_order_relaxed);
  pub.commit_version.store(v + 1, std::memory_order_relaxed);
  detail::fence_release();
  pub.next_sequence.store(next, std::memory_order_relaxed);  // relaxed: cursor's release covers it
  // release: publishes the records (and next_sequence) to readers and the token to the next claimant.
  pub.cursor.store(end, std::memory_order_release);
  pub.commit_version.store(v + 2, std::memory_order_release);  // release: the pair is consistent again
  if (s.mode == layout::PublisherMode::multi) {
    s.barrier.wake(s.events().commit, true);
    // A publisher waiting for room may be waiting for this commit (claims
    // fill the ring), not for a reader: one load when nobody waits.
    s.barrier.wake(s.events().space, true);
  }
  s.barrier.wake(s.events().data, true);
}

void Publisher::flush() noexcept {
  if (!state_ || pending_count_ == 0) return;
  // Streaming mode stamps a record when its batch becomes visible (now). Its
  // header was written at commit and is still in this core's cache; the stamp
  // goes into the same line just before the tag, which publishes both.
  const std::uint64_t stamp = publish_stamp().now();
  detail::stream_fence();  // the streaming stores before the tags that publish them
  for (std::uint32_t i = 0; i < pending_count_; ++i) {
    const std::uint64_t record = pending_records_[i];
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
  TopicWriteLoan loan;
  const Status st = reserve(message.size(), Deadline::at_ns(0), loan);
  if (st != Status::ok) return {st, 0};
  copy_in(*state_, loan.payload_, message);
  return finish(loan, message.size(), false);
}

CommitResult Publisher::publish(std::span<const std::byte> message, std::chrono::nanoseconds timeout) noexcept {
  TopicWriteLoan loan;
  // Try first: the deadline (a clock read) is only needed when we must wait.
  Status st = reserve(message.size(), Deadline::at_ns(0), loan);
  if (st == Status::full) st = reserve(message.size(), Deadline::after(timeout), loan);
  if (st != Status::ok) return {st == Status::full ? Status::timeout : st, 0};
  copy_in(*state_, loan.payload_, message);
  return finish(loan, message.size(), false);
}

TopicWriteLoan Publisher::try_reserve(std::size_t size) noexcept {
  TopicWriteLoan loan;
  loan.status_ = reserve(size, Deadline::at_ns(0), loan);
  return loan;
}

TopicWriteLoan Publisher::reserve(std::size_t size, std::chrono::nanoseconds timeout) noexcept {
  TopicWriteLoan loan;
  Status st = reserve(size, Deadline::at_ns(0), loan);  // try first, as in publish
  if (st == Status::full) st = reserve(size, Deadline::after(timeout), loan);
  loan.status_ = st == Status::full ? Status::timeout : st;
  return loan;
}

// ---------------------------------------------------------------- TopicWriteLoan

TopicWriteLoan::TopicWriteLoan(TopicWriteLoan&& o) noexcept {
  *this = std::move(o);
}

TopicWriteLoan& TopicWriteLoan::operator=(TopicWriteLoan&& o) noexcept {
  if (this != &o) {
    if (owner_ != nullptr) abort();
    // Field by field: reserve() just filled o (see platform::keep_apart).
    owner_ = o.owner_;
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
    status_ = o.status_;
    o.owner_ = nullptr;
  }
  return *this;
}

CommitResult TopicWriteLoan::commit(std::size_t n) noexcept {
  if (owner_ == nullptr) return {status_ == Status::ok ? Status::corrupt : status_, 0};
  if (n > size_) return {Status::too_large, 0};  // the loan is kept
  Publisher* p = owner_;
  return p->finish(*this, n, false);
}

void TopicWriteLoan::abort() noexcept {
  if (owner_ == nullptr) return;
  Publisher* p = owner_;
  (void)p->finish(*this, 0, true);
  owner_ = nullptr;
}

}  // namespace zipc
