#include "liveness_lock.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace zipc::platform {
namespace {

struct flock one_byte(short type, std::uint64_t token) noexcept {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(token);
  fl.l_len = 1;
  fl.l_pid = 0;  // must be 0 for F_OFD_* commands
  return fl;
}

int checked_regular(int fd) noexcept {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return -e;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return -EINVAL;
  }
  return fd;
}

}  // namespace

int open_liveness_file(const char* path, bool create) noexcept {
  constexpr int kFlags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  int fd = ::open(path, kFlags);
  if (fd >= 0) return checked_regular(fd);
  if (errno != ENOENT || !create) return -errno;
  fd = ::open(path, kFlags | O_CREAT | O_EXCL, 0644);
  if (fd >= 0) {
    (void)::fchmod(fd, 0644);  // the umask must not hide the file from other users
    return checked_regular(fd);
  }
  if (errno != EEXIST) return -errno;
  fd = ::open(path, kFlags);  // another process created it first
  return fd >= 0 ? checked_regular(fd) : -errno;
}

Claim claim_liveness_token(int fd, std::uint64_t token) noexcept {
  // Any lock of another description on the byte means the token is in use.
  const TokenState s = probe_liveness_token(fd, token);
  if (s == TokenState::unknown) return Claim::failed;
  if (s == TokenState::alive) return Claim::taken;
  struct flock fl = one_byte(F_RDLCK, token);
  return ::fcntl(fd, F_OFD_SETLK, &fl) == 0 ? Claim::claimed : Claim::failed;
}

TokenState probe_liveness_token(int fd, std::uint64_t token) noexcept {
  struct flock fl = one_byte(F_WRLCK, token);
  if (::fcntl(fd, F_OFD_GETLK, &fl) != 0) return TokenState::unknown;
  return fl.l_type == F_UNLCK ? TokenState::dead : TokenState::alive;
}

void on_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept {
  (void)::pthread_atfork(prepare, parent, child);
}

}  // namespace zipc::platform
