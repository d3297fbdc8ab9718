#include "futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <climits>
#include <ctime>

namespace zipc::platform {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t), "a futex word is a plain 32-bit word");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "a futex word is a lock-free atomic");

int futex_wait(const std::atomic<std::uint32_t>* word, std::uint32_t expected, std::uint64_t deadline_ns) noexcept {
  timespec ts{};
  timespec* tsp = nullptr;
  if (deadline_ns != UINT64_MAX) {
    ts.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000ull);
    ts.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000ull);
    tsp = &ts;
  }
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so a retry
  // after EINTR keeps the caller's deadline.
  long r = ::syscall(SYS_futex, const_cast<std::uint32_t*>(reinterpret_cast<const std::uint32_t*>(word)),
                     FUTEX_WAIT_BITSET, expected, tsp, nullptr, FUTEX_BITSET_MATCH_ANY);
  return r == 0 ? 0 : -errno;
}

int futex_wake(std::atomic<std::uint32_t>* word, int count) noexcept {
  long r = ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, count, nullptr, nullptr, 0);
  return r >= 0 ? static_cast<int>(r) : -errno;
}

}  // namespace zipc::platform
