/// \file
/// zipc/topic.hpp - publish/subscribe log: every subscriber sees every message.
///
/// \code
///   #include <array>
///   ---
///   zipc::TopicOptions opt;
///   opt.capacity_bytes = 1 << 20;  // bytes of log kept for late joiners and slow readers
///   opt.max_message_size = 4096;
///   const std::string name = "demo-topic-" + std::to_string(zipc::ProcessId::current().pid);
///   auto topic = zipc::Topic::create(name, opt);
///   auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
///   auto pub = topic.publisher();
///   const char hello[] = "hello";
///   auto sent = pub.try_publish(std::as_bytes(std::span(hello)));  // sent.sequence == 0
///   {
///     auto loan = pub.try_reserve(8);  // zero copy: write into the log itself
///     if (loan) {
///       std::memset(loan.data().data(), 1, 8);
///       (void)loan.commit(8);  // without commit, the destructor aborts the loan
///     }
///   }
///   std::array<std::byte, 4096> buf;
///   zipc::ReadResult got = sub.read(buf, std::chrono::milliseconds(100));
///   // got.status == ok, got.sequence == 0, got.size == 6, got.publish_ns: CLOCK_REALTIME
///   zipc::TopicReadLoan view = sub.try_acquire();  // reliable mode; released when destroyed
///   (void)sent;
///   (void)got;
///   (void)view.sequence();
///   zipc::Topic::remove(name);
/// \endcode
///
/// Handles: a detached, moved-from or default Publisher or Subscriber answers
/// with Status::detached; Topic::publisher()/subscribe() on a detached Topic
/// throw Errc::invalid_argument (docs/guide/handles.md). Timeouts: zipc::forever,
/// 0 or negative tries once (docs/guide/timeouts.md).
/// A topic is a byte ring of variable-size records with dense sequence numbers
/// (docs/design/topic.md). Reliable subscribers hold the publisher back (publish waits,
/// try_publish says full); lossy ones never do and learn how many messages they
/// lost (Status::overrun, lost()). Late joiners replay what the log still holds.
/// With TopicOptions::segment.path the log lives in a file and survives restarts.
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

/// A topic's geometry (stored in the segment at create) and this handle's settings.
struct TopicOptions {
  std::uint64_t capacity_bytes = 1 << 20;    ///< ring bytes; rounded up to a power of two (>= 4096)
  std::uint32_t max_message_size = 1 << 16;  ///< payload bytes; the ring must hold two records of this size
  std::uint32_t max_subscribers = 256;       ///< subscriber slots (runtime value, up to 65536)
  /// single: one publisher process at a time, no CAS on the hot path;
  /// multi: any number (up to 64) append concurrently.
  Multiplicity publishers = Multiplicity::single;
  SegmentOptions segment{};  ///< permissions (mode), path (file-backed, persistent topic), prefault, ...
  WaitOptions wait{};        ///< how this handle's blocking calls wait
  /// A dead peer is worked around after this (per handle, not stored).
  std::chrono::milliseconds recovery_time = kDefaultRecoveryTime;
  /// open_or_create on an existing topic whose geometry (capacity_bytes after
  /// rounding, max_message_size, max_subscribers, publishers) differs: false
  /// fails with Errc::options_mismatch naming both values; true attaches with
  /// the existing topic's geometry.
  bool accept_existing = false;
  /// Bulk logging (docs/design/topic.md, "Streaming stores"): publisher copies of 256 B and more use
  /// non-temporal stores, and a single publisher makes its commits visible in
  /// batches (Publisher::flush). Faster when nobody reads right behind;
  /// readers see records late and from memory instead of cache.
  bool streaming_stores = false;
};

/// Where a new subscriber starts.
struct From {
  /// Which start: the next message, the oldest retained, or seq.
  enum class Kind : std::uint8_t {
    latest,    ///< the next message published
    oldest,    ///< the oldest message the log retains
    sequence,  ///< the message numbered seq
  };
  Kind kind = Kind::latest;  ///< which start
  std::uint64_t seq = 0;     ///< with Kind::sequence: the sequence number to start at
  /// Start at the next message published.
  static constexpr From latest() noexcept { return {Kind::latest, 0}; }
  /// Start at the oldest message the log retains.
  static constexpr From oldest() noexcept { return {Kind::oldest, 0}; }
  /// Start at sequence number n (Errc::not_retained when the log no longer holds it).
  static constexpr From sequence(std::uint64_t n) noexcept { return {Kind::sequence, n}; }
};

/// Whether the publisher waits for a subscriber.
enum class Delivery : std::uint8_t {
  reliable,  ///< never overwritten: the publisher waits for this subscriber
  lossy,     ///< the publisher never waits; overruns are reported with the exact count
};

/// How a subscriber starts and is delivered to.
struct SubscribeOptions {
  From from = From::latest();              ///< where it starts (default: the next message published)
  Delivery delivery = Delivery::reliable;  ///< reliable (default) or lossy
  /// Durable subscriber (reliable only; docs/design/topic.md, "Durable subscribers"):
  /// a non-empty name (1..47 bytes of [A-Za-z0-9._-]) keeps this subscriber's
  /// position after it detaches or dies, holding the publishers back, for
  /// durable_grace. Subscribing again with the name within the grace resumes
  /// at the next unread message (`from` is then ignored); after it, the
  /// position is released and the first read says Status::not_retained with
  /// the exact count lost (ReadResult::size, lost()), then reads on from the
  /// oldest retained message. Errc::busy while a live subscriber holds the name.
  std::string durable_name{};
  std::chrono::milliseconds durable_grace = std::chrono::seconds(10);  ///< [0, 7 days]
};

/// What a copy read returns: the status, and for a message its sequence number, publish time and size.
struct ReadResult {
  Status status = Status::empty;  ///< ok, or why no message was read
  std::uint64_t sequence = 0;     ///< the message's sequence number
  /// CLOCK_REALTIME at commit (within 1 us; exact with several publishers;
  /// streaming_stores: when the commit's batch became visible).
  std::uint64_t publish_ns = 0;
  std::uint32_t size = 0;  ///< payload bytes (also when too_large: the size needed)
  /// status == Status::ok.
  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
};

namespace detail {
struct TopicState;
struct PublisherMarks;
// Frees a Publisher's marks where their type is complete (src/topic/).
struct PublisherMarksDelete {
  void operator()(PublisherMarks* marks) const noexcept;
};
class ReaderSeatClaim;
class ReaderSeatWatch;
}  // namespace detail
namespace layout {
struct SubscriberSlot;
}

class Publisher;
class Subscriber;

/// A reserved record: write data(), then commit(n). Destroyed uncommitted, it
/// is aborted (readers skip it; no sequence number is used). A publisher has at
/// most one loan out (another reserve or publish says Status::busy). The loan
/// follows its Publisher when that moves, and keeps it (slot, claim, mapping)
/// when it is detached or destroyed, until the loan ends (docs/guide/handles.md).
/// Once ended, data() is empty and commit says Status::detached.
class TopicWriteLoan {
 public:
  TopicWriteLoan() = default;
  /// Moves the reservation; o is left empty.
  TopicWriteLoan(TopicWriteLoan&& o) noexcept;
  /// Aborts this loan's reservation (if any), then moves o's; o is left empty.
  TopicWriteLoan& operator=(TopicWriteLoan&& o) noexcept;
  TopicWriteLoan(const TopicWriteLoan&) = delete;
  TopicWriteLoan& operator=(const TopicWriteLoan&) = delete;
  ~TopicWriteLoan() {
    if (owner_ != nullptr) abort();  // (inline: a committed loan costs no call)
  }

  /// True while the loan holds a record (not failed, committed or aborted).
  [[nodiscard]] explicit operator bool() const noexcept { return owner_ != nullptr; }
  /// Why try_reserve/reserve gave no loan (ok when it did).
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// The record's payload memory (empty once the loan ended).
  [[nodiscard]] std::span<std::byte> data() const noexcept { return {payload_, size_}; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }  ///< bytes reserved
  /// Publishes the first n bytes; sequence = the message's sequence number.
  /// too_large (loan kept) if n > size().
  [[nodiscard]] CommitResult commit(std::size_t n) noexcept;
  /// Gives the record up unpublished (readers skip it); nothing when the loan holds none.
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

/// Appends messages to a topic (from Topic::publisher). Use it from one thread at a time; it gives its slot back when
/// destroyed.
class Publisher {
 public:
  Publisher() = default;
  /// Moves the publisher (its loan follows it); o is left detached.
  Publisher(Publisher&& o) noexcept;
  /// Detaches this publisher, then moves o's; o is left detached.
  Publisher& operator=(Publisher&& o) noexcept;
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;
  ~Publisher();

  /// Never blocks: full when a reliable subscriber has not read the room needed.
  [[nodiscard]] CommitResult try_publish(std::span<const std::byte> message) noexcept;
  /// Waits at most timeout for room.
  [[nodiscard]] CommitResult publish(std::span<const std::byte> message, std::chrono::nanoseconds timeout) noexcept;
  /// Zero copy: a loan of size bytes in the log itself.
  [[nodiscard]] TopicWriteLoan try_reserve(std::size_t size) noexcept;
  /// Zero copy: a loan of size bytes in the log, waiting up to timeout for room.
  [[nodiscard]] TopicWriteLoan reserve(std::size_t size, std::chrono::nanoseconds timeout) noexcept;

  /// Streaming mode (TopicOptions::streaming_stores, single publisher): makes
  /// every commit visible now. Commits otherwise become visible in batches
  /// (256 messages, or a batch 100 us old as seen by one of its first 4 commits
  /// or every 4th after); the destructor flushes too.
  void flush() noexcept;

  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return state_ != nullptr; }
  /// Gives this publisher's slot back now (the destructor does the same).
  void detach() noexcept;

 private:
  friend class Topic;
  friend class TopicWriteLoan;
  Status reserve(std::size_t size, Deadline deadline, TopicWriteLoan& loan) noexcept;
  CommitResult finish(TopicWriteLoan& loan, std::size_t n, bool abort) noexcept;
  Status make_room(std::uint64_t needed_end, bool may_wait_for_liveness) noexcept;
  Status await_token(std::uint64_t position) noexcept;
  void publish_commit(std::uint64_t end, std::uint64_t next) noexcept;
  void count_commit(std::uint32_t size) noexcept;
  void note_record_start(std::uint64_t record) noexcept;
  std::uint64_t drop_mark(std::uint64_t lo, std::uint64_t hi) const noexcept;

  std::shared_ptr<detail::TopicState> state_;
  std::uint32_t slot_ = 0;
  std::uint64_t tail_ = 0;           // single mode: the claim frontier (we are its only writer)
  std::uint64_t cached_oldest_ = 0;  // lower bound of PublisherLine::oldest
  std::uint64_t cached_min_ = 0;     // lower bound of every reliable subscriber's position
  std::uint64_t cached_generation_ = ~0ull;
  std::uint64_t next_liveness_check_ns_ = 0;
  TopicWriteLoan* loan_ = nullptr;  // the loan out (at most one); it points back at us
  bool parked_ = false;             // destroyed with a loan out: kept on the heap until the loan ends
  std::uint64_t pending_end_ = 0;   // streaming mode: committed but not yet visible
  std::uint64_t pending_next_ = 0;
  std::uint32_t pending_count_ = 0;
  std::uint64_t pending_since_ns_ = 0;
  std::uint64_t mark_head_ = 0;  // single mode: drop marks noted so far (see make_room)
  std::uint64_t next_mark_ = 0;
  // The pending records of a streaming batch and the drop marks (3.3 KB),
  // allocated when the publisher attaches (src/topic/topic_publisher_marks.hpp).
  std::unique_ptr<detail::PublisherMarks, detail::PublisherMarksDelete> marks_;
  // Read-only reliable subscribers' seats this publisher adopts and reads
  // (src/topic/topic_reader_seat.hpp); null for a topic without a path.
  std::shared_ptr<detail::ReaderSeatWatch> seats_;
};

namespace detail {
struct WaitHookAccess;
}

/// An acquired record, read in place: data() (size() bytes) stays valid until
/// release() or destruction, or the subscriber's next read/acquire (which
/// ends the loan: data() is then empty). The loan follows its Subscriber when
/// that moves, and keeps it (slot, position, mapping) when it is detached or
/// destroyed, until the loan ends (docs/guide/handles.md).
class TopicReadLoan {
 public:
  TopicReadLoan() = default;
  /// A loan that failed with s (what acquire returns when there is no record).
  explicit TopicReadLoan(Status s) noexcept : status_(s) {}
  /// Moves the loan; o is left empty.
  TopicReadLoan(TopicReadLoan&& o) noexcept;
  /// Releases this loan's record (if any), then moves o's; o is left empty.
  TopicReadLoan& operator=(TopicReadLoan&& o) noexcept;
  TopicReadLoan(const TopicReadLoan&) = delete;
  TopicReadLoan& operator=(const TopicReadLoan&) = delete;
  ~TopicReadLoan() {
    if (owner_ != nullptr) release();
  }

  /// True while the loan holds a record.
  [[nodiscard]] explicit operator bool() const noexcept { return owner_ != nullptr; }
  /// ok while it holds a record; else why acquire gave none.
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// The record's payload (empty once released).
  [[nodiscard]] std::span<const std::byte> data() const noexcept { return {data_, size_}; }
  /// Its size in bytes.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The message's sequence number.
  [[nodiscard]] std::uint64_t sequence() const noexcept { return sequence_; }
  [[nodiscard]] std::uint64_t publish_ns() const noexcept { return publish_ns_; }  ///< as in ReadResult
  /// Gives the record back to the publishers now (the destructor does the same).
  void release() noexcept;

 private:
  friend class Subscriber;
  Subscriber* owner_ = nullptr;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::uint64_t sequence_ = 0;
  std::uint64_t publish_ns_ = 0;
  std::uint64_t end_ = 0;  // where the record ends: names this loan to its subscriber
  Status status_ = Status::empty;
};

/// Reads a topic's messages in order (from Topic::subscribe). Use it from one thread at a time; it gives its slot back
/// when destroyed.
class Subscriber {
 public:
  Subscriber() = default;
  /// Moves the subscriber (its loan follows it); o is left detached.
  Subscriber(Subscriber&& o) noexcept;
  /// Detaches this subscriber, then moves o's; o is left detached.
  Subscriber& operator=(Subscriber&& o) noexcept;
  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;
  ~Subscriber();

  /// Copies the next message into buffer. ok, empty, too_large (buffer too
  /// small: size says what is needed; nothing consumed), overrun (lossy: lapped;
  /// lost() grew by the exact count; the next read continues from the oldest
  /// retained), not_retained (once, first read of a durable subscriber whose
  /// position was released: size = messages lost, sequence = the next one
  /// delivered), closed (Topic::close() and every committed message read), corrupt.
  [[nodiscard]] ReadResult try_read(std::span<std::byte> buffer) noexcept;
  /// As try_read, waiting up to timeout for a message (then timeout).
  [[nodiscard]] ReadResult read(std::span<std::byte> buffer, std::chrono::nanoseconds timeout) noexcept;
  /// Zero copy (reliable mode only; lossy subscribers get Status::not_supported):
  /// the record in the log itself, held back from the publisher until the
  /// loan is released. One loan at a time: the subscriber's next read or
  /// acquire releases the previous loan (its data() is then empty).
  [[nodiscard]] TopicReadLoan try_acquire() noexcept;
  /// As try_acquire, waiting up to timeout for a message (then timeout).
  [[nodiscard]] TopicReadLoan acquire(std::chrono::nanoseconds timeout) noexcept;

  /// Messages this subscriber missed so far (lossy overruns; a durable
  /// subscriber's released position).
  [[nodiscard]] std::uint64_t lost() const noexcept { return lost_; }
  /// Holes (publishers that died between claim and commit) skipped so far.
  [[nodiscard]] std::uint64_t abandoned() const noexcept { return abandoned_; }
  /// Sequence the next delivered message will carry (if none is lost).
  [[nodiscard]] std::uint64_t next_sequence() const noexcept { return expected_; }
  /// Reliable or lossy (a read-only reliable subscriber says reliable).
  [[nodiscard]] Delivery delivery() const noexcept { return seat_ ? Delivery::reliable : delivery_; }
  /// True when acquire() lends records in place: a reliable subscriber with
  /// write access. Lossy and read-only subscribers read copies (read/try_read;
  /// acquire says Status::not_supported).
  [[nodiscard]] bool zero_copy() const noexcept { return delivery_ == Delivery::reliable; }
  /// True when publishers hold the log back for this subscriber: always for a
  /// reliable subscriber with write access; for a read-only reliable one
  /// (docs/design/topic.md, "Read-only reliable subscribers") once a publisher has
  /// adopted its seat, which subscribe() waits for while a publisher is live.
  [[nodiscard]] bool held_back_for() const noexcept;
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return state_ != nullptr; }
  /// Gives this subscriber's slot back now (the destructor does the same).
  void detach() noexcept;

 private:
  friend struct detail::WaitHookAccess;  // the WaitSet's readiness hook (src/waitset/wait_hook.hpp)
  friend class Topic;
  friend class TopicReadLoan;
  // The slot this subscriber writes: its own in the topic, or private memory (read-only).
  layout::SubscriberSlot& slot() const noexcept;
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
  void release_loan(std::uint64_t end) noexcept;
  Status wait_readable(Deadline deadline) noexcept;
  ReadResult read_lossy(std::span<std::byte> buffer) noexcept;
  ReadResult read_slow(std::span<std::byte> buffer) noexcept;
  ReadResult report_gap() noexcept;
  Status empty_or_closed() noexcept;
  void publish_position() noexcept;

  std::shared_ptr<detail::TopicState> state_;
  // A read-only reliable subscriber's seat (its position, outside the topic);
  // such a subscriber reads with the lossy path's validation.
  std::shared_ptr<detail::ReaderSeatClaim> seat_;
  std::uint32_t slot_ = 0;
  Delivery delivery_ = Delivery::reliable;
  std::uint64_t position_ = 0;  // next record to read
  std::uint64_t cursor_ = 0;    // cached commit frontier
  std::uint64_t expected_ = 0;  // sequence of the next data record
  std::uint64_t view_end_ = 0;  // end of the record a view still shows (0: none)
  std::uint64_t lost_ = 0;
  std::uint64_t abandoned_ = 0;
  std::uint32_t idle_polls_ = 0;   // reliable mode: frontier polls since the cursor line was last read
  std::uint64_t gap_ = 0;          // durable restart: messages lost, reported by the next read
  bool slow_ = false;              // lossy, or a gap to report: try_read takes read_slow
  bool durable_ = false;           // a named durable slot: detaching keeps the position for the grace
  TopicReadLoan* loan_ = nullptr;  // the loan out (at most one); it points back at us
  bool parked_ = false;            // destroyed with a loan out: kept on the heap until the loan ends
};

/// A publish/subscribe log in shared memory (see the file overview): publishers append, each subscriber reads every
/// message in order, reliably (holding publishers back) or lossily (never).
class Topic {
 public:
  /// Creates a topic; Errc::already_exists if the name is taken.
  static Topic create(std::string_view name, const TopicOptions& options = {});
  /// Opens an existing topic; its geometry comes from the segment, options
  /// supply segment (path, prefault, ...), wait and recovery_time.
  static Topic open(std::string_view name, const TopicOptions& options = {});
  /// Opens, or creates with options when absent (race-free); *created (may be nullptr) tells which.
  static Topic open_or_create(std::string_view name, const TopicOptions& options = {}, bool* created = nullptr);
  /// Opens a topic from a descriptor (SegmentOptions::memfd + zipc::receive_fd);
  /// fd is duplicated, the caller keeps its own.
  static Topic open_fd(int fd, const TopicOptions& options = {});
  /// Removes the name: true when removed, false when absent (open handles keep working). Throws Errc::invalid_name, or
  /// the unlink's error.
  static bool remove(std::string_view name, const SegmentOptions& segment = {});

  Topic() = default;
  /// Moves the handle; the source is left detached.
  Topic(Topic&&) noexcept = default;
  /// Lets go of this handle's mapping, then moves the other's; the other is left detached.
  Topic& operator=(Topic&&) noexcept = default;
  ~Topic();

  /// Attaches a publisher. Single mode: Errc::busy while another live
  /// publisher is attached (a dead one is replaced and its claim abandoned).
  [[nodiscard]] Publisher publisher();
  /// Errc::busy when every slot holds a live subscriber; Errc::not_retained
  /// (message names the oldest available) for a sequence the log no longer holds.
  [[nodiscard]] Subscriber subscribe(const SubscribeOptions& options = {});

  /// Flushes a file-backed topic to disk.
  void sync() const;

  /// Ring bytes.
  [[nodiscard]] std::uint64_t capacity_bytes() const noexcept;
  /// The largest payload, bytes.
  [[nodiscard]] std::uint32_t max_message_size() const noexcept;
  /// Subscriber slots.
  [[nodiscard]] std::uint32_t max_subscribers() const noexcept;
  /// One publisher at a time, or many.
  [[nodiscard]] Multiplicity publishers() const noexcept;
  /// Sequence the next message will get.
  [[nodiscard]] std::uint64_t next_sequence() const noexcept;
  /// The oldest sequence number the log still retains (== next_sequence() when empty).
  [[nodiscard]] std::uint64_t oldest_sequence() const noexcept;
  /// Holes recovery made since creation.
  [[nodiscard]] std::uint64_t abandoned() const noexcept;
  /// Closes the topic for everyone (persisted in the segment): later publishes
  /// and reserves get Status::closed (a claim that raced with close() is
  /// aborted: nothing half-published); blocked publishers and readers wake;
  /// subscribers read every committed message, then get Status::closed.
  /// Idempotent, never reopened.
  void close() noexcept;
  /// True once close() was called (by any process).
  [[nodiscard]] bool closed() const noexcept;
  /// The shared-memory segment the topic lives in.
  [[nodiscard]] const Segment& segment() const noexcept;
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return state_ != nullptr; }
  /// Lets go of this handle's mapping (the destructor does the same); its
  /// publishers and subscribers keep theirs until they detach. The topic stays
  /// open for everyone else (close() is the verb that closes it for everyone).
  void detach() noexcept { state_.reset(); }

 private:
  std::shared_ptr<detail::TopicState> state_;
};

}  // namespace zipc
