// Helpers shared by the queue tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "zipc/queue.hpp"

namespace zipc::test {

// Both algorithms behind zipc::Queue: the Lamport ring and the Vyukov ring.
struct QueueMode {
  Multiplicity producers;
  Multiplicity consumers;
  const char* label;
};
inline const QueueMode kSpsc{Multiplicity::single, Multiplicity::single, "SingleSingle"};
inline const QueueMode kMpmc{Multiplicity::multi, Multiplicity::multi, "MultiMulti"};
inline const QueueMode kSpmc{Multiplicity::single, Multiplicity::multi, "SingleMulti"};
inline const QueueMode kMpsc{Multiplicity::multi, Multiplicity::single, "MultiSingle"};
inline const QueueMode kAllModes[] = {kSpsc, kMpsc, kSpmc, kMpmc};

inline QueueOptions queue_options(const QueueMode& m, std::size_t capacity = 8, std::size_t block = 64) {
  QueueOptions o;
  o.block_count = capacity;
  o.block_size = block;
  o.producers = m.producers;
  o.consumers = m.consumers;
  o.recovery_time = std::chrono::milliseconds(50);
  return o;
}

inline std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}
inline std::string string_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// A self-checking message: who sent it, its sequence, a payload derived from
// both, and a checksum over everything.
struct StressHeader {
  std::uint32_t producer;
  std::uint32_t incarnation;
  std::uint64_t seq;
  std::uint64_t checksum;
};
static_assert(sizeof(StressHeader) == 24);

inline std::size_t stress_fill(std::byte* out, std::size_t block, std::uint32_t producer, std::uint32_t inc,
                               std::uint64_t seq) {
  const std::uint64_t r = mix64((std::uint64_t{producer} << 40) ^ (std::uint64_t{inc} << 32) ^ seq);
  const std::size_t extra = block > sizeof(StressHeader) ? r % (block - sizeof(StressHeader) + 1) : 0;
  std::byte* body = out + sizeof(StressHeader);
  std::uint64_t sum = r;
  for (std::size_t i = 0; i < extra; ++i) {
    body[i] = static_cast<std::byte>((r >> (i % 56)) + i);
    sum = sum * 31 + static_cast<std::uint8_t>(body[i]);
  }
  StressHeader h{producer, inc, seq, sum ^ extra};
  std::memcpy(out, &h, sizeof h);
  return sizeof(StressHeader) + extra;
}

// True when msg is intact; fills h.
inline bool stress_check(std::span<const std::byte> msg, StressHeader& h) {
  if (msg.size() < sizeof(StressHeader)) return false;
  std::memcpy(&h, msg.data(), sizeof h);
  const std::uint64_t r = mix64((std::uint64_t{h.producer} << 40) ^ (std::uint64_t{h.incarnation} << 32) ^ h.seq);
  const std::size_t extra = msg.size() - sizeof(StressHeader);
  std::uint64_t sum = r;
  for (std::size_t i = 0; i < extra; ++i) sum = sum * 31 + static_cast<std::uint8_t>(msg[sizeof(StressHeader) + i]);
  return (sum ^ extra) == h.checksum;
}

inline double sanitizer_divisor() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 20.0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return 20.0;
#else
  return 1.0;
#endif
#else
  return 1.0;
#endif
}

}  // namespace zipc::test
