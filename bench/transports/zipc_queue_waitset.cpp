// zipc-queue-waitset: zipc-queue whose receiver sleeps in a zipc::WaitSet
// (io_uring futex waits, or the fallback) instead of a blocking acquire:
// what waiting through a WaitSet costs, row by row beside zipc-queue/block.
// The sender is zipc-queue's: a WaitSet changes nothing on the sending side.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include "transport.hpp"
#include "zipc/queue.hpp"
#include "zipc/waitset.hpp"

namespace zipc::bench {
namespace {

constexpr auto kForever = std::chrono::nanoseconds::max();

std::string segment_name(const ChannelSpec& spec) {
  return "bench-qws-" + spec.name;
}

WaitOptions block_wait() {
  WaitOptions o;
  o.strategy = WaitStrategy::block;
  return o;
}

class Sender1 final : public Sender {
 public:
  explicit Sender1(Queue q) : q_(std::move(q)) {}
  void* prepare(std::size_t n) override {
    if (n > q_.block_size()) return nullptr;
    loan_ = q_.reserve(kForever);
    return loan_ ? loan_.data().data() : nullptr;
  }
  bool commit(std::size_t n) override { return loan_ && loan_.commit(n).ok(); }

 private:
  Queue q_;
  QueueWriteLoan loan_;
};

class WaitSetReceiver final : public Receiver {
 public:
  explicit WaitSetReceiver(Queue q) : q_(std::move(q)) { (void)ws_.attach(q_); }
  const void* acquire(std::size_t* n) override {
    for (;;) {
      loan_ = q_.try_acquire();
      if (loan_) {
        *n = loan_.size();
        return loan_.data().data();
      }
      if (loan_.status() != Status::empty) return nullptr;  // closed or corrupt
      (void)ws_.wait(std::chrono::seconds(1));
    }
  }
  void release() override { loan_.release(); }

 private:
  Queue q_;  // declared before ws_: the WaitSet lets go of it first
  WaitSet ws_;
  QueueReadLoan loan_;
};

class ZipcQueueWaitSetTransport final : public Transport {
 public:
  std::string name() const override { return "zipc-queue-waitset"; }
  std::string family() const override { return "zipc"; }
  // A WaitSet sleeps (it has no busy-poll mode): compare with zipc-queue/block.
  std::vector<Wait> waits() const override { return {Wait::block}; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.broadcast || spec.senders != 1 || spec.receivers != 1) {
      if (why) *why = "the WaitSet row is shown for one-to-one channels";
      return false;
    }
    if (spec.max_message > (16u << 20)) {
      if (why) *why = "blocks are at most 16 MiB";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    QueueOptions o;
    o.block_size = std::max<std::size_t>(8, (spec.max_message + 7) / 8 * 8);
    std::size_t want = spec.capacity ? spec.capacity : 1024;
    while (want > 2 && want * (o.block_size + 64) > (64u << 20)) want /= 2;
    std::size_t cap = 2;
    while (cap < want && cap < (1u << 24)) cap *= 2;
    o.block_count = cap;
    Queue::remove(segment_name(spec));
    (void)Queue::create(segment_name(spec), o, Role::none);
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<Sender1>(Queue::open(segment_name(spec), Role::producer, block_wait()));
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<WaitSetReceiver>(Queue::open(segment_name(spec), Role::consumer, block_wait()));
  }
  void destroy(const ChannelSpec& spec) override { Queue::remove(segment_name(spec)); }
};

ZIPC_BENCH_TRANSPORT(ZipcQueueWaitSetTransport);

}  // namespace
}  // namespace zipc::bench
