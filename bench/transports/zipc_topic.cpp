// zipc::Topic as a benchmark transport: the broadcast (fan-out) channel.
// Every receiver is a reliable subscriber, so every receiver gets every
// message; senders claim in the log (zero copy) and commit. One sender uses a
// single-publisher topic; several use the multi-publisher (CAS) mode.
#include <algorithm>
#include <chrono>
#include <string>

#include "../transport.hpp"
#include "zipc/topic.hpp"

namespace zipc::bench {
namespace {

constexpr std::chrono::seconds kPatience{60};  // a broken peer ends the run instead of hanging it

zipc::WaitOptions options_of(Wait w) {
  zipc::WaitOptions o;
  o.strategy = w == Wait::busy       ? zipc::WaitStrategy::busy_poll
               : w == Wait::adaptive ? zipc::WaitStrategy::adaptive
                                     : zipc::WaitStrategy::block;
  return o;
}

std::string topic_name(const ChannelSpec& spec) {
  std::string n = "bench-topic-" + spec.name;
  for (char& c : n) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  return n;
}

zipc::TopicOptions options_for(const ChannelSpec& spec, bool bulk) {
  zipc::TopicOptions o;
  const std::uint64_t record = 32 + ((spec.max_message + 7) & ~std::uint64_t{7});
  const std::uint64_t in_flight = spec.capacity != 0 ? spec.capacity : 4096;
  o.capacity_bytes = std::max<std::uint64_t>({std::uint64_t{4} << 20, in_flight * record, 4 * record});
  o.max_message_size = static_cast<std::uint32_t>(std::max<std::size_t>(spec.max_message, 1));
  o.max_subscribers = static_cast<std::uint32_t>(spec.receivers + 2);
  o.publishers = spec.senders > 1 ? zipc::Multiplicity::multi : zipc::Multiplicity::single;
  o.wait = options_of(spec.wait);
  o.streaming_stores = bulk;
  o.segment.prefault = true;  // steady state: the first lap of a 4 MiB ring would otherwise take a page fault per 4 KiB
  return o;
}

class TopicSender final : public Sender {
 public:
  TopicSender(zipc::Topic topic) : topic_(std::move(topic)), pub_(topic_.publisher()) {}
  void* prepare(std::size_t n) override {
    loan_ = pub_.claim(n, kPatience);
    return loan_ ? loan_.data().data() : nullptr;
  }
  bool commit(std::size_t n) override { return loan_.commit(n).ok(); }

 private:
  zipc::Topic topic_;
  zipc::Publisher pub_;
  zipc::Loan loan_;
};

class TopicReceiver final : public Receiver {
 public:
  TopicReceiver(zipc::Topic topic)
      : topic_(std::move(topic)), sub_(topic_.subscribe({zipc::From::latest(), zipc::Delivery::reliable})) {}
  const void* acquire(std::size_t* n) override {
    const zipc::MessageView v = sub_.read_view(kPatience);
    if (!v.ok()) return nullptr;
    *n = v.data.size();
    return v.data.data();
  }
  void release() override { sub_.release(); }

 private:
  zipc::Topic topic_;
  zipc::Subscriber sub_;
};

// zipc-topic: the default options. zipc-topic-bulk: TopicOptions::streaming_stores
// (one publisher's commits become visible in batches of up to 256, or after
// 100 us of publishing, or at flush / destruction): throughput for one-way
// fan-out at the price of latency. Broadcast channels only: a round trip over
// it would wait for a batch that never fills.
class ZipcTopicTransport : public Transport {
 public:
  explicit ZipcTopicTransport(bool bulk = false) : bulk_(bulk) {}
  std::string name() const override { return bulk_ ? "zipc-topic-bulk" : "zipc-topic"; }
  std::string family() const override { return "zipc"; }
  std::vector<Wait> waits() const override {
    if (bulk_) return {Wait::busy, Wait::adaptive};
    return {Wait::busy, Wait::adaptive, Wait::block};
  }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (!spec.broadcast && spec.receivers > 1) {
      *why = "a topic delivers every message to every subscriber (broadcast only)";
      return false;
    }
    if (bulk_ && (!spec.broadcast || spec.senders != 1)) {
      *why = "bulk mode is shown for one-publisher fan-out (batched visibility would stall a round trip)";
      return false;
    }
    if (spec.senders > 64) {
      *why = "at most 64 publishers";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    zipc::Topic::remove(topic_name(spec));
    (void)zipc::Topic::create(topic_name(spec), options_for(spec, bulk_));
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<TopicSender>(zipc::Topic::open(topic_name(spec), options_for(spec, bulk_)));
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<TopicReceiver>(zipc::Topic::open(topic_name(spec), options_for(spec, bulk_)));
  }
  void destroy(const ChannelSpec& spec) override { zipc::Topic::remove(topic_name(spec)); }

 private:
  bool bulk_;
};

class ZipcTopicBulkTransport final : public ZipcTopicTransport {
 public:
  ZipcTopicBulkTransport() : ZipcTopicTransport(true) {}
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::ZipcTopicBulkTransport;
using zipc::bench::ZipcTopicTransport;
ZIPC_BENCH_TRANSPORT(ZipcTopicTransport);
ZIPC_BENCH_TRANSPORT(ZipcTopicBulkTransport);
