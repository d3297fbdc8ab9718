#include "zipc/mutex.hpp"

#include <cerrno>

#include "core/self_id.hpp"
#include "layout/mutex_layout.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/futex.hpp"
#include "platform/robust_mutex.hpp"
#include "sync/owner_word.hpp"
#include "zipc/process.hpp"

namespace zipc {

const char* to_string(LockResult r) noexcept {
  switch (r) {
    case LockResult::acquired: return "acquired";
    case LockResult::owner_died: return "owner_died";
    case LockResult::busy: return "busy";
    case LockResult::timeout: return "timeout";
    case LockResult::unrecoverable: return "unrecoverable";
  }
  return "unknown";
}

namespace {

LockResult from_platform(platform::RobustLock r) noexcept {
  switch (r) {
    case platform::RobustLock::acquired: return LockResult::acquired;
    case platform::RobustLock::owner_died: return LockResult::owner_died;
    case platform::RobustLock::busy: return LockResult::busy;
    case platform::RobustLock::timeout: return LockResult::timeout;
    case platform::RobustLock::unrecoverable: return LockResult::unrecoverable;
  }
  return LockResult::unrecoverable;
}

std::uint64_t deadline_after(std::chrono::nanoseconds t) noexcept {
  if (t.count() <= 0) return 1;  // already past (0 would mean "try")
  const std::uint64_t now = platform::monotonic_ns();
  const auto n = static_cast<std::uint64_t>(t.count());
  return n >= UINT64_MAX / 2 - now ? UINT64_MAX : now + n;
}

}  // namespace

Mutex::Mutex() noexcept {
  // Cannot fail for these attributes on Linux; a failure would leave a
  // default (non-robust) mutex, still usable.
  (void)platform::robust_mutex_init(storage_);
}

Mutex::~Mutex() {
  (void)platform::robust_mutex_destroy(storage_);
}

LockResult Mutex::finish(int raw) noexcept {
  auto r = from_platform(static_cast<platform::RobustLock>(raw));
  if (r == LockResult::owner_died) {
    // relaxed: we hold the mutex, whose acquire/release orders this flag.
    inconsistent_.store(1, std::memory_order_relaxed);
    return r;
  }
  // relaxed: read under the mutex (see above).
  if (r == LockResult::acquired && inconsistent_.load(std::memory_order_relaxed) != 0) return LockResult::owner_died;
  return r;
}

LockResult Mutex::lock() noexcept {
  return finish(static_cast<int>(platform::robust_mutex_lock(storage_, UINT64_MAX)));
}

LockResult Mutex::try_lock_result() noexcept {
  return finish(static_cast<int>(platform::robust_mutex_lock(storage_, 0)));
}

LockResult Mutex::try_lock_for(std::chrono::nanoseconds timeout) noexcept {
  return finish(static_cast<int>(platform::robust_mutex_lock(storage_, deadline_after(timeout))));
}

void Mutex::unlock() noexcept {
  (void)platform::robust_mutex_unlock(storage_);
}

void Mutex::mark_consistent() noexcept {
  inconsistent_.store(0, std::memory_order_relaxed);  // relaxed: under the mutex
}

bool Mutex::inconsistent() const noexcept {
  return inconsistent_.load(std::memory_order_relaxed) != 0;  // relaxed: under the mutex
}

// ---- SpinLock ----

namespace {
constexpr int kSpinsBeforeYield = 100;
constexpr int kYieldsBetweenLivenessChecks = 256;
}  // namespace

LockResult SpinLock::lock() noexcept {
  const std::uint64_t me = detail::cached_packed_self();
  std::uint64_t expected = 0;
  // acquire: pairs with unlock's release; the critical section sees the previous holder's writes.
  if (owner_.compare_exchange_strong(expected, me, std::memory_order_acquire, std::memory_order_relaxed)) {
    return LockResult::acquired;
  }
  return lock_until(UINT64_MAX);
}

LockResult SpinLock::try_lock_for(std::chrono::nanoseconds timeout) noexcept {
  return lock_until(deadline_after(timeout));
}

LockResult SpinLock::lock_until(std::uint64_t deadline_ns) noexcept {
  const std::uint64_t me = detail::cached_packed_self();
  std::uint64_t expected = 0;
  for (int yields = 1;; ++yields) {
    for (int i = 0; i < kSpinsBeforeYield; ++i) {
      // relaxed: a hint only; the CAS below carries the ordering.
      if (owner_.load(std::memory_order_relaxed) == 0) {
        expected = 0;
        // acquire: pairs with unlock's release.
        if (owner_.compare_exchange_weak(expected, me, std::memory_order_acquire, std::memory_order_relaxed)) {
          return LockResult::acquired;
        }
      }
      platform::cpu_relax();
    }
    if (deadline_ns != UINT64_MAX && platform::monotonic_ns() >= deadline_ns) return LockResult::timeout;
    platform::yield_cpu();
    if (yields % kYieldsBetweenLivenessChecks == 0 && detail::take_over_if_dead(owner_, me)) {
      return LockResult::owner_died;
    }
  }
}

bool SpinLock::try_lock() noexcept {
  std::uint64_t expected = 0;
  // acquire: pairs with unlock's release.
  return owner_.compare_exchange_strong(expected, detail::cached_packed_self(), std::memory_order_acquire,
                                        std::memory_order_relaxed);
}

void SpinLock::unlock() noexcept {
  owner_.store(0, std::memory_order_release);  // release: publishes the critical section to the next holder
}

// ---- ConditionVariable ----

LockResult ConditionVariable::wait(Mutex& m) noexcept {
  return wait_until_ns(m, UINT64_MAX);
}

LockResult ConditionVariable::wait_for(Mutex& m, std::chrono::nanoseconds timeout) noexcept {
  return wait_until_ns(m, deadline_after(timeout));
}

LockResult ConditionVariable::wait_until_ns(Mutex& m, std::uint64_t deadline_ns) noexcept {
  // Registered while m is held: a notifier changes the state under m, so it
  // runs after our unlock and sees us counted (zipc::Event's protocol).
  const std::uint32_t token = event_.register_sleeper();
  m.unlock();
  const bool timed_out = event_.sleep(token, Deadline::at_ns(deadline_ns));
  event_.unregister_sleeper();
  LockResult got = m.lock();
  if (timed_out && got == LockResult::acquired) return LockResult::timeout;
  return got;
}

void ConditionVariable::notify_one() noexcept {
  event_.notify_one();
}

void ConditionVariable::notify_all() noexcept {
  event_.notify_all();
}

}  // namespace zipc
