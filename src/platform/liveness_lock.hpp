// Liveness tokens held by open-file-description locks (fcntl F_OFD_*).
//
// A process that holds a read lock on byte `token` of the liveness file is
// alive: the kernel drops the lock when the last descriptor of the open file
// description closes, which happens when the holder exits or is killed, in
// whatever PID namespace it runs. A probe (F_OFD_GETLK with a write lock from
// another description) therefore answers "is the holder of this token alive"
// without /proc and across PID namespaces. The only file of zipc that makes
// these calls; the identity logic is in src/core/process.cpp.
#pragma once

#include <cstdint>

namespace zipc::platform {

// The liveness file: one per host (per shared /dev/shm), shared by every user
// and every name space. Not named "zipc.*", so Segment::list() never sees it.
inline constexpr const char* kLivenessFile = "/dev/shm/.zipc-liveness";

// Opens the liveness file read-only, close on exec, never following a
// symlink, refusing anything but a regular file; with create, makes it (mode
// 0644 whatever the umask) when missing. Returns the descriptor or -errno.
// The descriptor must never be mmapped: a mapping would keep the
// description, and with it the lock, alive.
int open_liveness_file(const char* path, bool create) noexcept;

// Takes the read lock on byte `token` through fd if no other description holds
// any lock there.
enum class Claim { claimed, taken, failed };
Claim claim_liveness_token(int fd, std::uint64_t token) noexcept;

enum class TokenState { dead, alive, unknown };
// Whether a description other than fd's holds a lock on byte `token`. fd's own
// locks never conflict with the probe: the caller checks its own token first.
TokenState probe_liveness_token(int fd, std::uint64_t token) noexcept;

// pthread_atfork(3): handlers run around every fork() of this process.
void on_fork(void (*prepare)(), void (*parent)(), void (*child)()) noexcept;

}  // namespace zipc::platform
