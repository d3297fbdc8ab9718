// Topic subscribers: join (latest / oldest / sequence), read, lossy validation.
#include <algorithm>
#include <utility>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/futex.hpp"
#include "topic/topic_durable.hpp"
#include "topic/topic_reader_seat.hpp"
#include "topic/topic_state.hpp"
#include "zipc/process.hpp"

namespace zipc {

using detail::TopicState;
using layout::RecordHeader;
using layout::RecordKind;

namespace {
constexpr std::uint32_t kCursorEveryPolls = 64;           // see Subscriber::cursor_due
constexpr std::uint64_t kReadAheadBytes = 512;            // see Subscriber::next_record
constexpr std::uint64_t kOverrunPatienceNs = 50'000'000;  // see Subscriber::overrun
constexpr std::uint64_t kDrainRecheckNs = 50'000;         // see Subscriber::empty_or_closed (> any store buffer drain)
constexpr std::uint64_t kReadOnlyPollNs = 1'000'000;      // see poll_readable
constexpr std::uint32_t kNoSlot = ~0u;                    // a read-only handle's subscriber holds no slot
constexpr std::uint64_t kAdoptionWaitNs = 50'000'000;     // see wait_for_adoption

ReadResult rr(Status st) noexcept {
  ReadResult r;
  r.status = st;
  return r;
}
TopicReadLoan mv(Status st) noexcept {
  return TopicReadLoan(st);
}

std::uint64_t retained_floor(const TopicState& s) noexcept {
  // seq_cst: Dekker with make_room (publisher raises drop_intent, then reads the generation).
  return std::max(s.pub().drop_intent.load(std::memory_order_seq_cst), s.pub().oldest.load(std::memory_order_seq_cst));
}
}  // namespace

// A plain (not durable) subscriber's slot: a free one, else one whose owner
// died, else (last resort) a durable slot whose position was released.
std::uint32_t detail::claim_plain_slot(TopicState& s, std::uint64_t new_owner, std::uint32_t proxy) {
  for (int pass = 0; pass < 3; ++pass) {
    for (std::uint32_t i = 0; i < s.max_subscribers; ++i) {
      auto& slot = s.subscribers[i];
      // acquire: pairs with the release stores of owner (detach, park); the CAS validates it.
      std::uint64_t owner = slot.owner.load(std::memory_order_acquire);
      bool take = false;
      if (pass == 0) {
        take = owner == 0;
      } else if (pass == 1) {
        take = owner != 0 && !detail::durable_reserved(slot, owner) && owner != layout::kOrphanOwner &&
               owner != layout::kParkedOwner && !is_alive_packed(owner);
      } else {
        take = owner == layout::kParkedOwner;
      }
      if (take && slot.owner.compare_exchange_strong(owner, new_owner, std::memory_order_acq_rel)) {
        slot.durable.store(0, std::memory_order_release);    // release: before the mode and position below
        slot.proxy.store(proxy, std::memory_order_release);  // release: as durable (a reused proxy slot)
        return i;
      }
    }
  }
  detail::topic_fail(Errc::busy, s.name(),
                     "all " + std::to_string(s.max_subscribers) + " subscriber slots hold live or durable subscribers");
}

namespace {
// A live publisher adopts a new seat within its next scan (every 1 ms while
// it makes room); a topic nobody publishes to drops nothing meanwhile.
void wait_for_adoption(const TopicState& s, const detail::ReaderSeatClaim& seat) noexcept {
  const auto publisher_alive = [&] {
    // acquire: pairs with the release stores of publisher ownership.
    const std::uint64_t single = s.admin().single_publisher.load(std::memory_order_acquire);
    if (single != 0 && is_alive_packed(single)) return true;
    for (const auto& p : s.control->publishers) {
      const std::uint64_t owner = p.owner.load(std::memory_order_acquire);  // acquire: as above
      if (owner != 0 && is_alive_packed(owner)) return true;
    }
    return false;
  };
  if (!publisher_alive()) return;
  const std::uint64_t until = platform::monotonic_ns() + kAdoptionWaitNs;
  while (!seat.adopted(s) && platform::monotonic_ns() < until) platform::sleep_ns(100'000);
}
}  // namespace

Subscriber Topic::subscribe(const SubscribeOptions& options) {
  TopicState& s = *state_;
  s.me = pack(ProcessId::current());
  detail::check_durable_options(s.name(), options);
  const bool durable = !options.durable_name.empty();
  if (s.read_only && durable) {
    detail::topic_fail(Errc::wrong_role, s.name(),
                       "opened read-only: a durable subscriber keeps its name and position in the topic; "
                       "subscribe without a durable name, or open the topic with write access");
  }
  // Read-only and reliable: read as a lossy reader does (validated copies),
  // with the position in a seat of its own that publishers adopt.
  const bool seated = s.read_only && options.delivery == Delivery::reliable;
  detail::DurableClaim claim;
  if (s.read_only) {
    claim.slot = kNoSlot;
  } else if (durable) {
    claim = detail::claim_durable_slot(s, options);
  } else {
    claim.slot = detail::claim_plain_slot(s, s.me, 0);
  }
  Subscriber sub;
  sub.state_ = state_;
  sub.delivery_ = seated ? Delivery::lossy : options.delivery;
  sub.slot_ = claim.slot;
  sub.durable_ = durable;
  auto& slot = sub.slot();
  const bool reliable = options.delivery == Delivery::reliable && !seated;
  // release: the mode is seen with the position below.
  slot.mode.store(reliable ? 1u : 2u, std::memory_order_release);
  auto fail = [&](Errc code, const std::string& why) {
    if (durable) {
      detail::durable_detach(s, slot);  // keeps what the slot held, for its grace
    } else {
      slot.mode.store(0, std::memory_order_release);  // release: slot free again
      slot.owner.store(0, std::memory_order_release);
    }
    sub.state_.reset();
    detail::topic_fail(code, s.name(), why);
  };
  auto joined = [&](std::uint64_t r, std::uint64_t expected) {
    sub.position_ = r;
    sub.cursor_ = r;
    sub.expected_ = expected;
    slot.sequence.store(expected, std::memory_order_relaxed);  // relaxed: statistics only (zipc top)
    slot.lost.store(0, std::memory_order_relaxed);             // relaxed: statistics only
  };
  if (claim.kind == detail::DurableClaim::Kind::held) {
    // Restarted within the grace: the slot still holds its position. Join
    // there as any reliable joiner does (Dekker with make_room).
    const std::uint64_t r = claim.position;
    s.admin().subscriber_generation.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: as in the join below
    std::uint64_t seq = 0;
    if (detail::aligned(r) && retained_floor(s) <= r && detail::sequence_at(s, r, &seq)) {
      joined(r, seq);
      return sub;
    }
    // Not expected (a scribbled position): go by the last sequence the slot recorded.
    claim.kind = detail::DurableClaim::Kind::parked;
    claim.sequence = slot.sequence.load(std::memory_order_relaxed);  // relaxed: our own slot now
  }
  From from = options.from;
  const bool resume = claim.kind == detail::DurableClaim::Kind::parked;
  if (resume) from = From::sequence(claim.sequence);
  for (int attempt = 0;; ++attempt) {
    if (attempt > 100) fail(Errc::corrupt, "could not join: the log's positions do not validate");
    std::uint64_t r = 0, expected = 0;
    if (!detail::read_commit_pair(s, &r, &expected)) fail(Errc::corrupt, "the commit version stays odd");
    if (from.kind == From::Kind::latest) {
    } else if (from.kind == From::Kind::oldest) {
      r = retained_floor(s);
      if (!detail::sequence_at(s, r, &expected)) continue;
    } else {
      std::uint64_t oldest_seq = 0;
      const std::uint64_t next = expected;
      if (from.seq > next) {
        if (resume) {  // a scribbled slot: start at the end rather than refuse the name forever
          from = From::latest();
          continue;
        }
        fail(Errc::invalid_argument,
             "sequence " + std::to_string(from.seq) + " is not published yet (next is " + std::to_string(next) + ")");
      }
      if (!detail::find_sequence(s, from.seq, &r, &oldest_seq)) {
        if (from.seq < oldest_seq) {
          if (resume) {  // released and dropped since: read on from the oldest retained
            from = From::oldest();
            continue;
          }
          fail(Errc::not_retained, "sequence " + std::to_string(from.seq) +
                                       " is no longer retained; the oldest available is " + std::to_string(oldest_seq));
        }
        continue;
      }
      expected = from.seq;
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
    joined(r, expected);
    break;
  }
  if (resume && sub.expected_ > claim.sequence) {
    // Sequences are dense: exactly these were dropped after the position was released.
    sub.gap_ = sub.expected_ - claim.sequence;
    sub.lost_ = sub.gap_;
    slot.lost.store(sub.lost_, std::memory_order_relaxed);  // relaxed: statistics only
  }
  sub.slow_ = sub.delivery_ == Delivery::lossy || sub.gap_ != 0;
  if (seated) {
    sub.seat_ = detail::ReaderSeatClaim::claim(s, sub.position_, sub.expected_);
    wait_for_adoption(s, *sub.seat_);
  }
  return sub;
}

bool Subscriber::held_back_for() const noexcept {
  if (!state_) return false;
  if (seat_) return seat_->adopted(*state_);
  return delivery_ == Delivery::reliable;
}

Subscriber::Subscriber(Subscriber&& o) noexcept {
  *this = std::move(o);
}

Subscriber& Subscriber::operator=(Subscriber&& o) noexcept {
  if (this != &o) {
    this->~Subscriber();
    state_ = std::move(o.state_);
    seat_ = std::move(o.seat_);
    slot_ = o.slot_;
    delivery_ = o.delivery_;
    position_ = o.position_;
    cursor_ = o.cursor_;
    expected_ = o.expected_;
    view_end_ = o.view_end_;
    lost_ = o.lost_;
    abandoned_ = o.abandoned_;
    idle_polls_ = o.idle_polls_;
    gap_ = o.gap_;
    slow_ = o.slow_;
    durable_ = o.durable_;
  }
  return *this;
}

layout::SubscriberSlot& Subscriber::slot() const noexcept {
  return slot_ == kNoSlot ? state_->local_slot : state_->subscribers[slot_];
}

Subscriber::~Subscriber() {
  // Reset here, not left to the member destructor: operator= runs this
  // destructor and then assigns to the members again.
  seat_.reset();
  if (!state_) return;
  if (slot_ == kNoSlot) {  // read-only: nothing in the topic to give back (the seat went above)
    state_.reset();
    return;
  }
  auto& slot = state_->subscribers[slot_];
  if (durable_) {
    detail::durable_detach(*state_, slot);  // the position stays held for the grace
    state_.reset();
    return;
  }
  slot.mode.store(0, std::memory_order_release);  // release: publishers stop counting us first
  std::uint64_t me = state_->me;
  slot.owner.compare_exchange_strong(me, 0, std::memory_order_release);  // release: slot free
  state_->events().space.notify_all();
  state_.reset();
}

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
  if (!state_) return rr(Status::corrupt);
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
  if (!state_) return mv(Status::corrupt);
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
  v.data_ = state_->at(f.position) + layout::kRecordHeaderSize;
  v.size_ = f.size;
  v.sequence_ = f.sequence;
  v.publish_ns_ = f.publish_ns;
  v.end_ = view_end_ = f.position + f.total;
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
    slot().lost.store(lost_, std::memory_order_relaxed);          // relaxed: statistics only
    slot().sequence.store(expected_, std::memory_order_relaxed);  // relaxed: statistics only
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
      if (position_ == cursor_) {
        // A try_read caller must get past a dead publisher's claim too.
        detail::poll_stuck_claim(s);
        return rr(empty_or_closed());
      }
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

namespace {
// A read-only reader cannot register as a sleeper (that is a write to the
// topic), so publishers do not know to wake it: it spins as its WaitOptions
// say, then sleeps on the event's futex word in slices of kReadOnlyPollNs
// (woken early when a publisher wakes a registered sleeper). It never runs
// recovery either: a dead publisher's claim is recovered by a writer.
template <class Ready>
Status poll_readable(const TopicState& s, Deadline deadline, Ready& readable) noexcept {
  if (const Status st = detail::spin_phase(readable, deadline, s.wait); st != Status::empty) return st;
  auto& word = s.events().data.seq;
  for (;;) {
    // acquire: pairs with the release increment in Event::notify_*; a wake
    // after this load changes the word, so the sleep below returns at once.
    const std::uint32_t token = word.load(std::memory_order_acquire);
    if (readable()) return Status::ok;
    const std::uint64_t now = platform::monotonic_ns();
    if (now >= deadline.ns()) return Status::timeout;
    const std::uint64_t until = std::min(deadline.ns(), now + kReadOnlyPollNs);
    (void)platform::futex_wait(&word, token, until);
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

TopicReadLoan Subscriber::acquire(std::chrono::nanoseconds timeout) noexcept {
  TopicReadLoan v = try_acquire();  // try first, as in read
  if (v.status_ != Status::empty) return v;
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

TopicReadLoan::TopicReadLoan(TopicReadLoan&& o) noexcept
    : owner_(std::exchange(o.owner_, nullptr)),
      data_(o.data_),
      size_(o.size_),
      sequence_(o.sequence_),
      publish_ns_(o.publish_ns_),
      end_(o.end_),
      status_(o.status_) {}

TopicReadLoan& TopicReadLoan::operator=(TopicReadLoan&& o) noexcept {
  if (this != &o) {
    if (owner_ != nullptr) release();
    owner_ = std::exchange(o.owner_, nullptr);
    data_ = o.data_;
    size_ = o.size_;
    sequence_ = o.sequence_;
    publish_ns_ = o.publish_ns_;
    end_ = o.end_;
    status_ = o.status_;
  }
  return *this;
}

void TopicReadLoan::release() noexcept {
  if (owner_ == nullptr) return;
  std::exchange(owner_, nullptr)->release_loan(end_);
}

}  // namespace zipc
