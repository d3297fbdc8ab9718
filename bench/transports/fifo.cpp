// Named pipe (mkfifo): the parent creates the node, each worker opens its end
// by path (open blocks until both ends are open, so workers open channels in
// the same order).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "../fd_channel.hpp"

namespace zipc::bench {
namespace {

std::string fifo_path(const ChannelSpec& spec) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/zipcb-" + spec.name + ".fifo";
}

class FifoTransport final : public Transport {
 public:
  std::string name() const override { return "fifo"; }
  std::string family() const override { return "os"; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.senders != 1 || spec.receivers != 1) {
      *why = "a byte stream has one writer and one reader";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    const std::string path = fifo_path(spec);
    ::unlink(path.c_str());
    if (::mkfifo(path.c_str(), 0600) != 0) throw_errno("mkfifo " + path);
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    const int fd = ::open(fifo_path(spec).c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw_errno("open fifo for writing");
    return std::make_unique<FramedSender>(std::vector<int>{fd}, spec.max_message);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    const int fd = ::open(fifo_path(spec).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw_errno("open fifo for reading");
    return std::make_unique<FramedReceiver>(fd, spec.max_message);
  }
  void destroy(const ChannelSpec& spec) override { ::unlink(fifo_path(spec).c_str()); }
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::FifoTransport;
ZIPC_BENCH_TRANSPORT(FifoTransport);
