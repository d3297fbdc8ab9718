// Copies bytes that a peer may overwrite concurrently (a validated race:
// the caller checks a version or a checksum afterwards and discards a torn copy).
#pragma once

#include <cstddef>

#include "sync/fences.hpp"  // fence_acquire/fence_release of the validation

namespace zipc::detail {

void racy_copy(void* dst, const void* src, std::size_t n) noexcept;

}  // namespace zipc::detail
