// Peer: ZeroMQ PAIR sockets over ipc:// (a Unix socket underneath, with
// ZeroMQ's I/O thread and batching). The sender binds, the receiver connects;
// each worker makes its own context after fork (contexts are not fork-safe).
#include <unistd.h>
#include <zmq.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "transport.hpp"

namespace zipc::bench {
namespace {

std::string endpoint_path(const ChannelSpec& spec) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/zipcb-zmq-" + spec.name;
}

struct ZmqEnd {
  void* ctx = nullptr;
  void* sock = nullptr;
  ZmqEnd(const ChannelSpec& spec, bool bind) {
    ctx = zmq_ctx_new();
    sock = ctx ? zmq_socket(ctx, ZMQ_PAIR) : nullptr;
    if (!sock) throw std::runtime_error(std::string("zmq_socket: ") + zmq_strerror(zmq_errno()));
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    const std::string ep = "ipc://" + endpoint_path(spec);
    const int rc = bind ? zmq_bind(sock, ep.c_str()) : zmq_connect(sock, ep.c_str());
    if (rc != 0) throw std::runtime_error("zmq " + ep + ": " + zmq_strerror(zmq_errno()));
  }
  ~ZmqEnd() {
    if (sock) zmq_close(sock);
    if (ctx) zmq_ctx_term(ctx);
  }
};

class ZmqSender final : public Sender {
 public:
  explicit ZmqSender(const ChannelSpec& spec) : end_(spec, true), buf_(spec.max_message) {}
  ~ZmqSender() override {
    // Let the last messages (the stop) leave before the context closes.
    int linger = 2000;
    zmq_setsockopt(end_.sock, ZMQ_LINGER, &linger, sizeof linger);
  }
  void* prepare(std::size_t n) override { return n <= buf_.size() ? buf_.data() : nullptr; }
  bool commit(std::size_t n) override {
    for (;;) {
      if (zmq_send(end_.sock, buf_.data(), n, 0) >= 0) return true;
      if (zmq_errno() != EINTR) return false;
    }
  }

 private:
  ZmqEnd end_;
  std::vector<unsigned char> buf_;
};

class ZmqReceiver final : public Receiver {
 public:
  explicit ZmqReceiver(const ChannelSpec& spec) : end_(spec, false) { zmq_msg_init(&msg_); }
  ~ZmqReceiver() override { zmq_msg_close(&msg_); }
  const void* acquire(std::size_t* n) override {
    for (;;) {
      if (zmq_msg_recv(&msg_, end_.sock, 0) >= 0) {
        *n = zmq_msg_size(&msg_);
        return zmq_msg_data(&msg_);
      }
      if (zmq_errno() != EINTR) return nullptr;
    }
  }
  void release() override {}

 private:
  ZmqEnd end_;
  zmq_msg_t msg_;
};

class ZmqPairTransport final : public Transport {
 public:
  std::string name() const override { return "zmq-pair"; }
  std::string family() const override { return "peer"; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (spec.senders != 1 || spec.receivers != 1) {
      *why = "PAIR connects exactly two sockets";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override { ::unlink(endpoint_path(spec).c_str()); }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    return std::make_unique<ZmqSender>(spec);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    return std::make_unique<ZmqReceiver>(spec);
  }
  void destroy(const ChannelSpec& spec) override { ::unlink(endpoint_path(spec).c_str()); }
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::ZmqPairTransport;
ZIPC_BENCH_TRANSPORT(ZmqPairTransport);
