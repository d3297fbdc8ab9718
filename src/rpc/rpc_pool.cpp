// RpcBlockPool: commits the Rpc block pool on demand (fallocate, then the
// watermark CAS) and checks every block index before this process touches it.
#include "rpc/rpc_pool.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "layout/rpc_layout.hpp"
#include "layout/segment_header.hpp"
#include "platform/clock.hpp"
#include "platform/file.hpp"
#include "segment/segment_space.hpp"
#include "zipc/log.hpp"

namespace zipc::detail {
namespace {

// After a failed growth (a full file system), the next attempt waits this
// long: a call that retries for a block until its deadline must not spin on
// fallocate (which may allocate and free megabytes each time).
constexpr std::uint64_t kRetryAfterFailureNs = 10'000'000;

}  // namespace

RpcBlockPool::~RpcBlockPool() {
  if (own_fd_ >= 0) platform::close_fd(own_fd_);
}

void RpcBlockPool::attach(const Segment* segment, const RpcView& view, std::string label) {
  segment_ = segment;
  view_ = view;
  label_ = std::move(label);
  // Create's room check covered these: trusted like the rest of the fixed part.
  // relaxed: before the pool is shared with any other thread.
  committed_.store(static_cast<std::uint32_t>(layout::rpc_initial_blocks(view.geometry())), std::memory_order_relaxed);
}

std::uint32_t RpcBlockPool::committed() const noexcept {
  // acquire: pairs with the release store in commit_more: the range's
  // fallocate returned before.
  return committed_.load(std::memory_order_acquire);
}

std::uint32_t RpcBlockPool::acquire(std::uint32_t client, bool grow) noexcept {
  for (;;) {
    const std::uint32_t have = committed();
    const std::uint32_t b = view_.acquire_block(client, have);
    if (b != layout::kNoBlock || !grow) return b;
    // Terminates: each success raises committed(), bounded by block_count.
    if (!commit_more(have, /*beyond_shared=*/true)) return layout::kNoBlock;
  }
}

bool RpcBlockPool::usable(std::uint32_t block) noexcept {
  if (block >= view_.geometry().block_count) return false;
  for (;;) {
    const std::uint32_t have = committed();
    if (block < have) return true;
    // Named by another process: the shared watermark must cover it, and we
    // commit the range ourselves before the first touch.
    if (!commit_more(have, /*beyond_shared=*/false)) return false;
  }
}

bool RpcBlockPool::commit_more(std::uint32_t seen, bool beyond_shared) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  // relaxed: written only under mutex_, which we hold.
  const std::uint32_t have = committed_.load(std::memory_order_relaxed);
  if (have > seen) return true;  // another thread of ours committed meanwhile
  const layout::RpcGeometry& g = view_.geometry();
  const auto n = static_cast<std::uint32_t>(g.block_count);
  auto& watermark = view_.control()->blocks_committed;
  // acquire: pairs with the release CAS below in the process that raised it
  // (its fallocate returned first). Clamped: the word is hostile input.
  const std::uint32_t shared = std::min(watermark.load(std::memory_order_acquire), n);
  std::uint32_t target = shared;
  const bool doubling = target <= have;
  const std::uint64_t now = platform::monotonic_ns();
  if (doubling) {
    if (!beyond_shared || have >= n || now < retry_ns_) return false;
    target = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, std::max<std::uint64_t>(2ull * have, have + 1ull)));
  }
  const int fd = file();
  const std::uint64_t base = static_cast<std::uint64_t>(segment_->payload() - segment_->base());
  const auto allocate = [&](std::uint32_t to) {
    if (fd < 0) return fd;
    return platform::allocate_fd(fd, base + layout::rpc_committed_bytes(g, have),
                                 std::uint64_t{to - have} * g.block_size);
  };
  int r = allocate(target);
  if ((r == -ENOSPC || r == -ENOMEM) && doubling && target > have + 1) {
    target = have + 1;  // the doubling does not fit: one block may
    r = allocate(target);
  }
  if (r != 0 && r != -EOPNOTSUPP) {  // (EOPNOTSUPP: a file system without fallocate; pages come at first touch)
    warn(have, target, r);
    if (doubling) retry_ns_ = now + kRetryAfterFailureNs;
    return false;
  }
  // Only upwards: a racing grower's higher mark stands (its range and ours
  // are both committed, and everything below them was before).
  std::uint32_t cur = watermark.load(std::memory_order_relaxed);  // relaxed: the CAS below orders
  // release: publishes that [0, target) has memory (our fallocate returned
  // before); pairs with the acquire load above in other processes.
  while (cur < target &&
         !watermark.compare_exchange_weak(cur, target, std::memory_order_release, std::memory_order_relaxed)) {
  }
  // release: pairs with the acquire load in committed() (this process's threads).
  committed_.store(target, std::memory_order_release);
  warned_ = false;
  return true;
}

int RpcBlockPool::file() noexcept {
  if (segment_->fd() >= 0) return segment_->fd();  // memfd, fd-passed or path-backed: kept open
  if (own_fd_ >= 0) return own_fd_;
  // /dev/shm: the segment closed its descriptor after mmap. Open the name
  // again, once, and make sure it is still our file (a successor server may
  // have replaced it): its header must equal our mapping's.
  const int fd = platform::open_file(segment_->path(), O_RDWR, 0);
  if (fd < 0) return fd;
  constexpr std::size_t kIdentity = offsetof(layout::SegmentHeader, init_state);
  unsigned char head[kIdentity];
  if (platform::read_at(fd, head, kIdentity, 0) != static_cast<long>(kIdentity) ||
      std::memcmp(head, segment_->base(), kIdentity) != 0) {
    platform::close_fd(fd);
    return -ESTALE;
  }
  own_fd_ = fd;
  return fd;
}

void RpcBlockPool::warn(std::uint32_t from, std::uint32_t to, int err) noexcept {
  if (warned_) return;
  warned_ = true;
  try {
    const layout::RpcGeometry& g = view_.geometry();
    const std::uint64_t asked = std::uint64_t{to - from} * g.block_size;
    std::string text = "cannot grow the large-message pool from " + std::to_string(from) + " to " + std::to_string(to) +
                       " blocks of " + size_text(g.block_size) + ": ";
    platform::SpaceInfo space;
    const int fd = segment_->fd() >= 0 ? segment_->fd() : own_fd_;
    if ((err == -ENOSPC || err == -ENOMEM) && fd >= 0 && platform::space_of(fd, &space) == 0 && space.total != 0) {
      const std::string& path = segment_->path();
      const std::string where = path.rfind('/', 0) == 0 ? space_label(path, false) : "its file system";
      text += "needs " + size_text(asked) + ", " + where + " has " + size_text(space.free) + " free";
    } else {
      text += "needs " + size_text(asked) + ": " + platform::error_text(-err);
    }
    log_message(LogLevel::warn, label_, text + " (calls over inline_size fail with full)");
  } catch (...) {
    // (std::bad_alloc building the text): the call still fails with full.
  }
}

}  // namespace zipc::detail
