// Internal: waiting and waking on a topic's events with an asymmetric barrier.
//
// zipc::Event's notify costs a seq_cst fence on every call, which a topic
// would pay per message (publisher -> readers) and per read (reliable reader ->
// publisher). Where membarrier(2) works, the notifier instead checks the
// waiter count behind a compiler barrier only, and a waiter about to sleep
// runs membarrier_global() after registering: that forces a full barrier on
// every notifier, so either the notifier sees the waiter or the waiter sees
// the notifier's data (the Dekker pair of Event, with the cost moved to the
// side that is about to sleep anyway). Without membarrier: Event as is.
#pragma once

#include <atomic>

#include "platform/membarrier.hpp"
#include "zipc/event.hpp"

namespace zipc::detail {

inline void topic_notify(Event& ev) noexcept {
  if (platform::membarrier_ready()) {
    // Compiler barrier only: the sleeping side's membarrier is the StoreLoad fence.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    // relaxed: paired with the waiter's membarrier (see above).
    if (ev.waiters.load(std::memory_order_relaxed) == 0) return;
  }
  ev.notify_all();
}

template <class Pred>
Status topic_wait(Event& ev, Pred&& pred, Deadline deadline, const WaitOptions& opt) noexcept {
  if (!platform::membarrier_ready()) return ev.wait_until(pred, deadline, opt);
  if (pred()) return Status::ok;
  // Reports where each wait ended, so the adaptive strategy learns whether
  // this thread shares its CPU with the peer (see Event::wait_until).
  if (const Status s = spin_phase(pred, deadline, opt); s != Status::empty) return s;
  for (;;) {
    // acquire: pairs with the release increment in notify; a token taken before
    // re-checking pred() turns a notify in between into a changed futex value.
    const std::uint32_t token = ev.seq.load(std::memory_order_acquire);
    ev.waiters.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: registered before the barrier below
    platform::membarrier_global();                       // every notifier now sees waiters > 0 or we see its data
    if (pred()) {
      ev.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: only a hint for notifiers
      return Status::ok;
    }
    const bool timed_out = ev.sleep(token, deadline);
    ev.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: only a hint for notifiers
    if (pred()) return Status::ok;
    if (timed_out || deadline.expired()) return Status::timeout;
  }
}

}  // namespace zipc::detail
