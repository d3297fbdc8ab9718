// Internal: waiting and waking on an Event with an asymmetric barrier, for
// the channels' hot paths (queue and topic).
//
// zipc::Event::notify orders the caller's publication before its read of
// `waiters` with a seq_cst fence. On a channel's hot path that fence costs
// more than the rest of a send: it drains the store buffer, i.e. waits for
// the ownership transfer of every payload line just written. Here that cost
// moves to the side about to sleep, which pays a futex call anyway: wake()
// reads `waiters` behind a compiler barrier only, and a sleeper, after
// registering in `waiters`, runs membarrier_global() (membarrier(2)), which
// executes a full barrier on every CPU running a registered process (every
// process attached to a channel registers at attach). So either the waker's
// read comes after that barrier and sees the registration, or its
// publication came before it and the sleeper's re-check sees it: no wake-up
// is ever missed, on any architecture.
//
// Where membarrier is unavailable (kernel < 4.16, seccomp), this process's
// wakes use the seq_cst fence (correct, slower), and its sleeps are capped at
// kFallbackNapNs after a kGraceNs poll: a waker in another process might be
// fence-free, and a wake-up it misses then costs at most one such nap.
//
// Whether this process is registered is cached per handle at attach. A child
// forked from a registered process registers again at fork
// (platform/membarrier.cpp); should that fail, the handles it inherited still
// wake fence-free, and a peer's sleeper may then miss one of their wake-ups
// for at most its wait slice (half the recovery time, or 50 ms).
//
// The block strategy polls for kGraceNs before it registers and sleeps (for
// speed only, see block_poll_worthwhile()); busy-poll and adaptive have spun
// already.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/membarrier.hpp"
#include "sync/fences.hpp"
#include "zipc/event.hpp"

namespace zipc::detail {

inline constexpr std::uint64_t kGraceNs = 4'000;            // block strategy's poll; > any store buffer drain
inline constexpr std::uint64_t kFallbackNapNs = 1'000'000;  // without membarrier: longest sleep between re-checks

// Block strategy's short poll before sleeping: skipped by a thread whose
// polls keep failing (e.g. it shares its CPU with the peer, which cannot run
// while we poll), and retried now and then to notice a change.
bool block_poll_worthwhile() noexcept;
void block_poll_result(bool caught) noexcept;

class AsymmetricWait {
 public:
  // For this process: registers it for membarrier(2) when it can be.
  static AsymmetricWait here() noexcept { return AsymmetricWait(platform::membarrier_ready()); }
  AsymmetricWait() = default;

  // True when this process is registered for membarrier(2): our side of a
  // store-then-check Dekker pair needs only a compiler barrier, because the
  // rare side (a sleeper, a consumer deciding "closed") runs heavy_barrier().
  [[nodiscard]] bool fence_free() const noexcept { return fence_free_; }

  // Frequent side: orders our earlier stores before our next loads.
  void store_load_barrier() const noexcept {
    if (fence_free_)
      std::atomic_signal_fence(std::memory_order_seq_cst);  // the rare side's membarrier does the rest
    else
      detail::full_fence();
  }
  // Rare side: afterwards, every frequent side's stores before its barrier
  // are visible to us, or its loads after it see our (and others') earlier stores.
  void heavy_barrier() const noexcept {
    if (fence_free_)
      platform::membarrier_global();
    else
      detail::full_fence();
  }

  // Wakes the sleepers of ev after the caller published its change. Cheap
  // when nobody sleeps: a compiler barrier and one load.
  void wake(Event& ev, bool all) const noexcept {
    store_load_barrier();  // our publication before the read of waiters (see the top of this file)
    // relaxed: the barrier pair above orders it.
    if (ev.waiters.load(std::memory_order_relaxed) == 0) return;
    if (all)
      ev.notify_all();
    else
      ev.notify_one();
  }

  // Waits until pred() holds (ok) or `slice` passes (timeout), as `opt` says.
  template <class Pred>
  Status wait(Event& ev, Pred&& pred, Deadline slice, const WaitOptions& opt) const noexcept {
    if (pred()) return Status::ok;
    // Reports where each wait ended, so the adaptive strategy learns whether
    // this thread shares its CPU with the peer (see Event::wait_until).
    if (const Status s = spin_phase(pred, slice, opt); s != Status::empty) return s;
    if (opt.strategy == WaitStrategy::block && block_poll_worthwhile()) {
      // Not for correctness (the membarrier below is): a peer answering within
      // a few microseconds is far cheaper to catch awake than through a futex
      // sleep and wake. Polled before registering, so wakers meanwhile skip
      // their futex call.
      const bool caught = poll_for(pred, kGraceNs);
      block_poll_result(caught);
      if (caught) return Status::ok;
    }
    for (;;) {
      // Registered (seq_cst) before the barrier and the re-check below.
      const std::uint32_t token = ev.register_sleeper();
      Deadline until = slice;
      if (fence_free_) {
        // Every waker now sees waiters > 0, or we see its publication below.
        platform::membarrier_global();
      } else {
        // Without membarrier a fence-free waker's publication may still sit in
        // its store buffer: poll a little, and do not sleep long.
        (void)poll_for(pred, kGraceNs);
        until = Deadline::at_ns(std::min(slice.ns(), platform::monotonic_ns() + kFallbackNapNs));
      }
      if (pred()) {
        ev.unregister_sleeper();
        return Status::ok;
      }
      // Unlike Event::wait_until, a wait that slept here teaches the next
      // spins nothing (no slept_wait_succeeded): a paced stream would teach
      // every reader to spin through its gaps (docs/design/bench.md, "Waits that
      // learn from sleeping: the rpc's, not the channels'").
      (void)ev.sleep(token, until);
      ev.unregister_sleeper();
      if (pred()) return Status::ok;
      if (slice.expired()) return Status::timeout;
    }
  }

 private:
  explicit AsymmetricWait(bool fence_free) noexcept : fence_free_(fence_free) {}
  // Polls pred() for about ns (the clock read every 16 polls): true when it held.
  template <class Pred>
  static bool poll_for(Pred& pred, std::uint64_t ns) noexcept {
    const std::uint64_t end = platform::monotonic_ns() + ns;
    for (std::uint32_t i = 0;; ++i) {
      if (pred()) return true;
      if ((i & 15u) == 15u && platform::monotonic_ns() >= end) return false;
      platform::cpu_relax();
    }
  }
  bool fence_free_ = false;
};

}  // namespace zipc::detail
