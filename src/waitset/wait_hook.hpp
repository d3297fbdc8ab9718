// Internal: the readiness hook of a receiving endpoint, for zipc::WaitSet.
//
// A hook names the endpoint's Event (the futex word its senders wake) and a
// level-triggered readiness test that consumes nothing. A WaitSet registers
// as a sleeper exactly like AsymmetricWait::wait does (asymmetric_wait.hpp):
//   token = enter();          // seq read, then waiters++ (seq_cst)
//   barrier.heavy_barrier();  // one membarrier for every hook entered
//   if (ready()) leave(); else sleep on (event->seq, token) until woken, then leave();
// so senders keep their existing check (a compiler barrier and one load of
// `waiters`): they pay nothing while no WaitSet is registered.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "sync/asymmetric_wait.hpp"
#include "zipc/event.hpp"

namespace zipc {
class Queue;
class Subscriber;
class RpcServer;
class RpcClient;
class Listener;
}  // namespace zipc

namespace zipc::detail {

struct WaitHook {
  Event* event = nullptr;
  AsymmetricWait barrier;
  bool (*ready_fn)(const void* endpoint) noexcept = nullptr;
  void (*maintain_fn)(const void* endpoint) noexcept = nullptr;
  const void* endpoint = nullptr;
  std::shared_ptr<const void> keep;  // keeps the mapping of `event` alive (an Rpc client's connection)

  // Level-triggered: true while a receive would not find the endpoint empty
  // (data, or closed and drained for a queue). Consumes nothing.
  [[nodiscard]] bool ready() const noexcept { return ready_fn(endpoint); }
  // What a blocked receive does between its sleep slices: when the channel
  // stalled for its recovery time (shared clock), recover a dead peer's
  // positions (queue) or claims (topic), so they stop hiding later data.
  void maintain() const noexcept { maintain_fn(endpoint); }
  // Registers as a sleeper; returns the futex value to sleep on.
  // (Event's protocol: registered before the heavy barrier and the re-check, as in AsymmetricWait::wait.)
  [[nodiscard]] std::uint32_t enter() const noexcept { return event->register_sleeper(); }
  void leave() const noexcept { event->unregister_sleeper(); }
};

// Friend of Queue and Subscriber. Errc::invalid_argument for a closed handle
// or a queue handle without the consumer role.
struct WaitHookAccess {
  static WaitHook of(const Queue& consumer);
  static WaitHook of(const Subscriber& subscriber);
  // A producer waiting for room: ready while a send would not find the
  // queue full (or the queue is closed). Errc::invalid_argument without Role::producer.
  static WaitHook room_of(const Queue& producer);
  // An Rpc server: ready while a request waits to be claimed (next(0)) or
  // the server was stopped; its WaitSet reaps dead clients on schedule.
  static WaitHook of(const RpcServer& server);
  // An Rpc client: ready while one of its calls in flight has its response
  // (ticket.wait(0) returns it), or its server closed or died.
  static WaitHook of(const RpcClient& client);
  // An event channel's listener: ready while ids are pending; nothing to recover.
  static WaitHook of(const Listener& listener);
};

}  // namespace zipc::detail
