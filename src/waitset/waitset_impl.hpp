// Internal: the state of a zipc::WaitSet, shared by its io_uring mode
// (waitset_uring.cpp), its polling fallback (waitset_fallback.cpp) and the
// public API (waitset.cpp). docs/design/waitset.md.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "platform/uring.hpp"
#include "sync/use_check.hpp"
#include "waitset/wait_hook.hpp"
#include "zipc/error.hpp"
#include "zipc/waitset.hpp"

namespace zipc {

// Constants and predicates of the three files (not exported).
namespace waitset_detail {
inline constexpr std::uint64_t kStopData = 0xffffffffull;      // the stop eventfd's poll
inline constexpr std::uint64_t kCancelData = 1ull << 63;       // completions of cancels (ignored)
inline constexpr std::uint64_t kMaintainData = 0xfffffffeull;  // the maintenance timer's poll
inline constexpr std::uint32_t kIndexMask = 0xffffffffu;
// The poll of just-drained channels before they are armed (grace_poll).
// Longer than a blocked receive's kGraceNs (4 us): a peer that itself sleeps
// in a WaitSet wakes through io_uring's futex completion in 8-20 us here, and
// a ping-pong whose two sides once fell asleep gets back to catching each
// other awake only if one side's poll outlasts the other's wake-up (measured:
// 7 us never did, 10 us always did, 64 B ping-pong 30 k -> 750 k+ round trips/s).
inline constexpr std::uint64_t kWaitSetGraceNs = 10'000;
inline bool is_channel(ReadyKind k) {
  return k == ReadyKind::queue || k == ReadyKind::subscriber || k == ReadyKind::queue_room ||
         k == ReadyKind::rpc_server || k == ReadyKind::rpc_client || k == ReadyKind::listener;
}
inline bool is_timer(ReadyKind k) {
  return k == ReadyKind::deadline || k == ReadyKind::interval;
}
}  // namespace waitset_detail

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
  // Debug builds: refuses a second thread inside this WaitSet (Errc::busy;
  // stop() is not checked: it may come from any thread).
  [[no_unique_address]] detail::UseCheck use;

  static std::uint64_t id_of(std::uint32_t idx, std::uint32_t gen) { return (std::uint64_t{gen} << 32) | idx; }
  Slot* find(std::uint64_t id) {
    const auto idx = static_cast<std::uint32_t>(id & waitset_detail::kIndexMask);
    if (idx >= slots.size() || !slots[idx].used || slots[idx].gen != (id >> 32)) return nullptr;
    return &slots[idx];
  }
  std::uint32_t new_slot() {
    std::uint32_t idx;
    if (!free_slots.empty()) {
      idx = free_slots.back();
      free_slots.pop_back();
    } else {
      if (slots.size() >= waitset_detail::kIndexMask - 1) throw Error(Errc::busy, "WaitSet: too many attachments");
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
    if (!waitset_detail::is_timer(s.kind) && !s.listed) {
      s.listed = true;
      level.push_back(idx);
    }
  }

  // io_uring mode (waitset_uring.cpp)
  void arm_batch();
  void completed(std::uint32_t idx, std::int32_t res);
  bool internal_completion(const platform::Completion& c);
  void take_completions();
  void recheck_level();
  void maintenance_fired();
  void maintain_channels();
  void poll_maintenance();
  void grace_poll();
  void fd_mode_on() noexcept;
  std::span<const Ready> wait_uring(Deadline d);

  // fallback mode (waitset_fallback.cpp)
  std::span<const Ready> wait_fallback(Deadline d);
  int fallback_fd() noexcept;
  void wait_fallback_polls(Deadline d);

  // both (waitset.cpp)
  void release_slot(std::uint32_t idx);
  std::uint64_t add_channel(ReadyKind kind, const detail::WaitHook& hook);
  std::uint64_t add(std::uint32_t idx);
};

}  // namespace zipc
