/// \file
/// zipc/typed_topic.hpp - a Topic whose messages are Ts (or slices of Ts).
///
/// Part of zipc/typed.hpp (include that; the example is there).
#pragma once

#include <chrono>
#include <cstring>
#include <span>
#include <string_view>

#include "zipc/topic.hpp"
#include "zipc/typed_loan.hpp"

namespace zipc {

template <class T>
/// A Publisher of Ts (from TypedTopic::publisher): every message is one T or a slice of Ts.
class TypedPublisher {
  static_assert(detail::check_message_type<T>(), "T must be a message type (the rule that failed is named above)");

 public:
  /// A loan of Ts in the log (TypedWriteLoan over a TopicWriteLoan).
  using Loan = TypedWriteLoan<T, zipc::TopicWriteLoan>;

  TypedPublisher() = default;
  /// Wraps a byte publisher (of a topic that holds Ts).
  explicit TypedPublisher(Publisher p) noexcept : pub_(std::move(p)) {}

  /// Copies one T in without waiting (as Publisher::try_publish).
  [[nodiscard]] CommitResult try_publish(const T& v) noexcept {
    return pub_.try_publish(std::as_bytes(std::span(&v, 1)));
  }
  /// Copies one T in, waiting up to timeout for room (as Publisher::publish).
  [[nodiscard]] CommitResult publish(const T& v, std::chrono::nanoseconds timeout) noexcept {
    return pub_.publish(std::as_bytes(std::span(&v, 1)), timeout);
  }
  /// Copies the Ts of v in as one message.
  [[nodiscard]] CommitResult publish_slice(std::span<const T> v, std::chrono::nanoseconds timeout) noexcept {
    return pub_.publish(std::as_bytes(v), timeout);
  }
  /// Zero copy: one T (or n) value-initialised in the log; commit() publishes.
  [[nodiscard]] Loan try_reserve() noexcept { return reserve_slice(1, std::chrono::nanoseconds::zero()); }
  /// reserve_slice(1, timeout).
  [[nodiscard]] Loan reserve(std::chrono::nanoseconds timeout) noexcept { return reserve_slice(1, timeout); }
  /// n Ts in the log (too_large when they cannot fit a message).
  [[nodiscard]] Loan reserve_slice(std::size_t n, std::chrono::nanoseconds timeout) noexcept {
    if (n > (std::size_t{1} << 32) / sizeof(T)) return Loan(Status::too_large);
    zipc::TopicWriteLoan raw = pub_.reserve(n * sizeof(T), timeout);
    const std::span<std::byte> bytes = raw.data();
    return Loan(std::move(raw), bytes, n);
  }
  /// As Publisher::flush.
  void flush() noexcept { pub_.flush(); }
  /// The byte API under it.
  [[nodiscard]] Publisher& bytes() noexcept { return pub_; }
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return pub_.is_attached(); }

 private:
  Publisher pub_;
};

template <class T>
/// A Subscriber of Ts (from TypedTopic::subscribe): every message is read as one T or a slice of Ts.
class TypedSubscriber {
  static_assert(detail::check_message_type<T>(), "T must be a message type (the rule that failed is named above)");

 public:
  /// A view valid until this subscriber's next call; raw() has sequence and publish_ns.
  using View = TypedRead<T, TopicReadLoan>;

  TypedSubscriber() = default;
  /// Wraps a byte subscriber (of a topic that holds Ts).
  explicit TypedSubscriber(Subscriber s) noexcept : sub_(std::move(s)) {}

  /// Copies one T out (corrupt when the message is not exactly one T).
  [[nodiscard]] ReadResult read(T& out, std::chrono::nanoseconds timeout) noexcept {
    View v = view(timeout, true);
    ReadResult r;
    r.status = v.status();
    r.sequence = v.raw().sequence();
    r.publish_ns = v.raw().publish_ns();
    r.size = static_cast<std::uint32_t>(v.raw().data().size());
    if (v) std::memcpy(static_cast<void*>(&out), v.get(), sizeof(T));
    return r;
  }
  /// read without waiting.
  [[nodiscard]] ReadResult try_read(T& out) noexcept { return read(out, std::chrono::nanoseconds::zero()); }
  /// In place: one T, or (slice) any number.
  [[nodiscard]] View acquire(std::chrono::nanoseconds timeout) noexcept { return view(timeout, true); }
  /// acquire without waiting.
  [[nodiscard]] View try_acquire() noexcept { return view(std::chrono::nanoseconds::zero(), true); }
  /// Any number of Ts in place (span()).
  [[nodiscard]] View acquire_slice(std::chrono::nanoseconds timeout) noexcept { return view(timeout, false); }

  /// As Subscriber::lost.
  [[nodiscard]] std::uint64_t lost() const noexcept { return sub_.lost(); }
  /// The byte API under it.
  [[nodiscard]] Subscriber& bytes() noexcept { return sub_; }
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return sub_.is_attached(); }

 private:
  View view(std::chrono::nanoseconds timeout, bool single) noexcept {
    TopicReadLoan m = sub_.acquire(timeout);
    const Status s = m.status();
    const std::span<const std::byte> b = m.data();
    return View(std::move(m), b, s, single);
  }
  Subscriber sub_;
};

template <class T>
/// A Topic whose messages are Ts (see zipc/typed.hpp): T's identity is recorded at create and checked at open.
class TypedTopic {
  static_assert(detail::check_message_type<T>(), "T must be a message type (the rule that failed is named above)");

 public:
  /// As Topic::create; max_message_size is raised to one T when smaller. Records T's identity.
  static TypedTopic create(std::string_view name, TopicOptions options = {}) {
    return TypedTopic(Topic::create(name, typed_options(std::move(options))));
  }
  /// Errc::type_mismatch when the topic holds another type (or none).
  static TypedTopic open(std::string_view name, TopicOptions options = {}) {
    return TypedTopic(Topic::open(name, typed_options(std::move(options))));
  }
  /// As Topic::open_or_create, with create's max_message_size rule; opening checks T's identity.
  static TypedTopic open_or_create(std::string_view name, TopicOptions options = {}, bool* created = nullptr) {
    return TypedTopic(Topic::open_or_create(name, typed_options(std::move(options)), created));
  }
  /// As Topic::remove.
  static bool remove(std::string_view name, const SegmentOptions& segment = {}) { return Topic::remove(name, segment); }

  TypedTopic() = default;
  /// A publisher of Ts (as Topic::publisher).
  [[nodiscard]] TypedPublisher<T> publisher() { return TypedPublisher<T>(topic_.publisher()); }
  /// A subscriber of Ts (as Topic::subscribe).
  [[nodiscard]] TypedSubscriber<T> subscribe(const SubscribeOptions& options = {}) {
    return TypedSubscriber<T>(topic_.subscribe(options));
  }
  /// The most Ts one message holds (max_message_size / sizeof(T)).
  [[nodiscard]] std::size_t max_slice() const noexcept { return topic_.max_message_size() / sizeof(T); }
  /// The byte API under it.
  [[nodiscard]] Topic& bytes() noexcept { return topic_; }

 private:
  explicit TypedTopic(Topic t) noexcept : topic_(std::move(t)) {}
  static TopicOptions typed_options(TopicOptions o) {
    if (o.max_message_size < sizeof(T)) o.max_message_size = static_cast<std::uint32_t>(sizeof(T));
    o.segment.type = type_identity_of<T>();
    return o;
  }
  Topic topic_;
};

}  // namespace zipc
