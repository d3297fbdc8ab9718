#include "heap/heap_lock.hpp"

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "sync/owner_word.hpp"

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
    // Registered (seq_cst) before the CAS: either the unlocker's notify sees
    // us counted, or our CAS sees the lock free (see owner_unlock).
    const std::uint32_t token = l.wake.register_sleeper();
    if (try_take(l, me)) {
      l.wake.unregister_sleeper();
      return LockResult::acquired;
    }
    (void)l.wake.sleep(token, Deadline::at_ns(platform::monotonic_ns() + kSleepNs));
    l.wake.unregister_sleeper();
    if (try_take(l, me)) return LockResult::acquired;
    const std::uint64_t now = platform::monotonic_ns();
    if (now - last_check >= kSleepNs) {
      last_check = now;
      if (take_over_if_dead(l.owner, me)) return LockResult::owner_died;
    }
  }
}

}  // namespace zipc::detail
