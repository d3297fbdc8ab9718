// The inbound core mappings' own reading thread (docs/guide/bridge.md, "Threads
// and wake-ups").
//
// The NATS C client reads each connection in a thread of its own and hands
// every message of an asynchronous subscription to a delivery thread: two
// wake-ups between the socket and the bridge's callback. A ReadLoop is the
// connection's external event loop (natsOptions_SetEventLoop): one thread of
// ours polls the socket (a zipc::WaitSet), calls the client to read it, and
// takes the messages of the mappings' synchronous subscriptions right there.
// One wake-up per read, and no thread of the client's between the socket and
// the local channel.
//
// The client calls attach / read / write / detach from any of its threads
// (connect, reconnect, flushing, the ping timer): they record what to poll
// under a mutex and interrupt the loop's wait, which re-reads it.
//
// Driven by the caller (BridgeThreads::caller), the loop has no thread:
// Bridge::poll() calls step() from the application's thread, and the loop's
// WaitSet also holds the outbound channels (add_wake) so that one wait
// covers the socket and every local channel to forward.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "internal.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc/waitset.hpp"

namespace zipc::bridge_detail {

class ReadLoop {
 public:
  ReadLoop() = default;
  ~ReadLoop();
  ReadLoop(const ReadLoop&) = delete;
  ReadLoop& operator=(const ReadLoop&) = delete;

  void start();
  void stop() noexcept;  // joins the thread (or ends a step's wait); the connection stays as it is

  // One turn of the loop from the calling thread (no start()): waits up to
  // timeout for the socket (or a wake source), reads it, drains the
  // mappings.
  void step(std::chrono::nanoseconds timeout);
  // Also end a step's wait when this outbound channel has something (the
  // endpoint must outlive the loop). Attached to the WaitSet only for the
  // length of a wait: an attached channel's publishers wake it on every
  // message (a futex wake each), which a busy sender that polls without
  // waiting must not pay. From the stepping thread only.
  void add_wake(Subscriber& s);
  void add_wake(Queue& q);

  // A mapping whose core_sub (a synchronous subscription on this loop's
  // connection) the loop drains after every read; remove() before the
  // subscription goes.
  void add(MappingRuntime* m);
  void remove(MappingRuntime* m);

  // natsOptions_SetEventLoop's callbacks; `loop` is this object.
  static natsStatus on_attach(void** user, void* loop, natsConnection* nc, natsSock fd);
  static natsStatus on_read(void* user, bool add);
  static natsStatus on_write(void* user, bool add);
  static natsStatus on_detach(void* user);

 private:
  void run();
  void drain();
  void changed();                              // under mu_: the poll set must be rebuilt
  void want(bool ReadLoop::*which, bool add);  // polls for reading or writing, or stops

  std::mutex mu_;
  natsConnection* nc_ = nullptr;  // under mu_
  int fd_ = -1;                   // under mu_
  bool want_read_ = false, want_write_ = false;
  std::uint64_t generation_ = 0;  // under mu_: bumped on every change
  std::mutex maps_mu_;
  std::vector<MappingRuntime*> maps_;  // under maps_mu_
  WaitSet waitset_;
  // The stepping thread's: wake sources, the ids they have while a wait
  // lasts, and the socket's registration.
  std::vector<Subscriber*> wake_subscribers_;
  std::vector<Queue*> wake_queues_;
  std::vector<std::uint64_t> wake_ids_;
  std::uint64_t seen_ = ~std::uint64_t{0};
  std::uint64_t id_ = 0;
  bool registered_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace zipc::bridge_detail
