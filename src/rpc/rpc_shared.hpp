// What the Rpc server and client share: typed access to the segment's areas
// (geometry validated once, at create/open), the block pool and liveness.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "layout/rpc_layout.hpp"
#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

// Addresses inside one mapped Rpc payload. Every accessor takes an index
// that the caller has already bounds-checked (or computed itself).
class RpcView {
 public:
  RpcView() = default;
  RpcView(std::byte* payload, const layout::RpcGeometry& g) : base_(payload), g_(g) {}

  [[nodiscard]] const layout::RpcGeometry& geometry() const noexcept { return g_; }
  [[nodiscard]] layout::RpcControl* control() const noexcept { return reinterpret_cast<layout::RpcControl*>(base_); }
  [[nodiscard]] layout::RpcClientRecord* record(std::uint64_t client) const noexcept {
    return reinterpret_cast<layout::RpcClientRecord*>(base_ + g_.records_offset) + client;
  }
  [[nodiscard]] std::uint64_t slot_count() const noexcept { return g_.max_clients * g_.slots_per_client; }
  [[nodiscard]] layout::RpcSlot* slot(std::uint64_t global) const noexcept {
    return reinterpret_cast<layout::RpcSlot*>(base_ + g_.slots_offset + global * g_.slot_stride);
  }
  [[nodiscard]] std::byte* request_inline(std::uint64_t global) const noexcept {
    return reinterpret_cast<std::byte*>(slot(global)) + sizeof(layout::RpcSlot);
  }
  [[nodiscard]] std::byte* response_inline(std::uint64_t global) const noexcept {
    return request_inline(global) + layout::rpc_round(g_.req_inline, 128);
  }
  [[nodiscard]] std::atomic<std::uint64_t>* block_owner(std::uint64_t block) const noexcept {
    return reinterpret_cast<std::atomic<std::uint64_t>*>(base_ + g_.owners_offset) + block;
  }
  [[nodiscard]] std::byte* block(std::uint64_t block) const noexcept {
    return base_ + g_.blocks_offset + block * g_.block_size;
  }

  // Takes a free block below limit (the blocks this process has committed,
  // RpcBlockPool) for client (tag client + 1); kNoBlock when none is free.
  // Lowest index first: the pool's pages that are ever touched are those of
  // the most blocks held at once (a server made for 1 MiB calls that serves
  // small ones never touches its pool), and a client reuses the same,
  // cache-warm blocks.
  [[nodiscard]] std::uint32_t acquire_block(std::uint32_t client, std::uint64_t limit) const noexcept {
    const std::uint64_t n = limit < g_.block_count ? limit : g_.block_count;
    for (std::uint64_t b = 0; b < n; ++b) {
      std::uint64_t expected = 0;
      // relaxed pre-check: only a filter before the CAS.
      if (block_owner(b)->load(std::memory_order_relaxed) != 0) continue;
      // acquire: pairs with the release store in release_block, so the
      // previous holder's accesses to the block happen before ours.
      if (block_owner(b)->compare_exchange_strong(expected, client + 1u, std::memory_order_acquire,
                                                  std::memory_order_relaxed)) {
        return static_cast<std::uint32_t>(b);
      }
    }
    return layout::kNoBlock;
  }
  // Gives a block back if client holds it (a scribbled index is ignored).
  void release_block(std::uint32_t block, std::uint32_t client) const noexcept {
    if (block >= g_.block_count) return;
    std::uint64_t expected = client + 1u;
    // release: our reads/writes of the block happen before the next holder's.
    block_owner(block)->compare_exchange_strong(expected, 0, std::memory_order_release, std::memory_order_relaxed);
  }

 private:
  std::byte* base_ = nullptr;
  layout::RpcGeometry g_{};
};

// Reads the geometry from validated segment params; false if inconsistent
// with the mapped payload size.
bool rpc_geometry_from_params(const std::array<std::uint64_t, 8>& params, std::size_t payload_size,
                              layout::RpcGeometry* g) noexcept;

// This process's servers by segment path, Segment::path_for (src/rpc/rpc_local.cpp),
// so equal names in two name spaces stay apart: a client of a server
// in its own process shares the server's mapping.
void rpc_register_local(std::string_view name, const std::shared_ptr<Segment>& segment);
void rpc_unregister_local(std::string_view name, const Segment* segment) noexcept;
std::shared_ptr<Segment> rpc_find_local(std::string_view name) noexcept;

// Liveness of a packed ProcessId word.
bool rpc_alive(std::uint64_t packed) noexcept;

}  // namespace zipc::detail
