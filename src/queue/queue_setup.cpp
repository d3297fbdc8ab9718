// zipc::Queue setup and attach: option checks, the segment's geometry,
// create/open/attach/detach, taking the single-side words.
#include <algorithm>
#include <cstring>
#include <utility>

#include "core/options_mismatch.hpp"
#include "queue/lamport_ring.hpp"
#include "queue/queue_impl.hpp"
#include "zipc/process.hpp"
#include "zipc/queue.hpp"

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
  q->ring = q->multi_producer || q->multi_consumer || arena != 0 ? detail::RingKind::vyukov : detail::RingKind::lamport;
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
    if (has_role(role, Role::producer) && !q.multi_producer && !q.single_p) {
      const std::uint64_t dead = take_single(q, q.ctl->single_producer, "producer");
      q.single_p = true;
      if (dead != 0) q.ring == RingKind::vyukov ? (void)q.recover() : q.spsc_take_over_producer(dead);
    }
    if (has_role(role, Role::consumer) && !q.multi_consumer && !q.single_c) {
      const std::uint64_t dead = take_single(q, q.ctl->single_consumer, "consumer");
      q.single_c = true;
      if (dead != 0) q.ring == RingKind::vyukov ? (void)q.recover() : q.spsc_take_over_consumer(dead);
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
    if (!got && q.ring == RingKind::lamport) {
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
    if (q.ring == RingKind::lamport) {
      LamportRing::flush_head(q);  // a batched head goes out now
      // A loan never committed nor aborted (leaked) holds back the blocks
      // behind it: counted as abandoned, their marks cleared before a
      // successor can take the single-producer word (release below).
      if (q.single_p) LamportRing::abandon(q, q.p_tail, q.p_reserved);
    }
    release_single_sides(q);
    q.free_record(*q.me);
    q.me = nullptr;
  }
};

void queue_free(QueueImpl* q) noexcept {
  QueueAttach::detach(*q);
  delete q;
}

}  // namespace detail

// ---------------------------------------------------------------- setup

Queue::Queue() noexcept = default;
Queue::Queue(std::unique_ptr<QueueImpl> impl) noexcept : impl_(std::move(impl)) {}
Queue::Queue(Queue&&) noexcept = default;
Queue& Queue::operator=(Queue&& o) noexcept {
  if (this != &o) {
    if (impl_) detail::queue_drop(*impl_.release());
    impl_ = std::move(o.impl_);
  }
  return *this;
}
// A loan still out keeps the state (record, mapping) until it ends (docs/guide/handles.md).
Queue::~Queue() {
  if (impl_) detail::queue_drop(*impl_.release());
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

}  // namespace zipc
