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

// One claim at the frontier `stalled_cursor`: if its owner is dead, keeps what
// it finished and turns the rest into a hole. Runs under the recovery lock.
// True when the cursor moved.
bool recover_claim(TopicState& s, std::uint64_t stalled_cursor) noexcept {
  auto& pub = s.pub();
  auto& admin = s.admin();
  bool moved = false;
  // acquire: pairs with the release store of cursor.
  const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);
  // acquire: pairs with the claim CAS (release), which publishes the claimant's intent.
  const std::uint64_t t = pub.tail.load(std::memory_order_acquire);
  if (c == stalled_cursor && t > c && t - c <= s.capacity && aligned(c) && aligned(t)) {
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
        // relaxed: made visible by the tail acquire above (intent precedes the claim CAS).
        const std::uint64_t intent = slot.intent.load(std::memory_order_relaxed);
        if (intent == c) {
          owner_known = true;
          if (is_alive_packed(owner)) owner_alive = true;
        } else if (intent > c && intent < end && aligned(intent)) {
          end = intent;  // the next claim starts there: our hole ends there
        }
      }
    }
    (void)owner_known;
    if (!owner_alive) {
      // The dead publisher may have finished records (tag stored, the commit's
      // last step) without moving the cursor: those are committed, keep them.
      // relaxed: we hold the recovery lock and the token's owner is dead.
      std::uint64_t next = pub.next_sequence.load(std::memory_order_relaxed);
      std::uint64_t done = c;
      while (done < end) {
        const std::uint64_t p = skip_implicit_padding(s, done);
        if (p >= end) break;
        if (tag_of(s, p).load(std::memory_order_acquire) != p) break;  // acquire: pairs with the commit's tag store
        const layout::RecordHeader h = header_at(s, p);                // the fields checked are the fields used
        const RecordCheck hc = check_record(s, h, p, end);
        if (!hc.ok || (hc.kind == layout::RecordKind::data && h.sequence != next)) break;
        if (hc.kind == layout::RecordKind::data) ++next;
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
        // release: the version is odd while the pair changes (readers retry).
        pub.commit_version.fetch_add(1, std::memory_order_release);
        pub.next_sequence.store(next, std::memory_order_relaxed);  // relaxed: the cursor's release covers it
        // release: publishes the kept records and the hole to readers, the token to the next claimant.
        pub.cursor.store(new_cursor, std::memory_order_release);
        pub.commit_version.fetch_add(1, std::memory_order_release);  // release: pair consistent again
        moved = true;
      }
    }
  }
  return moved;
}

}  // namespace

bool recover_hole(TopicState& s, std::uint64_t stalled_cursor) noexcept {
  auto& pub = s.pub();
  auto& admin = s.admin();
  // The recovery lock: a packed ProcessId, taken over when its holder is dead.
  std::uint64_t holder = 0;
  // acq_rel: taking the lock orders our reads after the previous recoverer's writes.
  if (!admin.recovery_owner.compare_exchange_strong(holder, s.me, std::memory_order_acq_rel)) {
    if (holder == s.me || is_alive_packed(holder)) return false;
    // acq_rel: as above, stealing from a dead holder.
    if (!admin.recovery_owner.compare_exchange_strong(holder, s.me, std::memory_order_acq_rel)) return false;
  }
  // Every dead claim in a row in one pass: after a hole the next claim is at
  // the frontier, and its owner may be dead too (N dead publishers cost one
  // recovery time, not N). Stops at a live owner or the tail; bounded by the
  // publisher slots (each dead claim belongs to a distinct dead slot, plus
  // records a dead publisher finished) and then by the ring.
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
  // release: our writes happen before the next recoverer's.
  admin.recovery_owner.store(0, std::memory_order_release);
  if (moved) detail::log_message(LogLevel::info, s.name(), "recovered the claim of a dead publisher (hole skipped)");
  if (moved) {
    s.events().commit.notify_all();
    s.events().data.notify_all();
    s.events().space.notify_all();  // publishers waiting for room behind the hole
  }
  return moved;
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
