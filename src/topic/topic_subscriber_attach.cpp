// Topic subscribers, attach: joining (latest / oldest / sequence, durable, read-only seats), moving, leaving.
#include <algorithm>
#include <new>
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

namespace {
constexpr std::uint32_t kNoSlot = ~0u;                 // a read-only handle's subscriber holds no slot
constexpr std::uint64_t kAdoptionWaitNs = 50'000'000;  // see wait_for_adoption

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
  if (!state_)
    throw Error(Errc::invalid_argument, "topic: subscribe() on a detached handle (moved from, detached or default)");
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
    loan_ = std::exchange(o.loan_, nullptr);
    if (loan_ != nullptr) loan_->owner_ = this;
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
  if (loan_ != nullptr && !parked_) [[unlikely]] {
    // A loan is out: it keeps this subscriber (slot, position, mapping) until
    // it ends, then frees it (docs/guide/handles.md). Without memory, it ends now.
    auto* kept = new (std::nothrow) Subscriber(std::move(*this));
    if (kept != nullptr)
      kept->parked_ = true;
    else
      release_view();
  }
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

void Subscriber::detach() noexcept {
  Subscriber gone(std::move(*this));  // its destructor gives the slot back
}

}  // namespace zipc
