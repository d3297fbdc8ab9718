// System V message queue (msgget/msgsnd/msgrcv). A message is bounded by
// kernel.msgmax and a queue by kernel.msgmnb; larger messages are skipped.
#include <sys/ipc.h>
#include <sys/msg.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

#include "../fd_channel.hpp"
#include "../sysinfo.hpp"

namespace zipc::bench {
namespace {

constexpr std::size_t kTypeBytes = sizeof(long);

class SysvSender final : public Sender {
 public:
  SysvSender(int id, std::size_t max) : id_(id), buf_(kTypeBytes + max) {
    const long type = 1;
    std::memcpy(buf_.data(), &type, sizeof type);
  }
  void* prepare(std::size_t n) override { return n + kTypeBytes <= buf_.size() ? buf_.data() + kTypeBytes : nullptr; }
  bool commit(std::size_t n) override {
    for (;;) {
      if (::msgsnd(id_, buf_.data(), n, 0) == 0) return true;
      if (errno != EINTR) return false;
    }
  }

 private:
  int id_;
  std::vector<unsigned char> buf_;
};

class SysvReceiver final : public Receiver {
 public:
  SysvReceiver(int id, std::size_t max) : id_(id), buf_(kTypeBytes + max) {}
  const void* acquire(std::size_t* n) override {
    for (;;) {
      const ssize_t r = ::msgrcv(id_, buf_.data(), buf_.size() - kTypeBytes, 0, 0);
      if (r >= 0) {
        *n = static_cast<std::size_t>(r);
        return buf_.data() + kTypeBytes;
      }
      if (errno != EINTR) return nullptr;
    }
  }
  void release() override {}

 private:
  int id_;
  std::vector<unsigned char> buf_;
};

class SysvMqTransport final : public Transport {
 public:
  std::string name() const override { return "sysv-mq"; }
  std::string family() const override { return "os"; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.broadcast) {
      *why = "a message goes to one reader";
      return false;
    }
    const long max = read_proc_long("/proc/sys/kernel/msgmax", 8192);
    const long mnb = read_proc_long("/proc/sys/kernel/msgmnb", 16384);
    if (static_cast<long>(spec.max_message) > std::min(max, mnb)) {
      *why = "message larger than kernel.msgmax (" + std::to_string(max) + ")";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    const int id = ::msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    if (id < 0) throw_errno("msgget");
    ids_[spec.name] = id;
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<SysvSender>(at(spec), spec.max_message);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<SysvReceiver>(at(spec), spec.max_message);
  }
  void destroy(const ChannelSpec& spec) override {
    auto it = ids_.find(spec.name);
    if (it == ids_.end()) return;
    ::msgctl(it->second, IPC_RMID, nullptr);
    ids_.erase(it);
  }

 private:
  int at(const ChannelSpec& spec) const {
    auto it = ids_.find(spec.name);
    if (it == ids_.end()) throw std::runtime_error("sysv-mq: channel not created");
    return it->second;
  }
  std::map<std::string, int> ids_;
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::SysvMqTransport;
ZIPC_BENCH_TRANSPORT(SysvMqTransport);
