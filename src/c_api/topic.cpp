// c_api/topic.cpp - zipc_topic_*, zipc_publisher_*, zipc_subscriber_* over zipc::Topic.
#include <chrono>
#include <cstddef>
#include <span>

#include "c_api/c_api.hpp"
#include "zipc/topic.hpp"

struct zipc_topic {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::Topic topic;
};
// A loan lives in its handle (a stable address: the caller may move its
// zipc_*_loan_t), which the loan's private area names. A handle detached
// while its loan is out stays until the loan ends (docs/guide/handles.md).
struct zipc_publisher {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::Publisher publisher;
  zipc::TopicWriteLoan loan;  // the claim a live zipc_write_loan_t shows (destroyed first)
  bool loan_out = false;      // a zipc_write_loan_t holds `loan`
  bool detached = false;      // zipc_publisher_detach ran while the loan was out
};
struct zipc_subscriber {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::Subscriber subscriber;
  zipc::TopicReadLoan loan;  // the record a live zipc_read_loan_t shows (destroyed first)
  bool loan_out = false;     // a zipc_read_loan_t holds `loan`
  bool detached = false;     // zipc_subscriber_detach ran while the loan was out
};

using namespace zipc::c_api;

zipc::Subscriber& zipc::c_api::subscriber_of(zipc_subscriber* subscriber) noexcept {
  return subscriber->subscriber;
}

void zipc::c_api::release_topic_loan(zipc_subscriber* subscriber) noexcept {
  subscriber->loan.release();
  subscriber->loan_out = false;
  if (subscriber->detached) delete subscriber;
}

zipc_status_t zipc::c_api::end_topic_write_loan(zipc_publisher* publisher, const std::size_t* commit_n,
                                                uint64_t* sequence) noexcept {
  zipc::CommitResult r{zipc::Status::ok, 0};
  if (commit_n != nullptr) {
    r = publisher->loan.commit(*commit_n);
    if (r.status == zipc::Status::too_large) return ZIPC_TOO_LARGE;  // the loan is kept
  } else {
    publisher->loan.abort();
  }
  publisher->loan_out = false;
  if (publisher->detached) delete publisher;
  if (r.ok() && sequence != nullptr) *sequence = r.sequence;
  return from(r.status);
}

namespace {

// The first version ended before read_only.
constexpr std::size_t kTopicOptionsV1 = offsetof(zipc_topic_options_t, read_only);
// The first version ended before the durable fields.
constexpr std::size_t kSubscribeOptionsV1 = offsetof(zipc_subscribe_options_t, durable_name);

zipc::TopicOptions to_cpp(const zipc_topic_options_t& o) {
  if (o.publishers > ZIPC_MULTI) {
    throw zipc::Error(zipc::Errc::invalid_argument, "topic options: publishers " + std::to_string(o.publishers) +
                                                        " is not ZIPC_SINGLE or ZIPC_MULTI");
  }
  zipc::TopicOptions t;
  t.capacity_bytes = o.capacity_bytes;
  t.max_message_size = o.max_message_size;
  t.max_subscribers = o.max_subscribers;
  t.publishers = static_cast<zipc::Multiplicity>(o.publishers);
  t.segment = zipc::c_api::to_cpp(o.segment);
  t.wait = zipc::c_api::to_cpp(o.wait);
  t.recovery_time = std::chrono::milliseconds(o.recovery_time_ms);
  t.accept_existing = o.accept_existing;
  t.streaming_stores = o.streaming_stores;
  t.segment.read_only = o.read_only;
  t.segment.type = zipc::c_api::to_cpp(o.type);
  return t;
}

bool setup_args(const char* fn, const char* name, const zipc_topic_options_t* options, zipc_topic_t** out,
                zipc_topic_options_t* opt, zipc_status_t* status) {
  if (!valid_name(fn, name, status)) return false;
  if (out == nullptr) {
    *status = invalid(fn, "out is NULL");
    return false;
  }
  if (!options_ok(fn, options, kTopicOptionsV1, status)) return false;
  *opt = read_options(options, zipc_topic_options_init);
  return true;
}

}  // namespace

extern "C" {

zipc_status_t zipc_topic_options_init(zipc_topic_options_t* options) {
  if (options == nullptr) return invalid("zipc_topic_options_init", "options is NULL");
  const zipc::TopicOptions d;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->publishers = static_cast<uint32_t>(d.publishers);
  options->capacity_bytes = d.capacity_bytes;
  options->max_message_size = d.max_message_size;
  options->max_subscribers = d.max_subscribers;
  options->recovery_time_ms = static_cast<uint64_t>(d.recovery_time.count());
  options->streaming_stores = d.streaming_stores;
  options->accept_existing = false;
  zipc_wait_options_init(&options->wait);
  zipc_segment_options_init(&options->segment);
  return ZIPC_OK;
}

zipc_status_t zipc_subscribe_options_init(zipc_subscribe_options_t* options) {
  if (options == nullptr) return invalid("zipc_subscribe_options_init", "options is NULL");
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->from = ZIPC_FROM_LATEST;
  options->delivery = ZIPC_RELIABLE;
  options->durable_name = nullptr;
  options->durable_grace_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(zipc::SubscribeOptions{}.durable_grace).count();
  return ZIPC_OK;
}

zipc_status_t zipc_topic_create(const char* name, const zipc_topic_options_t* options, zipc_topic_t** out) {
  return guard("zipc_topic_create", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_topic_options_t o;
    if (!setup_args("zipc_topic_create", name, options, out, &o, &st)) return st;
    *out = new zipc_topic{zipc::Topic::create(name, to_cpp(o))};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_topic_open(const char* name, const zipc_topic_options_t* options, zipc_topic_t** out) {
  return guard("zipc_topic_open", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_topic_options_t o;
    if (!setup_args("zipc_topic_open", name, options, out, &o, &st)) return st;
    *out = new zipc_topic{zipc::Topic::open(name, to_cpp(o))};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_topic_open_or_create(const char* name, const zipc_topic_options_t* options, zipc_topic_t** out,
                                        bool* created) {
  return guard("zipc_topic_open_or_create", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_topic_options_t o;
    if (!setup_args("zipc_topic_open_or_create", name, options, out, &o, &st)) return st;
    bool made = false;
    zipc::Topic t = zipc::Topic::open_or_create(name, to_cpp(o), &made);
    if (created != nullptr) *created = made;
    *out = new zipc_topic{std::move(t)};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_topic_remove(const char* name, const zipc_segment_options_t* segment) {
  return guard("zipc_topic_remove", [&] {
    zipc_status_t st = ZIPC_OK;
    if (!valid_name("zipc_topic_remove", name, &st)) return st;
    zipc_segment_options_t seg;
    zipc_segment_options_init(&seg);
    if (segment != nullptr) seg = *segment;
    if (zipc::Topic::remove(name, zipc::c_api::to_cpp(seg))) return ZIPC_OK;
    return fail(ZIPC_NOT_FOUND, std::string("topic '") + name + "': not found");
  });
}

zipc_status_t zipc_topic_detach(zipc_topic_t* topic) {
  delete topic;
  return ZIPC_OK;
}

zipc_status_t zipc_topic_info(const zipc_topic_t* topic, zipc_topic_info_t* out) {
  if (topic == nullptr) return invalid("zipc_topic_info", "topic is NULL");
  if (out == nullptr) return invalid("zipc_topic_info", "out is NULL");
  const zipc::Topic& t = topic->topic;
  *out = {t.capacity_bytes(), t.max_message_size(), t.max_subscribers(), static_cast<uint32_t>(t.publishers()),
          t.next_sequence(),  t.oldest_sequence(),  t.abandoned()};
  return ZIPC_OK;
}

zipc_status_t zipc_topic_sync(const zipc_topic_t* topic) {
  if (topic == nullptr) return invalid("zipc_topic_sync", "topic is NULL");
  return guard("zipc_topic_sync", [&] {
    topic->topic.sync();
    return ZIPC_OK;
  });
}

zipc_status_t zipc_topic_close(zipc_topic_t* topic) {
  if (topic == nullptr) return invalid("zipc_topic_close", "topic is NULL");
  if (topic->topic.segment().read_only()) {
    return fail(ZIPC_WRONG_ROLE, "zipc_topic_close: topic " + topic->topic.segment().name() +
                                     " was opened read-only: only a writer can close it");
  }
  topic->topic.close();
  return ZIPC_OK;
}

zipc_status_t zipc_topic_type_identity(const zipc_topic_t* topic, zipc_type_identity_t* out) {
  if (topic == nullptr) return invalid("zipc_topic_type_identity", "topic is NULL");
  if (out == nullptr) return invalid("zipc_topic_type_identity", "out is NULL");
  return guard("zipc_topic_type_identity",
               [&] { return identity_out(topic->topic.segment().type_identity(), "topic", out); });
}

zipc_status_t zipc_topic_closed(const zipc_topic_t* topic, bool* closed) {
  if (topic == nullptr) return invalid("zipc_topic_closed", "topic is NULL");
  if (closed == nullptr) return invalid("zipc_topic_closed", "closed is NULL");
  *closed = topic->topic.closed();
  return ZIPC_OK;
}

zipc_status_t zipc_topic_publisher(zipc_topic_t* topic, zipc_publisher_t** out) {
  if (topic == nullptr) return invalid("zipc_topic_publisher", "topic is NULL");
  if (out == nullptr) return invalid("zipc_topic_publisher", "out is NULL");
  return guard("zipc_topic_publisher", [&] {
    *out = new zipc_publisher{topic->topic.publisher(), {}, false, false};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_topic_subscribe(zipc_topic_t* topic, const zipc_subscribe_options_t* options,
                                   zipc_subscriber_t** out) {
  if (topic == nullptr) return invalid("zipc_topic_subscribe", "topic is NULL");
  if (out == nullptr) return invalid("zipc_topic_subscribe", "out is NULL");
  zipc_status_t st = ZIPC_OK;
  if (!options_ok("zipc_topic_subscribe", options, kSubscribeOptionsV1, &st)) return st;
  const zipc_subscribe_options_t o = read_options(options, zipc_subscribe_options_init);
  if (o.from > ZIPC_FROM_SEQUENCE) return invalid("zipc_topic_subscribe", "from is not a zipc_from_t");
  if (o.delivery > ZIPC_LOSSY) return invalid("zipc_topic_subscribe", "delivery is not a zipc_delivery_t");
  zipc::SubscribeOptions so;
  so.from = o.from == ZIPC_FROM_OLDEST     ? zipc::From::oldest()
            : o.from == ZIPC_FROM_SEQUENCE ? zipc::From::sequence(o.sequence)
                                           : zipc::From::latest();
  so.delivery = o.delivery == ZIPC_LOSSY ? zipc::Delivery::lossy : zipc::Delivery::reliable;
  if (o.durable_grace_ns < 0) return invalid("zipc_topic_subscribe", "durable_grace_ns is negative");
  return guard("zipc_topic_subscribe", [&] {
    if (o.durable_name != nullptr) so.durable_name = o.durable_name;
    so.durable_grace =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(o.durable_grace_ns));
    *out = new zipc_subscriber{topic->topic.subscribe(so), {}, false, false};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_publisher_publish(zipc_publisher_t* publisher, const void* data, size_t size, int64_t timeout_ns,
                                     uint64_t* sequence) {
  if (publisher == nullptr) return invalid("zipc_publisher_publish", "publisher is NULL");
  if (publisher->loan_out)
    return invalid("zipc_publisher_publish", "a write loan of this publisher is live: commit or abort it first");
  if (data == nullptr && size != 0) return invalid("zipc_publisher_publish", "data is NULL");
  const std::span<const std::byte> msg(static_cast<const std::byte*>(data), size);
  zipc::Publisher& p = publisher->publisher;
  const zipc::CommitResult r = try_once(timeout_ns) ? p.try_publish(msg) : p.publish(msg, timeout(timeout_ns));
  if (r.ok() && sequence != nullptr) *sequence = r.sequence;
  return from(r.status);
}

zipc_status_t zipc_publisher_reserve(zipc_publisher_t* publisher, size_t size, int64_t timeout_ns,
                                     zipc_write_loan_t* loan) {
  if (publisher == nullptr) return invalid("zipc_publisher_reserve", "publisher is NULL");
  if (loan == nullptr) return invalid("zipc_publisher_reserve", "loan is NULL");
  if (publisher->loan_out)
    return invalid("zipc_publisher_reserve", "a write loan of this publisher is live: commit or abort it first");
  clear(loan);
  zipc::Publisher& p = publisher->publisher;
  zipc::TopicWriteLoan l = try_once(timeout_ns) ? p.try_reserve(size) : p.reserve(size, timeout(timeout_ns));
  if (!l) return from(l.status());
  loan->data = l.data().data();
  loan->size = l.data().size();
  publisher->loan = std::move(l);
  emplace<zipc_publisher*>(loan->private_, LoanKind::topic_write, publisher);
  publisher->loan_out = true;
  return ZIPC_OK;
}

zipc_status_t zipc_publisher_flush(zipc_publisher_t* publisher) {
  if (publisher == nullptr) return invalid("zipc_publisher_flush", "publisher is NULL");
  publisher->publisher.flush();
  return ZIPC_OK;
}

zipc_status_t zipc_publisher_detach(zipc_publisher_t* publisher) {
  if (publisher != nullptr && publisher->loan_out)
    publisher->detached = true;  // freed when its loan ends
  else
    delete publisher;
  return ZIPC_OK;
}

zipc_status_t zipc_subscriber_read(zipc_subscriber_t* subscriber, void* buffer, size_t capacity, int64_t timeout_ns,
                                   zipc_message_info_t* info) {
  if (subscriber == nullptr) return invalid("zipc_subscriber_read", "subscriber is NULL");
  if (subscriber->loan_out)
    return invalid("zipc_subscriber_read", "a read loan of this subscriber is live: release it first");
  if (buffer == nullptr && capacity != 0) return invalid("zipc_subscriber_read", "buffer is NULL");
  const std::span<std::byte> out(static_cast<std::byte*>(buffer), capacity);
  zipc::Subscriber& s = subscriber->subscriber;
  const zipc::ReadResult r = try_once(timeout_ns) ? s.try_read(out) : s.read(out, timeout(timeout_ns));
  if (info != nullptr && (r.status == zipc::Status::ok || r.status == zipc::Status::too_large)) {
    *info = {r.sequence, r.publish_ns, r.size};
  }
  return from(r.status);
}

zipc_status_t zipc_subscriber_acquire(zipc_subscriber_t* subscriber, int64_t timeout_ns, zipc_read_loan_t* loan) {
  if (subscriber == nullptr) return invalid("zipc_subscriber_acquire", "subscriber is NULL");
  if (loan == nullptr) return invalid("zipc_subscriber_acquire", "loan is NULL");
  if (subscriber->loan_out) {
    return invalid("zipc_subscriber_acquire", "a read loan of this subscriber is live: release it first");
  }
  clear(loan);
  zipc::Subscriber& s = subscriber->subscriber;
  // A lossy reader copies out (a publisher may overwrite the record any time).
  if (s.delivery() != zipc::Delivery::reliable) return ZIPC_NOT_SUPPORTED;
  zipc::TopicReadLoan l = try_once(timeout_ns) ? s.try_acquire() : s.acquire(timeout(timeout_ns));
  if (!l) return from(l.status());
  loan->data = l.data().data();
  loan->size = l.size();
  loan->sequence = l.sequence();
  loan->publish_ns = l.publish_ns();
  subscriber->loan = std::move(l);
  emplace<zipc_subscriber*>(loan->private_, LoanKind::topic_read, subscriber);
  subscriber->loan_out = true;
  return ZIPC_OK;
}

zipc_status_t zipc_subscriber_stats(const zipc_subscriber_t* subscriber, zipc_subscriber_stats_t* out) {
  if (subscriber == nullptr) return invalid("zipc_subscriber_stats", "subscriber is NULL");
  if (out == nullptr) return invalid("zipc_subscriber_stats", "out is NULL");
  const zipc::Subscriber& s = subscriber->subscriber;
  *out = {s.lost(), s.abandoned(), s.next_sequence(),
          s.delivery() == zipc::Delivery::lossy ? uint32_t{ZIPC_LOSSY} : uint32_t{ZIPC_RELIABLE}};
  return ZIPC_OK;
}

zipc_status_t zipc_subscriber_detach(zipc_subscriber_t* subscriber) {
  if (subscriber != nullptr && subscriber->loan_out)
    subscriber->detached = true;  // freed when its loan ends
  else
    delete subscriber;
  return ZIPC_OK;
}

}  // extern "C"
