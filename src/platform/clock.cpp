#include "clock.hpp"

#include "cpu.hpp"

namespace zipc::platform {

BurstStamp::BurstStamp() noexcept : enabled_(cpu_ticks_invariant()) {}

std::uint64_t BurstStamp::read_clock(std::uint64_t t) noexcept {
  const std::uint64_t ns = realtime_ns();
  if (enabled_ && ticks_per_window_ == 0) {
    // Calibrate from two readings 1 ms to 1 s apart (a clock step in
    // between shows as a span outside that range: start again).
    const std::uint64_t span_ns = ns - calib_ns_;
    if (calib_tick_ == 0 || t <= calib_tick_ || span_ns > 1'000'000'000ull) {
      calib_tick_ = t;
      calib_ns_ = ns;
    } else if (span_ns >= 1'000'000ull) {
      ticks_per_window_ = (t - calib_tick_) * kWindowNs / span_ns;
    }
  }
  last_ns_ = ns;
  last_tick_ = t;
  return ns;
}

}  // namespace zipc::platform
