// zipc/topic.hpp - publish/subscribe log: every subscriber sees every message.
//
//   #include <array>
//   ---
//   zipc::TopicOptions opt;
//   opt.capacity_bytes = 1 << 20;  // bytes of log kept for late joiners and slow readers
//   opt.max_message_size = 4096;
//   const std::string name = "demo-topic-" + std::to_string(zipc::ProcessId::current().pid);
//   auto topic = zipc::Topic::create(name, opt);
//   auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
//   auto pub = topic.publisher();
//   const char hello[] = "hello";
//   auto sent = pub.try_publish(std::as_bytes(std::span(hello)));  // sent.sequence == 0
//   {
//     auto loan = pub.try_claim(8);  // zero copy: write into the log itself
//     if (loan) {
//       std::memset(loan.data().data(), 1, 8);
//       (void)loan.commit();  // without commit, the destructor aborts the loan
//     }
//   }
//   std::array<std::byte, 4096> buf;
//   zipc::ReadResult got = sub.read(buf, std::chrono::milliseconds(100));
//   // got.status == ok, got.sequence == 0, got.size == 6, got.publish_ns: CLOCK_REALTIME
//   zipc::MessageView view = sub.try_read_view();  // reliable mode: valid until the next call
//   (void)sent;
//   (void)got;
//   (void)view;
//   zipc::Topic::remove(name);
//
// A topic is a byte ring of variable-size records with dense sequence numbers
// (docs/topic.md). Reliable subscribers hold the publisher back (publish waits,
// try_publish says full); lossy ones never do and learn how many messages they
// lost (Status::overrun, lost()). Late joiners replay what the log still holds.
// With TopicOptions::segment.path the log lives in a file and survives restarts.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/options.hpp"
#include "zipc/segment.hpp"

namespace zipc {

struct TopicOptions {
  std::uint64_t capacity_bytes = 1 << 20;    // ring bytes; rounded up to a power of two (>= 4096)
  std::uint32_t max_message_size = 1 << 16;  // payload bytes; the ring must hold two records of this size
  std::uint32_t max_subscribers = 256;       // subscriber slots (runtime value, up to 65536)
  // single: one publisher process at a time, no CAS on the hot path;
  // multi: any number (up to 64) append concurrently.
  Multiplicity publishers = Multiplicity::single;
  SegmentOptions segment{};  // permissions (mode), path (file-backed, persistent topic), prefault, ...
  WaitOptions wait{};        // how this handle's blocking calls wait
  // A dead peer is worked around after this (per handle, not stored).
  std::chrono::milliseconds recovery_time = kDefaultRecoveryTime;
  // open_or_create on an existing topic whose geometry (capacity_bytes after
  // rounding, max_message_size, max_subscribers, publishers) differs: false
  // fails with Errc::options_mismatch naming both values; true attaches with
  // the existing topic's geometry.
  bool accept_existing = false;
  // Bulk logging (docs/topic.md, "Streaming stores"): publisher copies of 256 B and more use
  // non-temporal stores, and a single publisher makes its commits visible in
  // batches (Publisher::flush). Faster when nobody reads right behind;
  // readers see records late and from memory instead of cache.
  bool streaming_stores = false;
};

// Where a new subscriber starts.
struct From {
  enum class Kind : std::uint8_t { latest, oldest, sequence };
  Kind kind = Kind::latest;
  std::uint64_t seq = 0;
  static constexpr From latest() noexcept { return {Kind::latest, 0}; }
  static constexpr From oldest() noexcept { return {Kind::oldest, 0}; }
  static constexpr From sequence(std::uint64_t n) noexcept { return {Kind::sequence, n}; }
};

enum class Delivery : std::uint8_t {
  reliable,  // never overwritten: the publisher waits for this subscriber
  lossy,     // the publisher never waits; overruns are reported with the exact count
};

struct SubscribeOptions {
  From from = From::latest();
  Delivery delivery = Delivery::reliable;
};

struct PublishResult {
  Status status = Status::ok;
  std::uint64_t sequence = 0;  // when ok
  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
};

struct ReadResult {
  Status status = Status::empty;
  std::uint64_t sequence = 0;
  // CLOCK_REALTIME at commit (within 1 us; exact with several publishers;
  // streaming_stores: when the commit's batch became visible).
  std::uint64_t publish_ns = 0;
  std::uint32_t size = 0;  // payload bytes (also when too_large: the size needed)
  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
};

struct MessageView {
  Status status = Status::empty;
  std::uint64_t sequence = 0;
  std::uint64_t publish_ns = 0;     // as in ReadResult
  std::span<const std::byte> data;  // valid until the subscriber's next call
  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
};

namespace detail {
struct TopicState;
}

class Publisher;

// A claimed record: write data(), then commit(). Destroyed uncommitted, it is
// aborted (readers skip it; no sequence number is used). A publisher has at
// most one loan out; do not move or destroy the Publisher while it is.
class Loan {
 public:
  Loan() = default;
  Loan(Loan&& o) noexcept;
  Loan& operator=(Loan&& o) noexcept;
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;
  ~Loan() {
    if (owner_ != nullptr) abort();  // (inline: a committed loan costs no call)
  }

  [[nodiscard]] explicit operator bool() const noexcept { return owner_ != nullptr; }
  // Why try_claim/claim gave no loan (ok when it did).
  [[nodiscard]] Status status() const noexcept { return status_; }
  [[nodiscard]] std::span<std::byte> data() const noexcept { return {payload_, size_}; }
  // Publishes the first n bytes (n <= size claimed; default all).
  [[nodiscard]] PublishResult commit() noexcept { return commit(size_); }
  [[nodiscard]] PublishResult commit(std::size_t n) noexcept;
  void abort() noexcept;

 private:
  friend class Publisher;
  Publisher* owner_ = nullptr;
  std::byte* payload_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t position_ = 0;  // where the claim starts (padding included)
  std::uint64_t record_ = 0;    // the record's own position
  std::uint64_t end_ = 0;       // where the claim ends
  Status status_ = Status::ok;
};

class Publisher {
 public:
  Publisher() = default;
  Publisher(Publisher&& o) noexcept;
  Publisher& operator=(Publisher&& o) noexcept;
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;
  ~Publisher();

  // Never blocks: full when a reliable subscriber has not read the room needed.
  [[nodiscard]] PublishResult try_publish(std::span<const std::byte> message) noexcept;
  // Waits at most timeout for room.
  [[nodiscard]] PublishResult publish(std::span<const std::byte> message, std::chrono::nanoseconds timeout) noexcept;
  // Zero copy: a loan of size bytes in the log itself.
  [[nodiscard]] Loan try_claim(std::size_t size) noexcept;
  [[nodiscard]] Loan claim(std::size_t size, std::chrono::nanoseconds timeout) noexcept;

  // Streaming mode (TopicOptions::streaming_stores, single publisher): makes
  // every commit visible now. Commits otherwise become visible in batches
  // (256 messages, or a batch 100 us old as seen by one of its first 4 commits
  // or every 4th after); the destructor flushes too.
  void flush() noexcept;

  [[nodiscard]] bool is_attached() const noexcept { return state_ != nullptr; }

 private:
  friend class Topic;
  friend class Loan;
  Status reserve(std::size_t size, Deadline deadline, Loan& loan) noexcept;
  PublishResult finish(Loan& loan, std::size_t n, bool abort) noexcept;
  Status make_room(std::uint64_t needed_end, bool may_wait_for_liveness) noexcept;
  Status await_token(std::uint64_t position) noexcept;
  void publish_commit(std::uint64_t end, std::uint64_t next) noexcept;
  void note_record_start(std::uint64_t record) noexcept;
  std::uint64_t drop_mark(std::uint64_t lo, std::uint64_t hi) const noexcept;

  std::shared_ptr<detail::TopicState> state_;
  std::uint32_t slot_ = 0;
  std::uint64_t tail_ = 0;           // single mode: the claim frontier (we are its only writer)
  std::uint64_t cached_oldest_ = 0;  // lower bound of PublisherLine::oldest
  std::uint64_t cached_min_ = 0;     // lower bound of every reliable subscriber's position
  std::uint64_t cached_generation_ = ~0ull;
  std::uint64_t next_liveness_check_ns_ = 0;
  bool loan_out_ = false;
  std::uint64_t pending_end_ = 0;  // streaming mode: committed but not yet visible
  std::uint64_t pending_next_ = 0;
  std::uint32_t pending_count_ = 0;
  std::uint64_t pending_since_ns_ = 0;
  std::array<std::uint64_t, 256> pending_records_{};
  std::array<std::uint64_t, 160> drop_marks_{};  // single mode: record starts we claimed (see make_room)
  std::uint64_t mark_head_ = 0;
  std::uint64_t next_mark_ = 0;
};

class Subscriber {
 public:
  Subscriber() = default;
  Subscriber(Subscriber&& o) noexcept;
  Subscriber& operator=(Subscriber&& o) noexcept;
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;
  ~Subscriber();

  // Copies the next message into buffer. ok, empty, too_large (buffer too
  // small: size says what is needed; nothing consumed), overrun (lossy: lapped;
  // lost() grew by the exact count; the next read continues from the oldest
  // retained), corrupt.
  [[nodiscard]] ReadResult try_read(std::span<std::byte> buffer) noexcept;
  [[nodiscard]] ReadResult read(std::span<std::byte> buffer, std::chrono::nanoseconds timeout) noexcept;
  // Zero copy (reliable mode only; lossy subscribers get Status::corrupt).
  [[nodiscard]] MessageView try_read_view() noexcept;
  [[nodiscard]] MessageView read_view(std::chrono::nanoseconds timeout) noexcept;
  // Gives back the record the last view showed (the next call does it anyway).
  void release() noexcept;

  // Messages this (lossy) subscriber missed so far.
  [[nodiscard]] std::uint64_t lost() const noexcept { return lost_; }
  // Holes (publishers that died between claim and commit) skipped so far.
  [[nodiscard]] std::uint64_t abandoned() const noexcept { return abandoned_; }
  // Sequence the next delivered message will carry (if none is lost).
  [[nodiscard]] std::uint64_t next_sequence() const noexcept { return expected_; }
  [[nodiscard]] Delivery delivery() const noexcept { return delivery_; }
  [[nodiscard]] bool is_attached() const noexcept { return state_ != nullptr; }

 private:
  friend class Topic;
  enum class Step : std::uint8_t { message, empty, corrupt, overrun };
  // A record a reliable reader validated; every field comes from the one
  // private copy of its header that was checked (never re-read from the ring).
  struct Found {
    std::uint64_t position = 0;
    std::uint64_t total = 0;  // bytes the record occupies
    std::uint64_t sequence = 0;
    std::uint64_t publish_ns = 0;
    std::uint32_t size = 0;  // payload bytes (<= max_message)
  };
  Step next_record(Found* found) noexcept;
  enum class Probe : std::uint8_t { message, committed, pending };
  Probe probe_at(std::uint64_t position, Found* found) const noexcept;
  bool cursor_due() noexcept;
  ReadResult overrun() noexcept;
  void release_view() noexcept;
  Status wait_readable(Deadline deadline) noexcept;
  ReadResult read_lossy(std::span<std::byte> buffer) noexcept;
  void publish_position() noexcept;

  std::shared_ptr<detail::TopicState> state_;
  std::uint32_t slot_ = 0;
  Delivery delivery_ = Delivery::reliable;
  std::uint64_t position_ = 0;  // next record to read
  std::uint64_t cursor_ = 0;    // cached commit frontier
  std::uint64_t expected_ = 0;  // sequence of the next data record
  std::uint64_t view_end_ = 0;  // end of the record a view still shows (0: none)
  std::uint64_t lost_ = 0;
  std::uint64_t abandoned_ = 0;
  std::uint32_t idle_polls_ = 0;  // reliable mode: frontier polls since the cursor line was last read
};

class Topic {
 public:
  // Creates a topic; Errc::already_exists if the name is taken.
  static Topic create(std::string_view name, const TopicOptions& options = {});
  // Opens an existing topic; its geometry comes from the segment, options
  // supply segment (path, prefault, ...), wait and recovery_time.
  static Topic open(std::string_view name, const TopicOptions& options = {});
  static Topic open_or_create(std::string_view name, const TopicOptions& options = {}, bool* created = nullptr);
  static bool remove(std::string_view name, const SegmentOptions& segment = {});

  Topic() = default;
  Topic(Topic&&) noexcept = default;
  Topic& operator=(Topic&&) noexcept = default;
  ~Topic();

  // Attaches a publisher. Single mode: Errc::busy while another live
  // publisher is attached (a dead one is replaced and its claim abandoned).
  [[nodiscard]] Publisher publisher();
  // Errc::busy when every slot holds a live subscriber; Errc::not_retained
  // (message names the oldest available) for a sequence the log no longer holds.
  [[nodiscard]] Subscriber subscribe(const SubscribeOptions& options = {});

  // Flushes a file-backed topic to disk.
  void sync() const;

  [[nodiscard]] std::uint64_t capacity_bytes() const noexcept;
  [[nodiscard]] std::uint32_t max_message_size() const noexcept;
  [[nodiscard]] std::uint32_t max_subscribers() const noexcept;
  [[nodiscard]] Multiplicity publishers() const noexcept;
  // Sequence the next message will get; oldest still retained (== next when empty).
  [[nodiscard]] std::uint64_t next_sequence() const noexcept;
  [[nodiscard]] std::uint64_t oldest_sequence() const noexcept;
  // Holes recovery made since creation.
  [[nodiscard]] std::uint64_t abandoned() const noexcept;
  [[nodiscard]] const Segment& segment() const noexcept;

 private:
  std::shared_ptr<detail::TopicState> state_;
};

}  // namespace zipc
