// c_api/queue.cpp - zipc_queue_* over zipc::Queue.
#include <array>
#include <span>

#include "c_api/c_api.hpp"
#include "zipc/queue.hpp"

struct zipc_queue {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::Queue queue;
};

using namespace zipc::c_api;

zipc::Queue& zipc::c_api::queue_of(zipc_queue* queue) noexcept {
  return queue->queue;
}

namespace {

// The first version of zipc_queue_options_t (every field up to segment).
constexpr std::size_t kOptionsV1 = offsetof(zipc_queue_options_t, type);

zipc::Multiplicity multiplicity(uint32_t m, const char* field) {
  if (m > ZIPC_MULTI) {
    throw zipc::Error(zipc::Errc::invalid_argument, std::string("queue options: ") + field + " " + std::to_string(m) +
                                                        " is not ZIPC_SINGLE or ZIPC_MULTI");
  }
  return static_cast<zipc::Multiplicity>(m);
}

zipc::Role role_of(const zipc_queue_options_t& o) {
  if (o.role > ZIPC_ROLE_BOTH) {
    throw zipc::Error(zipc::Errc::invalid_argument, "queue options: role " + std::to_string(o.role) + " is not 0..3");
  }
  return static_cast<zipc::Role>(o.role);
}

zipc::QueueOptions to_cpp(const zipc_queue_options_t& o) {
  zipc::QueueOptions q;
  q.block_size = o.block_size;
  q.block_count = o.block_count;
  q.producers = multiplicity(o.producers, "producers");
  q.consumers = multiplicity(o.consumers, "consumers");
  q.max_participants = o.max_participants;
  q.recovery_time = std::chrono::milliseconds(o.recovery_time_ms);
  q.accept_existing = o.accept_existing;
  q.wait = zipc::c_api::to_cpp(o.wait);
  q.segment = zipc::c_api::to_cpp(o.segment);
  q.segment.type = zipc::c_api::to_cpp(o.type);
  q.oversize_bytes = o.oversize_bytes;
  return q;
}

// Checks the common arguments of create/open; fills opt.
bool setup_args(const char* fn, const char* name, const zipc_queue_options_t* options, zipc_queue_t** out,
                zipc_queue_options_t* opt, zipc_status_t* status) {
  if (!valid_name(fn, name, status)) return false;
  if (out == nullptr) {
    *status = invalid(fn, "out is NULL");
    return false;
  }
  if (!options_ok(fn, options, kOptionsV1, status)) return false;
  *opt = read_options(options, zipc_queue_options_init);
  return true;
}

zipc_status_t handle_out(zipc::Queue&& q, zipc_queue_t** out) {
  *out = new zipc_queue{std::move(q)};
  return ZIPC_OK;
}

#define ZIPC_CHECK_QUEUE(fn)                                 \
  if (queue == nullptr) return invalid(fn, "queue is NULL"); \
  static_cast<void>(0)

}  // namespace

extern "C" {

zipc_status_t zipc_queue_options_init(zipc_queue_options_t* options) {
  if (options == nullptr) return invalid("zipc_queue_options_init", "options is NULL");
  const zipc::QueueOptions d;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->role = ZIPC_ROLE_BOTH;
  options->block_size = d.block_size;
  options->block_count = d.block_count;
  options->producers = static_cast<uint32_t>(d.producers);
  options->consumers = static_cast<uint32_t>(d.consumers);
  options->max_participants = d.max_participants;
  options->recovery_time_ms =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(d.recovery_time).count());
  options->accept_existing = false;
  zipc_wait_options_init(&options->wait);
  zipc_segment_options_init(&options->segment);
  return ZIPC_OK;
}

zipc_status_t zipc_queue_create(const char* name, const zipc_queue_options_t* options, zipc_queue_t** out) {
  return guard("zipc_queue_create", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_queue_options_t o;
    if (!setup_args("zipc_queue_create", name, options, out, &o, &st)) return st;
    return handle_out(zipc::Queue::create(name, to_cpp(o), role_of(o)), out);
  });
}

zipc_status_t zipc_queue_open(const char* name, const zipc_queue_options_t* options, zipc_queue_t** out) {
  return guard("zipc_queue_open", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_queue_options_t o;
    if (!setup_args("zipc_queue_open", name, options, out, &o, &st)) return st;
    zipc::SegmentOptions seg = zipc::c_api::to_cpp(o.segment);
    seg.type = zipc::c_api::to_cpp(o.type);
    return handle_out(zipc::Queue::open(name, role_of(o), zipc::c_api::to_cpp(o.wait), seg), out);
  });
}

zipc_status_t zipc_queue_open_or_create(const char* name, const zipc_queue_options_t* options, zipc_queue_t** out,
                                        bool* created) {
  return guard("zipc_queue_open_or_create", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_queue_options_t o;
    if (!setup_args("zipc_queue_open_or_create", name, options, out, &o, &st)) return st;
    bool made = false;
    zipc::Queue q = zipc::Queue::open_or_create(name, to_cpp(o), role_of(o), &made);
    if (created != nullptr) *created = made;
    return handle_out(std::move(q), out);
  });
}

zipc_status_t zipc_queue_remove(const char* name, const zipc_segment_options_t* segment) {
  return guard("zipc_queue_remove", [&] {
    zipc_status_t st = ZIPC_OK;
    if (!valid_name("zipc_queue_remove", name, &st)) return st;
    zipc_segment_options_t seg;
    zipc_segment_options_init(&seg);
    if (segment != nullptr) seg = *segment;
    if (zipc::Queue::remove(name, zipc::c_api::to_cpp(seg))) return ZIPC_OK;
    return fail(ZIPC_NOT_FOUND, std::string("queue '") + name + "': not found");
  });
}

zipc_status_t zipc_queue_detach(zipc_queue_t* queue) {
  delete queue;
  return ZIPC_OK;
}

zipc_status_t zipc_queue_send(zipc_queue_t* queue, const void* data, size_t size, int64_t timeout_ns) {
  ZIPC_CHECK_QUEUE("zipc_queue_send");
  if (data == nullptr && size != 0) return invalid("zipc_queue_send", "data is NULL");
  const std::span<const std::byte> msg(static_cast<const std::byte*>(data), size);
  return from(try_once(timeout_ns) ? queue->queue.try_send(msg) : queue->queue.send(msg, timeout(timeout_ns)));
}

zipc_status_t zipc_queue_recv(zipc_queue_t* queue, void* buffer, size_t capacity, size_t* size, int64_t timeout_ns) {
  ZIPC_CHECK_QUEUE("zipc_queue_recv");
  if (buffer == nullptr && capacity != 0) return invalid("zipc_queue_recv", "buffer is NULL");
  if (size == nullptr) return invalid("zipc_queue_recv", "size is NULL");
  const std::span<std::byte> out(static_cast<std::byte*>(buffer), capacity);
  const zipc::IoResult r =
      try_once(timeout_ns) ? queue->queue.try_recv(out) : queue->queue.recv(out, timeout(timeout_ns));
  if (r.status == zipc::Status::ok || r.status == zipc::Status::too_large) *size = r.size;
  return from(r.status);
}

zipc_status_t zipc_queue_reserve(zipc_queue_t* queue, int64_t timeout_ns, zipc_write_loan_t* loan) {
  ZIPC_CHECK_QUEUE("zipc_queue_reserve");
  if (loan == nullptr) return invalid("zipc_queue_reserve", "loan is NULL");
  clear(loan);
  zipc::QueueWriteLoan w = queue->queue.reserve(timeout(timeout_ns));
  if (!w) return from(w.status());
  loan->data = w.data().data();
  loan->size = w.size();
  emplace<zipc::QueueWriteLoan>(loan->private_, LoanKind::queue_write, std::move(w));
  return ZIPC_OK;
}

zipc_status_t zipc_queue_reserve_size(zipc_queue_t* queue, size_t size, int64_t timeout_ns, zipc_write_loan_t* loan) {
  ZIPC_CHECK_QUEUE("zipc_queue_reserve_size");
  if (loan == nullptr) return invalid("zipc_queue_reserve_size", "loan is NULL");
  clear(loan);
  zipc::QueueWriteLoan w = queue->queue.reserve(size, timeout(timeout_ns));
  if (!w) return from(w.status());
  loan->data = w.data().data();
  loan->size = w.size();
  emplace<zipc::QueueWriteLoan>(loan->private_, LoanKind::queue_write, std::move(w));
  return ZIPC_OK;
}

zipc_status_t zipc_queue_acquire(zipc_queue_t* queue, int64_t timeout_ns, zipc_read_loan_t* loan) {
  ZIPC_CHECK_QUEUE("zipc_queue_acquire");
  if (loan == nullptr) return invalid("zipc_queue_acquire", "loan is NULL");
  clear(loan);
  zipc::QueueReadLoan r = queue->queue.acquire(timeout(timeout_ns));
  if (!r) return from(r.status());
  loan->data = r.data().data();
  loan->size = r.size();
  loan->sequence = r.sequence();
  emplace<zipc::QueueReadLoan>(loan->private_, LoanKind::queue_read, std::move(r));
  return ZIPC_OK;
}

zipc_status_t zipc_queue_send_batch(zipc_queue_t* queue, const zipc_bytes_t* msgs, size_t count, int64_t timeout_ns,
                                    size_t* sent) {
  ZIPC_CHECK_QUEUE("zipc_queue_send_batch");
  if (msgs == nullptr && count != 0) return invalid("zipc_queue_send_batch", "msgs is NULL");
  if (sent == nullptr) return invalid("zipc_queue_send_batch", "sent is NULL");
  for (size_t i = 0; i < count; ++i) {
    if (msgs[i].data == nullptr && msgs[i].size != 0)
      return invalid("zipc_queue_send_batch", "a message's data is NULL");
  }
  // In chunks of spans on the stack; only the first chunk waits.
  constexpr size_t kChunk = 64;
  std::array<std::span<const std::byte>, kChunk> spans;
  size_t done = 0;
  zipc::Status st = zipc::Status::ok;
  while (done < count) {
    const size_t n = std::min(kChunk, count - done);
    for (size_t i = 0; i < n; ++i) spans[i] = {static_cast<const std::byte*>(msgs[done + i].data), msgs[done + i].size};
    const size_t k = queue->queue.send_batch(std::span(spans.data(), n), timeout(done == 0 ? timeout_ns : 0), &st);
    done += k;
    if (k < n) break;
  }
  *sent = done;
  if (done == count) return ZIPC_OK;
  // A later chunk that found no room after the first was sent: say full, not timeout.
  return from(st == zipc::Status::ok ? zipc::Status::full : st);
}

zipc_status_t zipc_queue_recv_batch(zipc_queue_t* queue, size_t max, int64_t timeout_ns, zipc_message_fn fn,
                                    void* context, size_t* received) {
  ZIPC_CHECK_QUEUE("zipc_queue_recv_batch");
  if (fn == nullptr) return invalid("zipc_queue_recv_batch", "fn is NULL");
  if (received == nullptr) return invalid("zipc_queue_recv_batch", "received is NULL");
  zipc::Status st = zipc::Status::ok;
  const size_t n = queue->queue.recv_batch(
      max, timeout(timeout_ns), [&](std::span<const std::byte> m) { fn(context, m.data(), m.size()); }, &st);
  *received = n;
  if (n > 0) return ZIPC_OK;
  return from(st == zipc::Status::ok ? zipc::Status::empty : st);
}

zipc_status_t zipc_queue_reserve_batch(zipc_queue_t* queue, zipc_write_loan_t* loans, size_t count, int64_t timeout_ns,
                                       size_t* got) {
  ZIPC_CHECK_QUEUE("zipc_queue_reserve_batch");
  if (loans == nullptr && count != 0) return invalid("zipc_queue_reserve_batch", "loans is NULL");
  if (got == nullptr) return invalid("zipc_queue_reserve_batch", "got is NULL");
  constexpr size_t kChunk = 32;
  std::array<zipc::QueueWriteLoan, kChunk> chunk;
  size_t done = 0;
  zipc::Status st = zipc::Status::ok;
  while (done < count) {
    const size_t n = std::min(kChunk, count - done);
    const size_t k = queue->queue.reserve_batch(std::span(chunk.data(), n), timeout(done == 0 ? timeout_ns : 0), &st);
    for (size_t i = 0; i < k; ++i) {
      zipc_write_loan_t* l = &loans[done + i];
      clear(l);
      l->data = chunk[i].data().data();
      l->size = chunk[i].size();
      emplace<zipc::QueueWriteLoan>(l->private_, LoanKind::queue_write, std::move(chunk[i]));
    }
    done += k;
    if (k < n) break;
  }
  *got = done;
  if (done > 0) return ZIPC_OK;
  return from(st == zipc::Status::ok ? zipc::Status::full : st);
}

zipc_status_t zipc_queue_acquire_batch(zipc_queue_t* queue, zipc_read_loan_t* loans, size_t count, int64_t timeout_ns,
                                       size_t* got) {
  ZIPC_CHECK_QUEUE("zipc_queue_acquire_batch");
  if (loans == nullptr && count != 0) return invalid("zipc_queue_acquire_batch", "loans is NULL");
  if (got == nullptr) return invalid("zipc_queue_acquire_batch", "got is NULL");
  constexpr size_t kChunk = 32;
  std::array<zipc::QueueReadLoan, kChunk> chunk;
  size_t done = 0;
  zipc::Status st = zipc::Status::ok;
  while (done < count) {
    const size_t n = std::min(kChunk, count - done);
    const size_t k = queue->queue.acquire_batch(std::span(chunk.data(), n), timeout(done == 0 ? timeout_ns : 0), &st);
    for (size_t i = 0; i < k; ++i) {
      zipc_read_loan_t* l = &loans[done + i];
      clear(l);
      l->data = chunk[i].data().data();
      l->size = chunk[i].size();
      l->sequence = chunk[i].sequence();
      emplace<zipc::QueueReadLoan>(l->private_, LoanKind::queue_read, std::move(chunk[i]));
    }
    done += k;
    if (k < n) break;
  }
  *got = done;
  if (done > 0) return ZIPC_OK;
  return from(st == zipc::Status::ok ? zipc::Status::empty : st);
}

zipc_status_t zipc_queue_close(zipc_queue_t* queue) {
  ZIPC_CHECK_QUEUE("zipc_queue_close");
  queue->queue.close();
  return ZIPC_OK;
}

zipc_status_t zipc_queue_stats(const zipc_queue_t* queue, zipc_queue_stats_t* out) {
  ZIPC_CHECK_QUEUE("zipc_queue_stats");
  if (out == nullptr) return invalid("zipc_queue_stats", "out is NULL");
  const zipc::QueueStats s = queue->queue.stats();
  *out = {s.sent, s.received, s.full_waits, s.empty_waits, s.redelivered, s.abandoned};
  return ZIPC_OK;
}

zipc_status_t zipc_queue_info(const zipc_queue_t* queue, zipc_queue_info_t* out) {
  ZIPC_CHECK_QUEUE("zipc_queue_info");
  if (out == nullptr) return invalid("zipc_queue_info", "out is NULL");
  const zipc::Queue& q = queue->queue;
  *out = {q.block_size(),
          q.block_count(),
          q.size_approx(),
          static_cast<uint32_t>(q.producers()),
          static_cast<uint32_t>(q.consumers()),
          q.closed()};
  return ZIPC_OK;
}

zipc_status_t zipc_queue_recover(zipc_queue_t* queue, size_t* recovered) {
  ZIPC_CHECK_QUEUE("zipc_queue_recover");
  const size_t n = queue->queue.recover();
  if (recovered != nullptr) *recovered = n;
  return ZIPC_OK;
}

}  // extern "C"
