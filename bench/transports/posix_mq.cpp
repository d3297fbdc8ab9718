// POSIX message queue (mq_open). Message size and depth are bounded by
// /proc/sys/fs/mqueue/{msgsize_max,msg_max}; larger messages are skipped.
#include <fcntl.h>
#include <mqueue.h>

#include <cerrno>

#include "../fd_channel.hpp"
#include "../sysinfo.hpp"

namespace zipc::bench {
namespace {

std::string mq_name(const ChannelSpec& spec) {
  return "/zipcb." + spec.name;
}

class MqSender final : public Sender {
 public:
  MqSender(mqd_t q, std::size_t max) : q_(q), buf_(max) {}
  ~MqSender() override { ::mq_close(q_); }
  void* prepare(std::size_t n) override { return n <= buf_.size() ? buf_.data() : nullptr; }
  bool commit(std::size_t n) override {
    for (;;) {
      if (::mq_send(q_, reinterpret_cast<const char*>(buf_.data()), n, 0) == 0) return true;
      if (errno != EINTR) return false;
    }
  }

 private:
  mqd_t q_;
  std::vector<unsigned char> buf_;
};

class MqReceiver final : public Receiver {
 public:
  MqReceiver(mqd_t q, std::size_t max) : q_(q), buf_(max) {}
  ~MqReceiver() override { ::mq_close(q_); }
  const void* acquire(std::size_t* n) override {
    for (;;) {
      const ssize_t r = ::mq_receive(q_, reinterpret_cast<char*>(buf_.data()), buf_.size(), nullptr);
      if (r >= 0) {
        *n = static_cast<std::size_t>(r);
        return buf_.data();
      }
      if (errno != EINTR) return nullptr;
    }
  }
  void release() override {}

 private:
  mqd_t q_;
  std::vector<unsigned char> buf_;
};

class PosixMqTransport final : public Transport {
 public:
  std::string name() const override { return "posix-mq"; }
  std::string family() const override { return "os"; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.broadcast) {
      *why = "a message goes to one reader";
      return false;
    }
    const long max = read_proc_long("/proc/sys/fs/mqueue/msgsize_max", 8192);
    if (static_cast<long>(spec.max_message) > max) {
      *why = "message larger than fs.mqueue.msgsize_max (" + std::to_string(max) + ")";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    mq_attr attr{};
    attr.mq_maxmsg = std::min<long>(10, read_proc_long("/proc/sys/fs/mqueue/msg_max", 10));
    attr.mq_msgsize = static_cast<long>(spec.max_message);
    ::mq_unlink(mq_name(spec).c_str());
    mqd_t q = ::mq_open(mq_name(spec).c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600, &attr);
    if (q == static_cast<mqd_t>(-1)) throw_errno("mq_open " + mq_name(spec));
    ::mq_close(q);
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<MqSender>(open(spec, O_WRONLY), spec.max_message);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<MqReceiver>(open(spec, O_RDONLY), spec.max_message);
  }
  void destroy(const ChannelSpec& spec) override { ::mq_unlink(mq_name(spec).c_str()); }

 private:
  static mqd_t open(const ChannelSpec& spec, int mode) {
    mqd_t q = ::mq_open(mq_name(spec).c_str(), mode | O_CLOEXEC);
    if (q == static_cast<mqd_t>(-1)) throw_errno("mq_open " + mq_name(spec));
    return q;
  }
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::PosixMqTransport;
ZIPC_BENCH_TRANSPORT(PosixMqTransport);
