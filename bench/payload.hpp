// The bytes every benchmark message carries, and how they are checked.
//
// A message starts with a 32-byte MessageHeader (sequence, intended send time,
// sender, flags); the rest of the payload is a pattern derived from
// (sender, seq). The sender writes every byte; the receiver reads every byte
// and compares it with the pattern, so a torn, stale or misplaced message is
// caught (a wrong byte is an error, never a result).
#pragma once

#include <cstddef>
#include <cstdint>

namespace zipc::bench {

struct MessageHeader {
  std::uint64_t seq;
  std::uint64_t t_send_ns;  // intended send time, CLOCK_MONOTONIC
  std::uint32_t sender;
  std::uint32_t flags;
  std::uint64_t reserved;
};
static_assert(sizeof(MessageHeader) == 32);

inline constexpr std::size_t kMinMessage = sizeof(MessageHeader);
inline constexpr std::uint32_t kFlagData = 0;
inline constexpr std::uint32_t kFlagWarmup = 1;
inline constexpr std::uint32_t kFlagStop = 2;

// Writes header + pattern into buf (n >= kMinMessage).
void fill_message(void* buf, std::size_t n, const MessageHeader& h) noexcept;
// Reads every byte of a message of n bytes; false if any byte differs from
// the pattern its header names. *h receives the header.
[[nodiscard]] bool check_message(const void* buf, std::size_t n, MessageHeader* h) noexcept;

}  // namespace zipc::bench
