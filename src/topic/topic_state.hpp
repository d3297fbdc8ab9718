// Internal: what every Topic, Publisher and Subscriber handle of one mapping shares.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/racy_copy.hpp"
#include "core/recovery_wait.hpp"
#include "layout/topic_layout.hpp"
#include "sync/asymmetric_wait.hpp"
#include "zipc/segment.hpp"
#include "zipc/topic.hpp"

namespace zipc::detail {

struct TopicState {
  AsymmetricWait barrier;  // how this process wakes and waits (set at attach)
  Segment segment;
  layout::TopicControl* control = nullptr;
  layout::SubscriberSlot* subscribers = nullptr;
  std::byte* ring = nullptr;
  std::uint64_t capacity = 0;  // validated copies of the immutable config
  std::uint64_t mask = 0;
  std::uint32_t max_message = 0;
  std::uint32_t max_subscribers = 0;
  layout::PublisherMode mode = layout::PublisherMode::single;
  WaitOptions wait{};
  std::uint64_t recovery_ns = 1'000'000'000;
  bool streaming_stores = false;
  // Mapped read-only (SegmentOptions::read_only): only lossy subscribers,
  // which take no slot, run no recovery and sleep without registering.
  bool read_only = false;
  // Where a read-only handle's subscribers keep their statistics (they hold
  // no slot in the topic): private memory, seen by nobody else.
  layout::SubscriberSlot local_slot{};
  std::uint64_t me = 0;  // packed ProcessId of this process (refreshed per attach)
  // Identity of this topic's incarnation (its segment header checksum): a
  // reader seat left by a reader of an earlier topic of the same name differs.
  std::uint64_t incarnation = 0;
  // An odd commit version that stayed odd for a whole wait (read_commit_pair):
  // a dead or scribbled commit, not waited for again while it stays the same.
  mutable std::atomic<std::uint64_t> stuck_version{0};
  // Process-local filter in front of the shared stall clock (recovery_wait.hpp).
  LocalStall stall_local;

  layout::PublisherLine& pub() const noexcept { return control->pub; }
  layout::EventLine& events() const noexcept { return control->events; }
  layout::AdminLine& admin() const noexcept { return control->admin; }
  std::uint64_t index(std::uint64_t position) const noexcept { return position & mask; }
  std::byte* at(std::uint64_t position) const noexcept { return ring + index(position); }
  // Largest claim a publisher can make: a record plus the padding before it.
  std::uint64_t max_claim() const noexcept { return 2 * layout::record_bytes(max_message); }
  const std::string& name() const noexcept { return segment.name(); }
};

// Positions are multiples of the record alignment; one read from shared memory that is not was scribbled.
inline bool aligned(std::uint64_t position) noexcept {
  return position % layout::kRecordAlign == 0;
}

// The position tag of the header at `position`, stored last (release) when
// a record is committed: readers right behind may see a record complete
// before the cursor says so (one cache-line transfer instead of two).
inline std::atomic_ref<std::uint64_t> tag_of(const TopicState& s, std::uint64_t position) noexcept {
  return std::atomic_ref<std::uint64_t>(reinterpret_cast<layout::RecordHeader*>(s.at(position))->position);
}

// Where a record at `position` really starts: the implicit padding (fewer than
// a header's bytes before the end of the ring) is skipped.
inline std::uint64_t skip_implicit_padding(const TopicState& s, std::uint64_t position) noexcept {
  const std::uint64_t room = s.capacity - s.index(position);
  return room < layout::kRecordHeaderSize ? position + room : position;
}

// The one way to read a record header: a private copy of the header at
// `position`. Every field used after check_record comes from the copy, so a
// peer rewriting the ring meanwhile cannot change a length already checked.
// The copy may race with a publisher overwriting the record (lossy readers,
// joiners walking old records): such callers validate it and re-check
// `oldest` afterwards (fence_acquire first).
inline layout::RecordHeader header_at(const TopicState& s, std::uint64_t position) noexcept {
  layout::RecordHeader h;
  racy_copy(&h, s.at(position), sizeof h);
  return h;
}

struct RecordCheck {
  bool ok = false;
  std::uint64_t total = 0;  // bytes the record occupies
  layout::RecordKind kind = layout::RecordKind::data;
};

// Validates a header read at `position` (already past implicit padding) whose
// record must end at or before `limit`. Never trusts a field unchecked. `h`
// must be a private copy of the header: a field re-read from the ring after
// this check may have been scribbled since, so callers use the copy's fields.
RecordCheck check_record(const TopicState& s, const layout::RecordHeader& h, std::uint64_t position,
                         std::uint64_t limit) noexcept;

// Reads a consistent (cursor, next_sequence) pair; false if none could be had.
// A version caught odd (a commit half-way) is waited for, up to a quarter of
// the recovery time, unless that same odd value already outlasted such a wait.
// A writable handle settles a version whose writer died half-way
// (settle_dead_commit) and reads on.
bool read_commit_pair(const TopicState& s, std::uint64_t* cursor, std::uint64_t* next_sequence) noexcept;

// The odd value a writer of the (cursor, next_sequence) pair stores first,
// given the version `v` it read; it stores that plus one when done. v + 1 after
// an even v. After an odd v (a writer died half-way, or a settle raced us):
// v + 2, so that no version a reader saw on one side of our change is the
// value we leave (a reader compares its two reads of the version).
inline std::uint64_t odd_version_after(std::uint64_t v) noexcept {
  return (v + 1) | 1;
}

// A commit version left odd by a writer that died between its two version
// stores: makes the pair consistent (next_sequence rolled back to the first
// finished record at the cursor when the writer died before moving the
// cursor) and the version even, under the recovery lock, then recovers the
// dead claim at once. Only when no live publisher can be half-way through a
// commit: single mode, the publisher is dead or gone; multi mode, no live
// publisher's claim is at the cursor (the commit token). True when the
// version is even or no longer the odd value it found (settled here, or
// moved on by a commit): read the pair again.
bool settle_dead_commit(const TopicState& s) noexcept;

// Sequence of the first data record at or after `position` (a record
// boundary in [oldest, cursor]); false if the walk met garbage or was lapped.
bool sequence_at(const TopicState& s, std::uint64_t position, std::uint64_t* sequence) noexcept;

// True when the commit version is an odd value that already outlasted a wait:
// a reader failing to find a sequence then has nothing to wait for.
bool commit_stuck(const TopicState& s) noexcept;

// Finds the position of the data record with sequence `seq`, walking from
// oldest. Returns false when it is not in [oldest, cursor]; *oldest_seq is
// then the oldest available sequence.
bool find_sequence(const TopicState& s, std::uint64_t seq, std::uint64_t* position, std::uint64_t* oldest_seq) noexcept;

// Hole recovery: when the commit frontier `stalled_cursor` is stuck and the
// publisher owning the claim there is dead, keeps the records it finished
// (tag stored) and turns the rest of the claim into an abandoned record, then
// moves the cursor past it. Callers decide when (the recovery time, or a dead
// predecessor found at attach). True when the cursor moved.
bool recover_hole(TopicState& s, std::uint64_t stalled_cursor) noexcept;

// The shared stall clock of the commit frontier (recovery_wait.hpp), keyed by the cursor.
inline SharedStall cursor_stall(TopicState& s) noexcept {
  return SharedStall(s.admin().stall_cursor, s.recovery_ns, &s.stall_local);
}

// A claim stuck at the frontier: recovers it (and every dead claim after it)
// once the shared stall clock says so. For callers that found nothing to do
// without waiting (try_read): two loads when nothing is claimed.
void poll_stuck_claim(TopicState& s) noexcept;

// Recovery for a waiter: turns the dead claims at the current frontier into holes.
void recover_frontier(TopicState& s) noexcept;

// Test points: places where a test acts between two steps, as a racing or
// hostile peer would at that instant (tests/topic/topic_race_test.cpp). A weak
// symbol that only the topic tests define: elsewhere its address is null, so
// a point costs one compare with a link-time constant.
enum class TestPoint : std::uint8_t {
  reader_checked_record,   // a reliable reader validated the record at `position`, before using it
  subscriber_slot_freed,   // a publisher freed the slot of a dead subscriber (`position`: slot index)
  before_claim_cas,        // multi mode: a publisher stored its intent `position`, before the tail CAS
  before_last_version,     // multi mode or recovery: the cursor moved to `position`, before the last version store
  recovery_read_frontier,  // recovery read the cursor `position` of a stalled claim, before it scans the owners
};
void topic_test_point(TestPoint point, std::uint64_t position) noexcept __attribute__((weak));
inline void test_point(TestPoint point, std::uint64_t position) noexcept {
  if (topic_test_point != nullptr) topic_test_point(point, position);
}

// The one writer of the (cursor, next_sequence) pair (read_commit_pair is its
// reader): the version odd while the pair changes, then even. The odd value
// is odd_version_after the one read, so a version a writer that died
// half-way left odd is moved on, not reused. The cursor store passes the
// commit token on; when the next holder may already be committing (multi
// mode, and recovery: `token_passes`), it may have read our odd version and
// be writing the pair under a later one, so our last store is a CAS from our
// own odd value and never sets the version back under it.
inline void write_commit_pair(const TopicState& s, std::uint64_t cursor, std::uint64_t next,
                              bool token_passes) noexcept {
  auto& pub = s.pub();
  // relaxed + release fence: the version is odd before either half of the pair changes.
  const std::uint64_t odd = odd_version_after(pub.commit_version.load(std::memory_order_relaxed));
  pub.commit_version.store(odd, std::memory_order_relaxed);
  fence_release();
  pub.next_sequence.store(next, std::memory_order_relaxed);  // relaxed: the cursor's release covers it
  // release: publishes the records (and next_sequence) to readers and the token to the next claimant.
  pub.cursor.store(cursor, std::memory_order_release);
  if (!token_passes) {
    pub.commit_version.store(odd + 1, std::memory_order_release);  // release: the pair is consistent again
    return;
  }
  test_point(TestPoint::before_last_version, cursor);
  std::uint64_t expected = odd;
  // release: the pair is consistent again; relaxed on failure: settled, or moved on by the next holder.
  (void)pub.commit_version.compare_exchange_strong(expected, odd + 1, std::memory_order_release,
                                                   std::memory_order_relaxed);
}

[[noreturn]] void topic_fail(Errc code, std::string_view name, const std::string& why);

// A plain (not durable) subscriber slot for `owner` (this process, or the
// reader a publisher adopts): a free one, else one whose owner died, else a
// durable slot whose position was released. Stores proxy (0, or seat + 1)
// before returning; the caller then stores the mode and position. Throws busy.
std::uint32_t claim_plain_slot(TopicState& s, std::uint64_t owner, std::uint32_t proxy);

}  // namespace zipc::detail
