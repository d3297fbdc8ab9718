// zipc::WaitSet: one io_uring per WaitSet with a FUTEX_WAIT per sleeping
// channel, a POLL_ADD per fd or timer; a polling fallback. docs/waitset.md.
#include "zipc/waitset.hpp"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <vector>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/uring.hpp"
#include "recovery_wait.hpp"
#include "wait_hook.hpp"
#include "zipc/error.hpp"

namespace zipc {

namespace {
constexpr std::uint64_t kStopData = 0xffffffffull;      // the stop eventfd's poll
constexpr std::uint64_t kCancelData = 1ull << 63;       // completions of cancels (ignored)
constexpr std::uint64_t kMaintainData = 0xfffffffeull;  // the maintenance timer's poll
constexpr std::uint32_t kIndexMask = 0xffffffffu;
// The poll of just-drained channels before they are armed (grace_poll).
// Longer than a blocked receive's kGraceNs (4 us): a peer that itself sleeps
// in a WaitSet wakes through io_uring's futex completion in 8-20 us here, and
// a ping-pong whose two sides once fell asleep gets back to catching each
// other awake only if one side's poll outlasts the other's wake-up (measured:
// 7 us never did, 10 us always did, 64 B ping-pong 30 k -> 750 k+ round trips/s).
constexpr std::uint64_t kWaitSetGraceNs = 10'000;
bool is_channel(ReadyKind k) {
  return k == ReadyKind::queue || k == ReadyKind::subscriber || k == ReadyKind::queue_room ||
         k == ReadyKind::rpc_server || k == ReadyKind::rpc_client || k == ReadyKind::listener;
}
bool is_timer(ReadyKind k) {
  return k == ReadyKind::deadline || k == ReadyKind::interval;
}
}  // namespace

struct WaitSet::Impl {
  struct Slot {
    std::uint32_t gen = 0;
    bool used = false;
    ReadyKind kind = ReadyKind::queue;
    detail::WaitHook hook;
    int fd = -1;
    bool own_fd = false;  // timers
    std::uint32_t events = 0;
    bool armed = false;       // a request in flight
    bool registered = false;  // counted in hook.event->waiters
    bool listed = false;      // on the level list (reported last time)
    bool done = false;        // a fired deadline
  };
  WaitSetOptions opt;
  platform::Ring ring;
  bool uring = false;
  int stop_fd = -1;
  int notify_fd = -1;  // readiness_fd (io_uring mode)
  // io_uring mode, once readiness_fd() was asked for: fires every
  // maintenance_interval while channels are attached, so that readiness_fd
  // wakes an event loop for the maintenance a blocked receive would do (a
  // dead peer is noticed by polling, never by a wake-up). Disarmed until
  // then: a caller that sleeps in wait() does that maintenance between its
  // sleep slices.
  int maintain_fd = -1;
  // readiness_fd() was asked for: from then on every wait() keeps notify_fd's
  // level right (a read and a poll of it). Until then nobody can poll it, and
  // wait() spends no syscall on it. Set by readiness_fd(), possibly from
  // another thread: relaxed, wait() reads it as a hint and readiness_fd()
  // signals the fd once itself (see fd_mode_on).
  std::atomic<bool> fd_used{false};
  std::atomic<bool> waited{false};  // a wait() ran (relaxed: read by fd_mode_on, a hint)
  // Fallback mode's readiness fd: a timerfd made by the first readiness_fd()
  // call. After each wait() it expires at once when something was reported
  // (readable while wait(0) would report it) and otherwise every fallback_nap
  // (the loop's wait(0) then polls every channel: no thread, no futex wake
  // reaches it). -1 until asked for; relaxed: its creation is the only race.
  std::atomic<int> nap_fd{-1};
  bool maintain_polled = false;  // its poll is in the ring
  bool maintain_fired = false;   // it completed since the last maintenance
  std::atomic<bool> stopping{false};
  bool degraded = false;  // some channel's process has no membarrier: nap-capped
  std::vector<Slot> slots;
  std::vector<std::uint32_t> free_slots;
  std::vector<std::uint32_t> level;    // reported last time (re-checked first)
  std::vector<std::uint32_t> pending;  // completions taken during detach, handled by the next wait
  std::vector<std::uint32_t> rearm;
  std::vector<Ready> out;
  std::size_t count = 0;
  std::size_t channels = 0;         // attached channel endpoints (the maintenance timer runs while > 0)
  std::uint64_t next_maintain = 0;  // fallback: when channels next run their recovery check

  static std::uint64_t id_of(std::uint32_t idx, std::uint32_t gen) { return (std::uint64_t{gen} << 32) | idx; }
  Slot* find(std::uint64_t id) {
    const auto idx = static_cast<std::uint32_t>(id & kIndexMask);
    if (idx >= slots.size() || !slots[idx].used || slots[idx].gen != (id >> 32)) return nullptr;
    return &slots[idx];
  }
  std::uint32_t new_slot() {
    std::uint32_t idx;
    if (!free_slots.empty()) {
      idx = free_slots.back();
      free_slots.pop_back();
    } else {
      if (slots.size() >= kIndexMask - 1) throw Error(Errc::busy, "WaitSet: too many attachments");
      idx = static_cast<std::uint32_t>(slots.size());
      slots.emplace_back();
    }
    Slot& s = slots[idx];
    const std::uint32_t gen = s.gen + 1;
    s = Slot{};
    s.gen = gen == 0 ? 1 : gen;
    s.used = true;
    ++count;
    return idx;
  }
  std::uint64_t data(std::uint32_t idx) const { return id_of(idx, slots[idx].gen); }

  void report(std::uint32_t idx, std::uint32_t revents, std::uint64_t expirations) {
    Slot& s = slots[idx];
    out.push_back(Ready{data(idx), s.kind, revents, expirations});
    if (!is_timer(s.kind) && !s.listed) {
      s.listed = true;
      level.push_back(idx);
    }
  }

  // ---- io_uring mode
  // Arms every slot of `rearm` not ready now: channels register first, then
  // one heavy barrier covers them all, then each is checked (asymmetric_wait.hpp).
  void arm_batch() {
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

  void completed(std::uint32_t idx, std::int32_t res) {
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
  bool internal_completion(const platform::Completion& c) {
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

  void take_completions() {
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
  void recheck_level() {
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

  void maintenance_fired() {
    (void)platform::timerfd_take(maintain_fd);
    maintain_polled = false;
    maintain_fired = true;
  }

  // What a blocked receive does between its sleep slices, for every armed
  // channel (recovery of a dead peer, see WaitHook::maintain); what became
  // ready by it is reported.
  void maintain_channels() {
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
  void poll_maintenance() {
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
  void grace_poll() {
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
  void fd_mode_on() noexcept {
    if (fd_used.exchange(true, std::memory_order_relaxed)) return;  // relaxed: see fd_used
    const auto every = static_cast<std::uint64_t>(std::max<std::int64_t>(0, opt.maintenance_interval.count()));
    if (every != 0 && maintain_fd >= 0)
      (void)platform::timerfd_set(maintain_fd, platform::monotonic_ns() + every, every);
    if (waited.load(std::memory_order_relaxed)) platform::eventfd_signal(notify_fd);  // relaxed: a hint
  }

  std::span<const Ready> wait_uring(Deadline d) {
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

  // ---- fallback: poll every channel, nap on the fds between polls.
  std::span<const Ready> wait_fallback(Deadline d) {
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
  int fallback_fd() noexcept {
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

  void wait_fallback_polls(Deadline d) {
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

  void release_slot(std::uint32_t idx) {
    Slot& s = slots[idx];
    if (s.armed && uring) {
      // The kernel must let go of the futex word or fd before the endpoint
      // may go: cancel, and wait for this request's completion.
      (void)ring.cancel(kCancelData | idx, data(idx));
      while (s.armed) {
        ring.wait(UINT64_MAX);
        platform::Completion c[64];
        const unsigned n = ring.reap(c, 64);
        for (unsigned i = 0; i < n; ++i) {
          if (internal_completion(c[i])) continue;
          Slot* o = find(c[i].user_data);
          if (o == nullptr || !o->armed) continue;
          o->armed = false;
          if (o != &s) pending.push_back(static_cast<std::uint32_t>(c[i].user_data));
        }
      }
    }
    if (s.registered) s.hook.leave();
    s.hook = detail::WaitHook{};  // lets go of what it kept mapped (an Rpc client's connection)
    if (s.own_fd) platform::close_fd(s.fd);
    if (is_channel(s.kind)) --channels;
    s.used = false;
    s.registered = false;
    --count;
    std::erase(level, idx);
    std::erase(pending, idx);
    std::erase(rearm, idx);
    free_slots.push_back(idx);
  }

  // A channel endpoint: its hook says what to sleep on and when it is ready.
  std::uint64_t add_channel(ReadyKind kind, const detail::WaitHook& hook) {
    const std::uint32_t idx = new_slot();
    slots[idx].kind = kind;
    slots[idx].hook = hook;
    ++channels;
    return add(idx);
  }

  std::uint64_t add(std::uint32_t idx) {
    if (uring) {
      rearm.push_back(idx);
      // Armed at once so readiness_fd works before the first wait().
      const std::size_t before = out.size();
      arm_batch();
      if (out.size() != before) {
        out.resize(before);  // reported by the next wait() (it is on the level list)
        platform::eventfd_signal(notify_fd);
      }
      poll_maintenance();
      ring.submit();
    }
    return data(idx);
  }
};

WaitSet::WaitSet(const WaitSetOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opt = options;
  if (m.opt.fallback_nap.count() <= 0) m.opt.fallback_nap = std::chrono::milliseconds(1);
  m.stop_fd = platform::eventfd_open();
  if (m.stop_fd < 0) throw Error(Errc::system, "WaitSet: eventfd failed, errno " + std::to_string(-m.stop_fd));
  int err = 0;
  m.uring = !options.force_fallback && m.ring.open(256, &err);
  if (m.uring) {
    m.notify_fd = platform::eventfd_open();
    if (m.notify_fd < 0 || !m.ring.register_eventfd(m.notify_fd)) {
      platform::close_fd(m.stop_fd);
      platform::close_fd(m.notify_fd);
      throw Error(Errc::system, "WaitSet: cannot register the readiness eventfd");
    }
    (void)m.ring.poll_add(kStopData, m.stop_fd, POLLIN);
    m.ring.submit();
    // Created disarmed: readiness_fd() arms it (fd_mode_on).
    if (m.opt.maintenance_interval.count() > 0) m.maintain_fd = platform::timerfd_open_idle();
    if (m.opt.maintenance_interval.count() > 0 && m.maintain_fd < 0) {
      m.ring.close();
      platform::close_fd(m.stop_fd);
      platform::close_fd(m.notify_fd);
      throw Error(Errc::system, "WaitSet: timerfd failed, errno " + std::to_string(-m.maintain_fd));
    }
  }
}

WaitSet::~WaitSet() {
  if (!impl_) return;
  for (std::uint32_t i = 0; i < impl_->slots.size(); ++i)
    if (impl_->slots[i].used) impl_->release_slot(i);
  impl_->ring.close();  // cancels what is left (the stop poll) before the fds go
  platform::close_fd(impl_->stop_fd);
  platform::close_fd(impl_->notify_fd);
  if (impl_->maintain_fd >= 0) platform::close_fd(impl_->maintain_fd);
  if (const int fd = impl_->nap_fd.load(std::memory_order_relaxed); fd >= 0)
    platform::close_fd(fd);  // relaxed: see nap_fd
}
WaitSet::WaitSet(WaitSet&&) noexcept = default;
WaitSet& WaitSet::operator=(WaitSet&& o) noexcept {
  if (this != &o) {
    WaitSet dead(std::move(*this));
    impl_ = std::move(o.impl_);
  }
  return *this;
}

std::uint64_t WaitSet::attach(Queue& consumer) {
  return impl_->add_channel(ReadyKind::queue, detail::WaitHookAccess::of(consumer));
}
std::uint64_t WaitSet::attach(Subscriber& subscriber) {
  return impl_->add_channel(ReadyKind::subscriber, detail::WaitHookAccess::of(subscriber));
}
std::uint64_t WaitSet::attach_room(Queue& producer) {
  return impl_->add_channel(ReadyKind::queue_room, detail::WaitHookAccess::room_of(producer));
}
std::uint64_t WaitSet::attach(RpcServer& server) {
  return impl_->add_channel(ReadyKind::rpc_server, detail::WaitHookAccess::of(server));
}
std::uint64_t WaitSet::attach(RpcClient& client) {
  return impl_->add_channel(ReadyKind::rpc_client, detail::WaitHookAccess::of(client));
}
std::uint64_t WaitSet::attach(Listener& listener) {
  return impl_->add_channel(ReadyKind::listener, detail::WaitHookAccess::of(listener));
}
std::uint64_t WaitSet::attach_fd(int fd, std::uint32_t events) {
  if (fd < 0 || events == 0) throw Error(Errc::invalid_argument, "WaitSet::attach_fd: bad fd or no events");
  const std::uint32_t idx = impl_->new_slot();
  impl_->slots[idx].kind = ReadyKind::fd;
  impl_->slots[idx].fd = fd;
  impl_->slots[idx].events = events;
  return impl_->add(idx);
}
namespace {
int make_timer(std::uint64_t first, std::uint64_t interval) {
  const int fd = platform::timerfd_open(first, interval);
  if (fd < 0) throw Error(Errc::system, "WaitSet: timerfd failed, errno " + std::to_string(-fd));
  return fd;
}
}  // namespace
std::uint64_t WaitSet::attach_deadline(Deadline at) {
  if (at.is_never()) throw Error(Errc::invalid_argument, "WaitSet::attach_deadline: Deadline::never()");
  const int fd = make_timer(at.ns(), 0);
  const std::uint32_t idx = impl_->new_slot();
  auto& s = impl_->slots[idx];
  s.kind = ReadyKind::deadline;
  s.fd = fd;
  s.own_fd = true;
  s.events = POLLIN;
  return impl_->add(idx);
}
std::uint64_t WaitSet::attach_interval(std::chrono::nanoseconds period) {
  if (period.count() <= 0) throw Error(Errc::invalid_argument, "WaitSet::attach_interval: period must be > 0");
  const auto p = static_cast<std::uint64_t>(period.count());
  const int fd = make_timer(platform::monotonic_ns() + p, p);
  const std::uint32_t idx = impl_->new_slot();
  auto& s = impl_->slots[idx];
  s.kind = ReadyKind::interval;
  s.fd = fd;
  s.own_fd = true;
  s.events = POLLIN;
  return impl_->add(idx);
}

bool WaitSet::detach(std::uint64_t id) {
  if (impl_->find(id) == nullptr) return false;
  impl_->release_slot(static_cast<std::uint32_t>(id & kIndexMask));
  return true;
}

std::span<const Ready> WaitSet::wait(Timeout timeout) {
  const Deadline d =
      timeout == Timeout::max() ? Deadline::never() : Deadline::after(std::max(timeout, Timeout::zero()));
  return impl_->uring ? impl_->wait_uring(d) : impl_->wait_fallback(d);
}

void WaitSet::run(const std::function<void(const Ready&)>& handler) {
  for (;;) {
    const std::span<const Ready> ready = wait(Timeout::max());
    if (ready.empty()) return;  // stop()
    for (const Ready& r : ready) handler(r);
  }
}

void WaitSet::stop() noexcept {
  impl_->stopping.store(true, std::memory_order_release);  // release: read by wait() (acq_rel exchange)
  platform::eventfd_signal(impl_->stop_fd);
}

int WaitSet::readiness_fd() const noexcept {
  if (!impl_->uring) return impl_->fallback_fd();
  impl_->fd_mode_on();
  return impl_->notify_fd;
}
bool WaitSet::uses_io_uring() const noexcept {
  return impl_->uring;
}
std::size_t WaitSet::size() const noexcept {
  return impl_->count;
}

}  // namespace zipc
