#include "heap/heap_lock.hpp"

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/futex.hpp"
#include "zipc/process.hpp"

namespace zipc::detail {

namespace {
constexpr int kSpins = 200;
constexpr std::uint64_t kSleepNs = 1'000'000;  // also the liveness-check period

bool try_take(layout::OwnerLock& l, std::uint64_t me) noexcept {
  std::uint64_t expected = 0;
  // acquire: pairs with owner_unlock's release of the critical section.
  return l.owner.compare_exchange_strong(expected, me, std::memory_order_seq_cst, std::memory_order_relaxed);
}
}  // namespace

LockResult owner_lock_slow(layout::OwnerLock& l, std::uint64_t me) noexcept {
  for (int i = 0; i < kSpins; ++i) {
    platform::cpu_relax();
    // relaxed: a hint; try_take carries the ordering.
    if (l.owner.load(std::memory_order_relaxed) == 0 && try_take(l, me)) return LockResult::acquired;
  }
  std::uint64_t last_check = platform::monotonic_ns();
  for (;;) {
    // seq_cst: see owner_unlock (Dekker with its owner store / sleepers load).
    l.sleepers.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = l.seq.load(std::memory_order_seq_cst);
    if (try_take(l, me)) {
      l.sleepers.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a count; a spare wake is harmless
      return LockResult::acquired;
    }
    (void)platform::futex_wait(&l.seq, seen, platform::monotonic_ns() + kSleepNs);
    l.sleepers.fetch_sub(1, std::memory_order_relaxed);  // relaxed: as above
    if (try_take(l, me)) return LockResult::acquired;
    const std::uint64_t now = platform::monotonic_ns();
    if (now - last_check >= kSleepNs) {
      last_check = now;
      std::uint64_t holder = l.owner.load(std::memory_order_relaxed);  // relaxed: re-checked by the CAS
      if (holder != 0 && holder != me && !is_alive_packed(holder)) {
        // acquire: the dead holder's stores are in the shared pages; take over.
        if (l.owner.compare_exchange_strong(holder, me, std::memory_order_acquire, std::memory_order_relaxed)) {
          return LockResult::owner_died;
        }
      }
    }
  }
}

void owner_unlock_wake(layout::OwnerLock& l) noexcept {
  l.seq.fetch_add(1, std::memory_order_release);  // release: orders with the owner store before it
  (void)platform::futex_wake(&l.seq, 1);
}

}  // namespace zipc::detail
