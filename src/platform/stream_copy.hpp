// Internal: copies for the publisher's bulk path.
#pragma once

#include <algorithm>
#include <cstddef>

namespace zipc::detail {

// Copies with non-temporal stores (plain memcpy where unavailable). Call
// stream_fence() before publishing what was written.
void stream_copy(std::byte* dst, const std::byte* src, std::size_t n) noexcept;
void stream_fence() noexcept;

// Below this size streaming stores do not pay (partial lines).
inline constexpr std::size_t kStreamMin = 256;

}  // namespace zipc::detail
