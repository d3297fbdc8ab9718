// Helpers shared by the heap tests.
#pragma once

#include <cstdint>

#include "zipc/heap.hpp"
#include "zipc_test.hpp"

namespace zipc::test {

// Iteration counts shrink under sanitizers so the executable still finishes.
inline int scaled(int n) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  n /= 8;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  n /= 8;
#endif
#endif
  const double s = stress_scale() * n;
  return s < 1 ? 1 : static_cast<int>(s);
}

inline HeapOptions fixed_options() {
  HeapOptions o;
  o.address_mode = AddressMode::fixed;
  return o;
}

}  // namespace zipc::test
