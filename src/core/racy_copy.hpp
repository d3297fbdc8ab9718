// Copies bytes that a peer may overwrite concurrently (a validated race:
// the caller checks a version or a checksum afterwards and discards a torn copy).
#pragma once

#include <atomic>
#include <cstddef>

namespace zipc::detail {

void racy_copy(void* dst, const void* src, std::size_t n) noexcept;

// Fences of the seqlock-style validation. TSan does not model fences (gcc
// refuses them under -fsanitize=thread); there the racy copies are not
// instrumented and the loads after the fence are acquire loads anyway.
inline void fence_acquire() noexcept {
#if !defined(__SANITIZE_THREAD__)
  std::atomic_thread_fence(std::memory_order_acquire);
#endif
}
inline void fence_release() noexcept {
#if !defined(__SANITIZE_THREAD__)
  std::atomic_thread_fence(std::memory_order_release);
#endif
}

}  // namespace zipc::detail
