// Clocks. clock_gettime goes through the vDSO: no kernel entry on the hot path.
#pragma once

#include <cstdint>
#include <ctime>

#include "cpu.hpp"

namespace zipc::platform {

inline std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t realtime_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void sleep_ns(std::uint64_t ns) noexcept;

// CLOCK_REALTIME stamps for events that come in bursts, without a clock read
// for each: a clock read waits for the loads before it (the vDSO orders its
// tick read), which in a hot publish loop costs more than the publish. While
// events follow within kWindowNs of the last real reading, judged by the CPU
// tick counter, that reading is returned again; so a stamp is never more than
// kWindowNs older than its event, and stamps never go backwards (unless the
// realtime clock itself is stepped back). Where the ticks are not invariant,
// every call reads the clock. One per thread: not thread-safe.
class BurstStamp {
 public:
  static constexpr std::uint64_t kWindowNs = 1000;
  BurstStamp() noexcept;
  std::uint64_t now() noexcept {
    const std::uint64_t t = enabled_ ? cpu_ticks() : 0;
    if (ticks_per_window_ != 0 && t - last_tick_ < ticks_per_window_) return last_ns_;
    return read_clock(t);
  }

 private:
  std::uint64_t read_clock(std::uint64_t t) noexcept;

  bool enabled_;
  std::uint64_t ticks_per_window_ = 0;  // 0 until calibrated
  std::uint64_t calib_tick_ = 0;
  std::uint64_t calib_ns_ = 0;
  std::uint64_t last_tick_ = 0;
  std::uint64_t last_ns_ = 0;
};

}  // namespace zipc::platform
