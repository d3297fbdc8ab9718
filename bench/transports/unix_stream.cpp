// Unix-domain stream socket (socketpair). Also the fan-out baseline: one
// socket per subscriber, the publisher writing each message to every one.
#include <sys/socket.h>

#include "../fd_transport.hpp"

namespace zipc::bench {
namespace {

class UnixStreamTransport final : public FdPairTransport {
 public:
  std::string name() const override { return "unix-stream"; }
  std::string family() const override { return "os"; }

 protected:
  bool fan_out() const override { return true; }
  void make_pair(int fds[2]) override {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw_errno("socketpair(AF_UNIX, SOCK_STREAM)");
  }
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::UnixStreamTransport;
ZIPC_BENCH_TRANSPORT(UnixStreamTransport);
