/// \file
/// zipc/waitset.hpp - wait on many channels, file descriptors and timers at once.
///
/// \code
///   #include <poll.h>
///   auto queue = zipc::Queue::create("jobs-ws", {}, zipc::Role::consumer);
///   auto topic = zipc::Topic::create("ticks-ws");
///   zipc::Subscriber subscriber = topic.subscribe();
///   int sock = 0;  // any pollable fd
///   zipc::WaitSet ws;
///   const std::uint64_t q = ws.attach(queue);  // a Queue opened with Role::consumer
///   ws.attach(subscriber);
///   ws.attach_fd(sock, POLLIN);
///   ws.attach_interval(std::chrono::milliseconds(100));
///   for (const zipc::Ready& r : ws.wait(std::chrono::seconds(1)))
///     if (r.id == q) { /* queue.try_recv(...) until empty */ }
///   // or: ws.run([&](const zipc::Ready& r) { if (r.kind == zipc::ReadyKind::interval) ws.stop(); });
///   // or: put ws.readiness_fd() into epoll/poll/select; when readable, call ws.wait(0ns).
/// \endcode
///
/// Level-triggered: a channel that still holds data (or an fd still ready) is
/// reported again by the next wait(). Deadlines and intervals are reported once
/// per expiry. An attached endpoint must stay where it is (not moved, not
/// destroyed) until detached or the WaitSet is gone. One thread uses a WaitSet
/// at a time; stop() may be called from any thread. Mechanism, kernel
/// requirements and costs: docs/design/waitset.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "zipc/event.hpp"

namespace zipc {

class Queue;
class Subscriber;
class RpcServer;
class RpcClient;
class Listener;

/// What a Ready reports: which kind of attachment is ready.
enum class ReadyKind : std::uint8_t {
  queue,       ///< a consumer's queue holds a message, or is closed (attach(Queue&))
  subscriber,  ///< a subscriber has a message, or its topic is closed
  fd,          ///< an fd is ready (Ready::revents)
  deadline,    ///< a deadline passed (reported once)
  interval,    ///< an interval elapsed (Ready::expirations)
  queue_room,  ///< a producer's queue has room, or is closed (attach_room)
  rpc_server,  ///< a request waits to be claimed, or the server stopped
  rpc_client,  ///< a call in flight has its response, or the server closed or died
  listener,    ///< an event channel listener has ids pending
};

/// One ready attachment, as wait() reports it.
struct Ready {
  std::uint64_t id = 0;               ///< what attach_*() returned
  ReadyKind kind = ReadyKind::queue;  ///< what is ready
  std::uint32_t revents = 0;          ///< fd: poll(2) revents
  std::uint64_t expirations = 0;      ///< interval: periods elapsed since the last report (deadline: 1)
};

/// How a WaitSet waits (the defaults suit nearly every program).
struct WaitSetOptions {
  /// Use the portable fallback even where io_uring futex waits exist (tests, old kernels).
  bool force_fallback = false;
  /// Fallback: the longest nap between two readiness polls of every channel.
  std::chrono::nanoseconds fallback_nap = std::chrono::milliseconds(1);
  /// io_uring mode, for callers that never block in wait() but poll
  /// readiness_fd and call wait(0) (event loops): a dead peer wakes nobody, so
  /// while channels are attached readiness_fd also turns readable this often,
  /// and the wait(0) that follows does the recovery a blocked receive would do
  /// (it may report nothing). Zero: never (only a blocking wait() recovers).
  std::chrono::nanoseconds maintenance_interval = std::chrono::milliseconds(20);
};

/// Waits on many channels, fds, deadlines and intervals at once from one thread (docs/guide/events.md). Channels are
/// level-triggered: reported by every wait while they hold something.
class WaitSet {
 public:
  /// A wait's timeout (zipc::forever; 0 or negative: poll once).
  using Timeout = std::chrono::nanoseconds;
  /// An empty WaitSet: io_uring futex waits where the kernel has them, else the fallback. Throws Errc::system when an
  /// eventfd cannot be made.
  explicit WaitSet(const WaitSetOptions& options = {});
  ~WaitSet();
  /// Moves the attachments; calls on the source then throw Errc::invalid_argument.
  WaitSet(WaitSet&&) noexcept;
  /// Drops this WaitSet's attachments and takes the other's; calls on the other then throw
  /// Errc::invalid_argument.
  WaitSet& operator=(WaitSet&&) noexcept;
  WaitSet(const WaitSet&) = delete;
  WaitSet& operator=(const WaitSet&) = delete;

  /// Each returns the attachment's id (never 0). Errc::invalid_argument for a
  /// closed handle or a queue without Role::consumer.
  std::uint64_t attach(Queue& consumer);
  /// A subscriber (ReadyKind::subscriber): ready while it has a message, or its topic is closed.
  std::uint64_t attach(Subscriber& subscriber);
  /// A producer waiting for room (ReadyKind::queue_room): ready while a send
  /// would not find the queue full, or the queue is closed. Errc::invalid_argument
  /// for a queue without Role::producer.
  std::uint64_t attach_room(Queue& producer);
  /// An Rpc server (ReadyKind::rpc_server): ready while a request waits to be
  /// claimed with next(0ns), or after stop(); the WaitSet reaps dead clients on
  /// the server's schedule. Pull with next(), not serve() threads, on a server
  /// attached here (they would compete for its wake-ups).
  std::uint64_t attach(RpcServer& server);
  /// An Rpc client (ReadyKind::rpc_client): ready while one of its calls in
  /// flight has its response (RpcTicket::wait(0ns) returns it), or its server
  /// closed or died. A client that reconnected to a new server must be
  /// attached again (the old attachment stays ready).
  std::uint64_t attach(RpcClient& client);
  /// An event channel's listener (ReadyKind::listener): ready while ids are
  /// pending (Listener::try_wait() takes them).
  std::uint64_t attach(Listener& listener);
  std::uint64_t attach_fd(int fd, std::uint32_t events);  ///< poll(2) events, e.g. POLLIN
  /// A deadline (ReadyKind::deadline): reported once, when it passes. Errc::invalid_argument for Deadline::never().
  std::uint64_t attach_deadline(Deadline at);
  std::uint64_t attach_interval(std::chrono::nanoseconds period);  ///< first expiry one period from now
  /// Returns false for an unknown id. Safe while other processes publish.
  bool detach(std::uint64_t id);

  /// Waits up to timeout (zipc::forever; 0 or negative: poll) for something to
  /// be ready; returns what is (empty: timeout or stop()). The span stays valid
  /// until the next call on this WaitSet.
  std::span<const Ready> wait(Timeout timeout);
  /// Calls handler for every ready attachment until stop().
  void run(const std::function<void(const Ready&)>& handler);
  /// Makes run() return and a wait() in progress return early. Thread-safe.
  void stop() noexcept;

  /// A file descriptor that is readable while wait(0) would report something
  /// (or has completions to look at, or its maintenance_interval passed while
  /// channels are attached): put it in epoll (level or edge), poll or select
  /// beside other fds and call wait(0) when it is readable; that wait(0) may
  /// report nothing. In the fallback mode a timerfd, readable at once while
  /// something is reported and otherwise every fallback_nap (that wait(0)
  /// polls every channel); -1 only if it cannot be made. The first call
  /// turns on the fd's upkeep in wait(): make it from the thread using the
  /// WaitSet, or before that thread's first wait().
  [[nodiscard]] int readiness_fd() const noexcept;
  /// True when io_uring futex waits are in use (kernel 6.7+), false in the fallback.
  [[nodiscard]] bool uses_io_uring() const noexcept;
  /// Attachments now.
  [[nodiscard]] std::size_t size() const noexcept;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace zipc
