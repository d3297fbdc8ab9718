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
#include <type_traits>

#include "platform/robust_mutex.hpp"
#include "zipc/mutex.hpp"

namespace zipc::layout {

static_assert(sizeof(Mutex) == 48 && alignof(Mutex) == 8, "Mutex is 48 bytes, aligned to 8 (the diagram above)");
static_assert(platform::kRobustMutexBytes == 40, "the robust pthread mutex takes the first 40 bytes of a Mutex");
static_assert(sizeof(SpinLock) == 8, "SpinLock is 8 bytes (the diagram above)");
static_assert(sizeof(ConditionVariable) == 8, "ConditionVariable is 8 bytes (the diagram above)");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "shared uint32_t atomics are lock-free (a lock would be private to one process)");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared uint64_t atomics are lock-free (a lock would be private to one process)");

// Shared-memory structs: standard layout (offsetof and the diagram above mean what they say)
// and trivially copyable (no constructor or destructor runs on bytes another process maps).
static_assert(std::is_standard_layout_v<Mutex>, "Mutex is shared memory: standard layout");
// Mutex holds a pthread_mutex_t (initialised in place by pthread_mutex_init): not trivially copyable.
static_assert(std::is_standard_layout_v<SpinLock>, "SpinLock is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<SpinLock>, "SpinLock is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<ConditionVariable>, "ConditionVariable is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<ConditionVariable>,
              "ConditionVariable is shared memory: trivially copyable");

}  // namespace zipc::layout
