#include "zipc/fd_passing.hpp"

#include <cerrno>
#include <string>

#include "platform/fd_passing.hpp"
#include "platform/file.hpp"
#include "zipc/error.hpp"

namespace zipc {

void send_fd(int unix_socket, int fd) {
  const int r = platform::send_fd(unix_socket, fd);
  if (r == 0) return;
  const Errc e = (r == -EPIPE || r == -ECONNRESET) ? Errc::closed : Errc::system;
  throw Error(e, "send_fd: " + platform::error_text(-r));
}

int receive_fd(int unix_socket, std::chrono::milliseconds timeout) {
  const auto ms = timeout.count() > 0x7fffffff ? 0x7fffffff : static_cast<int>(timeout.count());
  const int r = platform::receive_fd(unix_socket, ms < 0 ? 0 : ms);
  if (r >= 0) return r;
  switch (r) {
    case -ETIMEDOUT: throw Error(Errc::timeout, "receive_fd: nothing after " + std::to_string(ms) + " ms");
    case -ECONNRESET: throw Error(Errc::closed, "receive_fd: the peer closed the socket");
    case -EBADMSG: throw Error(Errc::invalid_argument, "receive_fd: a message without a descriptor");
    default: throw Error(Errc::system, "receive_fd: " + platform::error_text(-r));
  }
}

}  // namespace zipc
