// round_up.hpp - the one rounding-up helper (sizes to pages, strides to cache lines, ...).
#pragma once

#include <cstdint>

namespace zipc {

// The smallest multiple of `to` (> 0) that is >= v. A power-of-two `to` takes the mask path.
constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t to) noexcept {
  return (to & (to - 1)) == 0 ? (v + to - 1) & ~(to - 1) : (v + to - 1) / to * to;
}

static_assert(round_up(0, 64) == 0 && round_up(1, 64) == 64 && round_up(64, 64) == 64 && round_up(65, 64) == 128,
              "round_up to a power of two");
static_assert(round_up(7, 3) == 9 && round_up(9, 3) == 9, "round_up to any other multiple");

}  // namespace zipc
