#include "payload.hpp"

#include <cstring>

namespace zipc::bench {
namespace {

std::uint64_t seed_of(const MessageHeader& h) noexcept {
  return (h.seq * 0x9E3779B97F4A7C15ull) ^ (static_cast<std::uint64_t>(h.sender) << 48) ^ h.flags;
}

}  // namespace

// AVX2 and baseline versions, picked once at load time by the CPU's features.
#if defined(ZIPC_BENCH_PAYLOAD_CLONES)
#define ZIPC_BENCH_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ZIPC_BENCH_CLONES
#endif

ZIPC_BENCH_CLONES void fill_message(void* buf, std::size_t n, const MessageHeader& h) noexcept {
  auto* p = static_cast<unsigned char*>(buf);
  std::memcpy(p, &h, sizeof h);
  const std::uint64_t seed = seed_of(h);
  std::size_t off = sizeof h;
  std::uint64_t i = 0;
  for (; off + 8 <= n; off += 8, ++i) {
    const std::uint64_t w = seed + i;
    std::memcpy(p + off, &w, 8);
  }
  for (; off < n; ++off, ++i) p[off] = static_cast<unsigned char>(seed + i);
}

ZIPC_BENCH_CLONES bool check_message(const void* buf, std::size_t n, MessageHeader* h) noexcept {
  if (n < sizeof(MessageHeader)) return false;
  const auto* p = static_cast<const unsigned char*>(buf);
  std::memcpy(h, p, sizeof *h);
  const std::uint64_t seed = seed_of(*h);
  std::uint64_t diff = 0;
  std::size_t off = sizeof *h;
  std::uint64_t i = 0;
  for (; off + 8 <= n; off += 8, ++i) {
    std::uint64_t w;
    std::memcpy(&w, p + off, 8);
    diff |= w ^ (seed + i);
  }
  for (; off < n; ++off, ++i) diff |= static_cast<unsigned char>(p[off] ^ static_cast<unsigned char>(seed + i));
  return diff == 0;
}

}  // namespace zipc::bench
