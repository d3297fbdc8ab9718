// Shared test vectors of the cross-language tests (python/tests/vectors.py
// builds the same bytes): message `seq` is 16 + (seq * 37) % 239 bytes long;
// bytes 0-7 hold seq (little endian), bytes 8-15 the FNV-1a 64 hash of the
// body, and body byte i is (seq * 131 + i * 7) & 0xff.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace zipc::cross {

inline std::size_t vector_size(std::uint64_t seq) {
  return 16 + (seq * 37) % 239;
}

inline std::uint64_t fnv1a(std::span<const std::byte> s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::byte b : s) h = (h ^ static_cast<std::uint8_t>(b)) * 0x100000001b3ull;
  return h;
}

inline void fill_vector(std::uint64_t seq, std::span<std::byte> out) {
  for (std::size_t i = 16; i < out.size(); ++i) out[i] = static_cast<std::byte>((seq * 131 + (i - 16) * 7) & 0xff);
  const std::uint64_t h = fnv1a(out.subspan(16));
  std::memcpy(out.data(), &seq, 8);
  std::memcpy(out.data() + 8, &h, 8);
}

inline std::vector<std::byte> make_vector(std::uint64_t seq) {
  std::vector<std::byte> v(vector_size(seq));
  fill_vector(seq, v);
  return v;
}

// The sequence number of a valid vector, or -1 (size, hash or body wrong).
inline std::int64_t check_vector(std::span<const std::byte> m) {
  if (m.size() < 16) return -1;
  std::uint64_t seq = 0;
  std::uint64_t h = 0;
  std::memcpy(&seq, m.data(), 8);
  std::memcpy(&h, m.data() + 8, 8);
  if (m.size() != vector_size(seq) || fnv1a(m.subspan(16)) != h) return -1;
  for (std::size_t i = 16; i < m.size(); ++i)
    if (m[i] != static_cast<std::byte>((seq * 131 + (i - 16) * 7) & 0xff)) return -1;
  return static_cast<std::int64_t>(seq);
}

}  // namespace zipc::cross
