// Files, shared-memory objects and mappings. Every call returns 0/fd/value or
// -errno; callers turn that into a zipc::Error naming the object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zipc::platform {

// Directory holding POSIX shared memory objects (what shm_open uses).
constexpr const char* kShmDir = "/dev/shm";

struct FileStat {
  std::uint64_t size = 0;
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint64_t inode = 0;
  std::uint64_t device = 0;
  std::uint64_t allocated = 0;  // bytes of storage the file holds (st_blocks * 512): touched or reserved pages
};

// The file system a descriptor lives on (fstatvfs, fstatfs).
struct SpaceInfo {
  std::uint64_t free = 0;   // bytes an unprivileged writer may still allocate
  std::uint64_t total = 0;  // size of the file system; 0 when it has no limit (a memfd)
  bool memory = false;      // tmpfs, ramfs or hugetlbfs: its pages are memory, not disk
};

int open_file(const std::string& path, int flags, unsigned mode) noexcept;  // O_CLOEXEC added
int close_fd(int fd) noexcept;
// A new open file description of the same file, read-only (O_RDONLY |
// O_CLOEXEC, through /proc/self/fd): whoever holds it cannot map it writable.
// Returns the descriptor or -errno.
int reopen_read_only(int fd) noexcept;
// 1 when fd was opened O_RDONLY, 0 when it may write, -errno on error.
int is_read_only_fd(int fd) noexcept;
int truncate_fd(int fd, std::uint64_t size) noexcept;
// posix_fallocate: gives the file real pages (tmpfs: memory) or blocks (disk)
// for [offset, offset + size) now, so that a full file system fails here
// (-ENOSPC), not with SIGBUS at the first touch of a page. Idempotent: pages
// the file holds already stay as they are.
int allocate_fd(int fd, std::uint64_t offset, std::uint64_t size) noexcept;
int space_of(int fd, SpaceInfo* out) noexcept;
int chmod_fd(int fd, unsigned mode) noexcept;
// fchown(fd, unchanged, gid): gives the file to a group.
int chgrp_fd(int fd, std::uint32_t gid) noexcept;
// A group name or a decimal gid to a gid: 0, -ENOENT (no such group) or -errno.
int resolve_group(const std::string& group, std::uint32_t* gid) noexcept;
int stat_fd(int fd, FileStat* out) noexcept;
int stat_path(const std::string& path, FileStat* out) noexcept;
int unlink_path(const std::string& path) noexcept;
// flock(): shared or exclusive, optionally non-blocking. Released by the
// kernel when the last descriptor of the open file closes (also at death).
int lock_fd(int fd, bool exclusive, bool nonblocking) noexcept;
int unlock_fd(int fd) noexcept;
int sync_fd(int fd) noexcept;
// pread() in full; returns bytes read or -errno.
long read_at(int fd, void* buf, std::size_t n, std::uint64_t offset) noexcept;

enum class Advice { huge_pages, dont_fork };

struct MapRequest {
  std::size_t size = 0;
  bool populate = false;          // MAP_POPULATE: fault every page in now
  void* fixed_address = nullptr;  // MAP_FIXED_NOREPLACE at this address
  bool read_only = false;
};
// Maps fd MAP_SHARED. On failure returns nullptr and sets *err to -errno
// (-EEXIST when a fixed address is taken).
void* map_fd(int fd, const MapRequest& req, int* err) noexcept;
int unmap(void* addr, std::size_t size) noexcept;
int advise(void* addr, std::size_t size, Advice advice) noexcept;
int lock_pages(void* addr, std::size_t size) noexcept;  // mlock
int sync_pages(void* addr, std::size_t size) noexcept;  // msync(MS_SYNC)
std::size_t page_size() noexcept;

// Names of the entries of a directory that start with prefix ("" = all).
std::vector<std::string> list_dir(const std::string& dir, const std::string& prefix);

// errno text, thread-safe.
std::string error_text(int errnum);

}  // namespace zipc::platform
