// Anonymous shared memory (memfd) and descriptor passing over Unix sockets
// (SCM_RIGHTS). Every call returns a descriptor / 0, or -errno.
#pragma once

#include <string>

namespace zipc::platform {

// memfd_create(name, MFD_CLOEXEC): a file in no directory; gone when the last
// descriptor and mapping are gone.
int create_memfd(const std::string& name) noexcept;  // sealing allowed
// Seals a memfd's size (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL): nobody
// holding it can truncate it under other processes' mappings (SIGBUS).
int seal_size(int fd) noexcept;
// fcntl(F_DUPFD_CLOEXEC).
int dup_fd(int fd) noexcept;
// Sends one descriptor (and one byte, so the peer sees a message) on a Unix socket.
int send_fd(int socket, int fd) noexcept;
// Receives one descriptor, waiting at most timeout_ms (< 0: forever).
// -ETIMEDOUT on expiry, -ECONNRESET when the peer closed, -EBADMSG when a
// message arrived without a descriptor. The descriptor has FD_CLOEXEC.
int receive_fd(int socket, int timeout_ms) noexcept;

}  // namespace zipc::platform
