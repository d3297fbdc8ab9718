// TCP over loopback with TCP_NODELAY: the connection is set up in the parent
// (listen, connect, accept on 127.0.0.1) and inherited by the workers.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../fd_transport.hpp"

namespace zipc::bench {
namespace {

class TcpTransport final : public FdPairTransport {
 public:
  std::string name() const override { return "tcp-loopback"; }
  std::string family() const override { return "os"; }

 protected:
  void make_pair(int fds[2]) override {
    int lis = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lis < 0) throw_errno("socket(AF_INET)");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(lis, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(lis, 1) != 0 ||
        ::getsockname(lis, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(lis);
      throw_errno("tcp listen on 127.0.0.1");
    }
    int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0 || ::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(lis);
      if (c >= 0) ::close(c);
      throw_errno("tcp connect to 127.0.0.1");
    }
    int a = ::accept4(lis, nullptr, nullptr, SOCK_CLOEXEC);
    ::close(lis);
    if (a < 0) {
      ::close(c);
      throw_errno("tcp accept");
    }
    int one = 1;
    ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fds[0] = c;
    fds[1] = a;
  }
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::TcpTransport;
ZIPC_BENCH_TRANSPORT(TcpTransport);
