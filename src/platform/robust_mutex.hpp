// Process-shared, robust pthread mutex over caller-provided storage (which
// may live in shared memory at any address in any process). When a holder
// dies, the kernel's robust-futex list hands the lock to the next locker with
// EOWNERDEAD.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zipc::platform {

// Bytes a pthread_mutex_t needs (checked against the real type in the .cpp).
inline constexpr std::size_t kRobustMutexBytes = 40;
inline constexpr std::size_t kRobustMutexAlign = 8;

enum class RobustLock : std::uint8_t {
  acquired,       // normal acquisition
  owner_died,     // acquired; the previous owner died holding it (already made consistent)
  busy,           // try: someone else holds it
  timeout,        // timed: deadline passed
  unrecoverable,  // the storage is damaged (ENOTRECOVERABLE or EINVAL); not acquired
};

// Initializes storage as a pshared + robust mutex. Returns 0 or -errno.
int robust_mutex_init(void* storage) noexcept;
int robust_mutex_destroy(void* storage) noexcept;
// deadline_ns: absolute CLOCK_MONOTONIC, UINT64_MAX = wait forever, 0 = try.
// An EOWNERDEAD acquisition is made consistent at once: the caller learns of the
// death from the result and decides what it means for its data.
RobustLock robust_mutex_lock(void* storage, std::uint64_t deadline_ns) noexcept;
int robust_mutex_unlock(void* storage) noexcept;

}  // namespace zipc::platform
