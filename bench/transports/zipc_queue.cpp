// The benchmark plug-ins for zipc::Queue: one-way channels over the queue.
//   zipc-queue       zero-copy on both ends: prepare() returns the reserved
//                    block itself, acquire() the block the message was
//                    written into (QueueWriteLoan / QueueReadLoan).
//   zipc-queue-copy  the copy API: the sender writes into its own buffer and
//                    send() copies it in; recv() copies it out into the
//                    receiver's buffer, which the harness then checks.
//   zipc-queue-waitset  zipc-queue whose receiver sleeps in a zipc::WaitSet
//                    (try_acquire, else wait) instead of a blocking acquire:
//                    what waiting through a WaitSet costs, beside zipc-queue/block.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "transport.hpp"
#include "zipc/queue.hpp"
#include "zipc/waitset.hpp"

namespace zipc::bench {
namespace {

constexpr auto kForever = std::chrono::nanoseconds::max();

WaitOptions wait_options(Wait w) {
  WaitOptions o;
  switch (w) {
    case Wait::busy: o.strategy = WaitStrategy::busy_poll; break;
    case Wait::adaptive: o.strategy = WaitStrategy::adaptive; break;
    case Wait::block: o.strategy = WaitStrategy::block; break;
  }
  return o;
}

std::string segment_name(const ChannelSpec& spec) {
  return "bench-q-" + spec.name;
}

class QueueSender final : public Sender {
 public:
  explicit QueueSender(Queue q) : q_(std::move(q)) {}
  void* prepare(std::size_t n) override {
    if (n > q_.block_size()) return nullptr;
    loan_ = q_.reserve(kForever);  // waits while the ring is full
    return loan_ ? loan_.data().data() : nullptr;
  }
  bool commit(std::size_t n) override { return loan_ && loan_.commit(n).ok(); }

 private:
  Queue q_;
  QueueWriteLoan loan_;
};

class QueueReceiver final : public Receiver {
 public:
  explicit QueueReceiver(Queue q) : q_(std::move(q)) {}
  const void* acquire(std::size_t* n) override {
    loan_ = q_.acquire(kForever);
    if (!loan_) return nullptr;
    *n = loan_.size();
    return loan_.data().data();
  }
  void release() override { loan_.release(); }

 private:
  Queue q_;
  QueueReadLoan loan_;
};

class QueueCopySender final : public Sender {
 public:
  QueueCopySender(Queue q, std::size_t max) : q_(std::move(q)), buf_(max) {}
  void* prepare(std::size_t n) override { return n <= buf_.size() ? buf_.data() : nullptr; }
  bool commit(std::size_t n) override { return q_.send(std::span(buf_.data(), n), kForever) == Status::ok; }

 private:
  Queue q_;
  std::vector<std::byte> buf_;
};

class QueueCopyReceiver final : public Receiver {
 public:
  QueueCopyReceiver(Queue q, std::size_t max) : q_(std::move(q)), buf_(max) {}
  const void* acquire(std::size_t* n) override {
    const IoResult r = q_.recv(buf_, kForever);
    if (r.status != Status::ok) return nullptr;
    *n = r.size;
    return buf_.data();
  }
  void release() override {}

 private:
  Queue q_;
  std::vector<std::byte> buf_;
};

class QueueWaitSetReceiver final : public Receiver {
 public:
  explicit QueueWaitSetReceiver(Queue q) : q_(std::move(q)) { (void)ws_.attach(q_); }
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
  Queue q_;     // declared before ws_: the WaitSet lets go of it first
  WaitSet ws_;  // one queue attached
  QueueReadLoan loan_;
};

class ZipcQueueTransport : public Transport {
 public:
  std::string name() const override { return "zipc-queue"; }
  std::string family() const override { return "zipc"; }
  std::vector<Wait> waits() const override { return {Wait::busy, Wait::adaptive, Wait::block}; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.broadcast) {
      if (why) *why = "a queue delivers each message once (fan-out is zipc-topic's job)";
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
    // In flight: what the harness asks for, else what fits in ~64 MiB (at most 1024 blocks).
    std::size_t want = spec.capacity ? spec.capacity : 1024;
    while (want > 2 && want * (o.block_size + 64) > (64u << 20)) want /= 2;
    std::size_t cap = 2;
    while (cap < want && cap < (1u << 24)) cap *= 2;
    o.block_count = cap;
    o.producers = spec.senders > 1 ? Multiplicity::multi : Multiplicity::single;
    o.consumers = spec.receivers > 1 ? Multiplicity::multi : Multiplicity::single;
    o.max_participants = static_cast<std::uint32_t>(std::max(4, spec.senders + spec.receivers + 2));
    Queue::remove(segment_name(spec));                       // a leftover of a crashed run
    (void)Queue::create(segment_name(spec), o, Role::none);  // the segment outlives this handle
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<QueueSender>(Queue::open(segment_name(spec), Role::producer, wait_options(spec.wait)));
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<QueueReceiver>(Queue::open(segment_name(spec), Role::consumer, wait_options(spec.wait)));
  }
  void destroy(const ChannelSpec& spec) override { Queue::remove(segment_name(spec)); }
};

class ZipcQueueCopyTransport final : public ZipcQueueTransport {
 public:
  std::string name() const override { return "zipc-queue-copy"; }
  // Busy-poll only: the wait modes are the zero-copy rows' subject; this row
  // shows what the two copies cost.
  std::vector<Wait> waits() const override { return {Wait::busy}; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.senders != 1 || spec.receivers != 1) {
      if (why) *why = "the copy API row is shown for one-to-one channels; zipc-queue covers the rest";
      return false;
    }
    return ZipcQueueTransport::supports(spec, why);
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<QueueCopySender>(Queue::open(segment_name(spec), Role::producer, wait_options(spec.wait)),
                                             spec.max_message);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<QueueCopyReceiver>(Queue::open(segment_name(spec), Role::consumer, wait_options(spec.wait)),
                                               spec.max_message);
  }
};

class ZipcQueueWaitSetTransport final : public ZipcQueueTransport {
 public:
  std::string name() const override { return "zipc-queue-waitset"; }
  // A WaitSet sleeps (it has no busy-poll mode): compare with zipc-queue/block.
  std::vector<Wait> waits() const override { return {Wait::block}; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.senders != 1 || spec.receivers != 1) {
      if (why) *why = "the WaitSet row is shown for one-to-one channels";
      return false;
    }
    return ZipcQueueTransport::supports(spec, why);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<QueueWaitSetReceiver>(
        Queue::open(segment_name(spec), Role::consumer, wait_options(spec.wait)));
  }
};

ZIPC_BENCH_TRANSPORT(ZipcQueueTransport);
ZIPC_BENCH_TRANSPORT(ZipcQueueWaitSetTransport);
ZIPC_BENCH_TRANSPORT(ZipcQueueCopyTransport);

}  // namespace
}  // namespace zipc::bench
