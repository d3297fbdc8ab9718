// Topic subscribers: join (latest / oldest / sequence), read, lossy validation.
#include <algorithm>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "topic_state.hpp"
#include "zipc/process.hpp"

namespace zipc {

using detail::TopicState;
using layout::RecordHeader;
using layout::RecordKind;

namespace {
constexpr std::uint32_t kCursorEveryPolls = 64;           // see Subscriber::cursor_due
constexpr std::uint64_t kReadAheadBytes = 512;            // see Subscriber::next_record
constexpr std::uint64_t kOverrunPatienceNs = 50'000'000;  // see Subscriber::overrun

ReadResult rr(Status st) noexcept {
  ReadResult r;
  r.status = st;
  return r;
}
MessageView mv(Status st) noexcept {
  MessageView v;
  v.status = st;
  return v;
}

std::uint64_t retained_floor(const TopicState& s) noexcept {
  // seq_cst: Dekker with make_room (publisher raises drop_intent, then reads the generation).
  return std::max(s.pub().drop_intent.load(std::memory_order_seq_cst), s.pub().oldest.load(std::memory_order_seq_cst));
}
}  // namespace

Subscriber Topic::subscribe(const SubscribeOptions& options) {
  TopicState& s = *state_;
  s.me = pack(ProcessId::current());
  Subscriber sub;
  sub.state_ = state_;
  sub.delivery_ = options.delivery;
  bool found = false;
  for (int pass = 0; pass < 2 && !found; ++pass) {
    for (std::uint32_t i = 0; i < s.max_subscribers && !found; ++i) {
      auto& slot = s.subscribers[i];
      std::uint64_t owner = slot.owner.load(std::memory_order_relaxed);  // relaxed: the CAS validates it
      if (owner != 0 && (pass == 0 || is_alive_packed(owner))) continue;
      // acq_rel: owning the slot before we write its fields.
      if (slot.owner.compare_exchange_strong(owner, s.me, std::memory_order_acq_rel)) {
        sub.slot_ = i;
        found = true;
      }
    }
  }
  if (!found) {
    sub.state_.reset();
    detail::topic_fail(Errc::busy, s.name(),
                       "all " + std::to_string(s.max_subscribers) + " subscriber slots hold live subscribers");
  }
  auto& slot = s.subscribers[sub.slot_];
  const bool reliable = options.delivery == Delivery::reliable;
  // release: the mode is seen with the position below.
  slot.mode.store(reliable ? 1u : 2u, std::memory_order_release);
  auto fail = [&](Errc code, const std::string& why) {
    slot.mode.store(0, std::memory_order_release);  // release: slot free again
    slot.owner.store(0, std::memory_order_release);
    sub.state_.reset();
    detail::topic_fail(code, s.name(), why);
  };
  for (int attempt = 0;; ++attempt) {
    if (attempt > 100) fail(Errc::corrupt, "could not join: the log's positions do not validate");
    std::uint64_t r = 0, expected = 0;
    if (!detail::read_commit_pair(s, &r, &expected)) fail(Errc::corrupt, "the commit version stays odd");
    if (options.from.kind == From::Kind::latest) {
    } else if (options.from.kind == From::Kind::oldest) {
      r = retained_floor(s);
      if (!detail::sequence_at(s, r, &expected)) continue;
    } else {
      std::uint64_t oldest_seq = 0;
      const std::uint64_t next = expected;
      if (options.from.seq > next) {
        fail(Errc::invalid_argument, "sequence " + std::to_string(options.from.seq) +
                                         " is not published yet (next is " + std::to_string(next) + ")");
      }
      if (!detail::find_sequence(s, options.from.seq, &r, &oldest_seq)) {
        if (options.from.seq < oldest_seq) {
          fail(Errc::not_retained, "sequence " + std::to_string(options.from.seq) +
                                       " is no longer retained; the oldest available is " + std::to_string(oldest_seq));
        }
        continue;
      }
      expected = options.from.seq;
    }
    if (!detail::aligned(r)) continue;
    if (reliable) {
      // seq_cst: Dekker with make_room: store our position, then read the publishers' intent.
      slot.position.store(r, std::memory_order_seq_cst);
      s.admin().subscriber_generation.fetch_add(1, std::memory_order_seq_cst);
      if (retained_floor(s) > r) continue;  // a publisher is dropping past r: join again
      // Now protected: the record at r cannot be overwritten; re-check what we found there.
      std::uint64_t seq_here = 0;
      if (!detail::sequence_at(s, r, &seq_here) || seq_here != expected) continue;
    }
    sub.position_ = r;
    sub.cursor_ = r;
    sub.expected_ = expected;
    break;
  }
  return sub;
}

Subscriber::Subscriber(Subscriber&& o) noexcept {
  *this = std::move(o);
}

Subscriber& Subscriber::operator=(Subscriber&& o) noexcept {
  if (this != &o) {
    this->~Subscriber();
    state_ = std::move(o.state_);
    slot_ = o.slot_;
    delivery_ = o.delivery_;
    position_ = o.position_;
    cursor_ = o.cursor_;
    expected_ = o.expected_;
    view_end_ = o.view_end_;
    lost_ = o.lost_;
    abandoned_ = o.abandoned_;
    idle_polls_ = o.idle_polls_;
  }
  return *this;
}

Subscriber::~Subscriber() {
  if (!state_) return;
  auto& slot = state_->subscribers[slot_];
  slot.mode.store(0, std::memory_order_release);  // release: publishers stop counting us first
  std::uint64_t me = state_->me;
  slot.owner.compare_exchange_strong(me, 0, std::memory_order_release);  // release: slot free
  state_->events().space.notify_all();
  state_.reset();
}

void Subscriber::publish_position() noexcept {
  if (delivery_ != Delivery::reliable) return;
  TopicState& s = *state_;
  // release: we are done reading every byte below position_; pairs with make_room's acquire.
  s.subscribers[slot_].position.store(position_, std::memory_order_release);
  s.barrier.wake(s.events().space, true);
}

void Subscriber::release() noexcept {
  if (state_) release_view();
}

void Subscriber::release_view() noexcept {
  if (view_end_ == 0) return;
  position_ = view_end_;
  view_end_ = 0;
  publish_position();
}

namespace {
// A private copy of the header at `position`: every field used after the check
// comes from it, so a peer scribbling the ring in between cannot change a
// length we already validated.
RecordHeader header_copy(const TopicState& s, std::uint64_t position) noexcept {
  RecordHeader h;
  std::memcpy(&h, s.at(position), sizeof h);
  return h;
}
}  // namespace

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
  const RecordHeader h = header_copy(s, position);
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
    const RecordHeader h = header_copy(s, p);
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

ReadResult Subscriber::try_read(std::span<std::byte> buffer) noexcept {
  if (!state_) return rr(Status::corrupt);
  if (delivery_ == Delivery::lossy) return read_lossy(buffer);
  release_view();
  Found f;
  switch (next_record(&f)) {
    case Step::empty: detail::poll_stuck_claim(*state_); return rr(Status::empty);
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

MessageView Subscriber::try_read_view() noexcept {
  if (!state_ || delivery_ != Delivery::reliable) return mv(Status::corrupt);
  release_view();
  Found f;
  switch (next_record(&f)) {
    case Step::empty: detail::poll_stuck_claim(*state_); return mv(Status::empty);
    case Step::corrupt: return mv(Status::corrupt);
    default: break;
  }
  detail::test_point(detail::TestPoint::reader_checked_record, f.position);
  // The view spans the checked size (see try_read).
  MessageView v{Status::ok,
                f.sequence,
                f.publish_ns,
                {state_->at(f.position) + layout::kRecordHeaderSize, static_cast<std::size_t>(f.size)}};
  view_end_ = f.position + f.total;
  ++expected_;
  return v;
}

// Finding the oldest retained sequence fails while a publisher is caught
// half-way through a commit (the version stays odd while it is preempted) or
// keeps moving oldest during the walk: both pass. Only a state that stays
// unreadable (for the recovery time, at most kOverrunPatienceNs), or a commit
// version already known to be stuck, is reported corrupt. (Giving up after
// 16 quick tries reported a preempted publisher as corruption under load.)
ReadResult Subscriber::overrun() noexcept {
  TopicState& s = *state_;
  std::uint64_t give_up_ns = 0;
  for (std::uint32_t i = 0;; ++i) {
    if (i >= 16) {
      if (detail::commit_stuck(s)) return rr(Status::corrupt);
      const std::uint64_t now = platform::monotonic_ns();
      if (give_up_ns == 0) give_up_ns = now + std::min<std::uint64_t>(s.recovery_ns, kOverrunPatienceNs);
      if (now >= give_up_ns) return rr(Status::corrupt);
      platform::yield_cpu();  // let a preempted publisher finish its commit
    }
    // acquire: pairs with the release raise of oldest.
    const std::uint64_t o = s.pub().oldest.load(std::memory_order_acquire);
    std::uint64_t seq = 0;
    if (!detail::sequence_at(s, o, &seq)) continue;  // also refuses an unaligned o
    const std::uint64_t lost = seq > expected_ ? seq - expected_ : 0;
    lost_ += lost;
    expected_ = std::max(expected_, seq);
    position_ = o;
    cursor_ = o;
    ReadResult r = rr(Status::overrun);
    r.sequence = expected_;
    r.size = static_cast<std::uint32_t>(std::min<std::uint64_t>(lost, ~0u));
    return r;
  }
}

ReadResult Subscriber::read_lossy(std::span<std::byte> buffer) noexcept {
  TopicState& s = *state_;
  auto& pub = s.pub();
  for (std::uint64_t steps = 0; steps < 1'000'000; ++steps) {
    // acquire: pairs with the release raise of oldest.
    if (pub.oldest.load(std::memory_order_acquire) > position_) return overrun();
    if (position_ == cursor_) {
      cursor_ = pub.cursor.load(std::memory_order_acquire);  // acquire: pairs with the commit's release
      if (position_ == cursor_) return rr(Status::empty);
    }
    if (cursor_ < position_ || !detail::aligned(cursor_)) return rr(Status::corrupt);
    if (cursor_ - position_ > s.capacity) return overrun();
    const std::uint64_t p = detail::skip_implicit_padding(s, position_);
    if (p >= cursor_) {
      if (p != cursor_) return rr(Status::corrupt);
      position_ = p;
      continue;
    }
    RecordHeader h;
    detail::racy_copy(&h, s.at(p), sizeof h);
    const detail::RecordCheck hc = detail::check_record(s, h, p, cursor_);
    const bool fits = hc.ok && hc.kind == RecordKind::data && h.size <= buffer.size();
    if (fits) detail::racy_copy(buffer.data(), s.at(p) + layout::kRecordHeaderSize, h.size);
    detail::fence_acquire();  // the copies above before re-checking oldest
    // acquire, after the fence: oldest <= p means no byte we copied was overwritten.
    if (pub.oldest.load(std::memory_order_acquire) > p) return overrun();
    if (!hc.ok) return rr(Status::corrupt);
    if (hc.kind != RecordKind::data) {
      if (hc.kind == RecordKind::abandoned) ++abandoned_;
      position_ = p + hc.total;
      continue;
    }
    if (h.sequence != expected_) return rr(Status::corrupt);
    ReadResult r{Status::ok, h.sequence, h.publish_ns, h.size};
    if (!fits) {
      position_ = p;
      r.status = Status::too_large;
      return r;
    }
    position_ = p + hc.total;
    ++expected_;
    return r;
  }
  return rr(Status::corrupt);
}

Status Subscriber::wait_readable(Deadline deadline) noexcept {
  TopicState& s = *state_;
  auto& pub = s.pub();
  const std::uint64_t want = view_end_ != 0 ? view_end_ : position_;
  const bool peekable = delivery_ == Delivery::reliable;
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
      if (probe == Probe::pending && !cursor_due()) return false;
      // acquire: pairs with the commit's release store of the cursor.
      const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);
      if (c <= want) return false;
      cursor_ = c;  // so the read that follows goes by the cursor, not the tag
      return true;
    }
    // acquire: pairs with the commit's release store of the cursor.
    return pub.cursor.load(std::memory_order_acquire) > want;
  };
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
  ReadResult r = try_read(buffer);  // try first: the deadline (a clock read) only when we must wait
  if (r.status != Status::empty) return r;
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

MessageView Subscriber::read_view(std::chrono::nanoseconds timeout) noexcept {
  MessageView v = try_read_view();  // try first, as in read
  if (v.status != Status::empty) return v;
  const Deadline deadline = Deadline::after(timeout);
  for (;;) {
    const bool timed_out = wait_readable(deadline) == Status::timeout;
    v = try_read_view();
    if (v.status != Status::empty) return v;
    if (timed_out) {
      v.status = Status::timeout;
      return v;
    }
  }
}

}  // namespace zipc
