#include "process.hpp"

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace zipc::platform {

std::uint64_t process_start_time(std::int32_t pid) noexcept {
  if (pid <= 0) return 0;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // The command name (field 2) may contain spaces and ')': parse after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr) return 0;
  p += 2;                                             // now at field 3 (state)
  if (*p == 'Z' || *p == 'X' || *p == 'x') return 0;  // zombie or dead: not alive
  // Skip fields 3..21 (19 fields) to reach field 22 (starttime).
  for (int field = 3; field < 22; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return 0;
    ++p;
  }
  std::uint64_t start = 0;
  while (*p >= '0' && *p <= '9') start = start * 10 + static_cast<std::uint64_t>(*p++ - '0');
  return start == 0 ? 1 : start;  // never report a live process as "unknown"
}

std::int32_t current_pid() noexcept {
  return static_cast<std::int32_t>(::getpid());
}
std::uint32_t current_uid() noexcept {
  return static_cast<std::uint32_t>(::geteuid());
}

bool pid_exists(std::int32_t pid) noexcept {
  if (pid <= 0) return false;
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

}  // namespace zipc::platform
