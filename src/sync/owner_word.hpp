// Internal: the dead-holder takeover of an owner word (a lock word holding
// zipc::pack(ProcessId) of its holder, 0 = free), shared by SpinLock and the
// heap's lock.
#pragma once

#include <atomic>
#include <cstdint>

#include "zipc/process.hpp"

namespace zipc::detail {

// When the word's holder is dead, takes the word over for `me` and returns
// true: the caller then holds the lock and reports LockResult::owner_died (its
// data may be half-updated). False while the holder lives, or when the word
// changed meanwhile (someone else took over, or it was released).
inline bool take_over_if_dead(std::atomic<std::uint64_t>& owner, std::uint64_t me) noexcept {
  std::uint64_t holder = owner.load(std::memory_order_relaxed);  // relaxed: re-checked by the CAS
  if (holder == 0 || holder == me || is_alive_packed(holder)) return false;
  // acquire: the dead holder's stores before it died are in the shared pages; we now hold them.
  return owner.compare_exchange_strong(holder, me, std::memory_order_acquire, std::memory_order_relaxed);
}

}  // namespace zipc::detail
