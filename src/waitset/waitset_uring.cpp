// zipc::WaitSet's io_uring mode: one FUTEX_WAIT request per sleeping channel,
// a POLL_ADD per fd or timer, the grace poll, the readiness eventfd and the
// maintenance timer. docs/design/waitset.md ("Mechanism").
#include <algorithm>

#include "core/recovery_wait.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "waitset/waitset_impl.hpp"

namespace zipc {

using namespace waitset_detail;

// ---- io_uring mode
// Arms every slot of `rearm` not ready now: channels register first, then
// one heavy barrier covers them all, then each is checked (asymmetric_wait.hpp).
void WaitSet::Impl::arm_batch() {
  std::erase_if(rearm, [&](std::uint32_t idx) { return !slots[idx].used || slots[idx].armed; });
  bool any_channel = false;
  std::vector<std::uint32_t> tokens(rearm.size());
  for (std::size_t i = 0; i < rearm.size(); ++i) {
    Slot& s = slots[rearm[i]];
    if (!is_channel(s.kind)) continue;
    tokens[i] = s.hook.enter();
    s.registered = true;
    any_channel = true;
    if (!s.hook.barrier.fence_free()) degraded = true;
  }
  if (any_channel) detail::AsymmetricWait::here().heavy_barrier();
  std::vector<std::uint32_t> retry;  // the submission queue stayed full: armed by the next pass
  for (std::size_t i = 0; i < rearm.size(); ++i) {
    const std::uint32_t idx = rearm[i];
    Slot& s = slots[idx];
    if (is_channel(s.kind)) {
      if (s.hook.ready()) {
        s.hook.leave();
        s.registered = false;
        report(idx, 0, 0);
        continue;
      }
      s.armed = ring.futex_wait(data(idx), &s.hook.event->seq, tokens[i]);
      if (!s.armed) {
        s.hook.leave();
        s.registered = false;
      }
    } else {
      s.armed = ring.poll_add(data(idx), s.fd, s.events);
    }
    if (!s.armed) retry.push_back(idx);
  }
  rearm.swap(retry);
}

void WaitSet::Impl::completed(std::uint32_t idx, std::int32_t res) {
  Slot& s = slots[idx];
  s.armed = false;
  if (is_channel(s.kind)) {
    if (s.registered) s.hook.leave();
    s.registered = false;
    if (s.hook.ready())
      report(idx, 0, 0);
    else
      rearm.push_back(idx);
    return;
  }
  if (is_timer(s.kind)) {
    const std::uint64_t n = platform::timerfd_take(s.fd);
    if (n > 0) report(idx, 0, n);
    if (s.kind == ReadyKind::deadline && n > 0)
      s.done = true;
    else
      rearm.push_back(idx);
    return;
  }
  const std::uint32_t rev = res > 0 ? static_cast<std::uint32_t>(res) : platform::poll_now(s.fd, s.events);
  if (rev != 0)
    report(idx, rev, 0);
  else
    rearm.push_back(idx);
}

// A completion that names no endpoint: a cancel's own, or the stop eventfd's (drained and
// armed again here). True when c is one of those.
// The WaitSet's own requests (cancels, the stop eventfd, the maintenance
// timer): handled here; true when c was one of them.
bool WaitSet::Impl::internal_completion(const platform::Completion& c) {
  if ((c.user_data & kCancelData) != 0) return true;
  if (c.user_data == kMaintainData) {
    maintenance_fired();
    return true;
  }
  if (c.user_data != kStopData) return false;
  platform::eventfd_drain(stop_fd);
  (void)ring.poll_add(kStopData, stop_fd, POLLIN);
  return true;
}

void WaitSet::Impl::take_completions() {
  platform::Completion c[64];
  for (;;) {
    const unsigned n = ring.reap(c, 64);
    for (unsigned i = 0; i < n; ++i) {
      if (internal_completion(c[i])) continue;
      if (Slot* s = find(c[i].user_data); s != nullptr && s->armed)
        completed(static_cast<std::uint32_t>(c[i].user_data), c[i].res);
    }
    if (n < 64) return;
  }
}

// Re-checks what was reported last time (level-triggered): O(reported).
void WaitSet::Impl::recheck_level() {
  std::vector<std::uint32_t> prev;
  prev.swap(level);
  for (const std::uint32_t idx : prev) {
    Slot& s = slots[idx];
    s.listed = false;
    if (!s.used) continue;
    if (is_channel(s.kind)) {
      if (s.hook.ready())
        report(idx, 0, 0);
      else if (!s.armed)
        rearm.push_back(idx);
    } else if (const std::uint32_t rev = platform::poll_now(s.fd, s.events); rev != 0) {
      report(idx, rev, 0);
    } else {
      rearm.push_back(idx);
    }
  }
}

void WaitSet::Impl::maintenance_fired() {
  (void)platform::timerfd_take(maintain_fd);
  maintain_polled = false;
  maintain_fired = true;
}

// What a blocked receive does between its sleep slices, for every armed
// channel (recovery of a dead peer, see WaitHook::maintain); what became
// ready by it is reported.
void WaitSet::Impl::maintain_channels() {
  next_maintain = platform::monotonic_ns() + detail::kStallSliceNs;
  maintain_fired = false;
  for (std::uint32_t i = 0; i < slots.size(); ++i) {
    Slot& s = slots[i];
    if (!s.used || !s.armed || !is_channel(s.kind)) continue;
    s.hook.maintain();
    if (!s.listed && s.hook.ready()) report(i, 0, 0);
  }
}

// Keeps the maintenance timer's poll in the ring while a channel is attached.
void WaitSet::Impl::poll_maintenance() {
  if (maintain_polled || maintain_fd < 0 || channels == 0) return;
  maintain_polled = ring.poll_add(kMaintainData, maintain_fd, POLLIN);
}

// The blocked receive's short poll before it sleeps (asymmetric_wait.hpp):
// the channels the caller just drained (on `rearm`, about to be armed) are
// polled for kWaitSetGraceNs first. A peer that answers within microseconds (a
// ping-pong) is caught awake: no membarrier, no io_uring request, no
// wake-up. O(channels just drained), and skipped by a thread whose polls
// keep failing (block_poll_worthwhile: shared CPU, or a peer that never
// answers that fast).
void WaitSet::Impl::grace_poll() {
  if (rearm.empty() || !detail::block_poll_worthwhile()) return;
  const std::uint64_t end = platform::monotonic_ns() + kWaitSetGraceNs;
  bool caught = false;
  for (std::uint32_t i = 0; !caught; ++i) {
    for (const std::uint32_t idx : rearm) {
      const Slot& s = slots[idx];
      if (s.used && !s.armed && is_channel(s.kind) && s.hook.ready()) caught = true;
    }
    if (caught || ((i & 15u) == 15u && platform::monotonic_ns() >= end)) break;
    platform::cpu_relax();
  }
  detail::block_poll_result(caught);
  if (!caught) return;
  std::erase_if(rearm, [&](std::uint32_t idx) {
    Slot& s = slots[idx];
    if (!s.used || s.armed || !is_channel(s.kind) || !s.hook.ready()) return false;
    report(idx, 0, 0);
    return true;
  });
}

// readiness_fd() asked for the first time: the maintenance timer starts,
// and the fd is made readable once (a wait() before may have left it
// drained while something is reported; the wait(0) that follows puts it right).
void WaitSet::Impl::fd_mode_on() noexcept {
  if (fd_used.exchange(true, std::memory_order_relaxed)) return;  // relaxed: see fd_used
  const auto every = static_cast<std::uint64_t>(std::max<std::int64_t>(0, opt.maintenance_interval.count()));
  if (every != 0 && maintain_fd >= 0) (void)platform::timerfd_set(maintain_fd, platform::monotonic_ns() + every, every);
  if (waited.load(std::memory_order_relaxed)) platform::eventfd_signal(notify_fd);  // relaxed: a hint
}

std::span<const Ready> WaitSet::Impl::wait_uring(Deadline d) {
  out.clear();
  if (!waited.load(std::memory_order_relaxed)) waited.store(true, std::memory_order_relaxed);  // relaxed: a hint
  bool first = true;
  for (;;) {
    // stop() wins over level readiness (a closed queue is always ready);
    // what is on the level list is reported again by the next wait().
    if (stopping.exchange(false, std::memory_order_acq_rel)) break;  // acq_rel: pairs with stop()
    recheck_level();
    for (const std::uint32_t idx : pending)
      if (slots[idx].used) completed(idx, 0);
    pending.clear();
    take_completions();
    if (first && out.empty() && !d.expired()) grace_poll();
    first = false;
    arm_batch();
    // Due also for a caller that never sleeps here (wait(0) from an event
    // loop woken by readiness_fd, which the maintenance timer makes readable).
    if (maintain_fired) maintain_channels();
    if (!out.empty() || d.expired()) break;
    // Sleep in slices: between two, every sleeping channel does what a
    // blocked receive does (recovery of a dead peer, see WaitHook::maintain);
    // without membarrier the slice is short and readiness is re-checked too.
    // (A request the full submission queue refused: retried after a short nap.)
    const std::uint64_t slice =
        degraded || !rearm.empty() ? static_cast<std::uint64_t>(opt.fallback_nap.count()) : detail::kStallSliceNs;
    const std::uint64_t now = platform::monotonic_ns();
    ring.wait(std::min(d.ns(), now + slice));
    if (ring.has_completions() || platform::monotonic_ns() < now + slice) continue;
    maintain_channels();
    if (!out.empty()) break;
  }
  poll_maintenance();
  ring.submit();
  if (!fd_used.load(std::memory_order_relaxed)) return out;  // relaxed: see fd_used
  // readiness_fd: readable while something is reported (level) or completions wait.
  // Left readable (no new write, so no new edge for EPOLLET) while
  // something stays reported; drained, then re-checked, otherwise.
  if (level.empty() && pending.empty()) platform::eventfd_drain(notify_fd);
  if ((!level.empty() || ring.has_completions() || !pending.empty()) && platform::poll_now(notify_fd, POLLIN) == 0)
    platform::eventfd_signal(notify_fd);
  return out;
}

}  // namespace zipc
