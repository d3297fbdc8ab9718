// Topic crash recovery: a dead publisher's claim at the commit frontier becomes a hole.
#include <algorithm>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "topic/topic_state.hpp"
#include "zipc/log.hpp"
#include "zipc/process.hpp"

namespace zipc {

namespace detail {

namespace {

// The recovery lock: a packed ProcessId (`me`, never 0), taken over when its holder is dead.
bool take_recovery_lock(const TopicState& s, std::uint64_t me) noexcept {
  auto& admin = s.admin();
  std::uint64_t holder = 0;
  // acq_rel: taking the lock orders our reads after the previous recoverer's writes.
  if (admin.recovery_owner.compare_exchange_strong(holder, me, std::memory_order_acq_rel)) return true;
  if (holder == me || is_alive_packed(holder)) return false;
  // acq_rel: as above, stealing from a dead holder.
  return admin.recovery_owner.compare_exchange_strong(holder, me, std::memory_order_acq_rel);
}

void release_recovery_lock(const TopicState& s) noexcept {
  // release: our writes happen before the next recoverer's.
  s.admin().recovery_owner.store(0, std::memory_order_release);
}

// No live publisher can be half-way through writing the pair: single mode,
// its publisher is gone or dead; multi mode, no live publisher's claim is at
// the cursor (only the claim there, holding the commit token, writes the
// pair; a live publisher that left the version odd after moving the cursor
// has nothing left to write but the version, which write_commit_pair's CAS respects).
bool no_live_committer(const TopicState& s) noexcept {
  if (s.mode == layout::PublisherMode::single) {
    // acquire: pairs with the attach CAS.
    const std::uint64_t owner = s.admin().single_publisher.load(std::memory_order_acquire);
    return owner == 0 || !is_alive_packed(owner);
  }
  // acquire: pairs with the claim CAS (release), which follows the claimant's
  // intent store: every claim below the tail read here has its intent visible.
  (void)s.pub().tail.load(std::memory_order_acquire);
  // acquire: pairs with the commit's release store of the cursor.
  const std::uint64_t c = s.pub().cursor.load(std::memory_order_acquire);
  for (auto& slot : s.control->publishers) {
    const std::uint64_t owner = slot.owner.load(std::memory_order_acquire);  // acquire: pairs with attach
    // acquire: the claim's intent is visible through the tail's acquire above;
    // a later one pairs with its release store, which follows a commit.
    if (owner != 0 && slot.intent.load(std::memory_order_acquire) == c && is_alive_packed(owner)) return false;
  }
  // A committer the scan missed had moved its intent on after committing:
  // the cursor moved (as in recover_claim). acquire: as the load above.
  return s.pub().cursor.load(std::memory_order_acquire) == c;
}

// One claim at the frontier `stalled_cursor`: if its owner is dead, keeps what
// it finished and turns the rest into a hole. Runs under the recovery lock.
// True when the cursor moved.
bool recover_claim(const TopicState& s, std::uint64_t stalled_cursor) noexcept {
  auto& pub = s.pub();
  auto& admin = s.admin();
  bool moved = false;
  // acquire: pairs with the release store of cursor.
  const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);
  // acquire: pairs with the claim CAS (release), which publishes the claimant's intent.
  const std::uint64_t t = pub.tail.load(std::memory_order_acquire);
  if (c == stalled_cursor && t > c && t - c <= s.capacity && aligned(c) && aligned(t)) {
    detail::test_point(detail::TestPoint::recovery_read_frontier, c);
    std::uint64_t end = t;
    bool owner_alive = false;
    bool owner_known = false;
    if (s.mode == layout::PublisherMode::single) {
      // acquire: pairs with the attach CAS.
      const std::uint64_t owner = admin.single_publisher.load(std::memory_order_acquire);
      owner_known = owner != 0;
      owner_alive = owner != 0 && is_alive_packed(owner);
    } else {
      for (auto& slot : s.control->publishers) {
        const std::uint64_t owner = slot.owner.load(std::memory_order_acquire);  // acquire: pairs with attach
        if (owner == 0) continue;
        // acquire: the claim's intent is made visible by the tail acquire above
        // (intent precedes the claim CAS); a later intent pairs with its release
        // store, which follows that publisher's commit (see the re-read below).
        const std::uint64_t intent = slot.intent.load(std::memory_order_acquire);
        if (intent == c) {
          owner_known = true;
          if (is_alive_packed(owner)) owner_alive = true;
        } else if (intent > c && intent < end && aligned(intent)) {
          end = intent;  // the next claim starts there: our hole ends there
        }
      }
    }
    (void)owner_known;
    // A live claimant keeps its intent at its claim until it has committed,
    // so a scan that missed the owner of the claim at c came after that
    // commit: the cursor has moved, and the claim is no hole. (Without this
    // re-read, a record committed between our cursor load and the scan was
    // overwritten by a hole: docs/design/topic.md, "A machine-checked model".)
    // acquire: pairs with the committer's release store of the cursor, which
    // precedes its next intent store (release), read above.
    if (!owner_alive && pub.cursor.load(std::memory_order_acquire) != c) return false;
    if (!owner_alive) {
      // The dead publisher may have finished records (tag stored, the commit's
      // last step) without moving the cursor: those are committed, keep them.
      // relaxed: we hold the recovery lock and the token's owner is dead.
      std::uint64_t next = pub.next_sequence.load(std::memory_order_relaxed);
      // A version left odd: the token's owner died writing the pair. It
      // stores next_sequence before the cursor: dead between the two, it
      // left next_sequence ahead of the cursor, whose first finished data
      // record (every record of a commit is finished before the pair
      // changes) still carries the sequence the cursor stands for. A
      // rollback is at most one per record that fits in the claim (a
      // scribbled sequence is not taken). relaxed: the dead writer's value.
      bool half_written = (pub.commit_version.load(std::memory_order_relaxed) & 1) != 0;
      std::uint64_t done = c;
      while (done < end) {
        const std::uint64_t p = skip_implicit_padding(s, done);
        if (p >= end) break;
        if (tag_of(s, p).load(std::memory_order_acquire) != p) break;  // acquire: pairs with the commit's tag store
        const layout::RecordHeader h = header_at(s, p);                // the fields checked are the fields used
        const RecordCheck hc = check_record(s, h, p, end);
        if (!hc.ok) break;
        if (hc.kind == layout::RecordKind::data) {
          if (half_written && h.sequence < next && next - h.sequence <= (end - c) / layout::kRecordHeaderSize)
            next = h.sequence;
          half_written = false;  // only the first data record says where the cursor stands
          if (h.sequence != next) break;
          ++next;
        }
        done = p + hc.total;
      }
      const std::uint64_t at = skip_implicit_padding(s, done);
      const bool hole = at < end && end - at >= layout::kRecordHeaderSize && end - at <= s.capacity;
      if (hole) {
        auto* h = reinterpret_cast<layout::RecordHeader*>(s.at(at));
        layout::set_hole_body_bytes(*h, end - at - layout::kRecordHeaderSize);
        h->kind = static_cast<std::uint16_t>(layout::RecordKind::abandoned);
        h->sequence = 0;
        h->publish_ns = platform::realtime_ns();
        tag_of(s, at).store(at, std::memory_order_release);  // release: a reader peeking the tag sees the kind
        // relaxed: a statistic.
        admin.abandoned_total.fetch_add(1, std::memory_order_relaxed);
      }
      const std::uint64_t new_cursor = hole ? end : done;
      if (new_cursor > c) {
        // Publishes the kept records and the hole, passing the token on.
        write_commit_pair(s, new_cursor, next, /*token_passes=*/true);
        moved = true;
      }
    }
  }
  return moved;
}

// Every dead claim in a row from `stalled_cursor`, under the recovery lock:
// after a hole the next claim is at the frontier, and its owner may be dead
// too (N dead publishers cost one recovery time, not N). Stops at a live
// owner or the tail; bounded by the publisher slots (each dead claim belongs
// to a distinct dead slot, plus records a dead publisher finished) and then
// by the ring. True when the cursor moved.
bool recover_claims_locked(const TopicState& s, std::uint64_t stalled_cursor) noexcept {
  auto& pub = s.pub();
  bool moved = false;
  std::uint64_t at = stalled_cursor;
  for (std::uint32_t round = 0; round < 4 * layout::kMaxPublishers + 4; ++round) {
    if (!recover_claim(s, at)) break;
    moved = true;
    // acquire: pairs with our own release store (and a committer's).
    at = pub.cursor.load(std::memory_order_acquire);
    // acquire: pairs with the claim CAS.
    if (at >= pub.tail.load(std::memory_order_acquire)) break;
  }
  return moved;
}

// After the lock is released: tells the log and wakes every waiter.
void announce_recovery(const TopicState& s) noexcept {
  detail::log_message(LogLevel::info, s.name(), "recovered the claim of a dead publisher (hole skipped)");
  s.events().commit.notify_all();
  s.events().data.notify_all();
  s.events().space.notify_all();  // publishers waiting for room behind the hole
}

}  // namespace

bool recover_hole(TopicState& s, std::uint64_t stalled_cursor) noexcept {
  if (!take_recovery_lock(s, s.me)) return false;
  const bool moved = recover_claims_locked(s, stalled_cursor);
  release_recovery_lock(s);
  if (moved) announce_recovery(s);
  return moved;
}

bool settle_dead_commit(const TopicState& s) noexcept {
  auto& pub = s.pub();
  // acquire: a committer's release store of the version (the pair it wrote).
  const std::uint64_t v = pub.commit_version.load(std::memory_order_acquire);
  if ((v & 1) == 0) return true;
  // This process, not s.me: a handle that never attached a role has none yet.
  if (s.read_only || !no_live_committer(s) || !take_recovery_lock(s, pack(ProcessId::current()))) return false;
  bool settled = false, moved = false;
  // Under the lock: still the same odd version, still no live committer.
  // relaxed: compared with v only; the CAS below or recovery decides.
  if (pub.commit_version.load(std::memory_order_relaxed) == v && no_live_committer(s)) {
    // acquire: pairs with the claim CAS (release); then the cursor's release store.
    const std::uint64_t t = pub.tail.load(std::memory_order_acquire);
    const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);
    if (t == c) {
      // Nothing claimed at the cursor: the writer had moved it, the pair is
      // whole. A new publisher may be claiming and committing there right
      // now, so only the version is touched, by a CAS (it moves past ours).
      std::uint64_t expected = v;
      // release: the pair happens before a reader's acquire of the even version.
      settled = pub.commit_version.compare_exchange_strong(expected, v + 1, std::memory_order_release,
                                                           std::memory_order_relaxed);
    } else {
      // The claim at the cursor is the dead writer's: recovering it now rolls
      // next_sequence back if need be, keeps what it finished and writes the
      // pair (recover_claim), not a recovery time from now.
      moved = recover_claims_locked(s, c);
      settled = moved;
    }
  }
  release_recovery_lock(s);
  if (settled) {
    detail::log_message(LogLevel::warn, s.name(), "settled the commit of a publisher that died half-way through it");
  }
  if (moved) announce_recovery(s);
  // relaxed: compared with v only; the caller reads the pair again (acquire).
  return pub.commit_version.load(std::memory_order_relaxed) != v;
}

void recover_frontier(TopicState& s) noexcept {
  // acquire: pairs with the commit's release store of the cursor.
  const std::uint64_t c = s.pub().cursor.load(std::memory_order_acquire);
  // acquire: pairs with the claim CAS.
  if (s.pub().tail.load(std::memory_order_acquire) > c) (void)recover_hole(s, c);
}

void poll_stuck_claim(TopicState& s) noexcept {
  if (s.read_only) return;  // a read-only reader waits for a writer to recover
  // relaxed: the key of the stall clock only; recover_hole re-reads both with acquire.
  const std::uint64_t c = s.pub().cursor.load(std::memory_order_relaxed);
  if (s.pub().tail.load(std::memory_order_relaxed) <= c) return;  // nothing claimed: no stall
  (void)poll_recovery(
      cursor_stall(s), [c]() noexcept { return c; }, [&s]() noexcept { recover_frontier(s); });
}

}  // namespace detail

}  // namespace zipc
