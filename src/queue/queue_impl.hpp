// Internals of zipc::Queue shared by queue.cpp (setup, API, waiting),
// queue_ring.cpp (the two ring algorithms) and queue_recovery.cpp.
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
#include "zipc/queue.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

// Builds an empty oversize region (control, heap control, TLSF arena) at
// `region`. Creator only, inside the segment's init.
void init_oversize(std::byte* region, std::uint64_t arena) noexcept;

struct QueueImpl {
  // Largest number of positions one internal call takes at once.
  static constexpr std::size_t kChunk = 64;
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
  bool mpmc = true;  // false: the single/single Lamport ring

  WaitOptions wait;
  Role role = Role::both;
  std::uint32_t slot = 0;
  layout::ParticipantRecord* me = nullptr;
  std::uint64_t my_pid = 0;
  std::uint64_t owner_hi = 0;  // (slot + 1) << 48
  bool single_p = false;       // holds the single-producer word
  bool single_c = false;       // holds the single-consumer word

  // Single/single ring: this side's private positions and cached copies.
  std::uint64_t p_reserved = 0;                              // next position to reserve
  std::uint64_t p_tail = 0;                                  // published tail
  std::uint64_t p_head_cache = 0;                            // last head seen
  std::uint64_t c_acquired = 0;                              // next position to acquire
  std::uint64_t c_head = 0;                                  // released up to here (me->done)
  std::uint64_t c_head_pub = 0;                              // last head stored to ctl->head
  std::uint64_t head_batch = 1;                              // publish head after this many releases
  const layout::ParticipantRecord* peer_consumer = nullptr;  // SPSC producer: the consumer's record
  std::uint64_t peer_pid = 0;                                // ... and who owned it when found
  const layout::ParticipantRecord* peer_producer = nullptr;  // SPSC consumer: the producer's record
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

  // ---- producer side (queue_ring.cpp). try_reserve takes up to max positions
  // [*first, *first + *count); commit/abort each; publish() makes them visible.
  Status try_reserve(std::uint64_t max, std::uint64_t* first, std::uint64_t* count) noexcept;
  void commit(std::uint64_t pos, std::uint32_t len) noexcept;
  void abort(std::uint64_t pos) noexcept;
  void publish(std::uint64_t committed) noexcept;  // SPSC tail store, stats, notify

  // ---- consumer side. try_acquire takes up to max deliverable positions into
  // out (skipping abandoned/aborted blocks). When the first message is larger
  // than size_limit it takes nothing and returns too_large with *first_size.
  Status try_acquire(std::uint64_t* out, std::size_t max, std::size_t* n, std::size_t size_limit,
                     std::size_t* first_size) noexcept;
  // Size of an acquired position, or > block when the cell was scribbled.
  [[nodiscard]] std::size_t acquired_size(std::uint64_t pos) const noexcept;
  // counted: a delivered message (false: a scribbled one dropped).
  void release(std::uint64_t pos, bool counted) noexcept;
  void released(std::size_t count) noexcept;  // SPSC head store (batched), stats, notify
  void flush_head() noexcept;                 // SPSC: publish every release now
  // SPSC producer: the consumer's released-up-to from its record (0 if unknown).
  std::uint64_t consumer_done() noexcept;
  // SPSC consumer: the end of what the producer published or still holds
  // reserved (max of tail and its claim). exact: after heavy_barrier(), and a
  // dead producer's reservation does not count; else a cheap hint.
  std::uint64_t spsc_frontier(bool exact) noexcept;

  // Wait predicates (cheap, read-only).
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
  // Waits (as this handle's WaitOptions say) until a producer or consumer
  // call could make progress, or the slice passes.
  Status wait_on(Event& ev, bool producer_side, Deadline slice) noexcept {
    return barrier.wait(
        ev, [&]() noexcept { return producer_side ? can_produce() : can_consume(); }, slice, wait);
  }

  // ---- blocking helpers (queue.cpp)
  // timeout <= 0: try once. The deadline is computed (a clock read) only
  // when the first try fails, and kept in *d across calls of one batch.
  template <class Attempt>
  Status wait_while(Status idle, Event& ev, bool producer_side, std::chrono::nanoseconds timeout,
                    std::optional<Deadline>* dl, std::uint64_t& waits, std::atomic<std::uint64_t>& waits_stat,
                    Attempt&& attempt) noexcept;
  Status reserve_wait(std::uint64_t max, std::uint64_t* first, std::uint64_t* count, std::chrono::nanoseconds timeout,
                      std::optional<Deadline>* d) noexcept;
  Status acquire_wait(std::uint64_t* out, std::size_t max, std::size_t* n, std::size_t size_limit,
                      std::size_t* first_size, std::chrono::nanoseconds timeout, std::optional<Deadline>* d) noexcept;
};

}  // namespace zipc::detail
