#include "cpu.hpp"

#include <sched.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <cerrno>

#include "clock.hpp"

namespace zipc::platform {

void yield_cpu() noexcept {
  ::sched_yield();
}

int allowed_cpu_count() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return online_cpu_count();
  return CPU_COUNT(&set);
}

int online_cpu_count() noexcept {
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

int pin_to_cpu(int cpu) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -errno;
}

void sleep_ns(std::uint64_t ns) noexcept {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000ull), static_cast<long>(ns % 1'000'000'000ull)};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

bool cpu_ticks_invariant() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u)
    return false;  // int in clang, unsigned in gcc
  __cpuid(0x80000007u, a, b, c, d);
  return (d & (1u << 8)) != 0;  // "invariant TSC"
#elif defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

}  // namespace zipc::platform
