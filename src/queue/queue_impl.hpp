// Internals of zipc::Queue: the state of one handle, shared by setup and
// attach (queue_setup.cpp), the two ring algorithms (lamport_ring.cpp,
// vyukov_ring.cpp), waiting (queue_wait.hpp), the public API glue
// (queue_api.cpp, queue_loans.cpp), the oversize region (queue_oversize.cpp)
// and crash recovery (queue_recovery.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/recovery_wait.hpp"
#include "heap/heap_tlsf.hpp"
#include "layout/queue_layout.hpp"
#include "layout/queue_oversize.hpp"
#include "sync/asymmetric_wait.hpp"
#include "sync/use_check.hpp"
#include "zipc/queue.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

// Builds an empty oversize region (control, heap control, TLSF arena) at
// `region`. Creator only, inside the segment's init.
void init_oversize(std::byte* region, std::uint64_t arena) noexcept;

inline bool has_role(Role r, Role bit) noexcept {
  return (static_cast<unsigned>(r) & static_cast<unsigned>(bit)) != 0;
}

// Which ring algorithm a queue runs, fixed by its geometry at open.
enum class RingKind : std::uint8_t {
  lamport,  // one producer and one consumer (lamport_ring.hpp)
  vyukov,   // either side may be many (SPMC, MPSC, MPMC), or an oversize region (vyukov_ring.hpp)
};

struct QueueImpl {
  // Largest number of positions one internal call takes at once.
  static constexpr std::size_t kChunk = 64;
  // Busy-poll waits poll the attempt itself this many times (~5 us of
  // PAUSEs here) before the recovery-sliced wait (queue_wait.hpp).
  static constexpr std::uint32_t kTightPolls = 256;
  // Bound on CAS retries of one try_* call, so a scribbled segment cannot
  // make a non-blocking call spin forever.
  static constexpr std::uint32_t kMaxRetries = 1u << 20;

  Segment seg;
  std::string name;
  layout::QueueControl* ctl = nullptr;
  layout::ParticipantRecord* recs = nullptr;
  std::byte* cells = nullptr;

  // Geometry, from the checksummed segment header (never re-read from the payload).
  std::uint64_t cap = 0;
  std::uint64_t mask = 0;
  std::uint64_t block = 0;
  std::uint64_t stride = 0;
  std::uint32_t max_participants = 0;
  std::uint64_t recovery_ns = 0;
  bool multi_producer = true;
  bool multi_consumer = true;
  RingKind ring = RingKind::vyukov;

  // Process-local references (docs/guide/handles.md): one for the handle, one per
  // live loan. The last to go lets go of the record and the mapping
  // (queue_drop). Not atomic: a handle and its loans are used by one thread
  // at a time.
  std::uint32_t refs = 1;
  // Debug builds: refuses a second thread inside this handle (Status::busy).
  [[no_unique_address]] UseCheck use;

  WaitOptions wait;
  Role role = Role::both;
  std::uint32_t slot = 0;
  layout::ParticipantRecord* me = nullptr;
  std::uint64_t my_pid = 0;
  std::uint64_t owner_hi = 0;  // (slot + 1) << 48
  bool single_p = false;       // holds the single-producer word
  bool single_c = false;       // holds the single-consumer word

  // LamportRing: this side's private positions and cached copies.
  std::uint64_t p_reserved = 0;                              // next position to reserve
  std::uint64_t p_tail = 0;                                  // published tail
  std::uint64_t p_head_cache = 0;                            // last head seen
  std::uint64_t c_acquired = 0;                              // next position to acquire
  std::uint64_t c_head = 0;                                  // released up to here (me->done)
  std::uint64_t c_head_pub = 0;                              // last head stored to ctl->head
  std::uint64_t head_batch = 1;                              // publish head after this many releases
  const layout::ParticipantRecord* peer_consumer = nullptr;  // Lamport producer: the consumer's record
  std::uint64_t peer_pid = 0;                                // ... and who owned it when found
  const layout::ParticipantRecord* peer_producer = nullptr;  // Lamport consumer: the producer's record
  std::uint64_t peer_producer_pid = 0;                       // ... and who owned it when found
  // Oversize region (queue_oversize.cpp); ov == nullptr: none.
  layout::OversizeControl* ov = nullptr;
  Arena ov_arena;                     // its heap control, arena base and size (sentinel included)
  std::uint64_t ov_last_recover = 0;  // monotonic ns of this handle's last recover() from a full region

  // Orphan-hint repair (recover()): next cell to look at when the hint says none.
  std::uint64_t orphan_cursor = 0;

  // The barriers of the asymmetric Dekker pairs (see asymmetric_wait.hpp),
  // set at attach.
  AsymmetricWait barrier;

  // Process-local filters in front of the shared stall clocks (consumer, producer side).
  LocalStall stall_local[2];

  // Local mirrors of this handle's counters (stored to `me` with relaxed stores).
  std::uint64_t n_sent = 0, n_received = 0, n_full_waits = 0, n_empty_waits = 0;
  std::uint64_t n_sent_bytes = 0;  // payload bytes committed (zipc top's bytes/s)

  // ---- barriers of the asymmetric Dekker pairs (see asymmetric_wait.hpp)
  // Frequent side: orders our earlier stores before our next loads.
  void store_load_barrier() const noexcept { barrier.store_load_barrier(); }
  // Rare side: afterwards, every frequent side's stores before its barrier
  // are visible to us, or its loads after it see our (and others') earlier stores.
  void heavy_barrier() const noexcept { barrier.heavy_barrier(); }

  // ---- geometry helpers
  [[nodiscard]] layout::CellHeader* cell(std::uint64_t pos) const noexcept {
    return reinterpret_cast<layout::CellHeader*>(cells + (pos & mask) * stride);
  }
  [[nodiscard]] std::byte* cell_data(std::uint64_t pos) const noexcept {
    return cells + (pos & mask) * stride + layout::kCellHeader;
  }
  // Length of the committed message in c (many ring; read after the acquire
  // of its seq): the size word, or the big length when it names the region.
  [[nodiscard]] std::size_t message_size(const layout::CellHeader* c) const noexcept {
    const std::uint32_t w = c->size.load(std::memory_order_relaxed);  // relaxed: ordered by seq
    if ((w & layout::kSizeBig) == 0) [[likely]]
      return w;
    if (ov == nullptr || (w & layout::kSizeMoved) != 0) return 0;
    return c->big_length.load(std::memory_order_relaxed);  // relaxed: as the size word
  }
  // Largest length a message can have (larger ones are scribbled).
  [[nodiscard]] std::size_t max_message() const noexcept { return ov == nullptr ? block : ov_arena.size; }
  [[nodiscard]] std::uint64_t owner_word(std::uint64_t pos, unsigned phase) const noexcept {
    return owner_hi | ((2 * pos + phase) & layout::kOwnerTagMask);
  }
  [[nodiscard]] bool is_closed() const noexcept {
    // relaxed: a hint checked on every call; close() follows with notify_all,
    // whose fence makes sleepers see it.
    return ctl->closed.load(std::memory_order_relaxed) != 0;
  }

  // Wait predicates of this queue's ring (cheap, read-only), for callers that
  // hold no ring type (the WaitSet); the API glue calls Ring::can_* directly.
  [[nodiscard]] bool can_produce() const noexcept;
  [[nodiscard]] bool can_consume() const noexcept;

  // ---- oversize region (queue_oversize.cpp): messages larger than a block.
  // The payload of one big message: what a consumer reads at an acquired position.
  enum class View : std::uint8_t { small, big, moved, corrupt };
  // Classifies acquired position pos; fills *data, *len (and *off for big).
  View view(std::uint64_t pos, const std::byte** data, std::size_t* len, std::uint64_t* off) const noexcept;
  // Allocates n bytes in the region (this handle's record references them),
  // waiting for room as a blocking reserve waits for a block.
  Status big_allocate(std::size_t n, std::chrono::nanoseconds timeout, std::optional<Deadline>* dl,
                      std::uint64_t* off) noexcept;
  void big_unallocate(std::uint64_t off) noexcept;  // never reached a cell: free it
  // Moves the reference from our record to reserved position pos.
  void big_attach(std::uint64_t pos, std::uint64_t off, std::size_t len) noexcept;
  void big_commit(std::uint64_t pos, std::size_t len) noexcept;  // as commit(), for a big cell
  void big_abort(std::uint64_t pos, std::uint64_t off) noexcept;
  void big_release(std::uint64_t pos, std::uint64_t off) noexcept;  // consumer: done with a big message
  [[nodiscard]] std::byte* big_data(std::uint64_t off) const noexcept { return ov_arena.base + off; }
  // A message over the block by copy: the payload is written into the region
  // before a position is taken (a producer waiting for region room must not
  // hold a position that consumers wait on).
  Status send_big(std::span<const std::byte> msg, std::chrono::nanoseconds timeout) noexcept;
  // Acquired position pos as a loan's data: true when *data, *len, *big (payload
  // offset + 1, 0 for a block) are set, or l says corrupt (*data null); false
  // when the position was skipped (a payload handed back): take another.
  bool big_loan(std::uint64_t pos, QueueReadLoan& l, const std::byte** data, std::size_t* len,
                std::uint64_t* big) noexcept;
  // Frees every allocation no live reference names (needs sweep_needed set).
  // Returns the number of blocks freed, -1 when it could not run now.
  long sweep() noexcept;

  // ---- recovery (queue_recovery.cpp)
  std::size_t recover() noexcept;
  void repair_orphan_hint() noexcept;  // multi: count orphans the hint lost
  void spsc_take_over_producer(std::uint64_t dead_pid) noexcept;
  void spsc_take_over_consumer(std::uint64_t dead_pid) noexcept;
  void free_record(layout::ParticipantRecord& r) noexcept;

  // ---- waking and waiting (asymmetric_wait.hpp)
  void wake(Event& ev, bool all) const noexcept { barrier.wake(ev, all); }

  // ---- blocking helpers (queue_wait.hpp), one instance per ring type.
  // timeout <= 0: try once. The deadline is computed (a clock read) only
  // when the first try fails, and kept in *d across calls of one batch.
  // wait_while tries once inline (the hot path: the ring had room or a
  // message) and only then calls wait_after_miss, kept out of line so the
  // producer's public calls stay small enough to inline the ring's fast path
  // (acquire_wait stays out of line: queue_wait.hpp says why).
  template <class Ring, class Attempt>
  Status wait_while(Status idle, Event& ev, bool producer_side, std::chrono::nanoseconds timeout,
                    std::optional<Deadline>* dl, std::uint64_t& waits, std::atomic<std::uint64_t>& waits_stat,
                    Attempt&& attempt) noexcept;
  template <class Ring, class Attempt>
  Status wait_after_miss(Status idle, Event& ev, bool producer_side, std::chrono::nanoseconds timeout,
                         std::optional<Deadline>* dl, std::uint64_t& waits, std::atomic<std::uint64_t>& waits_stat,
                         Attempt& attempt) noexcept;
  template <class Ring>
  Status reserve_wait(std::uint64_t max, std::uint64_t* first, std::uint64_t* count, std::chrono::nanoseconds timeout,
                      std::optional<Deadline>* d) noexcept;
  template <class Ring>
  Status acquire_wait(std::uint64_t* out, std::size_t max, std::size_t* n, std::size_t size_limit,
                      std::size_t* first_size, std::chrono::nanoseconds timeout, std::optional<Deadline>* d) noexcept;
};

// Detaches q (its record, its single-side words) and frees it: the handle
// and every loan of it are gone (queue_setup.cpp).
void queue_free(QueueImpl* q) noexcept;
// A loan of q ended: the last reference frees q.
inline void queue_drop(QueueImpl& q) noexcept {
  if (--q.refs == 0) [[unlikely]]
    queue_free(&q);
}

}  // namespace zipc::detail
