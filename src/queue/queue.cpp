// zipc::Queue: setup (create/open/attach), the public calls, waiting, loans.
#include "zipc/queue.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#include "core/options_mismatch.hpp"
#include "core/recovery_wait.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/membarrier.hpp"
#include "queue/queue_impl.hpp"
#include "zipc/process.hpp"

namespace zipc {

using detail::QueueImpl;
namespace L = layout;

namespace {

constexpr std::uint64_t kMaxCapacity = 1ull << 24;
constexpr std::uint64_t kMaxBlock = 16ull << 20;
constexpr std::uint64_t kMinOversize = 64ull << 10;

std::uint64_t oversize_arena(const QueueOptions& o) {
  return o.oversize_bytes == 0 ? 0 : round_up(o.oversize_bytes, L::kOversizeAlign);
}

// Payload bytes: control, records, cells, then the oversize region (if any).
std::uint64_t payload_bytes(std::uint64_t cap, std::uint64_t block, std::uint64_t maxp, std::uint64_t arena) {
  const std::uint64_t cells_end = L::queue_payload_size(cap, block, maxp);
  return arena == 0 ? cells_end : L::queue_oversize_offset(cells_end) + L::queue_oversize_size(arena);
}

std::string quoted(std::string_view name) {
  return "queue '" + std::string(name) + "'";
}

void validate_options(std::string_view name, const QueueOptions& o) {
  const auto bad = [&](const std::string& why) { throw Error(Errc::invalid_argument, quoted(name) + ": " + why); };
  if (o.block_count < 2 || o.block_count > kMaxCapacity || (o.block_count & (o.block_count - 1)) != 0)
    bad("block_count " + std::to_string(o.block_count) + " is not a power of two in [2, 2^24]");
  if (o.block_size < 8 || o.block_size > kMaxBlock || o.block_size % 8 != 0)
    bad("block_size " + std::to_string(o.block_size) + " is not a multiple of 8 in [8, 16 MiB]");
  if (o.max_participants < 2 || o.max_participants > 65535)
    bad("max_participants " + std::to_string(o.max_participants) + " is not in [2, 65535]");
  if (o.recovery_time.count() <= 0) bad("recovery_time must be positive");
  if (o.oversize_bytes != 0 && (o.oversize_bytes < kMinOversize || o.oversize_bytes > L::kMaxArena))
    bad("oversize_bytes " + std::to_string(o.oversize_bytes) + " is neither 0 nor in [64 KiB, 2^46]");
}

SegmentSpec make_spec(const QueueOptions& o) {
  SegmentSpec spec;
  spec.kind = SegmentKind::queue;
  const std::uint64_t arena = oversize_arena(o);
  spec.payload_size = payload_bytes(o.block_count, o.block_size, o.max_participants, arena);
  spec.params[L::kParamCapacity] = o.block_count;
  spec.params[L::kParamBlockSize] = o.block_size;
  spec.params[L::kParamModes] = (o.producers == Multiplicity::multi ? L::kModeMultiProducer : 0) |
                                (o.consumers == Multiplicity::multi ? L::kModeMultiConsumer : 0);
  spec.params[L::kParamMaxParticipants] = o.max_participants;
  spec.params[L::kParamRecoveryNs] =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(o.recovery_time).count());
  spec.params[L::kParamStride] = L::queue_stride(o.block_size);
  spec.params[L::kParamLayoutVersion] = arena == 0 ? L::kQueueLayoutVersion : L::kQueueLayoutVersionOversize;
  spec.params[L::kParamOversize] = arena;
  return spec;
}

InitFn make_init(const SegmentSpec& spec) {
  return [spec](std::byte* p, std::size_t n) {
    (void)n;  // the segment is at least spec.payload_size bytes and zero-filled
    auto* ctl = new (p) L::QueueControl{};
    ctl->magic = L::kQueueMagic;
    ctl->capacity = static_cast<std::uint32_t>(spec.params[L::kParamCapacity]);
    ctl->block_size = static_cast<std::uint32_t>(spec.params[L::kParamBlockSize]);
    ctl->stride = static_cast<std::uint32_t>(spec.params[L::kParamStride]);
    ctl->modes = static_cast<std::uint32_t>(spec.params[L::kParamModes]);
    ctl->max_participants = static_cast<std::uint32_t>(spec.params[L::kParamMaxParticipants]);
    ctl->recovery_ns = spec.params[L::kParamRecoveryNs];
    ctl->cells_offset = L::queue_cells_offset(ctl->max_participants);
    auto* recs = reinterpret_cast<L::ParticipantRecord*>(p + sizeof(L::QueueControl));
    for (std::uint32_t i = 0; i < ctl->max_participants; ++i) new (&recs[i]) L::ParticipantRecord{};
    std::byte* cells = p + ctl->cells_offset;
    for (std::uint64_t i = 0; i < ctl->capacity; ++i) {
      auto* c = new (cells + i * ctl->stride) L::CellHeader{};
      // relaxed: the segment's ready flag (release) publishes the whole payload.
      c->seq.store(i, std::memory_order_relaxed);
    }
    if (const std::uint64_t arena = spec.params[L::kParamOversize]; arena != 0) {
      detail::init_oversize(
          p + L::queue_oversize_offset(L::queue_payload_size(ctl->capacity, ctl->block_size, ctl->max_participants)),
          arena);
    }
  };
}

std::unique_ptr<QueueImpl> from_segment(Segment seg, std::string_view name, const WaitOptions& wait) {
  if (seg.read_only()) {
    throw Error(Errc::wrong_role, quoted(name) +
                                      ": a queue cannot be opened read-only (its producers and consumers "
                                      "both write its indexes); read-only is for topic subscribers");
  }
  const auto& prm = seg.params();
  const auto bad = [&](const std::string& why) { throw Error(Errc::corrupt_header, quoted(name) + ": " + why); };
  const std::uint64_t arena = prm[L::kParamOversize];
  if (prm[L::kParamLayoutVersion] != (arena == 0 ? L::kQueueLayoutVersion : L::kQueueLayoutVersionOversize))
    throw Error(Errc::version_mismatch, quoted(name) + ": created by queue layout version " +
                                            std::to_string(prm[L::kParamLayoutVersion]) +
                                            ", this library reads version " + std::to_string(L::kQueueLayoutVersion));
  const std::uint64_t cap = prm[L::kParamCapacity], block = prm[L::kParamBlockSize];
  const std::uint64_t maxp = prm[L::kParamMaxParticipants], modes = prm[L::kParamModes];
  if (cap < 2 || cap > kMaxCapacity || (cap & (cap - 1)) != 0) bad("capacity " + std::to_string(cap) + " out of range");
  if (block < 8 || block > kMaxBlock || block % 8 != 0) bad("block size " + std::to_string(block) + " out of range");
  if (maxp < 2 || maxp > 65535) bad("participant count " + std::to_string(maxp) + " out of range");
  if (modes > 3) bad("modes word " + std::to_string(modes) + " out of range");
  if (prm[L::kParamStride] != L::queue_stride(block)) bad("stride does not match the block size");
  if (prm[L::kParamRecoveryNs] == 0) bad("recovery time is zero");
  if (arena != 0 && (arena < kMinOversize || arena > L::kMaxArena || arena % L::kOversizeAlign != 0))
    bad("oversize region of " + std::to_string(arena) + " bytes out of range");
  const std::uint64_t need = payload_bytes(cap, block, maxp, arena);
  if (seg.payload_size() < need)
    bad("payload of " + std::to_string(seg.payload_size()) + " bytes is smaller than the " + std::to_string(need) +
        " its geometry needs");
  auto q = std::make_unique<QueueImpl>();
  q->name = std::string(name);
  q->cap = cap;
  q->mask = cap - 1;
  q->block = block;
  q->stride = L::queue_stride(block);
  q->max_participants = static_cast<std::uint32_t>(maxp);
  q->recovery_ns = prm[L::kParamRecoveryNs];
  q->multi_producer = (modes & L::kModeMultiProducer) != 0;
  q->multi_consumer = (modes & L::kModeMultiConsumer) != 0;
  // An oversize region needs the many ring's per-cell states (its sweep reads them).
  q->mpmc = q->multi_producer || q->multi_consumer || arena != 0;
  q->wait = wait;
  std::byte* p = seg.payload();
  q->ctl = reinterpret_cast<L::QueueControl*>(p);
  q->recs = reinterpret_cast<L::ParticipantRecord*>(p + sizeof(L::QueueControl));
  q->cells = p + L::queue_cells_offset(maxp);
  if (arena != 0) {
    std::byte* region = p + L::queue_oversize_offset(L::queue_payload_size(cap, block, maxp));
    q->ov = reinterpret_cast<L::OversizeControl*>(region);
    if (q->ov->magic != L::kOversizeMagic || q->ov->arena_size != arena) bad("oversize region header is damaged");
    q->ov_arena = detail::Arena{reinterpret_cast<L::HeapControl*>(region + L::kOversizeHeapOffset),
                                region + L::kOversizeArenaOffset, arena};
  }
  q->seg = std::move(seg);
  return q;
}

bool has(Role r, Role bit) {
  return (static_cast<unsigned>(r) & static_cast<unsigned>(bit)) != 0;
}

// Takes the exclusive producer (or consumer) word of a single-mode side.
// Returns the dead predecessor's packed id (0 if none).
std::uint64_t take_single(QueueImpl& q, std::atomic<std::uint64_t>& word, const char* what) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    // acquire: pairs with the release CAS/store of the previous holder.
    std::uint64_t w = word.load(std::memory_order_acquire);
    if (w != 0 && is_alive_packed(w)) {
      throw Error(Errc::busy, quoted(q.name) + ": single-" + what + " queue already has a live " + what + " (pid " +
                                  std::to_string(unpack(w).pid) + "); create it with " + what +
                                  "s = Multiplicity::multi to attach more");
    }
    // acq_rel: we become the only one; the predecessor's state is visible.
    if (word.compare_exchange_strong(w, q.my_pid, std::memory_order_acq_rel)) return w;
  }
  throw Error(Errc::busy, quoted(q.name) + ": could not take the single-" + what + " role (contended)");
}

}  // namespace

namespace detail {

struct QueueAttach {
  static bool take_record(QueueImpl& q) noexcept {
    for (std::uint32_t i = 0; i < q.max_participants; ++i) {
      std::uint64_t expected = 0;
      // acq_rel: pairs with free_record's release store; the record is zeroed.
      if (q.recs[i].pid.compare_exchange_strong(expected, q.my_pid, std::memory_order_acq_rel)) {
        q.slot = i;
        return true;
      }
    }
    return false;
  }

  // Takes the single-side words this role needs (not yet held), and takes
  // over from a dead predecessor. Needs no participant record of our own.
  static void take_single_sides(QueueImpl& q, Role role) {
    if (has(role, Role::producer) && !q.multi_producer && !q.single_p) {
      const std::uint64_t dead = take_single(q, q.ctl->single_producer, "producer");
      q.single_p = true;
      if (dead != 0) q.mpmc ? (void)q.recover() : q.spsc_take_over_producer(dead);
    }
    if (has(role, Role::consumer) && !q.multi_consumer && !q.single_c) {
      const std::uint64_t dead = take_single(q, q.ctl->single_consumer, "consumer");
      q.single_c = true;
      if (dead != 0) q.mpmc ? (void)q.recover() : q.spsc_take_over_consumer(dead);
    }
  }

  static void attach(QueueImpl& q, Role role) {
    q.role = role;
    q.my_pid = pack(ProcessId::current());
    if (q.my_pid == 0) throw Error(Errc::system, quoted(q.name) + ": cannot determine this process's identity");
    // Register for membarrier(2) (once per process): our wakes can then skip
    // the fence (asymmetric_wait.hpp).
    q.barrier = AsymmetricWait::here();
    bool got = take_record(q);
    if (!got) {
      q.recover();  // frees records of dead participants
      got = take_record(q);
    }
    if (!got && !q.mpmc) {
      // single/single: recover() keeps the record of a dead producer (consumer)
      // for the take-over, which frees it; with a full table, take over first.
      try {
        take_single_sides(q, role);
      } catch (...) {
        release_single_sides(q);
        throw;
      }
      got = take_record(q);
      if (!got) release_single_sides(q);
    }
    if (!got)
      throw Error(Errc::busy, quoted(q.name) + ": all " + std::to_string(q.max_participants) +
                                  " participant records are in use by live processes");
    q.me = &q.recs[q.slot];
    q.owner_hi = static_cast<std::uint64_t>(q.slot + 1) << L::kOwnerSlotShift;
    // relaxed: published by the acq_rel CAS on the single-side word below (the
    // producer finds the consumer's record by pid and role; a side taken
    // above, before we had a record, is found once this store is visible:
    // until then the peer reads "unknown", a hint).
    q.me->role.store(static_cast<std::uint32_t>(role), std::memory_order_relaxed);
    try {
      take_single_sides(q, role);
    } catch (...) {
      detach(q);
      throw;
    }
    // acquire: the other side's published positions.
    q.p_reserved = q.p_tail = q.ctl->tail.load(std::memory_order_acquire);
    q.p_head_cache = q.ctl->head.load(std::memory_order_acquire);
    q.c_acquired = q.c_head = q.c_head_pub = q.p_head_cache;
    q.head_batch = std::max<std::uint64_t>(1, std::min<std::uint64_t>(32, q.cap / 8));
  }

  static void release_single_sides(QueueImpl& q) noexcept {
    if (q.single_p) {
      std::uint64_t w = q.my_pid;
      // release: our last tail store is visible to a successor.
      q.ctl->single_producer.compare_exchange_strong(w, 0, std::memory_order_release, std::memory_order_relaxed);
      q.single_p = false;
    }
    if (q.single_c) {
      std::uint64_t w = q.my_pid;
      // release: our last head store is visible to a successor.
      q.ctl->single_consumer.compare_exchange_strong(w, 0, std::memory_order_release, std::memory_order_relaxed);
      q.single_c = false;
    }
  }

  static void detach(QueueImpl& q) noexcept {
    if (q.me == nullptr) return;
    q.flush_head();
    release_single_sides(q);
    q.free_record(*q.me);
    q.me = nullptr;
  }
};

// The wait behind every blocking producer or consumer call: try, then sleep
// on `ev` in the one recovery-sliced wait (recovery_wait.hpp) until attempt()
// returns something other than `idle`, or the deadline passes. The stall
// clock is shared: consumers blocked at head, producers at tail. A failed
// try_* call (timeout <= 0) looks at the clock too, so a survivor that only
// polls still recovers a dead peer once the stall is recovery_time old.
template <class Attempt>
Status QueueImpl::wait_while(Status idle, Event& ev, bool producer_side, std::chrono::nanoseconds timeout,
                             std::optional<Deadline>* dl, std::uint64_t& waits, std::atomic<std::uint64_t>& waits_stat,
                             Attempt&& attempt) noexcept {
  Status st = attempt();
  if (st != idle) return st;
  SharedStall stall(producer_side ? ctl->stall_producers : ctl->stall_consumers, recovery_ns,
                    &stall_local[producer_side ? 1 : 0]);
  // relaxed: the frontier the caller is blocked on, a key for the stall clock only.
  const auto key = [&]() noexcept { return (producer_side ? ctl->tail : ctl->head).load(std::memory_order_relaxed); };
  const auto again = [&]() noexcept {
    st = attempt();
    return st != idle;
  };
  if (timeout.count() <= 0) {
    if (poll_recovery(stall, key, [&]() noexcept { (void)recover(); })) (void)again();
    return st;
  }
  if (!dl->has_value()) *dl = Deadline::after(timeout);
  const Deadline d = **dl;
  if (!d.is_never() && platform::monotonic_ns() >= d.ns()) return Status::timeout;
  ++waits;
  waits_stat.store(waits, std::memory_order_relaxed);  // relaxed: statistics, single writer
  const bool done = recovery_sliced_wait(
      stall, d, again, key, [&](Deadline slice) noexcept { return wait_on(ev, producer_side, slice); },
      [&]() noexcept { (void)recover(); });
  return done ? st : Status::timeout;
}

Status QueueImpl::reserve_wait(std::uint64_t max, std::uint64_t* first, std::uint64_t* count,
                               std::chrono::nanoseconds timeout, std::optional<Deadline>* dl) noexcept {
  // API misuse: a handle attached without the producer role must not take
  // positions (on a single-producer queue it would break exclusivity).
  if (!has(role, Role::producer)) return Status::wrong_role;
  return wait_while(Status::full, ctl->not_full, true, timeout, dl, n_full_waits, me->full_waits,
                    [&]() noexcept { return try_reserve(max, first, count); });
}

Status QueueImpl::acquire_wait(std::uint64_t* out, std::size_t max, std::size_t* n, std::size_t size_limit,
                               std::size_t* first_size, std::chrono::nanoseconds timeout,
                               std::optional<Deadline>* dl) noexcept {
  if (!has(role, Role::consumer)) return Status::wrong_role;
  return wait_while(Status::empty, ctl->not_empty, false, timeout, dl, n_empty_waits, me->empty_waits, [&]() noexcept {
    Status st = try_acquire(out, max, n, size_limit, first_size);
    // Closed and drained, unless a dead consumer left messages to redeliver.
    if (st == Status::closed && mpmc && recover() > 0) st = try_acquire(out, max, n, size_limit, first_size);
    return st;
  });
}

}  // namespace detail

// ---------------------------------------------------------------- setup

Queue::Queue() noexcept = default;
Queue::Queue(std::unique_ptr<QueueImpl> impl) noexcept : impl_(std::move(impl)) {}
Queue::Queue(Queue&&) noexcept = default;
Queue& Queue::operator=(Queue&& o) noexcept {
  if (this != &o) {
    if (impl_) detail::QueueAttach::detach(*impl_);
    impl_ = std::move(o.impl_);
  }
  return *this;
}
Queue::~Queue() {
  if (impl_) detail::QueueAttach::detach(*impl_);
}

Queue Queue::create(std::string_view name, const QueueOptions& options, Role role) {
  validate_options(name, options);
  const SegmentSpec spec = make_spec(options);
  auto impl = from_segment(Segment::create(name, spec, make_init(spec), options.segment), name, options.wait);
  detail::QueueAttach::attach(*impl, role);
  return Queue(std::move(impl));
}

Queue Queue::open(std::string_view name, Role role, const WaitOptions& wait, const SegmentOptions& segment) {
  auto impl = from_segment(Segment::open(name, SegmentKind::queue, segment), name, wait);
  detail::QueueAttach::attach(*impl, role);
  return Queue(std::move(impl));
}

Queue Queue::open_or_create(std::string_view name, const QueueOptions& options, Role role, bool* created) {
  validate_options(name, options);
  const SegmentSpec spec = make_spec(options);
  bool made = false;
  auto seg = Segment::open_or_create(name, spec, make_init(spec), options.segment, &made);
  if (created) *created = made;
  if (seg.kind() != SegmentKind::queue)
    throw Error(Errc::wrong_kind, quoted(name) + ": the segment is a " + to_string(seg.kind()) + ", not a queue");
  const auto found = seg.params();
  auto impl = from_segment(std::move(seg), name, options.wait);  // checks the layout version first
  if (!made) {
    const auto& asked = spec.params;
    const auto multi = [](std::uint64_t modes, std::uint64_t bit) -> std::uint64_t { return (modes & bit) != 0; };
    detail::check_existing_geometry(
        quoted(name), options.accept_existing,
        {{"block_count", asked[L::kParamCapacity], found[L::kParamCapacity], ""},
         {"block_size", asked[L::kParamBlockSize], found[L::kParamBlockSize], " bytes"},
         {"producers (multi)", multi(asked[L::kParamModes], L::kModeMultiProducer),
          multi(found[L::kParamModes], L::kModeMultiProducer), ""},
         {"consumers (multi)", multi(asked[L::kParamModes], L::kModeMultiConsumer),
          multi(found[L::kParamModes], L::kModeMultiConsumer), ""},
         {"max_participants", asked[L::kParamMaxParticipants], found[L::kParamMaxParticipants], ""},
         {"recovery_time", asked[L::kParamRecoveryNs] / 1'000'000, found[L::kParamRecoveryNs] / 1'000'000, " ms"},
         {"oversize_bytes", asked[L::kParamOversize], found[L::kParamOversize], " bytes"}});
  }
  detail::QueueAttach::attach(*impl, role);
  return Queue(std::move(impl));
}

Queue Queue::open_fd(int fd, Role role, const WaitOptions& wait, const SegmentOptions& segment) {
  const std::string name = "fd " + std::to_string(fd);
  auto impl = from_segment(Segment::open_fd(fd, SegmentKind::queue, segment, name), name, wait);
  detail::QueueAttach::attach(*impl, role);
  return Queue(std::move(impl));
}

bool Queue::remove(std::string_view name, const SegmentOptions& segment) {
  return Segment::remove(name, segment);
}

// ---------------------------------------------------------------- copy API

Status Queue::try_send(std::span<const std::byte> msg) noexcept {
  return send(msg, Timeout::zero());
}

Status Queue::send(std::span<const std::byte> msg, Timeout timeout) noexcept {
  QueueImpl& q = *impl_;
  if (msg.size() > q.block) [[unlikely]]
    return q.send_big(msg, timeout);
  std::uint64_t pos = 0, n = 0;
  std::optional<Deadline> d;
  const Status st = q.reserve_wait(1, &pos, &n, timeout, &d);
  if (st != Status::ok) return st;
  if (!msg.empty()) std::memcpy(q.cell_data(pos), msg.data(), msg.size());
  q.commit(pos, static_cast<std::uint32_t>(msg.size()));
  q.publish(1);
  return Status::ok;
}

IoResult Queue::try_recv(std::span<std::byte> out) noexcept {
  return recv(out, Timeout::zero());
}

IoResult Queue::recv(std::span<std::byte> out, Timeout timeout) noexcept {
  QueueImpl& q = *impl_;
  std::uint64_t pos = 0;
  std::size_t n = 0, first = 0;
  std::optional<Deadline> d;
  Status st = q.acquire_wait(&pos, 1, &n, out.size(), &first, timeout, &d);
  if (st == Status::too_large) return {st, first};
  if (st != Status::ok) return {st, 0};
  if (q.ov != nullptr) [[unlikely]] {
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
      q.release(pos, false);  // scribbled, or handed back by a consumer that died releasing it
      q.released(0);
      if (v != QueueImpl::View::moved) return {Status::corrupt, 0};
      st = q.acquire_wait(&pos, 1, &n, out.size(), &first, timeout, &d);
      if (st == Status::too_large) return {st, first};
      if (st != Status::ok) return {st, 0};
    }
  }
  const std::size_t sz = q.acquired_size(pos);
  if (sz > q.block || sz > out.size()) {  // scribbled after the size check: drop it
    q.release(pos, false);
    q.released(0);
    return {Status::corrupt, 0};
  }
  if (sz) std::memcpy(out.data(), q.cell_data(pos), sz);
  q.release(pos, true);
  q.released(1);
  return {Status::ok, sz};
}

std::size_t Queue::send_batch(std::span<const std::span<const std::byte>> msgs, Timeout timeout,
                              Status* status) noexcept {
  QueueImpl& q = *impl_;
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
    st = q.reserve_wait(run, &first, &n, timeout, &d);
    if (st != Status::ok) break;
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto& m = msgs[done + i];
      if (!m.empty()) std::memcpy(q.cell_data(first + i), m.data(), m.size());
      q.commit(first + i, static_cast<std::uint32_t>(m.size()));
    }
    q.publish(n);
    done += n;
  }
  if (status) *status = done == msgs.size() ? Status::ok : st;
  return done;
}

std::size_t Queue::recv_batch_impl(std::size_t max, Timeout timeout, BatchFn fn, void* ctx, Status* status) noexcept {
  QueueImpl& q = *impl_;
  std::optional<Deadline> d;
  std::size_t total = 0;
  Status st = Status::ok;
  std::uint64_t pos[QueueImpl::kChunk];
  while (total < max) {
    std::size_t n = 0, first = 0;
    st = q.acquire_wait(pos, std::min(max - total, QueueImpl::kChunk), &n, static_cast<std::size_t>(-1), &first,
                        timeout, &d);
    if (st != Status::ok) break;
    std::size_t good = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (q.ov != nullptr) [[unlikely]] {
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
          q.release(pos[i], false);
          continue;
        }
      }
      const std::size_t sz = q.acquired_size(pos[i]);
      if (sz <= q.block) {
        fn(ctx, {q.cell_data(pos[i]), sz});
        ++good;
      } else {
        st = Status::corrupt;
      }
      q.release(pos[i], sz <= q.block);
    }
    q.released(good);
    total += good;
    timeout = Timeout::zero();  // only the first chunk waits
  }
  if (status) *status = total > 0 ? Status::ok : st;
  return total;
}

// ---------------------------------------------------------------- loans

// reserve() and acquire() return one named loan from every path, so it is
// built in the caller's slot (NRVO): no move, no destruction of a temporary.
QueueWriteLoan Queue::reserve(Timeout timeout) noexcept {
  QueueImpl& q = *impl_;
  std::uint64_t pos = 0, n = 0;
  std::optional<Deadline> d;
  QueueWriteLoan l;
  l.status_ = q.reserve_wait(1, &pos, &n, timeout, &d);
  if (l.status_ != Status::ok) return l;
  l.impl_ = &q;
  l.data_ = q.cell_data(pos);
  l.capacity_ = q.block;
  l.pos_ = pos;
  return l;
}

std::size_t Queue::reserve_batch(std::span<QueueWriteLoan> out, Timeout timeout, Status* status) noexcept {
  QueueImpl& q = *impl_;
  std::uint64_t first = 0, n = 0;
  std::optional<Deadline> d;
  const Status st = out.empty() ? Status::ok : q.reserve_wait(out.size(), &first, &n, timeout, &d);
  if (status) *status = st;
  if (st != Status::ok) return 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    QueueWriteLoan l;
    l.impl_ = &q;
    l.data_ = q.cell_data(first + i);
    l.capacity_ = q.block;
    l.pos_ = first + i;
    out[i] = std::move(l);
  }
  return n;
}

QueueReadLoan Queue::acquire(Timeout timeout) noexcept {
  QueueImpl& q = *impl_;
  std::uint64_t pos = 0;
  std::size_t n = 0, first = 0;
  std::optional<Deadline> d;
  QueueReadLoan l;
  l.status_ = q.acquire_wait(&pos, 1, &n, static_cast<std::size_t>(-1), &first, timeout, &d);
  if (l.status_ != Status::ok) return l;
  if (q.ov != nullptr) [[unlikely]] {
    const std::byte* data = nullptr;
    std::size_t len = 0;
    std::uint64_t big = 0;
    while (!q.big_loan(pos, l, &data, &len, &big)) {
      l.status_ = q.acquire_wait(&pos, 1, &n, static_cast<std::size_t>(-1), &first, timeout, &d);
      if (l.status_ != Status::ok) return l;
    }
    if (data == nullptr) return l;
    l.impl_ = &q;
    l.data_ = data;
    l.size_ = len;
    l.pos_ = pos;
    l.big_ = big;
    return l;
  }
  const std::size_t sz = q.acquired_size(pos);
  if (sz > q.block) {
    q.release(pos, false);
    q.released(0);
    l.status_ = Status::corrupt;
    return l;
  }
  l.impl_ = &q;
  l.data_ = q.cell_data(pos);
  l.size_ = sz;
  l.pos_ = pos;
  return l;
}

std::size_t Queue::acquire_batch(std::span<QueueReadLoan> out, Timeout timeout, Status* status) noexcept {
  QueueImpl& q = *impl_;
  std::uint64_t pos[QueueImpl::kChunk];
  std::size_t n = 0, first = 0;
  std::optional<Deadline> d;
  const Status st = out.empty() ? Status::ok
                                : q.acquire_wait(pos, std::min(out.size(), QueueImpl::kChunk), &n,
                                                 static_cast<std::size_t>(-1), &first, timeout, &d);
  if (status) *status = st;
  if (st != Status::ok) return 0;
  std::size_t got = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (q.ov != nullptr) [[unlikely]] {
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
      l.data_ = data;
      l.size_ = len;
      l.pos_ = pos[i];
      l.big_ = big;
      out[got++] = std::move(l);
      continue;
    }
    const std::size_t sz = q.acquired_size(pos[i]);
    if (sz > q.block) {
      q.release(pos[i], false);
      q.released(0);
      if (status) *status = Status::corrupt;
      continue;
    }
    QueueReadLoan l;
    l.impl_ = &q;
    l.data_ = q.cell_data(pos[i]);
    l.size_ = sz;
    l.pos_ = pos[i];
    out[got++] = std::move(l);
  }
  return got;
}

QueueWriteLoan::QueueWriteLoan(QueueWriteLoan&& o) noexcept
    : impl_(std::exchange(o.impl_, nullptr)),
      data_(o.data_),
      capacity_(o.capacity_),
      pos_(o.pos_),
      big_(o.big_),
      status_(o.status_) {}
QueueWriteLoan& QueueWriteLoan::operator=(QueueWriteLoan&& o) noexcept {
  if (this != &o) {
    if (impl_ != nullptr) abort();
    // Field by field: reserve() just filled o (see platform::keep_apart).
    impl_ = std::exchange(o.impl_, nullptr);
    platform::keep_apart();
    data_ = o.data_;
    platform::keep_apart();
    capacity_ = o.capacity_;
    platform::keep_apart();
    pos_ = o.pos_;
    big_ = o.big_;
    status_ = o.status_;
  }
  return *this;
}

CommitResult QueueWriteLoan::commit(std::size_t n) noexcept {
  if (!impl_) return {status_ == Status::ok ? Status::closed : status_, 0};
  if (n > capacity_) return {Status::too_large, 0};
  if (big_ != 0) [[unlikely]]
    impl_->big_commit(pos_, n);
  else
    impl_->commit(pos_, static_cast<std::uint32_t>(n));
  impl_->publish(1);
  impl_ = nullptr;
  return {Status::ok, pos_};
}

void QueueWriteLoan::abort() noexcept {
  if (!impl_) return;
  if (big_ != 0) [[unlikely]] {
    impl_->big_abort(pos_, big_ - 1);
  } else {
    impl_->abort(pos_);
    impl_->publish(0);
  }
  impl_ = nullptr;
}

QueueReadLoan::QueueReadLoan(QueueReadLoan&& o) noexcept
    : impl_(std::exchange(o.impl_, nullptr)),
      data_(o.data_),
      size_(o.size_),
      pos_(o.pos_),
      big_(o.big_),
      status_(o.status_) {}
QueueReadLoan& QueueReadLoan::operator=(QueueReadLoan&& o) noexcept {
  if (this != &o) {
    if (impl_ != nullptr) release();
    // Field by field: acquire() just filled o (see platform::keep_apart).
    impl_ = std::exchange(o.impl_, nullptr);
    platform::keep_apart();
    data_ = o.data_;
    platform::keep_apart();
    size_ = o.size_;
    platform::keep_apart();
    pos_ = o.pos_;
    big_ = o.big_;
    status_ = o.status_;
  }
  return *this;
}

void QueueReadLoan::release() noexcept {
  if (!impl_) return;
  if (big_ != 0) [[unlikely]] {
    impl_->big_release(pos_, big_ - 1);
  } else {
    impl_->release(pos_, true);
    impl_->released(1);
  }
  impl_ = nullptr;
}

// ---------------------------------------------------------------- control

void Queue::close() noexcept {
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
  return impl_->is_closed();
}

QueueStats Queue::stats() const noexcept {
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

std::size_t Queue::recover() noexcept {
  return impl_->recover();
}
std::size_t Queue::block_size() const noexcept {
  return impl_->block;
}
std::size_t Queue::block_count() const noexcept {
  return impl_->cap;
}
std::size_t Queue::oversize_bytes() const noexcept {
  return impl_->ov_arena.size;
}
std::size_t Queue::size_approx() const noexcept {
  // relaxed: an estimate.
  const std::uint64_t t = impl_->ctl->tail.load(std::memory_order_relaxed);
  const std::uint64_t h = impl_->ctl->head.load(std::memory_order_relaxed);
  return t > h ? std::min<std::uint64_t>(t - h, impl_->cap) : 0;
}
Multiplicity Queue::producers() const noexcept {
  return impl_->multi_producer ? Multiplicity::multi : Multiplicity::single;
}
Multiplicity Queue::consumers() const noexcept {
  return impl_->multi_consumer ? Multiplicity::multi : Multiplicity::single;
}
const Segment& Queue::segment() const noexcept {
  return impl_->seg;
}

}  // namespace zipc
