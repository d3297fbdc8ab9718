// zipc::Queue loans: reserve/commit/abort and acquire/release, one and in
// batches. Each call picks its ring once (rings.hpp).
#include <algorithm>
#include <utility>

#include "platform/cpu.hpp"
#include "queue/queue_wait.hpp"
#include "queue/rings.hpp"
#include "zipc/queue.hpp"

namespace zipc {

using detail::on_ring;
using detail::QueueImpl;

// ---------------------------------------------------------------- loans

// reserve() and acquire() return one named loan from every path, so it is
// built in the caller's slot (NRVO): no move, no destruction of a temporary.
QueueWriteLoan Queue::reserve(Timeout timeout) noexcept {
  if (!impl_) [[unlikely]]
    return QueueWriteLoan(Status::detached);
  QueueImpl& q = *impl_;
  ZIPC_USE_CHECK(q.use, QueueWriteLoan(Status::busy));
  return on_ring(q, [&](auto ring) noexcept -> QueueWriteLoan {
    using Ring = decltype(ring);
    std::uint64_t pos = 0, n = 0;
    std::optional<Deadline> d;
    QueueWriteLoan l;
    l.status_ = q.reserve_wait<Ring>(1, &pos, &n, timeout, &d);
    if (l.status_ != Status::ok) return l;
    l.impl_ = &q;
    ++q.refs;  // the loan keeps q (docs/guide/handles.md)
    l.data_ = q.cell_data(pos);
    l.capacity_ = q.block;
    l.pos_ = pos;
    return l;
  });
}

std::size_t Queue::reserve_batch(std::span<QueueWriteLoan> out, Timeout timeout, Status* status) noexcept {
  if (!impl_) [[unlikely]] {
    if (status) *status = Status::detached;
    return 0;
  }
  QueueImpl& q = *impl_;
  return on_ring(q, [&](auto ring) noexcept -> std::size_t {
    using Ring = decltype(ring);
    std::uint64_t first = 0, n = 0;
    std::optional<Deadline> d;
    const Status st = out.empty() ? Status::ok : q.reserve_wait<Ring>(out.size(), &first, &n, timeout, &d);
    if (status) *status = st;
    if (st != Status::ok) return 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      QueueWriteLoan l;
      l.impl_ = &q;
      ++q.refs;  // the loan keeps q (docs/guide/handles.md)
      l.data_ = q.cell_data(first + i);
      l.capacity_ = q.block;
      l.pos_ = first + i;
      out[i] = std::move(l);
    }
    return n;
  });
}

QueueReadLoan Queue::acquire(Timeout timeout) noexcept {
  if (!impl_) [[unlikely]]
    return QueueReadLoan(Status::detached);
  QueueImpl& q = *impl_;
  ZIPC_USE_CHECK(q.use, QueueReadLoan(Status::busy));
  return on_ring(q, [&](auto ring) noexcept -> QueueReadLoan {
    using Ring = decltype(ring);
    std::uint64_t pos = 0;
    std::size_t n = 0, first = 0;
    std::optional<Deadline> d;
    QueueReadLoan l;
    l.status_ = q.acquire_wait<Ring>(&pos, 1, &n, static_cast<std::size_t>(-1), &first, timeout, &d);
    if (l.status_ != Status::ok) return l;
    if (Ring::kOversize && q.ov != nullptr) [[unlikely]] {
      const std::byte* data = nullptr;
      std::size_t len = 0;
      std::uint64_t big = 0;
      while (!q.big_loan(pos, l, &data, &len, &big)) {
        l.status_ = q.acquire_wait<Ring>(&pos, 1, &n, static_cast<std::size_t>(-1), &first, timeout, &d);
        if (l.status_ != Status::ok) return l;
      }
      if (data == nullptr) return l;
      l.impl_ = &q;
      ++q.refs;  // the loan keeps q (docs/guide/handles.md)
      l.data_ = data;
      l.size_ = len;
      l.pos_ = pos;
      l.big_ = big;
      return l;
    }
    const std::size_t sz = Ring::acquired_size(q, pos);
    if (sz > q.block) {
      Ring::release(q, pos, false);
      Ring::released(q, 0);
      l.status_ = Status::corrupt;
      return l;
    }
    l.impl_ = &q;
    ++q.refs;  // the loan keeps q (docs/guide/handles.md)
    l.data_ = q.cell_data(pos);
    l.size_ = sz;
    l.pos_ = pos;
    return l;
  });
}

std::size_t Queue::acquire_batch(std::span<QueueReadLoan> out, Timeout timeout, Status* status) noexcept {
  if (!impl_) [[unlikely]] {
    if (status) *status = Status::detached;
    return 0;
  }
  QueueImpl& q = *impl_;
  return on_ring(q, [&](auto ring) noexcept -> std::size_t {
    using Ring = decltype(ring);
    std::uint64_t pos[QueueImpl::kChunk];
    std::size_t n = 0, first = 0;
    std::optional<Deadline> d;
    const Status st = out.empty() ? Status::ok
                                  : q.acquire_wait<Ring>(pos, std::min(out.size(), QueueImpl::kChunk), &n,
                                                         static_cast<std::size_t>(-1), &first, timeout, &d);
    if (status) *status = st;
    if (st != Status::ok) return 0;
    std::size_t got = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (Ring::kOversize && q.ov != nullptr) [[unlikely]] {
        QueueReadLoan l;
        const std::byte* data = nullptr;
        std::size_t len = 0;
        std::uint64_t big = 0;
        if (!q.big_loan(pos[i], l, &data, &len, &big)) continue;
        if (data == nullptr) {
          if (status) *status = Status::corrupt;
          continue;
        }
        l.impl_ = &q;
        ++q.refs;  // the loan keeps q (docs/guide/handles.md)
        l.data_ = data;
        l.size_ = len;
        l.pos_ = pos[i];
        l.big_ = big;
        out[got++] = std::move(l);
        continue;
      }
      const std::size_t sz = Ring::acquired_size(q, pos[i]);
      if (sz > q.block) {
        Ring::release(q, pos[i], false);
        Ring::released(q, 0);
        if (status) *status = Status::corrupt;
        continue;
      }
      QueueReadLoan l;
      l.impl_ = &q;
      ++q.refs;  // the loan keeps q (docs/guide/handles.md)
      l.data_ = q.cell_data(pos[i]);
      l.size_ = sz;
      l.pos_ = pos[i];
      out[got++] = std::move(l);
    }
    return got;
  });
}

QueueWriteLoan::QueueWriteLoan(QueueWriteLoan&& o) noexcept {
  *this = std::move(o);
}
QueueWriteLoan& QueueWriteLoan::operator=(QueueWriteLoan&& o) noexcept {
  if (this != &o) {
    if (impl_ != nullptr) abort();
    // Field by field, every one (see platform::keep_apart): reserve() just
    // filled o, and commit() reads big_ right after the caller's payload
    // stores. Merged into one 16-byte copy, pos_ and big_ cost a 64 B
    // ping-pong with the loan kept in a member 340 ns instead of 210.
    impl_ = std::exchange(o.impl_, nullptr);
    platform::keep_apart();
    data_ = o.data_;
    platform::keep_apart();
    capacity_ = o.capacity_;
    platform::keep_apart();
    pos_ = o.pos_;
    platform::keep_apart();
    big_ = o.big_;
    platform::keep_apart();
    status_ = o.status_;
  }
  return *this;
}

// Only this file ends write loans: inline here (a call per commit otherwise).
inline void QueueWriteLoan::end() noexcept {
  impl_ = nullptr;
  data_ = nullptr;  // data() is empty once the loan ended
  capacity_ = 0;
}

CommitResult QueueWriteLoan::commit(std::size_t n) noexcept {
  // No loan held (ended, moved from, default): detached; a failed reserve: its reason.
  if (!impl_) return {status_ == Status::ok ? Status::detached : status_, 0};
  if (n > capacity_) return {Status::too_large, 0};
  QueueImpl& q = *impl_;
  {
    ZIPC_USE_CHECK(q.use, (CommitResult{Status::busy, 0}));  // (debug builds; ends before q may go)
    if (big_ != 0) [[unlikely]] {
      q.big_commit(pos_, n);
      detail::VyukovRing::publish(q, 1);  // an oversize region runs the Vyukov ring
    } else {
      on_ring(q, [&](auto ring) noexcept {
        using Ring = decltype(ring);
        Ring::commit(q, pos_, static_cast<std::uint32_t>(n));
        Ring::publish(q, 1);
      });
    }
  }
  end();
  detail::queue_drop(q);
  return {Status::ok, pos_};
}

void QueueWriteLoan::abort() noexcept {
  if (!impl_) return;
  QueueImpl& q = *impl_;
  if (big_ != 0) [[unlikely]] {
    q.big_abort(pos_, big_ - 1);
  } else {
    on_ring(q, [&](auto ring) noexcept {
      using Ring = decltype(ring);
      Ring::abort(q, pos_);
      Ring::publish(q, 0);
    });
  }
  end();
  detail::queue_drop(q);
}

QueueReadLoan::QueueReadLoan(QueueReadLoan&& o) noexcept {
  *this = std::move(o);
}
QueueReadLoan& QueueReadLoan::operator=(QueueReadLoan&& o) noexcept {
  if (this != &o) {
    if (impl_ != nullptr) release();
    // Field by field, every one: acquire() just filled o (see platform::keep_apart).
    impl_ = std::exchange(o.impl_, nullptr);
    platform::keep_apart();
    data_ = o.data_;
    platform::keep_apart();
    size_ = o.size_;
    platform::keep_apart();
    pos_ = o.pos_;
    platform::keep_apart();
    big_ = o.big_;
    platform::keep_apart();
    status_ = o.status_;
  }
  return *this;
}

void QueueReadLoan::release() noexcept {
  if (!impl_) return;
  QueueImpl& q = *impl_;
  if (big_ != 0) [[unlikely]] {
    q.big_release(pos_, big_ - 1);
  } else {
    on_ring(q, [&](auto ring) noexcept {
      using Ring = decltype(ring);
      Ring::release(q, pos_, true);
      Ring::released(q, 1);
    });
  }
  impl_ = nullptr;
  data_ = nullptr;  // data() is empty once the loan ended
  size_ = 0;
  detail::queue_drop(q);
}

}  // namespace zipc
