// Byte layout of the locks users place in shared memory (include/zipc/mutex.hpp).
//
// zipc::Mutex (48 bytes, align 8)
//  offset  size  field
//  0       40    pthread_mutex_t, PTHREAD_PROCESS_SHARED + PTHREAD_MUTEX_ROBUST
//  40      4     inconsistent   1 after a holder died, until mark_consistent()
//  44      4     reserved
//
// zipc::SpinLock (8 bytes)
//  0       8     owner   zipc::pack(ProcessId) of the holder; 0 = free
//
// zipc::ConditionVariable (8 bytes)
//  0       4     seq      futex word, incremented by every notify
//  4       4     waiters  sleepers (lets notify skip the syscall)
#pragma once

#include <atomic>
#include <cstdint>

#include "platform/robust_mutex.hpp"
#include "zipc/mutex.hpp"

namespace zipc::layout {

static_assert(sizeof(Mutex) == 48 && alignof(Mutex) == 8);
static_assert(platform::kRobustMutexBytes == 40);
static_assert(sizeof(SpinLock) == 8);
static_assert(sizeof(ConditionVariable) == 8);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

}  // namespace zipc::layout
