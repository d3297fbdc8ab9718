/// \file
/// zipc/event.hpp - futex-backed events and the wait strategy every channel uses.
///
/// \code
///   static zipc::Event ready;                 // normally placed in a shared segment
///   static std::atomic<bool> has_data{false};  // the condition the event guards
///   // Waiter: sleep until the predicate holds or the deadline passes.
///   zipc::Status s = ready.wait_until([] { return has_data.load(std::memory_order_acquire); },
///                                     zipc::Deadline::after(std::chrono::milliseconds(10)));
///   // Notifier: publish first, then notify (no syscall when nobody sleeps).
///   has_data.store(true, std::memory_order_release);
///   ready.notify_all();
/// \endcode
///
/// Event is one of the few public types that live in shared memory (like
/// zipc::Mutex): standard layout, two 32-bit atomics, no pointers.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "zipc/error.hpp"

namespace zipc {

/// How a blocked call waits.
enum class WaitStrategy : std::uint8_t {
  busy_poll = 0,  ///< spin (with pause) until ready or the deadline: lowest latency, burns a CPU
  adaptive = 1,   ///< spin briefly, then yield, then sleep on a futex (default)
  /// poll up to 4 us (while such polls keep catching the peer), then sleep on the futex:
  /// least CPU; a reply within the poll costs no wake-up, a later one ~25 us
  block = 2,
};
/// The strategy's name: "busy", "adaptive", "block" ("unknown" for a value that is no WaitStrategy).
const char* to_string(WaitStrategy s) noexcept;

/// The timeout of every blocking call (docs/guide/timeouts.md): zipc::forever waits
/// without a deadline (so does any timeout past ~146 years); zero tries once
/// and never blocks; a negative timeout tries once too, like an expired
/// deadline. A try that finds nothing says empty/full, never timeout.
// NOLINTNEXTLINE(readability-identifier-naming): the word the API reads as (zipc::forever), like std::nullopt
inline constexpr std::chrono::nanoseconds forever = std::chrono::nanoseconds::max();

/// An absolute point on CLOCK_MONOTONIC (ns). Timeouts become deadlines once, so
/// retries after spurious wake-ups never extend the wait.
class Deadline {
 public:
  /// now + timeout; zipc::forever (or any timeout past ~146 years) gives never(), zero or negative an expired deadline.
  static Deadline after(std::chrono::nanoseconds timeout) noexcept;
  /// A deadline that never passes.
  static constexpr Deadline never() noexcept { return Deadline(std::numeric_limits<std::uint64_t>::max()); }
  /// never() when wait_forever, else one already passed (try once).
  static constexpr Deadline now_or_never(bool wait_forever) noexcept { return wait_forever ? never() : Deadline(0); }
  /// A deadline at ns on CLOCK_MONOTONIC.
  static constexpr Deadline at_ns(std::uint64_t ns) noexcept { return Deadline(ns); }
  /// This is never().
  [[nodiscard]] bool is_never() const noexcept { return ns_ == std::numeric_limits<std::uint64_t>::max(); }
  /// CLOCK_MONOTONIC has reached the deadline.
  [[nodiscard]] bool expired() const noexcept;
  /// The deadline, ns on CLOCK_MONOTONIC.
  [[nodiscard]] std::uint64_t ns() const noexcept { return ns_; }

 private:
  constexpr explicit Deadline(std::uint64_t ns) : ns_(ns) {}
  std::uint64_t ns_;
};

/// Tuning of the adaptive strategy. The defaults suit a machine where waking a
/// sleeper costs ~25-30 us: spin a little longer than that before sleeping.
struct WaitOptions {
  WaitStrategy strategy = WaitStrategy::adaptive;  ///< how to wait (default: adaptive)
  std::uint32_t spin_ns = 50'000;                  ///< pause-spin this long before yielding
  std::uint32_t yields = 32;                       ///< sched_yield this many times before sleeping
  /// A spin the kernel descheduled (another thread needed this CPU) ends the
  /// spinning: the thread yields at once from then on, as on a shared CPU,
  /// until a probe spins successfully (docs/design/overview.md, "Waiting").
  bool stop_spinning_when_preempted = true;
};

namespace detail {
// The strategy's phases, outside the template so the header stays small.
// Returns true if the caller should keep spinning, false to go to sleep.
struct SpinState {
  std::uint64_t start_ns = 0;
  std::uint64_t budget_ns = 0;           // this wait's spin phase (learned; see event.cpp)
  std::uint64_t last_ns = 0;             // the spin's last clock read (every 64 iterations; busy: 256)
  std::uint64_t step_ns = ~0ull;         // the shortest time between two of them
  std::uint64_t next_yield_ns = 0;       // busy_poll: when this wait yields the CPU next (event.cpp)
  std::uint64_t yield_gap_ns = 0;        // busy_poll: polling in vain between two yields
  std::uint64_t next_load_check_ns = 0;  // adaptive, past spin_ns: when to check for a CPU to spare next
  long switches = -1;                    // adaptive: the thread's involuntary switches 5 us into the spin
  std::uint32_t iterations = 0;
  std::uint32_t yields = 0;
  bool spin_done = false;
};
bool spin_once(SpinState& st, const WaitOptions& opt, const Deadline& d) noexcept;
// Tells the strategy where the wait ended, so it learns whether spinning
// helps on this thread's CPU (see event.cpp). Call when the predicate held.
void spin_succeeded(const SpinState& st) noexcept;
// Tells it that the wait goes on to sleep (its spin phase failed too).
void spin_gave_up(const SpinState& st) noexcept;
// Tells it that the wait that went to sleep (spin_gave_up) has ended: how
// long it took teaches the next waits how long to spin (event.cpp).
void slept_wait_succeeded(const WaitOptions& opt) noexcept;
// True when this thread learned that spinning does not pay (it shares its
// CPU with the peer it waits for, or the peer never answers within the spin
// budget): it yields at once.
bool cpu_looks_shared() noexcept;

// The spin and yield phases of a wait, shared by every channel's wait loop:
// ok when pred() held (and the strategy learned where), timeout when the
// strategy or the deadline says stop, empty when the caller should sleep.
template <class Pred>
Status spin_phase(Pred& pred, const Deadline& deadline, const WaitOptions& opt) noexcept {
  if (opt.strategy == WaitStrategy::block) return Status::empty;
  SpinState st;
  while (spin_once(st, opt, deadline)) {
    if (pred()) {
      spin_succeeded(st);
      return Status::ok;
    }
  }
  if (pred()) {
    spin_succeeded(st);
    return Status::ok;
  }
  if (opt.strategy == WaitStrategy::busy_poll || deadline.expired()) return Status::timeout;
  spin_gave_up(st);
  return Status::empty;
}
}  // namespace detail

/// A wake-up word in shared memory (a futex plus a waiter count): waiters sleep until a notifier's change makes their
/// condition true; cheap when nobody sleeps. The primitive under every channel's blocking calls.
struct Event {
  /// Bumped by notifiers that saw a sleeper; the futex word.
  std::atomic<std::uint32_t> seq{0};
  /// Number of threads between "about to sleep" and "woke up".
  std::atomic<std::uint32_t> waiters{0};

  /// Waits until pred() is true (returns ok) or the deadline passes (timeout).
  /// pred must be cheap and noexcept; it is called many times.
  template <class Pred>
  Status wait_until(Pred&& pred, Deadline deadline, const WaitOptions& opt = {}) noexcept {
    if (pred()) return Status::ok;
    if (const Status s = detail::spin_phase(pred, deadline, opt); s != Status::empty) return s;
    for (;;) {
      const std::uint32_t token = register_sleeper();
      if (pred()) {
        unregister_sleeper();
        detail::slept_wait_succeeded(opt);
        return Status::ok;
      }
      const bool timed_out = sleep(token, deadline);
      unregister_sleeper();
      if (pred()) {
        detail::slept_wait_succeeded(opt);
        return Status::ok;
      }
      if (timed_out || deadline.expired()) return Status::timeout;
    }
  }

  /// The sleeper's half of the protocol, for the callers that build their own
  /// loop (a lock, a condition variable; docs/design/overview.md, "Waiting"): register,
  /// re-check the condition, sleep(token) only if it still does not hold, then
  /// unregister. Returns the token for sleep().
  std::uint32_t register_sleeper() noexcept {
    // acquire: pairs with the release increment in notify_*; a token taken
    // before re-checking the condition makes a notify between the check and
    // the sleep visible to the futex as a changed value.
    const std::uint32_t token = seq.load(std::memory_order_acquire);
    // seq_cst: orders our registration before the re-check of the condition;
    // pairs with the full fence in notify_* (Dekker): either the notifier
    // sees waiters > 0, or we see its published data.
    waiters.fetch_add(1, std::memory_order_seq_cst);
    return token;
  }
  /// Ends what register_sleeper began (after the sleep, or when the re-check succeeded).
  void unregister_sleeper() noexcept {
    waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: only a hint for notifiers
  }

  /// Wakes sleepers after the caller published its change. Cheap when nobody
  /// sleeps: one fence and one load, no syscall, no shared-line write.
  void notify_one() noexcept { notify(1); }
  /// Wakes every sleeper (see notify_one).
  void notify_all() noexcept { notify(std::numeric_limits<int>::max()); }

  /// Sleeps while seq == token; true on timeout. For callers that build their
  /// own loop; most should use wait_until. Writes nothing (a read-only mapping
  /// may sleep on it; the kernel only reads the word).
  bool sleep(std::uint32_t token, Deadline deadline) const noexcept;

 private:
  void notify(int count) noexcept;
};

static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "shared uint32_t atomics are lock-free (a lock would be private to one process)");
static_assert(sizeof(Event) == 8, "an Event is two 32-bit words in shared memory: seq (the futex word), waiters");
static_assert(std::is_standard_layout_v<Event>, "an Event lives in shared memory: standard layout");

}  // namespace zipc
