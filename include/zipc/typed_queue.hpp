/// \file
/// zipc/typed_queue.hpp - a Queue whose messages are Ts (or slices of Ts).
///
/// Part of zipc/typed.hpp (include that; the example is there).
#pragma once

#include <chrono>
#include <cstring>
#include <span>
#include <string_view>

#include "zipc/queue.hpp"
#include "zipc/typed_loan.hpp"

namespace zipc {

namespace detail {
inline std::span<std::byte> write_bytes(const QueueWriteLoan& l) noexcept {
  return l.data();
}
}  // namespace detail

template <class T>
/// A Queue whose messages are Ts (see zipc/typed.hpp): T's identity is recorded at create and checked at open; every
/// send and receive moves whole Ts.
class TypedQueue {
  static_assert(detail::check_message_type<T>(), "T must be a message type (the rule that failed is named above)");

 public:
  /// As Queue::Timeout.
  using Timeout = Queue::Timeout;
  /// A loan of Ts in a block (TypedWriteLoan over a QueueWriteLoan).
  using WriteLoan = TypedWriteLoan<T, zipc::QueueWriteLoan>;
  /// Ts read in place (TypedRead over a QueueReadLoan).
  using ReadLoan = TypedRead<T, zipc::QueueReadLoan>;

  /// As Queue::create; block_size is raised to hold one T when smaller (a
  /// slice may hold block_size / sizeof(T) elements). Records T's identity.
  static TypedQueue create(std::string_view name, QueueOptions options = {}, Role role = Role::both) {
    return TypedQueue(Queue::create(name, typed_options(std::move(options)), role));
  }
  /// Errc::type_mismatch when the queue holds another type (or none).
  static TypedQueue open(std::string_view name, Role role = Role::both, const WaitOptions& wait = {},
                         SegmentOptions segment = {}) {
    segment.type = type_identity_of<T>();
    return TypedQueue(Queue::open(name, role, wait, segment));
  }
  /// As Queue::open_or_create, with create's block_size rule; opening checks T's identity.
  static TypedQueue open_or_create(std::string_view name, QueueOptions options = {}, Role role = Role::both,
                                   bool* created = nullptr) {
    return TypedQueue(Queue::open_or_create(name, typed_options(std::move(options)), role, created));
  }
  /// As Queue::remove.
  static bool remove(std::string_view name, const SegmentOptions& segment = {}) { return Queue::remove(name, segment); }

  TypedQueue() = default;

  /// Copies one T (or a slice) in.
  [[nodiscard]] Status try_send(const T& v) noexcept { return queue_.try_send(std::as_bytes(std::span(&v, 1))); }
  /// Copies one T in, waiting up to timeout for room (as Queue::send).
  [[nodiscard]] Status send(const T& v, Timeout timeout) noexcept {
    return queue_.send(std::as_bytes(std::span(&v, 1)), timeout);
  }
  /// Copies the Ts of v in as one message (too_large over block_size()).
  [[nodiscard]] Status send_slice(std::span<const T> v, Timeout timeout) noexcept {
    return queue_.send(std::as_bytes(v), timeout);
  }
  /// Copies one T out; a message that is not exactly one T is consumed and
  /// reported as corrupt.
  [[nodiscard]] Status recv(T& out, Timeout timeout) noexcept {
    ReadLoan in = acquire(timeout);
    if (in) std::memcpy(static_cast<void*>(&out), in.get(), sizeof(T));
    return in.status();
  }
  /// recv without waiting (empty when there is nothing).
  [[nodiscard]] Status try_recv(T& out) noexcept { return recv(out, Timeout::zero()); }

  /// Zero copy: one T, value-initialised in the block: loan->x = ...; loan.commit().
  [[nodiscard]] WriteLoan reserve(Timeout timeout) noexcept { return reserve_slice(1, timeout); }
  /// reserve without waiting (full when there is no room).
  [[nodiscard]] WriteLoan try_reserve() noexcept { return reserve_slice(1, Timeout::zero()); }
  /// n Ts (too_large when n * sizeof(T) > block_size()).
  [[nodiscard]] WriteLoan reserve_slice(std::size_t n, Timeout timeout) noexcept {
    if (!queue_.is_attached()) return WriteLoan(Status::detached);
    if (n > queue_.block_size() / sizeof(T)) return WriteLoan(Status::too_large);
    zipc::QueueWriteLoan raw = queue_.reserve(timeout);
    const std::span<std::byte> bytes = detail::write_bytes(raw);
    return WriteLoan(std::move(raw), bytes, n);
  }
  /// One T in place (corrupt when the message is not exactly one T).
  [[nodiscard]] ReadLoan acquire(Timeout timeout) noexcept { return take(timeout, true); }
  /// acquire without waiting (empty when there is nothing).
  [[nodiscard]] ReadLoan try_acquire() noexcept { return take(Timeout::zero(), true); }
  /// Any number of Ts in place (span()).
  [[nodiscard]] ReadLoan acquire_slice(Timeout timeout) noexcept { return take(timeout, false); }

  /// The most Ts one message holds (block_size / sizeof(T)).
  [[nodiscard]] std::size_t max_slice() const noexcept { return queue_.block_size() / sizeof(T); }
  [[nodiscard]] Queue& bytes() noexcept { return queue_; }  ///< the byte API under it
  /// The byte API under it.
  [[nodiscard]] const Queue& bytes() const noexcept { return queue_; }
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_open() const noexcept { return queue_.is_attached(); }
  /// As Queue::close.
  void close() noexcept { queue_.close(); }

 private:
  explicit TypedQueue(Queue q) noexcept : queue_(std::move(q)) {}
  static QueueOptions typed_options(QueueOptions o) {
    const std::size_t need = (sizeof(T) + 7) / 8 * 8;
    if (o.block_size < need) o.block_size = need;
    o.segment.type = type_identity_of<T>();
    return o;
  }
  ReadLoan take(Timeout timeout, bool single) noexcept {
    zipc::QueueReadLoan raw = queue_.acquire(timeout);
    const Status s = raw ? Status::ok : raw.status();
    const std::span<const std::byte> b = raw.data();
    return ReadLoan(std::move(raw), b, s, single);
  }

  Queue queue_;
};

}  // namespace zipc
