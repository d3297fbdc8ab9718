#include "file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace zipc::platform {

int open_file(const std::string& path, int flags, unsigned mode) noexcept {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, static_cast<mode_t>(mode));
  } while (fd < 0 && errno == EINTR);
  return fd >= 0 ? fd : -errno;
}

int close_fd(int fd) noexcept {
  return ::close(fd) == 0 ? 0 : -errno;
}

int reopen_read_only(int fd) noexcept {
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  int out;
  do {
    out = ::open(link.c_str(), O_RDONLY | O_CLOEXEC);  // the magic link names the open file itself
  } while (out < 0 && errno == EINTR);
  return out >= 0 ? out : -errno;
}

int is_read_only_fd(int fd) noexcept {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return -errno;
  return (flags & O_ACCMODE) == O_RDONLY ? 1 : 0;
}

int truncate_fd(int fd, std::uint64_t size) noexcept {
  return ::ftruncate(fd, static_cast<off_t>(size)) == 0 ? 0 : -errno;
}

int allocate_fd(int fd, std::uint64_t offset, std::uint64_t size) noexcept {
  int r = ::posix_fallocate(fd, static_cast<off_t>(offset), static_cast<off_t>(size));
  return r == 0 ? 0 : -r;
}

int space_of(int fd, SpaceInfo* out) noexcept {
  struct statvfs vfs;
  if (::fstatvfs(fd, &vfs) != 0) return -errno;
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return -errno;
  const auto type = static_cast<unsigned long>(fs.f_type);
  out->memory = type == TMPFS_MAGIC || type == RAMFS_MAGIC || type == HUGETLBFS_MAGIC;
  out->total = static_cast<std::uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  out->free = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  return 0;
}

int chmod_fd(int fd, unsigned mode) noexcept {
  return ::fchmod(fd, static_cast<mode_t>(mode)) == 0 ? 0 : -errno;
}

int chgrp_fd(int fd, std::uint32_t gid) noexcept {
  return ::fchown(fd, static_cast<uid_t>(-1), static_cast<gid_t>(gid)) == 0 ? 0 : -errno;
}

int resolve_group(const std::string& group, std::uint32_t* gid) noexcept {
  if (group.empty()) return -EINVAL;
  if (group.find_first_not_of("0123456789") == std::string::npos) {
    if (group.size() > 9) return -EINVAL;
    *gid = static_cast<std::uint32_t>(std::stoul(group));
    return 0;
  }
  struct group gr;
  struct group* found = nullptr;
  std::vector<char> buf(4096);
  for (;;) {
    const int r = ::getgrnam_r(group.c_str(), &gr, buf.data(), buf.size(), &found);
    if (r == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (r != 0) return -r;
    if (found == nullptr) return -ENOENT;
    *gid = static_cast<std::uint32_t>(gr.gr_gid);
    return 0;
  }
}

static void fill(const struct stat& st, FileStat* out) {
  out->size = static_cast<std::uint64_t>(st.st_size);
  out->mode = static_cast<std::uint32_t>(st.st_mode);
  out->uid = static_cast<std::uint32_t>(st.st_uid);
  out->gid = static_cast<std::uint32_t>(st.st_gid);
  out->inode = static_cast<std::uint64_t>(st.st_ino);
  out->device = static_cast<std::uint64_t>(st.st_dev);
  out->allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;  // st_blocks counts 512-byte units
}

int stat_fd(int fd, FileStat* out) noexcept {
  struct stat st;
  if (::fstat(fd, &st) != 0) return -errno;
  fill(st, out);
  return 0;
}

int stat_path(const std::string& path, FileStat* out) noexcept {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return -errno;
  fill(st, out);
  return 0;
}

int unlink_path(const std::string& path) noexcept {
  return ::unlink(path.c_str()) == 0 ? 0 : -errno;
}

int lock_fd(int fd, bool exclusive, bool nonblocking) noexcept {
  int op = (exclusive ? LOCK_EX : LOCK_SH) | (nonblocking ? LOCK_NB : 0);
  int r;
  do {
    r = ::flock(fd, op);
  } while (r != 0 && errno == EINTR);
  return r == 0 ? 0 : -errno;
}

int unlock_fd(int fd) noexcept {
  return ::flock(fd, LOCK_UN) == 0 ? 0 : -errno;
}

int sync_fd(int fd) noexcept {
  return ::fsync(fd) == 0 ? 0 : -errno;
}

long read_at(int fd, void* buf, std::size_t n, std::uint64_t offset) noexcept {
  std::size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  return static_cast<long>(done);
}

void* map_fd(int fd, const MapRequest& req, int* err) noexcept {
  int flags = MAP_SHARED;
  if (req.populate) flags |= MAP_POPULATE;
  if (req.fixed_address != nullptr) flags |= MAP_FIXED_NOREPLACE;
  int prot = req.read_only ? PROT_READ : (PROT_READ | PROT_WRITE);
  void* p = ::mmap(req.fixed_address, req.size, prot, flags, fd, 0);
  if (p == MAP_FAILED) {
    *err = -errno;
    return nullptr;
  }
  if (req.fixed_address != nullptr && p != req.fixed_address) {
    // Kernels before 4.17 ignore MAP_FIXED_NOREPLACE and treat the address as a hint.
    ::munmap(p, req.size);
    *err = -EEXIST;
    return nullptr;
  }
  *err = 0;
  return p;
}

int unmap(void* addr, std::size_t size) noexcept {
  return ::munmap(addr, size) == 0 ? 0 : -errno;
}

int advise(void* addr, std::size_t size, Advice advice) noexcept {
  int a = advice == Advice::huge_pages ? MADV_HUGEPAGE : MADV_DONTFORK;
  return ::madvise(addr, size, a) == 0 ? 0 : -errno;
}

int lock_pages(void* addr, std::size_t size) noexcept {
  return ::mlock(addr, size) == 0 ? 0 : -errno;
}

int sync_pages(void* addr, std::size_t size) noexcept {
  return ::msync(addr, size, MS_SYNC) == 0 ? 0 : -errno;
}

std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

std::vector<std::string> list_dir(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the DIR stream is ours alone; readdir is safe per stream.
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (name.compare(0, prefix.size(), prefix) == 0) names.push_back(std::move(name));
  }
  ::closedir(d);
  return names;
}

std::string error_text(int errnum) {
  char buf[256];
  // GNU strerror_r returns the message pointer.
  const char* s = ::strerror_r(errnum, buf, sizeof buf);
  return s;
}

}  // namespace zipc::platform
