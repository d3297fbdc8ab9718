// zipc/queue.hpp - a many-producer, many-consumer FIFO of blocks across processes.
//
//   #include <array>
//   zipc::QueueOptions opt;
//   opt.block_size = 256;  // largest message, bytes (multiple of 8)
//   opt.block_count = 64;  // blocks in the ring (power of two)
//   auto q = zipc::Queue::create("jobs-example", opt);
//   const char hello[] = "hello";
//   zipc::Status s = q.try_send(std::as_bytes(std::span(hello)));
//   std::array<std::byte, 256> buf;
//   zipc::IoResult r = q.recv(buf, std::chrono::milliseconds(100));  // r.size == 6
//   {
//     zipc::WriteLoan loan = q.reserve(std::chrono::milliseconds(100));  // zero-copy
//     if (loan) {
//       std::memcpy(loan.data(), "abc", 3);
//       (void)loan.commit(3);
//     }
//   }
//   if (zipc::ReadLoan in = q.acquire(std::chrono::milliseconds(100))) {
//     (void)in.size();  // 3; the block returns to the ring when `in` is destroyed
//   }
//   zipc::QueueStats st = q.stats();  // sent == 2, received == 2
//   (void)s; (void)r; (void)st;
//   zipc::Queue::remove("jobs-example");
//
// One handle is one participant (a record in the segment): use a handle from
// one thread at a time; open another handle per thread. Processes may die at
// any instruction: see docs/queue.md for what survivors recover and how.
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

// What a handle does. On a single-producer queue a handle with the producer
// role is exclusive (a second live one fails with Errc::busy); same for
// consumers. Sending on a handle without the producer role (receiving
// without the consumer role) asserts in debug builds and returns Status::busy.
enum class Role : std::uint8_t {
  none = 0,  // neither: only close(), stats(), recover() (e.g. a supervisor)
  producer = 1,
  consumer = 2,
  both = 3,
};

struct QueueOptions {
  std::size_t block_size = 1024;   // bytes per block: a multiple of 8 in [8, 16 MiB]
  std::size_t block_count = 1024;  // blocks in the ring: a power of two in [2, 2^24]
  Multiplicity producers = Multiplicity::multi;
  Multiplicity consumers = Multiplicity::multi;
  std::uint32_t max_participants = 64;  // handles attached at once, [2, 65535]
  // How long a survivor waits on a position held by a silent peer before it
  // checks whether that peer died and recovers the position.
  // Stored in the segment: the creator's value holds for everyone.
  std::chrono::milliseconds recovery_time = kDefaultRecoveryTime;
  WaitOptions wait{};        // this handle's waiting (not stored in the segment)
  SegmentOptions segment{};  // permissions (mode), file path, huge pages, ...
  // open_or_create on an existing queue whose geometry (block_size,
  // block_count, producers, consumers, max_participants, recovery_time)
  // differs: false fails with Errc::options_mismatch naming both values;
  // true attaches with the existing segment's geometry.
  bool accept_existing = false;
};

// Counters readable from any process without locks. Each handle counts in its
// own record line; stats() sums the records (plus those of detached handles).
struct QueueStats {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t full_waits = 0;   // blocking sends that had to wait for room
  std::uint64_t empty_waits = 0;  // blocking receives that had to wait for data
  std::uint64_t redelivered = 0;  // messages taken back from consumers that died holding them
  std::uint64_t abandoned = 0;    // blocks reserved by producers that died before committing
};

// Result of a copy receive: status ok with the message size, or the reason.
struct [[nodiscard]] IoResult {
  Status status = Status::empty;
  std::size_t size = 0;
  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
};

namespace detail {
struct QueueImpl;
}
class Queue;

// A reserved block: fill data() (capacity() bytes) and commit(len). Destroyed
// without commit, the reservation is aborted (never delivered).
class WriteLoan {
 public:
  WriteLoan() = default;
  explicit WriteLoan(Status s) noexcept : status_(s) {}
  WriteLoan(WriteLoan&& o) noexcept;
  WriteLoan& operator=(WriteLoan&& o) noexcept;
  WriteLoan(const WriteLoan&) = delete;
  WriteLoan& operator=(const WriteLoan&) = delete;
  ~WriteLoan() {
    if (impl_ != nullptr) abort();  // (inline: a committed loan costs no call)
  }

  [[nodiscard]] explicit operator bool() const noexcept { return impl_ != nullptr; }
  [[nodiscard]] Status status() const noexcept { return status_; }  // why reserve failed
  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  // Publishes the first len bytes; too_large (loan kept) if len > capacity().
  [[nodiscard]] Status commit(std::size_t len) noexcept;
  void abort() noexcept;

 private:
  friend class Queue;
  detail::QueueImpl* impl_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint64_t pos_ = 0;
  Status status_ = Status::ok;
};

// An acquired message: read data() (size() bytes). Released when destroyed.
class ReadLoan {
 public:
  ReadLoan() = default;
  explicit ReadLoan(Status s) noexcept : status_(s) {}
  ReadLoan(ReadLoan&& o) noexcept;
  ReadLoan& operator=(ReadLoan&& o) noexcept;
  ReadLoan(const ReadLoan&) = delete;
  ReadLoan& operator=(const ReadLoan&) = delete;
  ~ReadLoan() {
    if (impl_ != nullptr) release();  // (inline: a released loan costs no call)
  }

  [[nodiscard]] explicit operator bool() const noexcept { return impl_ != nullptr; }
  [[nodiscard]] Status status() const noexcept { return status_; }  // why acquire failed
  [[nodiscard]] const std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  void release() noexcept;

 private:
  friend class Queue;
  detail::QueueImpl* impl_ = nullptr;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t pos_ = 0;
  Status status_ = Status::ok;
};

class Queue {
 public:
  using Timeout = std::chrono::nanoseconds;

  // Creates a new queue; Errc::already_exists if the name is taken,
  // Errc::invalid_argument for options out of range.
  static Queue create(std::string_view name, const QueueOptions& options, Role role = Role::both);
  // Opens an existing queue (its geometry comes from the segment).
  static Queue open(std::string_view name, Role role = Role::both, const WaitOptions& wait = {},
                    const SegmentOptions& segment = {});
  // Opens, or creates with options when absent (race-free).
  static Queue open_or_create(std::string_view name, const QueueOptions& options, Role role = Role::both,
                              bool* created = nullptr);
  static bool remove(std::string_view name, const SegmentOptions& segment = {});

  Queue() noexcept;
  Queue(Queue&&) noexcept;
  Queue& operator=(Queue&&) noexcept;
  ~Queue();  // detaches (every loan of this handle must be gone)

  // Copy API. Never truncates: a message over block_size() is too_large.
  [[nodiscard]] Status try_send(std::span<const std::byte> msg) noexcept;
  [[nodiscard]] Status send(std::span<const std::byte> msg, Timeout timeout) noexcept;
  // A message larger than out stays queued and the result is too_large with its size.
  [[nodiscard]] IoResult try_recv(std::span<std::byte> out) noexcept;
  [[nodiscard]] IoResult recv(std::span<std::byte> out, Timeout timeout) noexcept;

  // Batches: one position update and one wake-up for many messages.
  // send_batch sends a prefix of msgs (all if it returns msgs.size());
  // *status says why it stopped early.
  std::size_t send_batch(std::span<const std::span<const std::byte>> msgs, Timeout timeout,
                         Status* status = nullptr) noexcept;
  // Calls fn(std::span<const std::byte>) for up to max messages available at
  // once (waiting up to timeout for the first); returns how many.
  template <class Fn>
  std::size_t recv_batch(std::size_t max, Timeout timeout, Fn&& fn, Status* status = nullptr) noexcept {
    using F = std::remove_reference_t<Fn>;
    auto thunk = [](void* ctx, std::span<const std::byte> m) noexcept { (*static_cast<F*>(ctx))(m); };
    return recv_batch_impl(max, timeout, thunk, const_cast<void*>(static_cast<const void*>(&fn)), status);
  }

  // Zero-copy loans.
  [[nodiscard]] WriteLoan reserve(Timeout timeout) noexcept;
  [[nodiscard]] WriteLoan try_reserve() noexcept { return reserve(Timeout::zero()); }
  [[nodiscard]] ReadLoan acquire(Timeout timeout) noexcept;
  [[nodiscard]] ReadLoan try_acquire() noexcept { return acquire(Timeout::zero()); }
  // Fill out with up to out.size() loans at once (waiting up to timeout for the first).
  std::size_t reserve_batch(std::span<WriteLoan> out, Timeout timeout, Status* status = nullptr) noexcept;
  std::size_t acquire_batch(std::span<ReadLoan> out, Timeout timeout, Status* status = nullptr) noexcept;

  // Wakes every waiter; later sends fail with closed; receivers drain what is
  // left (including reservations made before close() and committed after it),
  // then get closed.
  void close() noexcept;
  [[nodiscard]] bool closed() const noexcept;

  [[nodiscard]] QueueStats stats() const noexcept;
  // Looks for dead participants now and recovers what they held (survivors
  // also do this by themselves after recovery_time of stalling). Returns the
  // number of positions recovered.
  std::size_t recover() noexcept;

  [[nodiscard]] std::size_t block_size() const noexcept;
  [[nodiscard]] std::size_t block_count() const noexcept;
  [[nodiscard]] std::size_t size_approx() const noexcept;  // committed or in flight
  [[nodiscard]] Multiplicity producers() const noexcept;
  [[nodiscard]] Multiplicity consumers() const noexcept;
  [[nodiscard]] const Segment& segment() const noexcept;
  [[nodiscard]] bool is_open() const noexcept { return impl_ != nullptr; }

 private:
  using BatchFn = void (*)(void*, std::span<const std::byte>) noexcept;
  std::size_t recv_batch_impl(std::size_t max, Timeout timeout, BatchFn fn, void* ctx, Status* status) noexcept;
  explicit Queue(std::unique_ptr<detail::QueueImpl> impl) noexcept;
  std::unique_ptr<detail::QueueImpl> impl_;
};

}  // namespace zipc
