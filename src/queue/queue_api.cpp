// zipc::Queue public API glue: the copy calls, batches and control. Each
// call picks its ring once (rings.hpp) and runs the body compiled for it.
#include <algorithm>
#include <cstring>
#include <utility>

#include "queue/queue_wait.hpp"
#include "queue/rings.hpp"
#include "zipc/queue.hpp"

namespace zipc {

using detail::on_ring;
using detail::QueueImpl;

// ---------------------------------------------------------------- copy API

Status Queue::try_send(std::span<const std::byte> msg) noexcept {
  return send(msg, Timeout::zero());
}

Status Queue::send(std::span<const std::byte> msg, Timeout timeout) noexcept {
  if (!impl_) [[unlikely]]
    return Status::detached;
  QueueImpl& q = *impl_;
  ZIPC_USE_CHECK(q.use, Status::busy);
  if (msg.size() > q.block) [[unlikely]]
    return q.send_big(msg, timeout);
  return on_ring(q, [&](auto ring) noexcept -> Status {
    using Ring = decltype(ring);
    std::uint64_t pos = 0, n = 0;
    std::optional<Deadline> d;
    const Status st = q.reserve_wait<Ring>(1, &pos, &n, timeout, &d);
    if (st != Status::ok) return st;
    if (!msg.empty()) std::memcpy(q.cell_data(pos), msg.data(), msg.size());
    Ring::commit(q, pos, static_cast<std::uint32_t>(msg.size()));
    Ring::publish(q, 1);
    return Status::ok;
  });
}

IoResult Queue::try_recv(std::span<std::byte> out) noexcept {
  return recv(out, Timeout::zero());
}

IoResult Queue::recv(std::span<std::byte> out, Timeout timeout) noexcept {
  if (!impl_) [[unlikely]]
    return {Status::detached, 0};
  QueueImpl& q = *impl_;
  ZIPC_USE_CHECK(q.use, (IoResult{Status::busy, 0}));
  return on_ring(q, [&](auto ring) noexcept -> IoResult {
    using Ring = decltype(ring);
    std::uint64_t pos = 0;
    std::size_t n = 0, first = 0;
    std::optional<Deadline> d;
    Status st = q.acquire_wait<Ring>(&pos, 1, &n, out.size(), &first, timeout, &d);
    if (st == Status::too_large) return {st, first};
    if (st != Status::ok) return {st, 0};
    if (Ring::kOversize && q.ov != nullptr) [[unlikely]] {
      for (;;) {
        const std::byte* data = nullptr;
        std::size_t len = 0;
        std::uint64_t off = 0;
        const QueueImpl::View v = q.view(pos, &data, &len, &off);
        if (v == QueueImpl::View::small) break;
        if (v == QueueImpl::View::big && len <= out.size()) {
          std::memcpy(out.data(), data, len);
          q.big_release(pos, off);
          return {Status::ok, len};
        }
        Ring::release(q, pos, false);  // scribbled, or handed back by a consumer that died releasing it
        Ring::released(q, 0);
        if (v != QueueImpl::View::moved) return {Status::corrupt, 0};
        st = q.acquire_wait<Ring>(&pos, 1, &n, out.size(), &first, timeout, &d);
        if (st == Status::too_large) return {st, first};
        if (st != Status::ok) return {st, 0};
      }
    }
    const std::size_t sz = Ring::acquired_size(q, pos);
    if (sz > q.block || sz > out.size()) {  // scribbled after the size check: drop it
      Ring::release(q, pos, false);
      Ring::released(q, 0);
      return {Status::corrupt, 0};
    }
    if (sz) std::memcpy(out.data(), q.cell_data(pos), sz);
    Ring::release(q, pos, true);
    Ring::released(q, 1);
    return {Status::ok, sz};
  });
}

std::size_t Queue::send_batch(std::span<const std::span<const std::byte>> msgs, Timeout timeout,
                              Status* status) noexcept {
  if (!impl_) [[unlikely]] {
    if (status) *status = Status::detached;
    return 0;
  }
  QueueImpl& q = *impl_;
  return on_ring(q, [&](auto ring) noexcept -> std::size_t {
    using Ring = decltype(ring);
    std::optional<Deadline> d;
    std::size_t done = 0;
    Status st = Status::ok;
    while (done < msgs.size()) {
      std::size_t run = 0;
      while (done + run < msgs.size() && run < QueueImpl::kChunk && msgs[done + run].size() <= q.block) ++run;
      if (run == 0) {
        st = q.send_big(msgs[done], timeout);  // too_large without an oversize region
        if (st != Status::ok) break;
        ++done;
        continue;
      }
      std::uint64_t first = 0, n = 0;
      st = q.reserve_wait<Ring>(run, &first, &n, timeout, &d);
      if (st != Status::ok) break;
      for (std::uint64_t i = 0; i < n; ++i) {
        const auto& m = msgs[done + i];
        if (!m.empty()) std::memcpy(q.cell_data(first + i), m.data(), m.size());
        Ring::commit(q, first + i, static_cast<std::uint32_t>(m.size()));
      }
      Ring::publish(q, n);
      done += n;
    }
    if (status) *status = done == msgs.size() ? Status::ok : st;
    return done;
  });
}

std::size_t Queue::recv_batch_impl(std::size_t max, Timeout timeout, BatchFn fn, void* ctx, Status* status) noexcept {
  if (!impl_) [[unlikely]] {
    if (status) *status = Status::detached;
    return 0;
  }
  QueueImpl& q = *impl_;
  return on_ring(q, [&](auto ring) noexcept -> std::size_t {
    using Ring = decltype(ring);
    std::optional<Deadline> d;
    std::size_t total = 0;
    Status st = Status::ok;
    std::uint64_t pos[QueueImpl::kChunk];
    while (total < max) {
      std::size_t n = 0, first = 0;
      st = q.acquire_wait<Ring>(pos, std::min(max - total, QueueImpl::kChunk), &n, static_cast<std::size_t>(-1), &first,
                                timeout, &d);
      if (st != Status::ok) break;
      std::size_t good = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (Ring::kOversize && q.ov != nullptr) [[unlikely]] {
          const std::byte* data = nullptr;
          std::size_t len = 0;
          std::uint64_t off = 0;
          const QueueImpl::View v = q.view(pos[i], &data, &len, &off);
          if (v == QueueImpl::View::big) {
            fn(ctx, {data, len});
            q.big_release(pos[i], off);
            ++total;  // (big_release counted and woke for it)
            continue;
          }
          if (v != QueueImpl::View::small) {
            if (v == QueueImpl::View::corrupt) st = Status::corrupt;
            Ring::release(q, pos[i], false);
            continue;
          }
        }
        const std::size_t sz = Ring::acquired_size(q, pos[i]);
        if (sz <= q.block) {
          fn(ctx, {q.cell_data(pos[i]), sz});
          ++good;
        } else {
          st = Status::corrupt;
        }
        Ring::release(q, pos[i], sz <= q.block);
      }
      Ring::released(q, good);
      total += good;
      timeout = Timeout::zero();  // only the first chunk waits
    }
    if (status) *status = total > 0 ? Status::ok : st;
    return total;
  });
}

// ---------------------------------------------------------------- control

void Queue::close() noexcept {
  if (!impl_) [[unlikely]]
    return;
  // seq_cst: pairs with readers of closed, and is the closer's half of the
  // Dekker pairs of try_reserve / the drained checks; notify_all's fence
  // then wakes sleepers.
  impl_->ctl->closed.store(1, std::memory_order_seq_cst);
  impl_->ctl->not_empty.notify_all();
  impl_->ctl->not_full.notify_all();
}

void Queue::detach() noexcept {
  Queue gone(std::move(*this));  // its destructor lets go of the record and the mapping
}

bool Queue::closed() const noexcept {
  return impl_ == nullptr || impl_->is_closed();  // a detached handle can do nothing more
}

QueueStats Queue::stats() const noexcept {
  if (!impl_) [[unlikely]]
    return {};
  const QueueImpl& q = *impl_;
  QueueStats s;
  for (std::uint32_t i = 0; i < q.max_participants; ++i) {
    const auto& r = q.recs[i];
    // relaxed: statistics read while others count; each value is some recent value.
    if (r.pid.load(std::memory_order_relaxed) == 0) continue;
    s.sent += r.sent.load(std::memory_order_relaxed);
    s.received += r.received.load(std::memory_order_relaxed);
    s.full_waits += r.full_waits.load(std::memory_order_relaxed);
    s.empty_waits += r.empty_waits.load(std::memory_order_relaxed);
  }
  s.sent += q.ctl->retired_sent.load(std::memory_order_relaxed);  // relaxed: statistics
  s.received += q.ctl->retired_received.load(std::memory_order_relaxed);
  s.full_waits += q.ctl->retired_full_waits.load(std::memory_order_relaxed);
  s.empty_waits += q.ctl->retired_empty_waits.load(std::memory_order_relaxed);
  s.redelivered = q.ctl->redelivered.load(std::memory_order_relaxed);
  s.abandoned = q.ctl->abandoned.load(std::memory_order_relaxed);
  if (q.ov != nullptr) {
    const HeapStats h = detail::tlsf_stats(q.ov_arena);
    s.oversize_bytes = q.ov_arena.size;
    s.oversize_free_bytes = h.free_bytes;
    s.oversize_live = h.allocated_blocks;
    s.oversize_reclaimed = q.ov->reclaimed.load(std::memory_order_relaxed);  // relaxed: statistics
  }
  return s;
}

// A detached handle (docs/guide/handles.md): nothing recovered, zero sizes, an
// empty segment.
std::size_t Queue::recover() noexcept {
  return impl_ ? impl_->recover() : 0;
}
std::size_t Queue::block_size() const noexcept {
  return impl_ ? impl_->block : 0;
}
std::size_t Queue::block_count() const noexcept {
  return impl_ ? impl_->cap : 0;
}
std::size_t Queue::oversize_bytes() const noexcept {
  return impl_ ? impl_->ov_arena.size : 0;
}
std::size_t Queue::size_approx() const noexcept {
  if (!impl_) return 0;
  // relaxed: an estimate.
  const std::uint64_t t = impl_->ctl->tail.load(std::memory_order_relaxed);
  const std::uint64_t h = impl_->ctl->head.load(std::memory_order_relaxed);
  return t > h ? std::min<std::uint64_t>(t - h, impl_->cap) : 0;
}
Multiplicity Queue::producers() const noexcept {
  return !impl_ || impl_->multi_producer ? Multiplicity::multi : Multiplicity::single;
}
Multiplicity Queue::consumers() const noexcept {
  return !impl_ || impl_->multi_consumer ? Multiplicity::multi : Multiplicity::single;
}
const Segment& Queue::segment() const noexcept {
  static const Segment none;
  return impl_ ? impl_->seg : none;
}

namespace detail {

bool QueueImpl::can_produce() const noexcept {
  return on_ring(*this, [&](auto ring) noexcept { return decltype(ring)::can_produce(*this); });
}

bool QueueImpl::can_consume() const noexcept {
  return on_ring(*this, [&](auto ring) noexcept { return decltype(ring)::can_consume(*this); });
}

}  // namespace detail

}  // namespace zipc
