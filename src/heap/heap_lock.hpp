// The heap allocator's lock (layout::OwnerLock): a CAS on the holder's packed
// ProcessId, a short spin, then futex sleeps of at most 1 ms between checks
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
#include "platform/robust_mutex.hpp"
#include "zipc/mutex.hpp"

namespace zipc::detail {

LockResult owner_lock_slow(layout::OwnerLock& l, std::uint64_t me) noexcept;
void owner_unlock_wake(layout::OwnerLock& l) noexcept;

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
  // seq_cst (store and load): Dekker pairing with a sleeper's sleepers++ then
  // CAS; either we see it counted or its CAS sees the lock free. The store
  // also releases the critical section to the next holder.
  l.owner.store(0, std::memory_order_seq_cst);
  if (l.sleepers.load(std::memory_order_seq_cst) != 0) owner_unlock_wake(l);
}

}  // namespace zipc::detail
