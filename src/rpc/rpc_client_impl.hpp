// The client side of Rpc: one connection (a claimed client record and its K
// slots) and the client object that reconnects when its server is replaced.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rpc/rpc_pool.hpp"
#include "rpc/rpc_shared.hpp"
#include "sync/use_check.hpp"
#include "zipc/rpc.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

// Process-local state of one of our slots (the shared state word says where
// the slot is in the protocol; this says which local object holds it).
enum class LocalSlot : std::uint8_t {
  free,       // ours to fill
  loaned,     // an RpcWriteLoan holds it
  in_flight,  // sent; an RpcTicket waits for it
  abandoned,  // sent; its ticket was dropped (reclaimed when answered)
  held,       // an RpcResponse reads it
};

struct RpcConnection {
  std::shared_ptr<Segment> segment;  // shared with a server in this process, if any
  RpcView view;
  RpcBlockPool pool;                      // request blocks; checks response blocks
  std::uint32_t client = 0;               // our record index
  std::uint64_t server = 0;               // packed ProcessId of the server, read once at connect
  std::uint64_t first_slot = 0;           // client * slots_per_client
  std::vector<LocalSlot> local;           // per own slot
  std::vector<std::uint32_t> req_block;   // block a loan holds, per own slot
  std::vector<std::uint32_t> resp_block;  // block a held response holds, per own slot
  bool dead = false;                      // server died or closed: every call fails, next call reconnects
  Status dead_status = Status::peer_dead;

  ~RpcConnection();  // detaches: gives back the record (or leaves it for the server to reap)
  [[nodiscard]] layout::RpcSlot* slot(std::uint32_t k) const noexcept { return view.slot(first_slot + k); }
  // Frees a slot whose call has finished (or never started): true when it
  // is free now, false while a server thread still has the call.
  bool reclaim(std::uint32_t k) noexcept;
  // Releases a held response.
  void release(std::uint32_t k) noexcept;
};

class RpcClientImpl {
 public:
  std::string name;
  std::shared_ptr<RpcConnection> conn;
  WaitOptions wait_options{};
  std::uint64_t liveness_ns = 5'000'000;
  std::uint64_t next_check_ns = 0;
  std::uint64_t next_call_id = 1;
  std::uint64_t reconnects = 0;

  bool by_fd = false;     // connected with connect_fd: no name to reconnect by
  bool attached = false;  // connected and not detached: calls may (re)connect
  // Debug builds: refuses a second thread inside this client (Status::busy).
  [[no_unique_address]] UseCheck use;

  // Throws zipc::Error. fd >= 0: through that descriptor instead of the name.
  static std::shared_ptr<RpcConnection> open(std::string_view name, Deadline deadline, int fd = -1);

  // Checks the server at most every liveness_ns; reconnects a dead connection
  // once (no waiting). False (with *status) when no live server is there.
  bool ensure_live(Status* status) noexcept;
  // A call's outcome that carries only a status: Status::detached for a client
  // that holds nothing (never connected, moved from, detached), as every
  // channel's handle gives; Status::busy for a second thread inside the client
  // (debug builds).
  static RpcResponse failed_response(Status why) noexcept;
  static RpcTicket failed_ticket(Status why) noexcept;
  static RpcWriteLoan failed_loan(Status why) noexcept;
  RpcWriteLoan reserve(std::size_t n) noexcept;
  RpcTicket send(RpcWriteLoan&& loan) noexcept;
  RpcResponse wait(RpcTicket& ticket, Deadline deadline) noexcept;
  void abandon(RpcTicket& ticket) noexcept;
  bool ready(const RpcTicket& ticket) const noexcept;
};

}  // namespace zipc::detail
