// Waiting and waking for zipc::Queue.
//
// zipc::Event::notify orders the caller's publication before its read of
// `waiters` with a seq_cst fence. On the queue's hot path that fence costs
// more than the rest of a send: it drains the store buffer, i.e. waits for
// the ownership transfer of every payload line just written. The queue
// moves that cost to the side about to sleep, which pays a futex call anyway:
// wake() reads `waiters` behind a compiler barrier only, and a sleeper, after
// registering in `waiters`, runs membarrier_global() (membarrier(2)), which
// executes a full barrier on every CPU running a registered process (every
// process attached to a queue registers at attach). So either the waker's
// read comes after that barrier and sees the registration, or its
// publication came before it and the sleeper's re-check sees it: no wake-up
// is ever missed, on any architecture.
//
// Where membarrier is unavailable (kernel < 4.16, seccomp), this process's
// wakes use the seq_cst fence (correct, slower), and its sleeps are capped at
// kFallbackNapNs after a kGraceNs poll: a waker in another process might be
// fence-free, and a wake-up it misses then costs at most one such nap.
//
// The block strategy polls for kGraceNs before it registers and sleeps (for
// speed only, see block_poll_worthwhile()); busy-poll and adaptive have spun
// already.
#include <algorithm>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/membarrier.hpp"
#include "queue_impl.hpp"

namespace zipc::detail {

namespace {
constexpr std::uint64_t kGraceNs = 4'000;            // block strategy's poll; > any store buffer drain
constexpr std::uint64_t kFallbackNapNs = 1'000'000;  // without membarrier: longest sleep between re-checks
// Block strategy's short poll before sleeping: skipped by a thread whose
// polls keep failing (e.g. it shares its CPU with the peer, which cannot run
// while we poll), retried every kPollRetry waits to notice a change.
constexpr std::uint32_t kPollMisses = 8;
constexpr std::uint32_t kPollRetry = 64;
thread_local std::uint32_t t_poll_misses = 0;
thread_local std::uint32_t t_poll_skipped = 0;

bool block_poll_worthwhile() noexcept {
  if (cpu_looks_shared()) return false;
  if (t_poll_misses < kPollMisses) return true;
  return ++t_poll_skipped % kPollRetry == 0;
}
void block_poll_result(bool caught) noexcept {
  if (caught)
    t_poll_misses = 0;
  else if (t_poll_misses < kPollMisses)
    ++t_poll_misses;
}
}  // namespace

void QueueImpl::heavy_barrier() const noexcept {
  if (fence_free)
    platform::membarrier_global();
  else
    full_fence();
}

void QueueImpl::wake(Event& ev, bool all) noexcept {
  // Our publication (a seq or head/tail store) before the read of waiters:
  // see the comment at the top of this file.
  store_load_barrier();
  // relaxed: the barrier pair above orders it.
  if (ev.waiters.load(std::memory_order_relaxed) == 0) return;
  if (all)
    ev.notify_all();
  else
    ev.notify_one();
}

Status QueueImpl::wait_on(Event& ev, bool producer_side, Deadline slice) noexcept {
  const auto pred = [&]() noexcept { return producer_side ? can_produce() : can_consume(); };
  if (pred()) return Status::ok;
  if (const Status s = spin_phase(pred, slice, wait); s != Status::empty) return s;
  if (wait.strategy == WaitStrategy::block && block_poll_worthwhile()) {
    // Not for correctness (the membarrier below is): a peer answering within
    // a few microseconds is far cheaper to catch awake than through a futex
    // sleep and wake. Polled before registering, so wakers meanwhile skip
    // their futex call.
    const std::uint64_t end = platform::monotonic_ns() + kGraceNs;
    for (std::uint32_t i = 0;; ++i) {
      if (pred()) {
        block_poll_result(true);
        return Status::ok;
      }
      if ((i & 15u) == 15u && platform::monotonic_ns() >= end) break;
      platform::cpu_relax();
    }
    block_poll_result(false);
  }
  for (;;) {
    // acquire: pairs with the release increment of seq in Event::notify_*.
    const std::uint32_t token = ev.seq.load(std::memory_order_acquire);
    // seq_cst: our registration is ordered before the barrier and re-check below.
    ev.waiters.fetch_add(1, std::memory_order_seq_cst);
    Deadline until = slice;
    if (fence_free) {
      // Every waker now sees waiters > 0, or we see its publication below.
      platform::membarrier_global();
    } else {
      // Without membarrier a fence-free waker's publication may still sit in
      // its store buffer: poll a little, and do not sleep long.
      const std::uint64_t grace_end = platform::monotonic_ns() + kGraceNs;
      for (std::uint32_t i = 0; !pred(); ++i) {
        if ((i & 15u) == 15u && platform::monotonic_ns() >= grace_end) break;
        platform::cpu_relax();
      }
      until = Deadline::at_ns(std::min(slice.ns(), platform::monotonic_ns() + kFallbackNapNs));
    }
    if (pred()) {
      ev.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a hint for wakers
      return Status::ok;
    }
    (void)ev.sleep(token, until);
    ev.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a hint for wakers
    if (pred()) return Status::ok;
    if (slice.expired()) return Status::timeout;
  }
}

}  // namespace zipc::detail
