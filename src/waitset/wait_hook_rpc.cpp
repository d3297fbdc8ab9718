// The WaitSet's readiness hooks of Rpc endpoints (wait_hook.hpp): a server
// waiting for requests and a client waiting for the responses of its calls.
#include "platform/clock.hpp"
#include "rpc/rpc_client_impl.hpp"
#include "rpc/rpc_server_impl.hpp"
#include "sync/asymmetric_wait.hpp"
#include "waitset/wait_hook.hpp"
#include "zipc/error.hpp"
#include "zipc/rpc.hpp"

namespace zipc::detail {

namespace {

bool server_ready(const void* p) noexcept {
  const auto& s = *static_cast<const RpcServerImpl*>(p);
  if (s.stopping.load(std::memory_order_relaxed)) return true;  // relaxed: our own flag (next() reports closed)
  const layout::RpcGeometry& g = s.view.geometry();
  for (std::uint64_t c = 0; c < g.max_clients; ++c) {
    // relaxed: a filter, as in try_claim; the claim itself re-reads with acquire.
    if (s.view.record(c)->owner.load(std::memory_order_relaxed) <= layout::kOwnerReaping) continue;
    for (std::uint64_t k = 0; k < g.slots_per_client; ++k)
      // acquire: pairs with the client's release store of kSlotRequest (the claim that follows sees it).
      if (s.view.slot(c * g.slots_per_client + k)->state.load(std::memory_order_acquire) == layout::kSlotRequest)
        return true;
  }
  return false;
}

void server_maintain(const void* p) noexcept {
  // Dead clients are reaped on the server's own schedule, as in next().
  const_cast<RpcServerImpl*>(static_cast<const RpcServerImpl*>(p))->maybe_reap(platform::monotonic_ns());
}

// The endpoint of a client hook is its connection at attach time: a client
// that reconnects (its server replaced) must be attached again; the old
// connection then reports ready (dead), so the WaitSet never sleeps on it.
bool client_ready(const void* p) noexcept {
  const auto& c = *static_cast<const RpcConnection*>(p);
  if (c.dead) return true;
  // acquire: pairs with the server's release store of the closed state.
  if (c.view.control()->state.load(std::memory_order_acquire) != layout::kRpcRunning) return true;
  for (std::uint32_t k = 0; k < c.local.size(); ++k) {
    if (c.local[k] != LocalSlot::in_flight) continue;
    // acquire: pairs with the server's release store of kSlotResponse.
    if (c.slot(k)->state.load(std::memory_order_acquire) == layout::kSlotResponse) return true;
  }
  return false;
}

void client_maintain(const void* p) noexcept {
  // A server that died without closing: noticed here, then reported ready
  // (the ticket's wait says peer_dead).
  auto& c = *const_cast<RpcConnection*>(static_cast<const RpcConnection*>(p));
  if (!c.dead && !rpc_alive(c.server)) {
    c.dead_status = Status::peer_dead;
    c.dead = true;
  }
}

}  // namespace

WaitHook WaitHookAccess::of(const RpcServer& server) {
  if (!server.impl_ || !server.impl_->segment || server.impl_->closed.load(std::memory_order_relaxed))
    throw Error(Errc::invalid_argument, "WaitSet: the rpc server is not open");
  WaitHook h;
  h.event = &server.impl_->view.control()->server_event;
  h.barrier = AsymmetricWait::here();  // clients wake with Event::notify (its own fence): correct either way
  h.ready_fn = &server_ready;
  h.maintain_fn = &server_maintain;
  h.endpoint = server.impl_.get();
  return h;
}

WaitHook WaitHookAccess::of(const RpcClient& client) {
  if (!client.impl_ || !client.impl_->conn)
    throw Error(Errc::invalid_argument, "WaitSet: the rpc client is not connected");
  const std::shared_ptr<RpcConnection>& conn = client.impl_->conn;
  WaitHook h;
  h.event = &conn->view.record(conn->client)->response_event;
  h.barrier = AsymmetricWait::here();
  h.ready_fn = &client_ready;
  h.maintain_fn = &client_maintain;
  h.endpoint = conn.get();
  h.keep = conn;
  return h;
}

}  // namespace zipc::detail
