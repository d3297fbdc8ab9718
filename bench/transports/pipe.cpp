// Unnamed pipe (pipe2), made by the parent and inherited by the workers.
#include <fcntl.h>
#include <unistd.h>

#include "../fd_transport.hpp"

namespace zipc::bench {
namespace {

class PipeTransport final : public FdPairTransport {
 public:
  std::string name() const override { return "pipe"; }
  std::string family() const override { return "os"; }

 protected:
  void make_pair(int fds[2]) override {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw_errno("pipe2");
    fds[0] = p[1];
    fds[1] = p[0];
  }
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::PipeTransport;
ZIPC_BENCH_TRANSPORT(PipeTransport);
