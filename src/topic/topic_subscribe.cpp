// Topic subscribers: the reliable read path, waiting to read, the public calls and read loans.
#include <algorithm>
#include <utility>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "sync/use_check.hpp"
#include "topic/topic_durable.hpp"
#include "topic/topic_reader_seat.hpp"
#include "topic/topic_state.hpp"
#include "topic/topic_subscriber.hpp"
#include "zipc/process.hpp"

namespace zipc {

using detail::rr;
using detail::TopicState;
using layout::RecordHeader;
using layout::RecordKind;

namespace {
constexpr std::uint32_t kCursorEveryPolls = 64;       // see Subscriber::cursor_due
constexpr std::uint64_t kReadAheadBytes = 512;        // see Subscriber::next_record
constexpr std::uint64_t kDrainRecheckNs = 50'000;     // see Subscriber::empty_or_closed (> any store buffer drain)
constexpr std::uint64_t kReadOnlyPollNs = 1'000'000;  // see poll_readable

TopicReadLoan mv(Status st) noexcept {
  return TopicReadLoan(st);
}
}  // namespace

void Subscriber::publish_position() noexcept {
  if (delivery_ != Delivery::reliable) return;
  TopicState& s = *state_;
  slot().sequence.store(expected_, std::memory_order_relaxed);  // relaxed: statistics only
  // release: we are done reading every byte below position_; pairs with make_room's acquire.
  slot().position.store(position_, std::memory_order_release);
  s.barrier.wake(s.events().space, true);
}

void Subscriber::release_loan(std::uint64_t end) noexcept {
  // Only the loan still out: an older one was released by a later call.
  if (state_ && view_end_ == end) release_view();
}

void Subscriber::release_view() noexcept {
  if (view_end_ == 0) return;
  if (loan_ != nullptr) {  // the loan ends here: its data() is empty from now on
    loan_->owner_ = nullptr;
    loan_->data_ = nullptr;
    loan_->size_ = 0;
    loan_ = nullptr;
  }
  position_ = view_end_;
  view_end_ = 0;
  publish_position();
}

// Reliable readers at (or past) the cursor look at the record's tag alone.
// Every commit stores the tag before the cursor passes the record, so:
//  - message: the next data record, committed and valid, can be taken before
//    the cursor line arrives;
//  - committed: a record is there, but not one to take this way (padding, a
//    hole, or a header that fails its checks): go by the cursor;
//  - pending: nothing committed yet, so the cursor has not passed `position`
//    either, and reading the cursor line would only pull it from the
//    publisher, which rewrites it with every commit.
Subscriber::Probe Subscriber::probe_at(std::uint64_t position, Found* found) const noexcept {
  const TopicState& s = *state_;
  if (detail::skip_implicit_padding(s, position) != position) return Probe::committed;
  // acquire: pairs with the commit's release store of the tag.
  if (detail::tag_of(s, position).load(std::memory_order_acquire) != position) return Probe::pending;
  const RecordHeader h = detail::header_at(s, position);
  // A kind too (written before the tag): fresh zeroed memory at position 0
  // has a matching tag but no kind, and must not keep a waiter awake.
  if (h.kind < static_cast<std::uint16_t>(RecordKind::data) ||
      h.kind > static_cast<std::uint16_t>(RecordKind::aborted)) {
    return Probe::pending;
  }
  const detail::RecordCheck hc = detail::check_record(s, h, position, position + s.capacity);
  if (!hc.ok || hc.kind != RecordKind::data || h.sequence != expected_) return Probe::committed;
  *found = {position, hc.total, h.sequence, h.publish_ns, h.size};
  return Probe::message;
}

// At the frontier, the cursor is still read once in a while: a tag scribbled
// by a peer must slow a reader down, never stop it.
bool Subscriber::cursor_due() noexcept {
  return ++idle_polls_ % kCursorEveryPolls == 0;
}

Subscriber::Step Subscriber::next_record(Found* found) noexcept {
  TopicState& s = *state_;
  const std::uint64_t start = position_;
  for (std::uint64_t steps = 0; steps < 1'000'000; ++steps) {
    if (position_ >= cursor_) {
      const Probe probe = probe_at(position_, found);
      if (probe == Probe::message) return Step::message;
      if (probe == Probe::pending && !cursor_due()) {
        if (position_ != start) publish_position();
        return Step::empty;
      }
      // acquire: pairs with the commit's release store; records below are complete.
      cursor_ = s.pub().cursor.load(std::memory_order_acquire);
      if (position_ >= cursor_) {  // (past it: records taken by peek before the cursor moved)
        if (position_ - cursor_ > s.capacity) return Step::corrupt;
        if (position_ != start) publish_position();
        return Step::empty;
      }
    }
    if (cursor_ < position_ || cursor_ - position_ > s.capacity || !detail::aligned(cursor_)) return Step::corrupt;
    const std::uint64_t p = detail::skip_implicit_padding(s, position_);
    if (p >= cursor_) {
      if (p != cursor_) return Step::corrupt;
      position_ = p;
      continue;
    }
    // Below the cursor every byte is committed: fetch a few lines ahead, so a
    // reader working through a batch overlaps their transfer from the
    // publisher's cache with this record. (Never past the cursor: those lines
    // may still be written, and a read there would pull them from the writer.)
    if (const std::uint64_t ahead = p + kReadAheadBytes; ahead < cursor_) __builtin_prefetch(s.at(ahead), 0, 3);
    const RecordHeader h = detail::header_at(s, p);
    const detail::RecordCheck hc = detail::check_record(s, h, p, cursor_);
    if (!hc.ok) return Step::corrupt;
    if (hc.kind == RecordKind::data) {
      if (h.sequence != expected_) return Step::corrupt;
      if (p != position_) position_ = p;
      *found = {p, hc.total, h.sequence, h.publish_ns, h.size};
      return Step::message;
    }
    if (hc.kind == RecordKind::abandoned) ++abandoned_;
    position_ = p + hc.total;
  }
  return Step::corrupt;
}

ReadResult Subscriber::report_gap() noexcept {
  ReadResult r = rr(Status::not_retained);
  r.sequence = expected_;
  r.size = static_cast<std::uint32_t>(std::min<std::uint64_t>(gap_, ~0u));
  gap_ = 0;
  slow_ = delivery_ == Delivery::lossy;
  return r;
}

ReadResult Subscriber::read_slow(std::span<std::byte> buffer) noexcept {
  if (gap_ != 0) return report_gap();
  const ReadResult r = read_lossy(buffer);
  if (seat_) seat_->store(position_, expected_);
  return r;
}

// Nothing to read: empty, or closed once every claimed byte is behind us.
Status Subscriber::empty_or_closed() noexcept {
  TopicState& s = *state_;
  // relaxed: a hint; the barrier below orders the check that decides.
  if (s.admin().closed.load(std::memory_order_relaxed) == 0) return Status::empty;
  // Dekker with Publisher::reserve (claim, then check closed, with only a
  // compiler barrier between). A publisher that missed closed had stored its
  // claim (tail) before that load: after membarrier(2) it is visible here if
  // the publisher's process is registered; otherwise it leaves that store
  // buffer within microseconds, so "drained" must hold for kDrainRecheckNs.
  s.barrier.heavy_barrier();
  const auto drained = [&]() noexcept {
    // acquire: pairs with the claim CAS / store (records claimed below it).
    return s.pub().tail.load(std::memory_order_acquire) <= position_;
  };
  if (!drained()) return Status::empty;
  const std::uint64_t until = platform::monotonic_ns() + kDrainRecheckNs;
  while (platform::monotonic_ns() < until) {
    if (!drained()) return Status::empty;
    platform::cpu_relax();
  }
  return drained() ? Status::closed : Status::empty;
}

ReadResult Subscriber::try_read(std::span<std::byte> buffer) noexcept {
  ZIPC_USE_CHECK(this, rr(Status::busy));
  if (!state_) [[unlikely]]
    return rr(Status::detached);
  if (slow_) [[unlikely]]
    return read_slow(buffer);
  release_view();
  Found f;
  switch (next_record(&f)) {
    case Step::empty: detail::poll_stuck_claim(*state_); return rr(empty_or_closed());
    case Step::corrupt: return rr(Status::corrupt);
    default: break;
  }
  detail::test_point(detail::TestPoint::reader_checked_record, f.position);
  // f.size was checked (<= max_message, inside the record): never h->size again.
  ReadResult r{Status::ok, f.sequence, f.publish_ns, f.size};
  if (f.size > buffer.size()) {
    r.status = Status::too_large;
    return r;
  }
  if (f.size != 0) std::memcpy(buffer.data(), state_->at(f.position) + layout::kRecordHeaderSize, f.size);
  position_ = f.position + f.total;
  ++expected_;
  publish_position();
  return r;
}

TopicReadLoan Subscriber::try_acquire() noexcept {
  ZIPC_USE_CHECK(this, mv(Status::busy));
  if (!state_) [[unlikely]]
    return mv(Status::detached);
  if (slow_) [[unlikely]] {
    if (delivery_ != Delivery::reliable) return mv(Status::not_supported);
    const ReadResult g = report_gap();
    TopicReadLoan v(g.status);
    v.sequence_ = g.sequence;
    return v;
  }
  release_view();
  Found f;
  switch (next_record(&f)) {
    case Step::empty: detail::poll_stuck_claim(*state_); return mv(empty_or_closed());
    case Step::corrupt: return mv(Status::corrupt);
    default: break;
  }
  detail::test_point(detail::TestPoint::reader_checked_record, f.position);
  // The view spans the checked size (see try_read).
  TopicReadLoan v(Status::ok);
  v.owner_ = this;
  loan_ = &v;
  v.data_ = state_->at(f.position) + layout::kRecordHeaderSize;
  v.size_ = f.size;
  v.sequence_ = f.sequence;
  v.publish_ns_ = f.publish_ns;
  v.end_ = view_end_ = f.position + f.total;
  ++expected_;
  return v;
}

namespace {
// A read-only reader cannot register as a sleeper (that is a write to the
// topic), so publishers do not know to wake it: it spins as its WaitOptions
// say, then sleeps on the event's futex word in slices of kReadOnlyPollNs
// (woken early when a publisher wakes a registered sleeper). It never runs
// recovery either: a dead publisher's claim is recovered by a writer.
template <class Ready>
Status poll_readable(const TopicState& s, Deadline deadline, Ready& readable) noexcept {
  if (const Status st = detail::spin_phase(readable, deadline, s.wait); st != Status::empty) return st;
  const Event& event = s.events().data;
  for (;;) {
    // acquire: pairs with the release increment in Event::notify_*; a wake
    // after this load changes the word, so the sleep below returns at once.
    // (Event's protocol without register_sleeper: the count is not ours to write.)
    const std::uint32_t token = event.seq.load(std::memory_order_acquire);
    if (readable()) return Status::ok;
    const std::uint64_t now = platform::monotonic_ns();
    if (now >= deadline.ns()) return Status::timeout;
    (void)event.sleep(token, Deadline::at_ns(std::min(deadline.ns(), now + kReadOnlyPollNs)));
  }
}
}  // namespace

Status Subscriber::wait_readable(Deadline deadline) noexcept {
  TopicState& s = *state_;
  auto& pub = s.pub();
  const std::uint64_t want = view_end_ != 0 ? view_end_ : position_;
  const bool peekable = delivery_ == Delivery::reliable;
  // Closed and nothing claimed past us: the next read says so (it decides, with a barrier).
  const auto drained = [&]() noexcept {
    // relaxed: a hint (see empty_or_closed); acquire: pairs with the claim.
    return s.admin().closed.load(std::memory_order_relaxed) != 0 && pub.tail.load(std::memory_order_acquire) <= want;
  };
  const auto readable = [&]() noexcept {
    // A reliable reader polls the tag line only (see probe_at),
    // and the cursor once the tag shows a record that is not data (or
    // once in a while). Only a state in which the next read makes
    // progress may end the wait: a tag that looks committed over a
    // header that fails its checks must not.
    if (peekable) {
      Found unused;
      const Probe probe = probe_at(want, &unused);
      if (probe == Probe::message) return true;
      if (probe == Probe::pending && !cursor_due()) return drained();
      // acquire: pairs with the commit's release store of the cursor.
      const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);
      if (c <= want) return drained();
      cursor_ = c;  // so the read that follows goes by the cursor, not the tag
      return true;
    }
    // acquire: pairs with the commit's release store of the cursor.
    return pub.cursor.load(std::memory_order_acquire) > want || drained();
  };
  if (s.read_only) return poll_readable(s, deadline, readable);
  // A claim stuck at the frontier for the recovery time (shared clock): its
  // publisher may be dead; every dead claim in a row becomes a hole.
  const bool ok = detail::recovery_sliced_wait(
      detail::cursor_stall(s), deadline, readable,
      // relaxed: the stall clock's key only.
      [&]() noexcept { return pub.cursor.load(std::memory_order_relaxed); },
      [&](Deadline d) noexcept { return s.barrier.wait(s.events().data, readable, d, s.wait); },
      [&]() noexcept { detail::recover_frontier(s); });
  return ok ? Status::ok : Status::timeout;
}

// One result variable, returned from every path: it lives in the caller's
// slot (NRVO), so the common case (the first try succeeds) is never copied
// out of a temporary that was just filled field by field (see
// platform::keep_apart).
ReadResult Subscriber::read(std::span<std::byte> buffer, std::chrono::nanoseconds timeout) noexcept {
  ZIPC_USE_CHECK(this, rr(Status::busy));
  ReadResult r = try_read(buffer);  // try first: the deadline (a clock read) only when we must wait
  if (r.status != Status::empty || timeout.count() <= 0) return r;  // <= 0: try once (docs/guide/timeouts.md)
  const Deadline deadline = Deadline::after(timeout);
  for (;;) {
    const bool timed_out = wait_readable(deadline) == Status::timeout;
    r = try_read(buffer);
    if (r.status != Status::empty) return r;
    if (timed_out) {
      r.status = Status::timeout;
      return r;
    }
  }
}

TopicReadLoan Subscriber::acquire(std::chrono::nanoseconds timeout) noexcept {
  ZIPC_USE_CHECK(this, mv(Status::busy));
  TopicReadLoan v = try_acquire();  // try first, as in read
  if (v.status_ != Status::empty || timeout.count() <= 0) return v;
  const Deadline deadline = Deadline::after(timeout);
  for (;;) {
    const bool timed_out = wait_readable(deadline) == Status::timeout;
    v = try_acquire();
    if (v.status_ != Status::empty) return v;
    if (timed_out) {
      v.status_ = Status::timeout;
      return v;
    }
  }
}

// ---------------------------------------------------------------- TopicReadLoan

TopicReadLoan::TopicReadLoan(TopicReadLoan&& o) noexcept {
  *this = std::move(o);
}

TopicReadLoan& TopicReadLoan::operator=(TopicReadLoan&& o) noexcept {
  if (this != &o) {
    if (owner_ != nullptr) release();
    // Field by field, every one: read() just filled o (see platform::keep_apart).
    owner_ = std::exchange(o.owner_, nullptr);
    if (owner_ != nullptr) owner_->loan_ = this;
    platform::keep_apart();
    data_ = o.data_;
    platform::keep_apart();
    size_ = o.size_;
    platform::keep_apart();
    sequence_ = o.sequence_;
    platform::keep_apart();
    publish_ns_ = o.publish_ns_;
    platform::keep_apart();
    end_ = o.end_;
    platform::keep_apart();
    status_ = o.status_;
  }
  return *this;
}

void TopicReadLoan::release() noexcept {
  if (owner_ == nullptr) return;
  Subscriber* s = owner_;
  s->release_loan(end_);  // clears owner_, data_ and size_ (release_view)
  owner_ = nullptr;
  if (s->parked_) [[unlikely]]
    delete s;  // its handle went while we were out (docs/guide/handles.md)
}

}  // namespace zipc
