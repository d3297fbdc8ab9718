// zipc::WaitSet's fallback (no io_uring futex waits): every channel polled,
// naps in ppoll on the fds and timers, and a timerfd as the readiness fd.
// docs/design/waitset.md ("Kernel requirements and fallback").
#include <algorithm>

#include "core/recovery_wait.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "waitset/waitset_impl.hpp"

namespace zipc {

using namespace waitset_detail;

// Polls every channel, naps on the fds between polls; keeps nap_fd on schedule.
std::span<const Ready> WaitSet::Impl::wait_fallback(Deadline d) {
  wait_fallback_polls(d);
  if (const int fd = nap_fd.load(std::memory_order_relaxed); fd >= 0) {  // relaxed: see nap_fd
    (void)platform::timerfd_take(fd);
    const auto nap = static_cast<std::uint64_t>(opt.fallback_nap.count());
    // Reported: readable now (level); else readable after the nap, and every nap from then.
    (void)platform::timerfd_set(fd, out.empty() ? platform::monotonic_ns() + nap : 0, nap);
  }
  return out;
}

// The fallback mode's readiness fd (nap_fd): readable at once, so the
// loop's first wait(0) puts it on its schedule. -1 when no timerfd can be made.
int WaitSet::Impl::fallback_fd() noexcept {
  int fd = nap_fd.load(std::memory_order_relaxed);  // relaxed: see nap_fd
  if (fd >= 0) return fd;
  const int made = platform::timerfd_open(0, static_cast<std::uint64_t>(opt.fallback_nap.count()));
  if (made < 0) return -1;
  if (!nap_fd.compare_exchange_strong(fd, made, std::memory_order_relaxed)) {  // relaxed: see nap_fd
    platform::close_fd(made);
    return fd;
  }
  return made;
}

void WaitSet::Impl::wait_fallback_polls(Deadline d) {
  out.clear();
  std::vector<int> fds{stop_fd};
  std::vector<std::uint32_t> ev{POLLIN}, rev, idxs{kIndexMask};
  for (std::uint32_t i = 0; i < slots.size(); ++i)
    if (slots[i].used && !is_channel(slots[i].kind) && !slots[i].done) {
      fds.push_back(slots[i].fd);
      ev.push_back(slots[i].events);
      idxs.push_back(i);
    }
  rev.resize(fds.size());
  for (;;) {
    if (stopping.exchange(false, std::memory_order_acq_rel)) return;  // acq_rel: pairs with stop()
    const bool maintain = platform::monotonic_ns() >= next_maintain;
    if (maintain) next_maintain = platform::monotonic_ns() + detail::kStallSliceNs;
    for (std::uint32_t i = 0; i < slots.size(); ++i) {
      if (!slots[i].used || !is_channel(slots[i].kind)) continue;
      if (maintain) slots[i].hook.maintain();
      if (slots[i].hook.ready()) out.push_back(Ready{data(i), slots[i].kind, 0, 0});
    }
    platform::poll_many(fds.data(), ev.data(), rev.data(), static_cast<unsigned>(fds.size()), 0);
    for (std::size_t k = 1; k < fds.size(); ++k) {
      if (rev[k] == 0) continue;
      Slot& s = slots[idxs[k]];
      if (is_timer(s.kind)) {
        const std::uint64_t n = platform::timerfd_take(s.fd);
        if (n == 0) continue;
        if (s.kind == ReadyKind::deadline) s.done = true;
        out.push_back(Ready{data(idxs[k]), s.kind, 0, n});
      } else {
        out.push_back(Ready{data(idxs[k]), s.kind, rev[k], 0});
      }
    }
    if (rev[0] != 0) platform::eventfd_drain(stop_fd);
    if (!out.empty() || d.expired()) return;
    const std::uint64_t now = platform::monotonic_ns();
    const std::uint64_t nap =
        std::min<std::uint64_t>(static_cast<std::uint64_t>(opt.fallback_nap.count()), d.ns() - now);
    platform::poll_many(fds.data(), ev.data(), rev.data(), static_cast<unsigned>(fds.size()), nap);
  }
}

}  // namespace zipc
