// Non-temporal copies for bulk logging (TopicOptions::streaming_stores).
#include "stream_copy.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace zipc::detail {

void stream_copy(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  // Head: plain stores up to a cache-line boundary of the destination, so
  // that streaming stores only ever write whole lines (a partial line written
  // non-temporally, or a line mixing both kinds of stores, costs a memory
  // read-modify-write).
  const std::size_t head = std::min<std::size_t>(n, (64 - (reinterpret_cast<std::uintptr_t>(dst) & 63)) & 63);
  if (head != 0) std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  // Body: whole lines of 16-byte streaming stores; they bypass the cache, so writing a line
  // does not first read it from memory (half the memory traffic of memcpy).
  while (n >= 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), d);
    dst += 64;
    src += 64;
    n -= 64;
  }
  if (n != 0) std::memcpy(dst, src, n);
#else
  if (n != 0) std::memcpy(dst, src, n);
#endif
}

void stream_fence() noexcept {
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  // Streaming stores are weakly ordered: make them visible before the
  // release store of the cursor that publishes them.
  _mm_sfence();
#endif
}

}  // namespace zipc::detail
