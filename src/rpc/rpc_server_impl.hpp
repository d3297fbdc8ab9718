// The server side of Rpc: scanning the slot rings, publishing responses,
// recovering dead clients. Shared by rpc_server.cpp and rpc_request.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "platform/file_identity.hpp"
#include "rpc/rpc_pool.hpp"
#include "rpc/rpc_shared.hpp"
#include "zipc/rpc.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

// A shared flock on the segment file, held for the server's lifetime (the
// kernel drops it when the server dies): proof that a server whose header
// was damaged is gone, when nobody holds it (docs/design/rpc.md, "Taking over a
// damaged name").
struct ServerLiveLock {
  int fd = -1;
  ServerLiveLock() = default;
  ServerLiveLock(const ServerLiveLock&) = delete;
  ServerLiveLock& operator=(const ServerLiveLock&) = delete;
  ~ServerLiveLock();
  void take(const std::string& path) noexcept;
  void release() noexcept;
};

struct RpcServerImpl {
  // What next() gives on a server that holds nothing (not created, moved from).
  static RpcRequest detached_request() noexcept {
    RpcRequest r;
    r.status_ = Status::detached;
    return r;
  }

  std::shared_ptr<Segment> segment;  // shared with clients in this process
  RpcView view;
  RpcBlockPool pool;  // response blocks; checks request blocks
  RpcOptions options;
  std::string name;
  std::string path;                            // the segment's file
  platform::FileId file;                       // which file at path is ours (close removes only that one)
  bool file_known = false;                     // file was read right after create
  std::atomic<bool> stopping{false};           // relaxed everywhere: a flag polled by our own threads
  std::atomic<bool> closed{false};             // relaxed: guards close() against running twice
  std::atomic<std::uint64_t> next_reap_ns{0};  // relaxed: a schedule hint
  std::atomic<std::uint64_t> scan_start{0};    // relaxed: spreads threads over clients
  std::atomic<std::uint64_t> reaped{0};        // relaxed: a statistic
  std::mutex reap_mutex;
  ServerLiveLock live_lock;

  // Claims one published request into out; false when none is waiting.
  bool try_claim(RpcRequest& out) noexcept;
  RpcRequest next(Deadline deadline) noexcept;
  // Publishes a response in a claimed slot and wakes its client.
  void publish(RpcRequest& req, std::uint32_t result, std::uint64_t len, std::uint32_t block) noexcept;
  void maybe_reap(std::uint64_t now) noexcept;  // now: monotonic_ns(), read by the caller
  // Recovers one client record whose owner is kOwnerReaping; false while a
  // server thread still works on one of its slots.
  bool finish_reap(std::uint32_t client) noexcept;
  void close() noexcept;
};

}  // namespace zipc::detail
