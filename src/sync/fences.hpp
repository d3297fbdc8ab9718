// Internal: the memory fences of zipc's Dekker pairs and seqlock-style
// validations, in one place with the one ThreadSanitizer workaround.
//
// TSan does not model std::atomic_thread_fence (gcc refuses it under
// -fsanitize=thread). So, in sanitizer builds only:
//  - full_fence() is a locked read-modify-write of a private word, which is a
//    full barrier on x86 (it takes part in the seq_cst total order);
//  - fence_acquire()/fence_release() are omitted: they order racy copies
//    (core/racy_copy.hpp) that TSan does not instrument, and the loads after
//    them are acquire loads anyway.
#pragma once

#include <atomic>
#include <cstdint>

namespace zipc::detail {

// A store-load barrier: our earlier stores are visible before our later loads.
inline void full_fence() noexcept {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<std::uint32_t> word{0};
  word.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

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
