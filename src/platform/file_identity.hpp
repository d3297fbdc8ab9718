// Removing a file by identity: unlink a path only while it still names the
// very file (device + inode) the caller judged, never a successor created at
// the same path meanwhile. Every call returns 0 or -errno.
#pragma once

#include <cstdint>
#include <string>

namespace zipc::platform {

struct FileId {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  friend bool operator==(const FileId&, const FileId&) = default;
};

// The identity of the file path names now (-ENOENT when absent).
int file_id(const std::string& path, FileId* out) noexcept;

// A read-only descriptor on the file a path named when opened. Holding it
// pins the file's identity: its inode cannot be reused while it is open.
class HeldFile {
 public:
  HeldFile() = default;
  ~HeldFile();
  HeldFile(const HeldFile&) = delete;
  HeldFile& operator=(const HeldFile&) = delete;

  // Opens the file path names now (-ENOENT when absent).
  int open(const std::string& path) noexcept;
  [[nodiscard]] const FileId& id() const noexcept { return id_; }

  // Unlinks path if it still names this file. An exclusive flock on the file
  // is held (non-blocking) across the check and the unlink, so callers that
  // remove the same file this way -- and the foundation's reclaim of
  // abandoned segments, which takes the same lock -- never both act, and none
  // removes a file created at path after this one was unlinked.
  // 0 unlinked; -ESTALE path names another file; -ENOENT path names nothing;
  // -EWOULDBLOCK another process holds the lock now (try again).
  int unlink_if_still_at(const std::string& path) noexcept;

 private:
  int fd_ = -1;
  FileId id_;
};

// Unlinks path only if it names the file id, as HeldFile::unlink_if_still_at.
int unlink_if_same(const std::string& path, const FileId& id) noexcept;

}  // namespace zipc::platform
