// The heap allocator's lock (layout::OwnerLock): a CAS on the holder's packed
// ProcessId, a short spin, then sleeps (zipc::Event's protocol) of at most
// 1 ms between checks
// of the holder's liveness. A waiter that finds the holder dead takes the lock
// over and is told owner_died (then the heap is walked and repaired).
//
// Why not the robust pthread mutex zipc::Mutex uses: its lock/unlock go through
// glibc's slow "_full" paths (robust-list bookkeeping), ~35 ns per pair, a
// third of an allocate+free; this lock costs one CAS and one exchange.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/self_id.hpp"
#include "layout/heap_layout.hpp"
#include "zipc/mutex.hpp"

namespace zipc::detail {

LockResult owner_lock_slow(layout::OwnerLock& l, std::uint64_t me) noexcept;

inline LockResult owner_lock(layout::OwnerLock& l) noexcept {
  const std::uint64_t me = detail::cached_packed_self();
  std::uint64_t expected = 0;
  // acquire: pairs with owner_unlock's store; we see the last holder's writes.
  if (l.owner.compare_exchange_strong(expected, me, std::memory_order_acquire, std::memory_order_relaxed)) {
    return LockResult::acquired;
  }
  return owner_lock_slow(l, me);
}

inline void owner_unlock(layout::OwnerLock& l) noexcept {
  // release: publishes the critical section to the next holder. Then Event's
  // notify (a full fence and a load of its sleeper count, a futex wake only
  // when someone sleeps) pairs with a sleeper's register_sleeper before its CAS.
  l.owner.store(0, std::memory_order_release);
  l.wake.notify_one();
}

}  // namespace zipc::detail
