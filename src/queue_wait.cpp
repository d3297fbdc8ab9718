// Waiting and waking for zipc::Queue.
//
// zipc::Event::notify orders the caller's publication before its read of
// `waiters` with a seq_cst fence. On the queue's hot path that fence costs
// more than the rest of a send: it drains the store buffer, i.e. waits for
// the ownership transfer of every payload line just written. The queue
// instead reads `waiters` without a fence (wake() below) and makes the
// sleeper tolerate the one race that leaves: a publication still sitting in
// the publisher's store buffer while it reads waiters == 0, and the sleeper's
// re-check not yet seeing it. After registering, the sleeper keeps polling
// for kGraceNs (longer than a store buffer takes to drain) before it sleeps,
// so that publication is seen; and its first sleep is a short nap
// (kFirstNapNs) as a safety net. Measured: with the nap alone, ping-pong
// with the block strategy missed wake-ups often (the race is not rare when
// the sleeper arrives right after the peer's publication).
#include <algorithm>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "queue_impl.hpp"

namespace zipc::detail {

namespace {
constexpr std::uint64_t kGraceNs = 4'000;      // > any store buffer drain (incl. ownership transfers)
constexpr std::uint64_t kFirstNapNs = 50'000;  // safety net if a drain ever took longer
}  // namespace

void QueueImpl::wake(Event& ev, bool all) noexcept {
  // relaxed, no fence: see the comment at the top of this file.
  if (ev.waiters.load(std::memory_order_relaxed) == 0) return;
  if (all)
    ev.notify_all();
  else
    ev.notify_one();
}

Status QueueImpl::wait_on(Event& ev, bool producer_side, Deadline slice) noexcept {
  const auto pred = [&]() noexcept { return producer_side ? can_produce() : can_consume(); };
  if (pred()) return Status::ok;
  if (wait.strategy != WaitStrategy::block) {
    SpinState st;
    while (spin_once(st, wait, slice)) {
      if (pred()) {
        spin_succeeded(st);
        return Status::ok;
      }
    }
    if (pred()) {
      spin_succeeded(st);
      return Status::ok;
    }
    if (wait.strategy == WaitStrategy::busy_poll || slice.expired()) return Status::timeout;
  }
  bool first = true;
  for (;;) {
    // acquire: pairs with the release increment of seq in Event::notify_*.
    const std::uint32_t token = ev.seq.load(std::memory_order_acquire);
    // seq_cst: our registration is ordered before the re-check below.
    ev.waiters.fetch_add(1, std::memory_order_seq_cst);
    // Grace: a publication whose publisher read waiters == 0 just before our
    // registration became visible is still draining from its store buffer;
    // it shows up within this window, so we do not sleep past it.
    // (Sharing one CPU with the publisher, its stores drained when it was switched
    // out: no grace needed, and spinning would only delay it.)
    const std::uint64_t grace_end = platform::monotonic_ns() + (cpu_looks_shared() ? 0 : kGraceNs);
    for (std::uint32_t i = 0;; ++i) {
      if (pred()) {
        ev.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a hint for wakers
        return Status::ok;
      }
      if ((i & 15u) == 15u && platform::monotonic_ns() >= grace_end) break;
      platform::cpu_relax();
    }
    const Deadline nap = first ? Deadline::at_ns(std::min(slice.ns(), platform::monotonic_ns() + kFirstNapNs)) : slice;
    (void)ev.sleep(token, nap);
    ev.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a hint for wakers
    if (pred()) return Status::ok;
    if (slice.expired()) return Status::timeout;
    first = false;  // after the nap, sleep for the rest of the slice
  }
}

}  // namespace zipc::detail
