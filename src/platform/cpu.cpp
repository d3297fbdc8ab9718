#include "cpu.hpp"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <fcntl.h>

#include <cerrno>
#include <cstring>

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
  static const int count = [] {
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);  // reads /sys: once
    return n > 0 ? static_cast<int>(n) : 1;
  }();
  return count;
}

int runnable_thread_count() noexcept {
  static const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = '\0';
  // "0.61 0.93 1.11 3/412 12345": the number before the '/'.
  const char* p = std::strchr(buf, '/');
  if (p == nullptr) return -1;
  const char* q = p;
  while (q > buf && q[-1] >= '0' && q[-1] <= '9') --q;
  if (q == p) return -1;
  int v = 0;
  for (; q < p && v < 1'000'000; ++q) v = v * 10 + (*q - '0');
  return v;
}

long involuntary_switches() noexcept {
  rusage u{};
  if (::getrusage(RUSAGE_THREAD, &u) != 0) return -1;
  return u.ru_nivcsw;
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
