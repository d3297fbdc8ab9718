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

// Asks for the cache line at p in a writable state (x86 PREFETCHW: the line
// arrives owned, so the stores that follow need no further round trip; a
// no-op hint on x86 CPUs without it). __builtin_prefetch(p, 1) alone emits a
// read prefetch on baseline x86-64 (no -mprfchw).
inline void prefetch_for_write(const void* p) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}

// Keeps the compiler from merging the copies on either side into one wider
// move. Handles that are filled field by field (8-byte stores) and moved
// right after need it: a 16-byte load spanning two pending 8-byte stores
// cannot be forwarded from the store buffer and stalls ~15 cycles (7% of a
// topic publisher's time before loans were moved field by field). The
// other way round costs more: an 8-byte load of the upper half of a pending
// 16-byte store is not forwarded here (AMD EPYC guest) and waits until that
// store is written to the cache, behind every older store, such as payload
// stores still waiting for their cache lines from the other CPU (a loan
// kept in a member: 64 B queue ping-pong 340 ns instead of 210).
inline void keep_apart() noexcept {
  asm volatile("" ::: "memory");
}

// The CPU's tick counter, read without ordering (cheap; may run slightly
// ahead of or behind the loads and stores around it). 0 where there is none.
inline std::uint64_t cpu_ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
  std::uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return 0;
#endif
}
// Whether cpu_ticks() runs at one constant rate on every CPU, in every
// power state (x86: CPUID invariant TSC; aarch64: the generic timer).
bool cpu_ticks_invariant() noexcept;

void yield_cpu() noexcept;
// Number of CPUs this thread may run on (sched_getaffinity).
int allowed_cpu_count() noexcept;
int online_cpu_count() noexcept;
// Threads running or waiting for a CPU on the whole machine right now (the
// kernel's nr_running, the fourth field of /proc/loadavg: one pread of a file
// kept open, ~1-2 us). -1 when it cannot be read.
int runnable_thread_count() noexcept;
// How often the kernel switched the calling thread out while it could run
// (getrusage RUSAGE_THREAD ru_nivcsw); -1 when unknown. A gap in a spin with
// no new switch is the host's: it took the vCPU, not another thread.
long involuntary_switches() noexcept;
// Pins the calling thread to one CPU; returns 0 or -errno.
int pin_to_cpu(int cpu) noexcept;

}  // namespace zipc::platform
