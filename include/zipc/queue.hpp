/// \file
/// zipc/queue.hpp - a many-producer, many-consumer FIFO of blocks across processes.
///
/// \code
///   #include <array>
///   zipc::QueueOptions opt;
///   opt.block_size = 256;  // largest message, bytes (multiple of 8)
///   opt.block_count = 64;  // blocks in the ring (power of two)
///   auto q = zipc::Queue::create("jobs-example", opt);
///   const char hello[] = "hello";
///   zipc::Status s = q.try_send(std::as_bytes(std::span(hello)));
///   std::array<std::byte, 256> buf;
///   zipc::IoResult r = q.recv(buf, std::chrono::milliseconds(100));  // r.size == 6
///   {
///     zipc::QueueWriteLoan loan = q.reserve(std::chrono::milliseconds(100));  // zero-copy
///     if (loan) {
///       std::memcpy(loan.data().data(), "abc", 3);
///       zipc::CommitResult c = loan.commit(3);  // c.sequence: the message's ring position
///       (void)c;
///     }
///   }
///   if (zipc::QueueReadLoan in = q.acquire(std::chrono::milliseconds(100))) {
///     (void)in.size();  // 3; the block returns to the ring when `in` is destroyed
///   }
///   zipc::QueueStats st = q.stats();  // sent == 2, received == 2
///   (void)s; (void)r; (void)st;
///   zipc::Queue::remove("jobs-example");
/// \endcode
///
/// One handle is one participant (a record in the segment): use a handle and
/// its loans from one thread at a time; open another handle per thread. A
/// detached, moved-from or default Queue answers every call with
/// Status::detached; a loan keeps what it needs of its handle until it ends
/// (docs/guide/handles.md). Timeouts: zipc::forever, 0 or negative tries once
/// (docs/guide/timeouts.md). Processes may die at any instruction: see docs/design/queue.md
/// for what survivors recover and how.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/options.hpp"
#include "zipc/segment.hpp"

namespace zipc {

/// What a handle does. On a single-producer queue a handle with the producer
/// role is exclusive (a second live one fails with Errc::busy); same for
/// consumers. Sending on a handle without the producer role (receiving
/// without the consumer role) returns Status::wrong_role.
enum class Role : std::uint8_t {
  none = 0,      ///< neither: only close(), stats(), recover() (e.g. a supervisor)
  producer = 1,  ///< sends and reserves
  consumer = 2,  ///< receives and acquires
  both = 3,      ///< both (the default)
};

/// A queue's geometry (stored in the segment at create) and this handle's settings.
struct QueueOptions {
  std::size_t block_size = 1024;                 ///< bytes per block: a multiple of 8 in [8, 16 MiB]
  std::size_t block_count = 1024;                ///< blocks in the ring: a power of two in [2, 2^24]
  Multiplicity producers = Multiplicity::multi;  ///< one producer handle at a time (single) or any number (multi)
  Multiplicity consumers = Multiplicity::multi;  ///< one consumer handle at a time (single) or any number (multi)
  std::uint32_t max_participants = 64;           ///< handles attached at once, [2, 65535]
  /// Bytes of a shared region for messages larger than block_size (0: none,
  /// such messages are too_large). Else at least 64 KiB; rounded up to 4096.
  /// A message over block_size is then stored in the region (zipc's TLSF heap)
  /// and its block carries offset and length: reserve(n) / send() of up to
  /// about this many bytes, read zero-copy. A queue with a region always runs
  /// the many-producer ring. See docs/guide/typed.md, "Payloads of any size".
  std::size_t oversize_bytes = 0;
  /// How long a survivor waits on a position held by a silent peer before it
  /// checks whether that peer died and recovers the position.
  /// Stored in the segment: the creator's value holds for everyone.
  std::chrono::milliseconds recovery_time = kDefaultRecoveryTime;
  WaitOptions wait{};        ///< this handle's waiting (not stored in the segment)
  SegmentOptions segment{};  ///< permissions (mode), file path, huge pages, ...
  /// open_or_create on an existing queue whose geometry (block_size,
  /// block_count, producers, consumers, max_participants, recovery_time,
  /// oversize_bytes)
  /// differs: false fails with Errc::options_mismatch naming both values;
  /// true attaches with the existing segment's geometry.
  bool accept_existing = false;
};

/// Counters readable from any process without locks. Each handle counts in its
/// own record line; stats() sums the records (plus those of detached handles).
struct QueueStats {
  std::uint64_t sent = 0;         ///< messages sent (copied, committed, or in batches)
  std::uint64_t received = 0;     ///< messages received or acquired
  std::uint64_t full_waits = 0;   ///< blocking sends that had to wait for room
  std::uint64_t empty_waits = 0;  ///< blocking receives that had to wait for data
  std::uint64_t redelivered = 0;  ///< messages taken back from consumers that died holding them
  std::uint64_t abandoned = 0;    ///< blocks reserved and never published: the producer died or leaked the loan
  // Oversize region (all zero without one):
  std::uint64_t oversize_bytes = 0;       ///< oversize region: arena bytes (0 without one)
  std::uint64_t oversize_free_bytes = 0;  ///< bytes in free blocks (block headers included)
  std::uint64_t oversize_live = 0;        ///< big payloads allocated now
  std::uint64_t oversize_reclaimed = 0;   ///< allocations of dead processes freed by recovery
};

/// Result of a copy receive: status ok with the message size, or the reason.
struct [[nodiscard]] IoResult {
  Status status = Status::empty;  ///< ok, or why nothing was received
  std::size_t size = 0;           ///< the message's size (with too_large: the size it needs)
  /// status == Status::ok.
  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
};

namespace detail {
struct QueueImpl;
}
class Queue;

/// A reserved block: fill data() (size() bytes) and commit(n). Destroyed
/// without commit, the reservation is aborted (never delivered). Once ended
/// (commit, abort), data() is empty and commit says Status::detached.
class QueueWriteLoan {
 public:
  QueueWriteLoan() = default;
  /// A loan that failed with s (what reserve returns when it cannot loan).
  explicit QueueWriteLoan(Status s) noexcept : status_(s) {}
  /// Moves the reservation; o is left empty.
  QueueWriteLoan(QueueWriteLoan&& o) noexcept;
  /// Aborts this loan's reservation (if any), then moves o's; o is left empty.
  QueueWriteLoan& operator=(QueueWriteLoan&& o) noexcept;
  QueueWriteLoan(const QueueWriteLoan&) = delete;
  QueueWriteLoan& operator=(const QueueWriteLoan&) = delete;
  ~QueueWriteLoan() {
    if (impl_ != nullptr) abort();  // (inline: a committed loan costs no call)
  }

  /// True while the loan holds a block (not failed, committed or aborted).
  [[nodiscard]] explicit operator bool() const noexcept { return impl_ != nullptr; }
  [[nodiscard]] Status status() const noexcept { return status_; }  ///< why reserve failed
  /// The block's memory (empty once the loan ended).
  [[nodiscard]] std::span<std::byte> data() const noexcept { return {data_, capacity_}; }
  /// Bytes available: block_size, or what reserve(n) asked for beyond it.
  [[nodiscard]] std::size_t size() const noexcept { return capacity_; }
  /// Publishes the first n bytes; sequence = the message's position in the
  /// ring. too_large (loan kept) if n > size().
  [[nodiscard]] CommitResult commit(std::size_t n) noexcept;
  /// Gives the block back unpublished (nothing when the loan holds none).
  void abort() noexcept;

 private:
  friend class Queue;
  void end() noexcept;  // the loan holds nothing (commit, abort)
  detail::QueueImpl* impl_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint64_t pos_ = 0;
  std::uint64_t big_ = 0;  // oversize region: payload arena offset + 1 (0: in the block)
  Status status_ = Status::ok;
};

/// An acquired message: read data() (size() bytes). Released when destroyed;
/// once released, data() is empty and release() does nothing.
class QueueReadLoan {
 public:
  QueueReadLoan() = default;
  /// A loan that failed with s (what acquire returns when there is no message).
  explicit QueueReadLoan(Status s) noexcept : status_(s) {}
  /// Moves the message; o is left empty.
  QueueReadLoan(QueueReadLoan&& o) noexcept;
  /// Releases this loan's message (if any), then moves o's; o is left empty.
  QueueReadLoan& operator=(QueueReadLoan&& o) noexcept;
  QueueReadLoan(const QueueReadLoan&) = delete;
  QueueReadLoan& operator=(const QueueReadLoan&) = delete;
  ~QueueReadLoan() {
    if (impl_ != nullptr) release();  // (inline: a released loan costs no call)
  }

  /// True while the loan holds a message.
  [[nodiscard]] explicit operator bool() const noexcept { return impl_ != nullptr; }
  [[nodiscard]] Status status() const noexcept { return status_; }  ///< why acquire failed
  /// The message (empty once released).
  [[nodiscard]] std::span<const std::byte> data() const noexcept { return {data_, size_}; }
  /// Its size in bytes.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The message's position in the ring (what its commit returned).
  [[nodiscard]] std::uint64_t sequence() const noexcept { return pos_; }
  /// Gives the block back to the ring now (the destructor does the same).
  void release() noexcept;

 private:
  friend class Queue;
  detail::QueueImpl* impl_ = nullptr;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t pos_ = 0;
  std::uint64_t big_ = 0;  // oversize region: payload arena offset + 1 (0: in the block)
  Status status_ = Status::ok;
};

namespace detail {
struct WaitHookAccess;
}

/// A many-producer, many-consumer FIFO of fixed-size blocks in shared memory (see the file overview): copy or
/// zero-copy, blocking or not, with recovery of what a dead participant held. One handle is one participant.
class Queue {
 public:
  /// zipc::forever waits without a deadline; 0 or negative tries once and
  /// says empty/full; an expired positive wait says timeout (docs/guide/timeouts.md).
  using Timeout = std::chrono::nanoseconds;

  /// Creates a new queue; Errc::already_exists if the name is taken,
  /// Errc::invalid_argument for options out of range.
  static Queue create(std::string_view name, const QueueOptions& options, Role role = Role::both);
  /// Opens an existing queue (its geometry comes from the segment).
  static Queue open(std::string_view name, Role role = Role::both, const WaitOptions& wait = {},
                    const SegmentOptions& segment = {});
  /// Opens, or creates with options when absent (race-free).
  static Queue open_or_create(std::string_view name, const QueueOptions& options, Role role = Role::both,
                              bool* created = nullptr);
  /// Opens a queue from a descriptor (SegmentOptions::memfd + zipc::receive_fd);
  /// fd is duplicated, the caller keeps its own.
  static Queue open_fd(int fd, Role role = Role::both, const WaitOptions& wait = {},
                       const SegmentOptions& segment = {});
  /// Removes the name: true when removed, false when absent (open handles keep working). Throws Errc::invalid_name, or
  /// the unlink's error.
  static bool remove(std::string_view name, const SegmentOptions& segment = {});

  Queue() noexcept;
  /// Moves the handle; the source is left detached.
  Queue(Queue&&) noexcept;
  /// Detaches this handle, then moves the other's; the other is left detached.
  Queue& operator=(Queue&&) noexcept;
  /// detach()es; a loan still out keeps the record and the mapping until it
  /// ends (then commit/release work as before: docs/guide/handles.md).
  ~Queue();

  /// Copy API. Never truncates: a message over block_size() is too_large,
  /// unless the queue has an oversize region (then it is stored there).
  [[nodiscard]] Status try_send(std::span<const std::byte> msg) noexcept;
  /// Copies msg in as one message, waiting up to timeout for room: ok, timeout, closed, too_large, wrong_role,
  /// detached.
  [[nodiscard]] Status send(std::span<const std::byte> msg, Timeout timeout) noexcept;
  /// A message larger than out stays queued and the result is too_large with its size.
  [[nodiscard]] IoResult try_recv(std::span<std::byte> out) noexcept;
  /// Copies the next message into out, waiting up to timeout for one: ok with its size, or empty, timeout, closed
  /// (closed and drained), too_large (the message stays queued).
  [[nodiscard]] IoResult recv(std::span<std::byte> out, Timeout timeout) noexcept;

  /// Batches: one position update and one wake-up for many messages.
  /// send_batch sends a prefix of msgs (all if it returns msgs.size());
  /// *status says why it stopped early.
  std::size_t send_batch(std::span<const std::span<const std::byte>> msgs, Timeout timeout,
                         Status* status = nullptr) noexcept;
  /// Calls fn(std::span<const std::byte>) for up to max messages available at
  /// once (waiting up to timeout for the first); returns how many.
  template <class Fn>
  std::size_t recv_batch(std::size_t max, Timeout timeout, Fn&& fn, Status* status = nullptr) noexcept {
    using F = std::remove_reference_t<Fn>;
    auto thunk = [](void* ctx, std::span<const std::byte> m) noexcept { (*static_cast<F*>(ctx))(m); };
    return recv_batch_impl(max, timeout, thunk, const_cast<void*>(static_cast<const void*>(&fn)), status);
  }

  /// Zero-copy loans.
  [[nodiscard]] QueueWriteLoan reserve(Timeout timeout) noexcept;
  /// reserve without waiting (full when there is no room).
  [[nodiscard]] QueueWriteLoan try_reserve() noexcept { return reserve(Timeout::zero()); }
  /// A loan of n bytes: a block when n <= block_size(), else n bytes of the
  /// oversize region (too_large without one, or when n can never fit). A full
  /// region waits like a full ring: try_reserve(n) returns full, reserve(n, t)
  /// waits for room up to t (then timeout).
  [[nodiscard]] QueueWriteLoan reserve(std::size_t n, Timeout timeout) noexcept;
  /// reserve(n) without waiting.
  [[nodiscard]] QueueWriteLoan try_reserve(std::size_t n) noexcept { return reserve(n, Timeout::zero()); }
  /// Zero copy: the next message in place, waiting up to timeout for one.
  [[nodiscard]] QueueReadLoan acquire(Timeout timeout) noexcept;
  /// acquire without waiting (empty when there is nothing).
  [[nodiscard]] QueueReadLoan try_acquire() noexcept { return acquire(Timeout::zero()); }
  /// Fill out with up to out.size() loans at once (waiting up to timeout for the first).
  std::size_t reserve_batch(std::span<QueueWriteLoan> out, Timeout timeout, Status* status = nullptr) noexcept;
  /// Fill out with up to out.size() messages in place at once (waiting up to timeout for the first); returns how many,
  /// *status why fewer.
  std::size_t acquire_batch(std::span<QueueReadLoan> out, Timeout timeout, Status* status = nullptr) noexcept;

  /// Wakes every waiter; later sends fail with closed; receivers drain what is
  /// left (including reservations made before close() and committed after it),
  /// then get closed.
  void close() noexcept;
  /// True once close() was called (by any process), or when this handle is detached.
  [[nodiscard]] bool closed() const noexcept;

  /// The counters summed over every handle of the queue (detached handles' counts included).
  [[nodiscard]] QueueStats stats() const noexcept;
  /// Looks for dead participants now and recovers what they held (survivors
  /// also do this by themselves after recovery_time of stalling). Returns the
  /// number of positions recovered.
  std::size_t recover() noexcept;

  /// Bytes per block.
  [[nodiscard]] std::size_t block_size() const noexcept;
  /// Blocks in the ring.
  [[nodiscard]] std::size_t block_count() const noexcept;
  [[nodiscard]] std::size_t oversize_bytes() const noexcept;  ///< the region's arena bytes (0: none)
  [[nodiscard]] std::size_t size_approx() const noexcept;     ///< committed or in flight
  /// How many producer handles the queue admits.
  [[nodiscard]] Multiplicity producers() const noexcept;
  /// How many consumer handles the queue admits.
  [[nodiscard]] Multiplicity consumers() const noexcept;
  /// The shared-memory segment the queue lives in.
  [[nodiscard]] const Segment& segment() const noexcept;
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return impl_ != nullptr; }
  /// Lets go of this handle's participant record and mapping now (the
  /// destructor does the same; loans still out keep them until they end);
  /// the queue stays open for everyone else (close() is the verb that closes
  /// it for everyone). Later calls say Status::detached; closed() says true.
  void detach() noexcept;

 private:
  friend struct detail::WaitHookAccess;  // the WaitSet's readiness hook (src/waitset/wait_hook.hpp)
  using BatchFn = void (*)(void*, std::span<const std::byte>) noexcept;
  std::size_t recv_batch_impl(std::size_t max, Timeout timeout, BatchFn fn, void* ctx, Status* status) noexcept;
  explicit Queue(std::unique_ptr<detail::QueueImpl> impl) noexcept;
  std::unique_ptr<detail::QueueImpl> impl_;
};

}  // namespace zipc
