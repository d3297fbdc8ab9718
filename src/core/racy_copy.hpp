// Copies bytes that a peer may overwrite concurrently (a validated race:
// the caller checks a version or a checksum afterwards and discards a torn copy).
#pragma once

#include <cstddef>
#include <cstring>

#include "sync/fences.hpp"  // fence_acquire/fence_release of the validation

namespace zipc::detail {

#if defined(__SANITIZE_THREAD__)
void racy_copy(void* dst, const void* src, std::size_t n) noexcept;  // racy_copy.cpp: not instrumented
#else
inline void racy_copy(void* dst, const void* src, std::size_t n) noexcept {
  if (n != 0) std::memcpy(dst, src, n);
}
#endif

}  // namespace zipc::detail
