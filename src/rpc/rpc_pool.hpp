// The Rpc block pool's committed part, as one process may touch it: the
// pool is mapped whole but has memory only below a shared watermark
// (RpcControl::blocks_committed), raised on demand (docs/design/rpc.md,
// "Large payloads").
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "rpc/rpc_shared.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

// One per server and per client connection (process-local). A block is
// touched only below committed(): blocks this process has fallocated itself
// (idempotent; free when another process did it already) or that create's
// room check covered. An index another process names is checked with
// usable() first, so a watermark scribbled upwards costs at most memory
// (fallocate, bounded by the mapping), never a SIGBUS on a full /dev/shm.
class RpcBlockPool {
 public:
  RpcBlockPool() = default;
  RpcBlockPool(const RpcBlockPool&) = delete;
  RpcBlockPool& operator=(const RpcBlockPool&) = delete;
  ~RpcBlockPool();

  // segment outlives the pool (its owner holds both); label names the
  // channel in log messages.
  void attach(const Segment* segment, const RpcView& view, std::string label);

  // A free block for client, lowest index first; when none is free below
  // committed() and grow is set, commits more (doubling, capped at
  // block_count) and looks again. kNoBlock when none (the pool is all in
  // use, or its file system is full: logged once, naming the sizes).
  [[nodiscard]] std::uint32_t acquire(std::uint32_t client, bool grow) noexcept;
  // True when this process may touch block: it is below the shared
  // watermark and committed here (catching up with the watermark if needed).
  [[nodiscard]] bool usable(std::uint32_t block) noexcept;
  // Blocks this process may touch.
  [[nodiscard]] std::uint32_t committed() const noexcept;

 private:
  // Raises committed() past seen: to the shared watermark when that is
  // higher, else (beyond_shared) to double, publishing the new watermark.
  // False when nothing could be committed.
  bool commit_more(std::uint32_t seen, bool beyond_shared) noexcept;
  int file() noexcept;  // a writable descriptor of the segment's file (under mutex_)
  void warn(std::uint32_t from, std::uint32_t to, int err) noexcept;

  const Segment* segment_ = nullptr;
  RpcView view_;
  std::string label_;
  std::mutex mutex_;                         // growth and the descriptor
  std::atomic<std::uint32_t> committed_{0};  // written under mutex_, read anywhere
  int own_fd_ = -1;                          // opened by file() (the segment kept none)
  bool warned_ = false;                      // a failed growth was logged; reset by a success
  std::uint64_t retry_ns_ = 0;               // no growth attempt before this (after a failure)
};

}  // namespace zipc::detail
