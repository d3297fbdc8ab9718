#include "robust_mutex.hpp"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace zipc::platform {

static_assert(sizeof(pthread_mutex_t) <= kRobustMutexBytes, "pthread_mutex_t fits the storage zipc::Mutex reserves");
static_assert(alignof(pthread_mutex_t) <= kRobustMutexAlign, "pthread_mutex_t's alignment fits that storage");

int robust_mutex_init(void* storage) noexcept {
  pthread_mutexattr_t attr;
  if (int r = ::pthread_mutexattr_init(&attr); r != 0) return -r;
  int r = ::pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (r == 0) r = ::pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  if (r == 0) r = ::pthread_mutex_init(static_cast<pthread_mutex_t*>(storage), &attr);
  ::pthread_mutexattr_destroy(&attr);
  return -r;
}

int robust_mutex_destroy(void* storage) noexcept {
  return -::pthread_mutex_destroy(static_cast<pthread_mutex_t*>(storage));
}

RobustLock robust_mutex_lock(void* storage, std::uint64_t deadline_ns) noexcept {
  auto* m = static_cast<pthread_mutex_t*>(storage);
  int r;
  if (deadline_ns == 0) {
    r = ::pthread_mutex_trylock(m);
  } else if (deadline_ns == UINT64_MAX) {
    r = ::pthread_mutex_lock(m);
  } else {
    timespec ts;
    ts.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000ull);
    ts.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000ull);
    r = ::pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &ts);
  }
  switch (r) {
    case 0: return RobustLock::acquired;
    case EOWNERDEAD: ::pthread_mutex_consistent(m); return RobustLock::owner_died;
    case EBUSY: return RobustLock::busy;
    case ETIMEDOUT: return RobustLock::timeout;
    default: return RobustLock::unrecoverable;
  }
}

int robust_mutex_unlock(void* storage) noexcept {
  return -::pthread_mutex_unlock(static_cast<pthread_mutex_t*>(storage));
}

}  // namespace zipc::platform
