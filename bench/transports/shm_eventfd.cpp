// Shared memory signalled with eventfd: one slot in shared memory, an eventfd
// "ready" (writer -> reader) and an eventfd "handled" (reader -> writer).
// Every handoff costs a write() and a blocking read(): the classic
// "shared memory + kernel notification" baseline.
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <map>

#include "../fd_channel.hpp"
#include "../shm_map.hpp"

namespace zipc::bench {
namespace {

struct Slot {
  std::uint64_t length = 0;
  alignas(64) unsigned char data[1];
};
constexpr std::size_t kDataOffset = offsetof(Slot, data);

bool signal(int fd) noexcept {
  const std::uint64_t one = 1;
  return write_all(fd, &one, sizeof one);
}
bool await(int fd) noexcept {
  std::uint64_t v;
  return read_all(fd, &v, sizeof v);
}

struct Fds {
  int ready = -1;
  int handled = -1;
};

class EfdSender final : public Sender {
 public:
  EfdSender(Slot* s, Fds f, std::size_t max) : s_(s), f_(f), max_(max) {}
  void* prepare(std::size_t n) override {
    if (n > max_) return nullptr;
    if (outstanding_ && !await(f_.handled)) return nullptr;
    outstanding_ = false;
    return s_->data;
  }
  bool commit(std::size_t n) override {
    s_->length = n;
    outstanding_ = true;
    return signal(f_.ready);  // the syscall orders the slot writes before the reader's read()
  }

 private:
  Slot* s_;
  Fds f_;
  std::size_t max_;
  bool outstanding_ = false;
};

class EfdReceiver final : public Receiver {
 public:
  EfdReceiver(Slot* s, Fds f, std::size_t max) : s_(s), f_(f), max_(max) {}
  const void* acquire(std::size_t* n) override {
    if (!await(f_.ready) || s_->length > max_) return nullptr;
    *n = s_->length;
    return s_->data;
  }
  void release() override { signal(f_.handled); }

 private:
  Slot* s_;
  Fds f_;
  std::size_t max_;
};

class ShmEventfdTransport final : public Transport {
 public:
  std::string name() const override { return "shm-eventfd"; }
  std::string family() const override { return "os"; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.senders != 1 || spec.receivers != 1) {
      *why = "one slot, one writer, one reader";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    new (maps_.create(spec.name, kDataOffset + spec.max_message)) Slot();
    Fds f;
    f.ready = ::eventfd(0, EFD_CLOEXEC);
    f.handled = ::eventfd(0, EFD_CLOEXEC);
    if (f.ready < 0 || f.handled < 0) {
      close_fd(f.ready);
      close_fd(f.handled);
      throw_errno("eventfd");
    }
    fds_[spec.name] = f;
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<EfdSender>(slot(spec), fds_.at(spec.name), spec.max_message);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<EfdReceiver>(slot(spec), fds_.at(spec.name), spec.max_message);
  }
  void destroy(const ChannelSpec& spec) override {
    maps_.destroy(spec.name);
    auto it = fds_.find(spec.name);
    if (it == fds_.end()) return;
    close_fd(it->second.ready);
    close_fd(it->second.handled);
    fds_.erase(it);
  }

 private:
  Slot* slot(const ChannelSpec& spec) { return static_cast<Slot*>(maps_.get(spec.name)); }
  SharedMaps maps_;
  std::map<std::string, Fds> fds_;
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::ShmEventfdTransport;
ZIPC_BENCH_TRANSPORT(ShmEventfdTransport);
