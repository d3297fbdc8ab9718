// A copy of bytes another process may be rewriting while we read them; the
// caller validates what it copied (seqlock style) before using it.
#include "core/racy_copy.hpp"

#include <cstring>

namespace zipc::detail {

#if defined(__SANITIZE_THREAD__)
// TSan would report the (validated, by design) race with a publisher
// overwriting the bytes; volatile keeps the loop from becoming a memcpy call
// that TSan intercepts.
__attribute__((no_sanitize("thread"))) void racy_copy(void* dst, const void* src, std::size_t n) noexcept {
  auto* d = static_cast<volatile unsigned char*>(dst);
  const auto* p = static_cast<const volatile unsigned char*>(src);
  for (std::size_t i = 0; i < n; ++i) d[i] = p[i];
}
#endif

}  // namespace zipc::detail
