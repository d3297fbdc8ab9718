// Busy-poll one-slot shared memory: the writer fills the slot and bumps a
// sequence number, the reader spins on it, then acknowledges. No syscalls at
// all, so the fastest possible handoff when both sides own a CPU, and the
// worst when they share one (each wait lasts a scheduler time slice).
#include <atomic>
#include <cstdint>

#include "../shm_map.hpp"
#include "../transport.hpp"

namespace zipc::bench {
namespace {

inline void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct Slot {
  alignas(128) std::atomic<std::uint64_t> published{0};  // written by the writer
  alignas(128) std::atomic<std::uint64_t> consumed{0};   // written by the reader
  alignas(128) std::uint64_t length = 0;
  alignas(64) unsigned char data[1];
};
constexpr std::size_t kDataOffset = offsetof(Slot, data);

class SpinSender final : public Sender {
 public:
  SpinSender(Slot* s, std::size_t max) : s_(s), max_(max) {}
  void* prepare(std::size_t n) override {
    if (n > max_) return nullptr;
    // acquire: pairs with the reader's release of consumed (it finished reading).
    while (s_->consumed.load(std::memory_order_acquire) != next_ - 1) relax();
    return s_->data;
  }
  bool commit(std::size_t n) override {
    s_->length = n;
    s_->published.store(next_++, std::memory_order_release);  // release: publishes data + length
    return true;
  }

 private:
  Slot* s_;
  std::size_t max_;
  std::uint64_t next_ = 1;
};

class SpinReceiver final : public Receiver {
 public:
  SpinReceiver(Slot* s, std::size_t max) : s_(s), max_(max) {}
  const void* acquire(std::size_t* n) override {
    // acquire: pairs with the writer's release of published.
    while (s_->published.load(std::memory_order_acquire) != next_) relax();
    if (s_->length > max_) return nullptr;
    *n = s_->length;
    return s_->data;
  }
  void release() override { s_->consumed.store(next_++, std::memory_order_release); }  // release: done reading

 private:
  Slot* s_;
  std::size_t max_;
  std::uint64_t next_ = 1;
};

class ShmSpinTransport final : public Transport {
 public:
  std::string name() const override { return "shm-spin-slot"; }
  std::string family() const override { return "os"; }
  std::vector<Wait> waits() const override { return {Wait::busy}; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.senders != 1 || spec.receivers != 1) {
      *why = "one slot, one writer, one reader";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    new (maps_.create(spec.name, kDataOffset + spec.max_message)) Slot();
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<SpinSender>(slot(spec), spec.max_message);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<SpinReceiver>(slot(spec), spec.max_message);
  }
  void destroy(const ChannelSpec& spec) override { maps_.destroy(spec.name); }

 private:
  Slot* slot(const ChannelSpec& spec) { return static_cast<Slot*>(maps_.get(spec.name)); }
  SharedMaps maps_;
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::ShmSpinTransport;
ZIPC_BENCH_TRANSPORT(ShmSpinTransport);
