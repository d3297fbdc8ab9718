// Waiting and waking for zipc::Queue.
//
// zipc::Event::notify orders the caller's publication before its read of
// `waiters` with a seq_cst fence. On the queue's hot path that fence costs
// more than the rest of a send: it drains the store buffer, i.e. waits for
// the ownership transfer of every payload line just written. The queue
// instead reads `waiters` without a fence (wake() below) and makes the
// sleeper tolerate the one race that leaves: a publication still sitting in
// the publisher's store buffer while it reads waiters == 0, and the sleeper's
// re-check not yet seeing it. The sleeper's first sleep is therefore a short
// nap (kFirstNapNs, far longer than any store buffer takes to drain); after
// it, the publication is visible to the re-check. A missed wake-up costs at
// most one nap, only in that narrow race; every other wake-up is immediate.
#include <algorithm>

#include "platform/clock.hpp"
#include "queue_impl.hpp"

namespace zipc::detail {

namespace {
constexpr std::uint64_t kFirstNapNs = 50'000;
}

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
      if (pred()) return Status::ok;
    }
    if (pred()) return Status::ok;
    if (wait.strategy == WaitStrategy::busy_poll || slice.expired()) return Status::timeout;
  }
  bool first = true;
  for (;;) {
    // acquire: pairs with the release increment of seq in Event::notify_*.
    const std::uint32_t token = ev.seq.load(std::memory_order_acquire);
    // seq_cst: our registration is ordered before the re-check below.
    ev.waiters.fetch_add(1, std::memory_order_seq_cst);
    if (pred()) {
      ev.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a hint for wakers
      return Status::ok;
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
