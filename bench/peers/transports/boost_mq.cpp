// Peer: Boost.Interprocess message_queue (a mutex + condition-variable queue
// of fixed-size slots in shared memory). Many senders and receivers may share it.
#include <boost/interprocess/ipc/message_queue.hpp>
#include <map>

#include "transport.hpp"

namespace zipc::bench {
namespace {

namespace bip = boost::interprocess;

std::string mq_name(const ChannelSpec& spec) {
  return "zipcb.bmq." + spec.name;
}

class BoostSender final : public Sender {
 public:
  BoostSender(const ChannelSpec& spec) : q_(bip::open_only, mq_name(spec).c_str()), buf_(spec.max_message) {}
  void* prepare(std::size_t n) override { return n <= buf_.size() ? buf_.data() : nullptr; }
  bool commit(std::size_t n) override {
    try {
      q_.send(buf_.data(), n, 0);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

 private:
  bip::message_queue q_;
  std::vector<unsigned char> buf_;
};

class BoostReceiver final : public Receiver {
 public:
  BoostReceiver(const ChannelSpec& spec) : q_(bip::open_only, mq_name(spec).c_str()), buf_(spec.max_message) {}
  const void* acquire(std::size_t* n) override {
    try {
      bip::message_queue::size_type got = 0;
      unsigned prio = 0;
      q_.receive(buf_.data(), buf_.size(), got, prio);
      *n = static_cast<std::size_t>(got);
      return buf_.data();
    } catch (const std::exception&) {
      return nullptr;
    }
  }
  void release() override {}

 private:
  bip::message_queue q_;
  std::vector<unsigned char> buf_;
};

class BoostMqTransport final : public Transport {
 public:
  std::string name() const override { return "boost-mq"; }
  std::string family() const override { return "peer"; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.broadcast) {
      *why = "a message goes to one reader";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override {
    bip::message_queue::remove(mq_name(spec).c_str());
    const std::size_t depth = std::max<std::size_t>(4, std::min<std::size_t>(64, (8u << 20) / spec.max_message));
    bip::message_queue q(bip::create_only, mq_name(spec).c_str(), depth, spec.max_message);
  }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<BoostSender>(spec);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<BoostReceiver>(spec);
  }
  void destroy(const ChannelSpec& spec) override { bip::message_queue::remove(mq_name(spec).c_str()); }
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::BoostMqTransport;
ZIPC_BENCH_TRANSPORT(BoostMqTransport);
