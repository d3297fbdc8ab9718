/// \file
/// zipc/mutex.hpp - locks that live in shared memory and survive their owner's death.
///
/// \code
///   #include <mutex>
///   ---
///   zipc::Mutex m;                      // placed in a zipc::Heap in real use
///   if (m.lock() == zipc::LockResult::owner_died) {
///     // the previous holder died inside its critical section: repair the data, then
///     m.mark_consistent();
///   }
///   m.unlock();
///   { std::lock_guard guard(m); }       // Mutex, SpinLock are BasicLockable
///   zipc::SpinLock s;
///   { std::lock_guard guard(s); }
///   zipc::ConditionVariable cv;
///   std::unique_lock lk(m);
///   (void)cv.wait_for(m, std::chrono::milliseconds(1), [] { return true; });
/// \endcode
///
/// Mutex is a process-shared robust mutex: when a holder dies, the next locker
/// acquires it and is told LockResult::owner_died. The mutex keeps saying
/// owner_died to every locker until one calls mark_consistent(), so the news is
/// never lost, and it never becomes unusable (no ENOTRECOVERABLE dead end).
/// SpinLock spins with pause, yields after a bounded spin, and takes over a lock
/// whose holding process has died (checked every ~1 ms of waiting).
/// ConditionVariable is a futex sequence word; waiters that die leave nothing behind.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "zipc/event.hpp"

namespace zipc {

/// What a lock attempt did: owner_died means acquired too (see holds()).
enum class LockResult : std::uint8_t {
  acquired = 0,   ///< acquired; the previous holder released it normally
  owner_died,     ///< acquired; a previous holder died inside the critical section
  busy,           ///< try_lock: held by someone else
  timeout,        ///< the deadline passed; not acquired
  unrecoverable,  ///< the lock's bytes are damaged; not acquired
};
/// The result's name: "acquired", "owner_died", "busy", "timeout", "unrecoverable".
const char* to_string(LockResult r) noexcept;
/// True when r means the caller now holds the lock (acquired or owner_died).
[[nodiscard]] inline bool holds(LockResult r) noexcept {
  return r == LockResult::acquired || r == LockResult::owner_died;
}

/// A process-shared robust mutex (see the file overview): place it in shared memory; a holder's death is reported to
/// the next locker as owner_died.
class Mutex {
 public:
  Mutex() noexcept;
  ~Mutex();
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  /// Blocks until acquired (acquired or owner_died).
  LockResult lock() noexcept;
  /// Tries once; true when the lock is now held (also after a dead holder). For std::lock_guard and friends.
  [[nodiscard]] bool try_lock() noexcept { return holds(try_lock_result()); }
  /// Tries once: acquired / owner_died, busy when held by another, unrecoverable.
  [[nodiscard]] LockResult try_lock_result() noexcept;
  /// Waits up to timeout: acquired / owner_died, or timeout (not acquired), unrecoverable.
  [[nodiscard]] LockResult try_lock_for(std::chrono::nanoseconds timeout) noexcept;
  /// Releases the lock (holder only).
  void unlock() noexcept;
  /// Holder only: the protected data is consistent again; later lockers get `acquired`.
  void mark_consistent() noexcept;
  /// Holder only: true while a death has not been marked consistent.
  [[nodiscard]] bool inconsistent() const noexcept;

 private:
  LockResult finish(int raw) noexcept;
  friend class ConditionVariable;
  alignas(8) unsigned char storage_[40];
  std::atomic<std::uint32_t> inconsistent_{0};
  std::uint32_t reserved_ = 0;
};

/// A lock of one 64-bit word that spins instead of sleeping; it takes over from a holder that died (owner_died). For
/// short critical sections.
class SpinLock {
 public:
  SpinLock() noexcept = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  /// Spins (pause) up to a bound, then yields; takes over from a dead holder
  /// (returning owner_died). Never sleeps in the kernel.
  LockResult lock() noexcept;
  /// Tries once; true when the lock is now held (also after a dead holder).
  [[nodiscard]] bool try_lock() noexcept;
  /// acquired / owner_died, or timeout when the deadline passed first.
  [[nodiscard]] LockResult try_lock_for(std::chrono::nanoseconds timeout) noexcept;
  /// Releases the lock (holder only).
  void unlock() noexcept;

 private:
  LockResult lock_until(std::uint64_t deadline_ns) noexcept;
  std::atomic<std::uint64_t> owner_{0};  // zipc::pack(ProcessId) of the holder, 0 = free
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared uint64_t atomics are lock-free (a lock would be private to one process)");

/// A condition variable in shared memory, used with a zipc::Mutex: a futex sequence word (zipc::Event); a waiter that
/// dies leaves nothing behind.
class ConditionVariable {
 public:
  ConditionVariable() noexcept = default;
  ConditionVariable(const ConditionVariable&) = delete;
  ConditionVariable& operator=(const ConditionVariable&) = delete;

  /// m must be held; it is released while waiting and held again on return
  /// (the result says how it was re-acquired: acquired, owner_died or unrecoverable).
  LockResult wait(Mutex& m) noexcept;
  /// Returns LockResult::timeout (mutex held again) when the deadline passed.
  LockResult wait_for(Mutex& m, std::chrono::nanoseconds timeout) noexcept;
  /// Waits until pred() is true or timeout passes (m held on entry and on return); returns pred() at the end, so false
  /// means it timed out.
  template <class Pred>
  bool wait_for(Mutex& m, std::chrono::nanoseconds timeout, Pred pred) noexcept(noexcept(pred())) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
      const auto left = end - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds::zero()) return pred();
      (void)wait_for(m, left);
    }
    return true;
  }
  /// Wakes one waiter.
  void notify_one() noexcept;
  /// Wakes every waiter.
  void notify_all() noexcept;

 private:
  LockResult wait_until_ns(Mutex& m, std::uint64_t deadline_ns) noexcept;
  Event event_;  // the one wait protocol (zipc::Event): seq (futex word) + waiters
};
static_assert(sizeof(ConditionVariable) == 8, "a ConditionVariable is an Event (8 bytes in shared memory)");

}  // namespace zipc
