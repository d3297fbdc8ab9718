// Futex wait/wake on a 32-bit word in shared memory. Shared (not PRIVATE)
// operations, so waiters and wakers may be in different processes.
#pragma once

#include <atomic>
#include <cstdint>

namespace zipc::platform {

// Sleeps while *word == expected, until woken or the absolute CLOCK_MONOTONIC
// deadline (ns; UINT64_MAX = none). Returns 0 (woken or spurious), -EAGAIN
// (value differed), -ETIMEDOUT, or -EINTR.
int futex_wait(const std::atomic<std::uint32_t>* word, std::uint32_t expected, std::uint64_t deadline_ns) noexcept;
// Wakes up to count waiters; returns how many were woken (or -errno).
int futex_wake(std::atomic<std::uint32_t>* word, int count) noexcept;

}  // namespace zipc::platform
