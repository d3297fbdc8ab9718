// CPU hints, scheduling and affinity.
#pragma once

#include <cstdint>

namespace zipc::platform {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

void yield_cpu() noexcept;
// Number of CPUs this thread may run on (sched_getaffinity).
int allowed_cpu_count() noexcept;
int online_cpu_count() noexcept;
// Pins the calling thread to one CPU; returns 0 or -errno.
int pin_to_cpu(int cpu) noexcept;

}  // namespace zipc::platform
