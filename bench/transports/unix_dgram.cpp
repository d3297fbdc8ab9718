// Unix-domain datagram socket (socketpair): one message per datagram, so
// several senders and several receivers can share it (many-to-many).
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <stdexcept>

#include "../fd_channel.hpp"
#include "../sysinfo.hpp"

namespace zipc::bench {
namespace {

class DgramSender final : public Sender {
 public:
  DgramSender(int fd, std::size_t max) : fd_(fd), buf_(max) {}
  ~DgramSender() override { close_fd(fd_); }
  void* prepare(std::size_t n) override { return n <= buf_.size() ? buf_.data() : nullptr; }
  bool commit(std::size_t n) override {
    for (;;) {
      if (::send(fd_, buf_.data(), n, 0) == static_cast<ssize_t>(n)) return true;
      if (errno != EINTR) return false;
    }
  }

 private:
  int fd_;
  std::vector<unsigned char> buf_;
};

class DgramReceiver final : public Receiver {
 public:
  DgramReceiver(int fd, std::size_t max) : fd_(fd), buf_(max) {}
  ~DgramReceiver() override { close_fd(fd_); }
  const void* acquire(std::size_t* n) override {
    for (;;) {
      const ssize_t r = ::recv(fd_, buf_.data(), buf_.size(), 0);
      if (r >= 0) {
        *n = static_cast<std::size_t>(r);
        return buf_.data();
      }
      if (errno != EINTR) return nullptr;
    }
  }
  void release() override {}

 private:
  int fd_;
  std::vector<unsigned char> buf_;
};

class UnixDgramTransport final : public Transport {
 public:
  std::string name() const override { return "unix-dgram"; }
  std::string family() const override { return "os"; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.broadcast) {
      *why = "a datagram goes to one reader";
      return false;
    }
    const long wmem = read_proc_long("/proc/sys/net/core/wmem_max", 212992);
    if (static_cast<long>(spec.max_message) + 4096 > wmem) {
      *why = "message larger than net.core.wmem_max (" + std::to_string(wmem) + ")";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds) != 0) throw_errno("socketpair(AF_UNIX, SOCK_DGRAM)");
    int buf = static_cast<int>(read_proc_long("/proc/sys/net/core/wmem_max", 212992));
    ::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    ::setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    fds_[spec.name] = {fds[0], fds[1]};
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<DgramSender>(::dup(at(spec).first), spec.max_message);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<DgramReceiver>(::dup(at(spec).second), spec.max_message);
  }
  void destroy(const ChannelSpec& spec) override {
    auto it = fds_.find(spec.name);
    if (it == fds_.end()) return;
    close_fd(it->second.first);
    close_fd(it->second.second);
    fds_.erase(it);
  }

 private:
  const std::pair<int, int>& at(const ChannelSpec& spec) {
    auto it = fds_.find(spec.name);
    if (it == fds_.end()) throw std::runtime_error("unix-dgram: channel not created");
    return it->second;
  }
  std::map<std::string, std::pair<int, int>> fds_;
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::UnixDgramTransport;
ZIPC_BENCH_TRANSPORT(UnixDgramTransport);
