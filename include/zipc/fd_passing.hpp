/// \file
/// zipc/fd_passing.hpp - hand a channel to another process over a Unix socket,
/// for processes without a shared /dev/shm (sandboxes, containers).
///
/// \code
///   #include <sys/socket.h>
///   #include <unistd.h>
///   #include "zipc/topic.hpp"
///   ---
///   int sv[2];
///   if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return;
///   zipc::TopicOptions o;
///   o.segment.memfd = true;                      // no name in /dev/shm
///   auto topic = zipc::Topic::create("news", o);
///   zipc::send_fd(sv[0], topic.segment().fd());  // the segment keeps its fd
///   // ... in the other process:
///   int fd = zipc::receive_fd(sv[1], std::chrono::seconds(1));
///   auto same = zipc::Topic::open_fd(fd);        // duplicates fd
///   close(fd);
/// \endcode
#pragma once

#include <chrono>

namespace zipc {

/// Sends a descriptor with SCM_RIGHTS. Throws zipc::Error (Errc::system, or
/// Errc::closed when the peer is gone).
void send_fd(int unix_socket, int fd);
/// Receives one descriptor (close-on-exec; the caller owns it). Throws
/// Errc::timeout, Errc::closed when the peer closed, Errc::invalid_argument
/// when the message carried no descriptor.
int receive_fd(int unix_socket, std::chrono::milliseconds timeout);

}  // namespace zipc
