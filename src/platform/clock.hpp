// Clocks. clock_gettime goes through the vDSO: no kernel entry on the hot path.
#pragma once

#include <cstdint>
#include <ctime>

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

}  // namespace zipc::platform
