// The mapped-file design of docs/design/reference.md §2: one message slot in shared
// memory and two events, "message ready" (writer -> reader) and "message
// handled" (reader -> writer). The writer copies the message into the slot,
// sets ready and waits for handled before it may write the next one.
// Events are zipc::Event (futex), so the busy / adaptive / block wait
// strategies apply.
#include <atomic>
#include <cstdint>

#include "../shm_map.hpp"
#include "../transport.hpp"
#include "zipc/event.hpp"

namespace zipc::bench {
namespace {

struct alignas(128) Slot {
  zipc::Event ready;
  std::atomic<std::uint32_t> full{0};  // 1 while a message waits for the reader
  alignas(64) zipc::Event handled;
  std::uint64_t length = 0;
  alignas(64) unsigned char data[1];
};
constexpr std::size_t kDataOffset = offsetof(Slot, data);

zipc::WaitOptions options_of(Wait w) {
  zipc::WaitOptions o;
  o.strategy = w == Wait::busy       ? zipc::WaitStrategy::busy_poll
               : w == Wait::adaptive ? zipc::WaitStrategy::adaptive
                                     : zipc::WaitStrategy::block;
  return o;
}

class SlotSender final : public Sender {
 public:
  SlotSender(Slot* s, std::size_t max, Wait w) : s_(s), max_(max), opt_(options_of(w)) {}
  void* prepare(std::size_t n) override {
    if (n > max_) return nullptr;
    // acquire: pairs with the reader's release store of full = 0 (slot is ours again).
    const auto st = s_->handled.wait_until([&] { return s_->full.load(std::memory_order_acquire) == 0; },
                                           zipc::Deadline::never(), opt_);
    return st == zipc::Status::ok ? s_->data : nullptr;
  }
  bool commit(std::size_t n) override {
    s_->length = n;
    s_->full.store(1, std::memory_order_release);  // release: publishes data + length to the reader
    s_->ready.notify_one();
    return true;
  }

 private:
  Slot* s_;
  std::size_t max_;
  zipc::WaitOptions opt_;
};

class SlotReceiver final : public Receiver {
 public:
  SlotReceiver(Slot* s, std::size_t max, Wait w) : s_(s), max_(max), opt_(options_of(w)) {}
  const void* acquire(std::size_t* n) override {
    // acquire: pairs with the writer's release store of full = 1.
    const auto st = s_->ready.wait_until([&] { return s_->full.load(std::memory_order_acquire) == 1; },
                                         zipc::Deadline::never(), opt_);
    if (st != zipc::Status::ok || s_->length > max_) return nullptr;
    *n = s_->length;
    return s_->data;
  }
  void release() override {
    s_->full.store(0, std::memory_order_release);  // release: we are done reading the slot
    s_->handled.notify_one();
  }

 private:
  Slot* s_;
  std::size_t max_;
  zipc::WaitOptions opt_;
};

class ShmFutexSlotTransport final : public Transport {
 public:
  std::string name() const override { return "shm-futex-slot"; }
  std::string family() const override { return "os"; }
  std::vector<Wait> waits() const override { return {Wait::block, Wait::adaptive, Wait::busy}; }
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
    return std::make_unique<SlotSender>(slot(spec), spec.max_message, spec.wait);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<SlotReceiver>(slot(spec), spec.max_message, spec.wait);
  }
  void destroy(const ChannelSpec& spec) override { maps_.destroy(spec.name); }

 private:
  Slot* slot(const ChannelSpec& spec) { return static_cast<Slot*>(maps_.get(spec.name)); }
  SharedMaps maps_;
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::ShmFutexSlotTransport;
ZIPC_BENCH_TRANSPORT(ShmFutexSlotTransport);
