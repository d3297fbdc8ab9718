// The blocking helpers of zipc::Queue, one instance per ring type (the API
// glue picks the ring once per public call, rings.hpp).
#pragma once

#include "core/recovery_wait.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "queue/queue_impl.hpp"

namespace zipc::detail {

// The wait behind every blocking producer or consumer call: try, then sleep
// on `ev` in the one recovery-sliced wait (recovery_wait.hpp) until attempt()
// returns something other than `idle`, or the deadline passes. The stall
// clock is shared: consumers blocked at head, producers at tail. A failed
// try_* call (timeout <= 0) looks at the clock too, so a survivor that only
// polls still recovers a dead peer once the stall is recovery_time old.
template <class Ring, class Attempt>
[[gnu::always_inline]] inline Status QueueImpl::wait_while(Status idle, Event& ev, bool producer_side,
                                                           std::chrono::nanoseconds timeout,
                                                           std::optional<Deadline>* dl, std::uint64_t& waits,
                                                           std::atomic<std::uint64_t>& waits_stat,
                                                           Attempt&& attempt) noexcept {
  const Status st = attempt();
  if (st != idle) [[likely]]
    return st;
  return wait_after_miss<Ring>(idle, ev, producer_side, timeout, dl, waits, waits_stat, attempt);
}

template <class Ring, class Attempt>
[[gnu::noinline]] Status QueueImpl::wait_after_miss(Status idle, Event& ev, bool producer_side,
                                                    std::chrono::nanoseconds timeout, std::optional<Deadline>* dl,
                                                    std::uint64_t& waits, std::atomic<std::uint64_t>& waits_stat,
                                                    Attempt& attempt) noexcept {
  Status st = idle;
  SharedStall stall(producer_side ? ctl->stall_producers : ctl->stall_consumers, recovery_ns,
                    &stall_local[producer_side ? 1 : 0]);
  // relaxed: the frontier the caller is blocked on, a key for the stall clock only.
  const auto key = [&]() noexcept { return (producer_side ? ctl->tail : ctl->head).load(std::memory_order_relaxed); };
  const auto again = [&]() noexcept {
    st = attempt();
    return st != idle;
  };
  if (timeout.count() <= 0) {
    if (poll_recovery(stall, key, [&]() noexcept { (void)recover(); })) (void)again();
    return st;
  }
  if (!dl->has_value()) *dl = Deadline::after(timeout);
  const Deadline d = **dl;
  if (!d.is_never() && platform::monotonic_ns() >= d.ns()) return Status::timeout;
  ++waits;
  waits_stat.store(waits, std::memory_order_relaxed);  // relaxed: statistics, single writer
  if (wait.strategy == WaitStrategy::busy_poll) {
    // Busy polling: poll the attempt itself for a few microseconds first.
    // When the peer answers within them (a ping-pong), the attempt that sees
    // it returns at once, instead of the wait's predicate seeing it and the
    // wait, the slice and a second attempt returning in turn. The deadline
    // and the stall clock are looked at after them.
    for (std::uint32_t i = 0; i < kTightPolls; ++i) {
      platform::cpu_relax();
      if (again()) return st;
    }
  }
  const bool done = recovery_sliced_wait(
      stall, d, again, key,
      [&](Deadline slice) noexcept {
        // Sleeps (as this handle's WaitOptions say) until a producer or
        // consumer call could make progress, or the slice passes.
        return barrier.wait(
            ev, [&]() noexcept { return producer_side ? Ring::can_produce(*this) : Ring::can_consume(*this); }, slice,
            wait);
      },
      [&]() noexcept { (void)recover(); });
  return done ? st : Status::timeout;
}

template <class Ring>
[[gnu::always_inline]] inline Status QueueImpl::reserve_wait(std::uint64_t max, std::uint64_t* first,
                                                             std::uint64_t* count, std::chrono::nanoseconds timeout,
                                                             std::optional<Deadline>* dl) noexcept {
  // API misuse: a handle attached without the producer role must not take
  // positions (on a single-producer queue it would break exclusivity).
  if (!has_role(role, Role::producer)) return Status::wrong_role;
  return wait_while<Ring>(Status::full, ctl->not_full, true, timeout, dl, n_full_waits, me->full_waits,
                          [&]() noexcept { return Ring::try_reserve(*this, max, first, count); });
}

// Out of line, unlike reserve_wait, as measured (30 alternating rounds
// against the build before): with the consumer's try inlined into
// Queue::acquire the 3000 B queue stream fell to 0.75x (likely: it polls so
// tightly behind the producer that its reads of the cell being written slow
// the producer down); out of line it is 0.99x, and the 100 B rows hold.
template <class Ring>
[[gnu::noinline]] Status QueueImpl::acquire_wait(std::uint64_t* out, std::size_t max, std::size_t* n,
                                                 std::size_t size_limit, std::size_t* first_size,
                                                 std::chrono::nanoseconds timeout,
                                                 std::optional<Deadline>* dl) noexcept {
  if (!has_role(role, Role::consumer)) return Status::wrong_role;
  return wait_while<Ring>(
      Status::empty, ctl->not_empty, false, timeout, dl, n_empty_waits, me->empty_waits, [&]() noexcept {
        Status st = Ring::try_acquire(*this, out, max, n, size_limit, first_size);
        // Closed and drained, unless a dead consumer left messages to redeliver,
        // or recover() found an orphan whose count a killed recoverer lost
        // (repair_orphan_hint: it counts it, and recover() returns 0 for that;
        // found by the model, tests/model, "orphan hint on close").
        if constexpr (Ring::kRedelivers) {
          // acquire: pairs with the count's release add (the orphan's mark is seen).
          if (st == Status::closed &&
              (recover() > 0 || (ctl->orphans.load(std::memory_order_acquire) & layout::kOrphanCount) != 0))
            st = Ring::try_acquire(*this, out, max, n, size_limit, first_size);
        }
        return st;
      });
}

}  // namespace zipc::detail
