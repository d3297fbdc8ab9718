// The interface every benchmarked transport implements: one file per
// transport under bench/transports/, registered with ZIPC_BENCH_TRANSPORT.
//
// A workload is built from one-way channels. The harness (parent process)
// calls create() for each channel, forks the worker processes, and each
// worker opens its end (open_sender / open_receiver) by the channel's name.
// Ping-pong and request/response use two channels (request, response).
//
// Senders write every payload byte into the buffer prepare() returns (the
// transport's own memory for zero-copy transports, a scratch buffer for the
// others) and commit(n) sends it. Receivers get a view with acquire() that
// stays valid until release(); the harness reads every byte (checksum).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace zipc::bench {

enum class Wait { busy, adaptive, block };
const char* to_string(Wait w) noexcept;

struct ChannelSpec {
  std::string name;             // unique per run: derive segment names / paths from it
  std::size_t max_message = 0;  // largest payload that will be sent, bytes
  int senders = 1;              // processes that will send on this channel
  int receivers = 1;            // processes that will receive from it
  bool broadcast = false;       // every receiver gets every message (fan-out); else each message once
  Wait wait = Wait::block;      // how blocked calls wait
  std::size_t capacity = 0;     // messages in flight the channel should hold (0: transport's choice)
};

class Sender {
 public:
  virtual ~Sender() = default;
  // A buffer of at least n bytes for the next message; nullptr on error.
  virtual void* prepare(std::size_t n) = 0;
  // Sends the first n bytes of the prepared buffer. Blocks while the channel
  // is full. False if the channel broke.
  virtual bool commit(std::size_t n) = 0;
};

class Receiver {
 public:
  virtual ~Receiver() = default;
  // Blocks until a message arrives; returns a view of it (size in *n) valid
  // until release(). nullptr if the channel broke or closed.
  virtual const void* acquire(std::size_t* n) = 0;
  virtual void release() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Row label, e.g. "pipe", "unix-stream", "zipc-queue".
  virtual std::string name() const = 0;
  // "os", "peer" or "zipc": how the table groups rows.
  virtual std::string family() const = 0;
  // Wait modes this transport can run in (busy and adaptive for spinners).
  virtual std::vector<Wait> waits() const { return {Wait::block}; }
  // Whether it can carry this channel; if not, *why says so for the report.
  virtual bool supports(const ChannelSpec& spec, std::string* why) const {
    (void)spec;
    (void)why;
    return true;
  }
  // In the parent, before any worker starts.
  virtual void create(const ChannelSpec& spec) = 0;
  // In a worker process (index among the senders / receivers).
  virtual std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int index) = 0;
  virtual std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int index) = 0;
  // In the parent, after every worker exited (also after failures).
  virtual void destroy(const ChannelSpec& spec) = 0;
};

using TransportFactory = std::unique_ptr<Transport> (*)();
// Registers a factory; returns true (for static initialization).
bool register_transport(TransportFactory factory);
std::vector<std::unique_ptr<Transport>> all_transports();

}  // namespace zipc::bench

#define ZIPC_BENCH_TRANSPORT(Class)                                                    \
  static const bool zipc_bench_registered_##Class = ::zipc::bench::register_transport( \
      []() -> std::unique_ptr<::zipc::bench::Transport> { return std::make_unique<Class>(); })
