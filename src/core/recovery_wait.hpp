// Internal: the one recovery-sliced wait of every channel, and the shared
// stall clock behind it (docs/design/overview.md, "Recovery: the shared stall clock").
//
// A position blocked by a dead participant is recovered by whichever
// survivor next looks once the stall is recovery_time old. The clock lives
// in shared memory, one 64-bit word per blocked frontier: the first survivor
// that sees the frontier stuck at a key (the blocking position) stores
// (key, now); every later caller -- try_* calls included, whatever their
// timeout -- reads it, and the one that finds it recovery_time old swaps in
// (key, now) and recovers. So recovery never depends on how one survivor
// slices its waits, and a recoverer killed mid-scan only delays the next
// one by one recovery_time. Recovery is always safe to run early (it only
// takes back what dead processes hold), so racing updates of the word cost
// at most an extra scan, never correctness.
//
// Word layout: bits 63..44 the low 20 bits of the key; bits 43..0 the
// monotonic time of the stall's start in units of 1024 ns, modulo 2^44
// (elapsed times are computed modulo 2^44 too: exact for stalls up to ~208
// days). A zeroed word (a new segment, or one made before the clock
// existed) reads as "no stall seen yet".
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "platform/clock.hpp"
#include "zipc/event.hpp"

namespace zipc::detail {

// Longest sleep of a recovery-sliced wait: a sleeper notices a stall that
// began while it slept at most this late, so the documented margin of
// recovery is recovery_time + kLocalGraceNs + kStallSliceNs (+ one scan).
inline constexpr std::uint64_t kStallSliceNs = 20'000'000;

// A process-local filter in front of the shared word: the word (a line other
// processes read) is touched only once this handle (or process) has seen the
// frontier stuck at the same key for kLocalGraceNs. Without it every call
// that found nothing right after progress -- a consumer polling an empty
// queue after each message -- would write the shared line once per message.
// Costs at most kLocalGraceNs of the margin. Relaxed atomics: a hint shared
// by the threads of one process at most.
inline constexpr std::uint64_t kLocalGraceNs = 1'000'000;
struct LocalStall {
  std::atomic<std::uint64_t> key{~0ull};
  std::atomic<std::uint64_t> since{0};
};

class SharedStall {
 public:
  SharedStall(std::atomic<std::uint64_t>& word, std::uint64_t recovery_ns, LocalStall* local = nullptr) noexcept
      : word_(&word), recovery_ns_(std::max<std::uint64_t>(recovery_ns, 1)), local_(local) {}

  // True when the caller must run recovery now: the frontier has been stuck
  // at `key` for the recovery time as seen by any caller. At most one caller
  // per recovery time gets true for one stall.
  bool due(std::uint64_t key, std::uint64_t now_ns) noexcept {
    if (local_ != nullptr && !locally_stuck(key, now_ns)) return false;
    // acquire: pairs with the acq_rel CAS of the caller that started the
    // stall or last recovered it (only the time is read: no data published).
    std::uint64_t w = word_->load(std::memory_order_acquire);
    const std::uint64_t fresh = pack(key, now_ns);
    if (w == 0 || key_of(w) != (key & kKeyMask)) {
      // Progress since the word was written, or a first stall: it starts now.
      // acq_rel: one caller's start wins; losers see it on their next look.
      word_->compare_exchange_strong(w, fresh, std::memory_order_acq_rel, std::memory_order_relaxed);
      return false;
    }
    if (elapsed_ns(w, now_ns) < recovery_ns_) return false;
    // acq_rel: exactly one caller per stall period wins the right to recover.
    return word_->compare_exchange_strong(w, fresh, std::memory_order_acq_rel, std::memory_order_relaxed);
  }

  // When recovery of the stall at `key` is due (absolute monotonic ns); a
  // recovery time from now when the word holds another key (the caller's
  // due() starts the stall now).
  [[nodiscard]] std::uint64_t due_at(std::uint64_t key, std::uint64_t now_ns) const noexcept {
    if (local_ != nullptr) {
      // relaxed: the process-local filter (see LocalStall).
      if (local_->key.load(std::memory_order_relaxed) != key) return now_ns + kLocalGraceNs;
      const std::uint64_t armed = local_->since.load(std::memory_order_relaxed) + kLocalGraceNs;
      if (now_ns < armed) return armed;
    }
    // relaxed: a sleep bound only; due() decides.
    const std::uint64_t w = word_->load(std::memory_order_relaxed);
    if (w == 0 || key_of(w) != (key & kKeyMask)) return now_ns + recovery_ns_;
    const std::uint64_t e = elapsed_ns(w, now_ns);
    return e >= recovery_ns_ ? now_ns : now_ns + (recovery_ns_ - e);
  }

  [[nodiscard]] std::uint64_t recovery_ns() const noexcept { return recovery_ns_; }

 private:
  static constexpr unsigned kTimeBits = 44;
  static constexpr unsigned kUnitShift = 10;
  static constexpr std::uint64_t kTimeMask = (1ull << kTimeBits) - 1;
  static constexpr std::uint64_t kKeyMask = (1ull << (64 - kTimeBits)) - 1;

  static std::uint64_t pack(std::uint64_t key, std::uint64_t now_ns) noexcept {
    return ((key & kKeyMask) << kTimeBits) | ((now_ns >> kUnitShift) & kTimeMask);
  }
  static std::uint64_t key_of(std::uint64_t w) noexcept { return w >> kTimeBits; }
  static std::uint64_t elapsed_ns(std::uint64_t w, std::uint64_t now_ns) noexcept {
    return (((now_ns >> kUnitShift) - w) & kTimeMask) << kUnitShift;
  }

  // True once this process has seen `key` stuck for kLocalGraceNs.
  bool locally_stuck(std::uint64_t key, std::uint64_t now_ns) noexcept {
    // relaxed (all): the process-local filter (see LocalStall).
    if (local_->key.load(std::memory_order_relaxed) != key) {
      local_->key.store(key, std::memory_order_relaxed);
      local_->since.store(now_ns, std::memory_order_relaxed);
      return false;
    }
    return now_ns - local_->since.load(std::memory_order_relaxed) >= kLocalGraceNs;
  }

  std::atomic<std::uint64_t>* word_;
  std::uint64_t recovery_ns_;
  LocalStall* local_;
};

// A non-blocking call that found nothing to do: recovers when the stall is
// due. Returns true when recover() ran (the caller tries once more).
template <class Key, class Recover>
bool poll_recovery(SharedStall stall, Key&& key, Recover&& recover) noexcept {
  if (!stall.due(key(), platform::monotonic_ns())) return false;
  recover();
  return true;
}

// The one recovery-sliced wait. attempt() returns true when the caller is
// done (progress, or a terminal state); key() reads the frontier the caller
// is blocked on; sleep(Deadline) sleeps on the channel's event until woken
// or the deadline; recover() takes back what dead participants block.
// Sleeps are sliced at the stall's due time and at most kStallSliceNs, so
// whichever caller looks first once the stall is due recovers it. Returns
// true when attempt() did, false when `deadline` passed first. The caller
// has already made one attempt that failed.
template <class Attempt, class Key, class Sleep, class Recover>
bool recovery_sliced_wait(SharedStall stall, Deadline deadline, Attempt&& attempt, Key&& key, Sleep&& sleep,
                          Recover&& recover) noexcept {
  for (;;) {
    std::uint64_t now = platform::monotonic_ns();
    const std::uint64_t k = key();
    if (stall.due(k, now)) {
      recover();
      if (attempt()) return true;
      now = platform::monotonic_ns();
    }
    if (!deadline.is_never() && now >= deadline.ns()) return false;
    std::uint64_t wake = std::min(now + kStallSliceNs, stall.due_at(k, now));
    if (wake <= now) wake = now + std::min<std::uint64_t>(kStallSliceNs, stall.recovery_ns());
    (void)sleep(Deadline::at_ns(std::min(deadline.ns(), wake)));
    if (attempt()) return true;
  }
}

// The same wait for a channel whose recovery is one process's duty (rpc:
// the server reaps its clients, a client watches its server): a local
// schedule. check(now) runs whenever due_at() has passed and returns true
// when it settled the call (e.g. the peer is dead); sleeps end at due_at()
// or the deadline. The caller has already made one attempt that failed.
// attempt() may run again after the sleep's own predicate came true: an
// attempt that takes something (a claim) must return true again without
// taking a second one.
template <class Attempt, class DueAt, class Sleep, class Check>
bool periodic_recovery_wait(Deadline deadline, Attempt&& attempt, DueAt&& due_at, Sleep&& sleep,
                            Check&& check) noexcept {
  for (;;) {
    const std::uint64_t now = platform::monotonic_ns();
    if (now >= due_at() && check(now)) return true;
    if (!deadline.is_never() && now >= deadline.ns()) return false;
    (void)sleep(Deadline::at_ns(std::min(deadline.ns(), std::max<std::uint64_t>(due_at(), now + 1000))));
    if (attempt()) return true;
  }
}

}  // namespace zipc::detail
