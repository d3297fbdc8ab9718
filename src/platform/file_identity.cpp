#include "file_identity.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace zipc::platform {
namespace {

FileId id_of(const struct stat& st) noexcept {
  return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

}  // namespace

int file_id(const std::string& path, FileId* out) noexcept {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return -errno;
  *out = id_of(st);
  return 0;
}

HeldFile::~HeldFile() {
  if (fd_ >= 0) ::close(fd_);
}

int HeldFile::open(const std::string& path) noexcept {
  if (fd_ >= 0) ::close(fd_);
  do {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) return -errno;
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    return -e;
  }
  id_ = id_of(st);
  return 0;
}

int HeldFile::unlink_if_still_at(const std::string& path) noexcept {
  if (fd_ < 0) return -EBADF;
  int r;
  do {
    r = ::flock(fd_, LOCK_EX | LOCK_NB);
  } while (r != 0 && errno == EINTR);
  if (r != 0) return -errno;  // EWOULDBLOCK: another remover (or a live creator) has it
  FileId now;
  r = file_id(path, &now);
  if (r == 0 && !(now == id_)) r = -ESTALE;
  // Under the lock, path can stop naming this file only by another process
  // unlinking it, and every remover by identity takes the lock first.
  if (r == 0 && ::unlink(path.c_str()) != 0) r = -errno;
  ::flock(fd_, LOCK_UN);
  return r;
}

int unlink_if_same(const std::string& path, const FileId& id) noexcept {
  HeldFile f;
  if (int r = f.open(path); r < 0) return r;
  if (!(f.id() == id)) return -ESTALE;
  return f.unlink_if_still_at(path);
}

}  // namespace zipc::platform
