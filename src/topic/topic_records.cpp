// Topic records: validating a header, the (cursor, next sequence) pair, finding a sequence in the log.
#include <algorithm>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "topic/topic_state.hpp"

namespace zipc {

namespace detail {

void topic_fail(Errc code, std::string_view name, const std::string& why) {
  throw Error(code, "topic '" + std::string(name) + "': " + why);
}

RecordCheck check_record(const TopicState& s, const layout::RecordHeader& h, std::uint64_t position,
                         std::uint64_t limit) noexcept {
  RecordCheck r;
  if (h.position != position || position >= limit || !aligned(position)) return r;
  const std::uint64_t room = s.capacity - s.index(position);
  std::uint64_t total = layout::record_bytes(h.size);
  switch (static_cast<layout::RecordKind>(h.kind)) {
    case layout::RecordKind::data:
      if (h.slack >= layout::kRecordHeaderSize || h.slack % layout::kRecordAlign != 0) return r;
      total += h.slack;
      if (h.size > s.max_message || total > room) return r;
      break;
    case layout::RecordKind::padding:
      if (total != room) return r;
      break;
    case layout::RecordKind::abandoned:
      total = layout::record_bytes(layout::hole_body_bytes(h));
      // A hole spans whole claims, which may wrap (its body is never read).
      if (total > s.capacity) return r;
      break;
    case layout::RecordKind::aborted:
      // A claim given back (at most 1 GiB + a header), which may wrap.
      if (total > s.capacity) return r;
      break;
    default: return r;
  }
  if (total > limit - position) return r;
  r.ok = true;
  r.total = total;
  r.kind = static_cast<layout::RecordKind>(h.kind);
  return r;
}

bool read_commit_pair(const TopicState& s, std::uint64_t* cursor, std::uint64_t* next_sequence) noexcept {
  auto& pub = s.pub();
  // A committer rewrites the pair in a few instructions; a version that stays
  // odd means it was preempted there (it resumes within a time slice or two,
  // longer on a loaded machine), died there, or the word was scribbled: after
  // 2000 quick tries, yield until a quarter of the recovery time has passed,
  // then give up.
  std::uint64_t give_up_ns = 0;
  for (int tries = 0;; ++tries) {
    // acquire: pairs with the committer's release stores of the version.
    const std::uint64_t v1 = pub.commit_version.load(std::memory_order_acquire);
    // acquire: pairs with the release store of cursor (records complete below it).
    const std::uint64_t c = pub.cursor.load(std::memory_order_acquire);
    const std::uint64_t n = pub.next_sequence.load(std::memory_order_acquire);  // acquire: as cursor
    fence_acquire();  // orders the loads above before re-reading the version
    // acquire (after the fence): stands in for the fence in TSan builds.
    const std::uint64_t v2 = pub.commit_version.load(std::memory_order_acquire);
    *cursor = c;
    *next_sequence = n;
    if (v1 == v2 && (v1 & 1) == 0) return true;
    // relaxed: a process-local note (see TopicState::stuck_version).
    if ((v1 & 1) != 0 && v1 == s.stuck_version.load(std::memory_order_relaxed) && tries >= 16) {
      if (settle_dead_commit(s)) continue;  // its writer has died since
      return false;
    }
    if (tries < 2000) {
      platform::cpu_relax();
      continue;
    }
    const std::uint64_t now = platform::monotonic_ns();
    if (give_up_ns == 0) give_up_ns = now + s.recovery_ns / 4 + 1;
    // Past the quick tries: a writer that died half-way is settled at once
    // (a liveness check each round of the slow wait, which stays bounded).
    if ((v1 & 1) != 0 && v1 == v2 && now < give_up_ns && settle_dead_commit(s)) continue;
    if (now >= give_up_ns) {
      if ((v1 & 1) != 0 && v1 == v2) s.stuck_version.store(v1, std::memory_order_relaxed);  // relaxed: as above
      return false;
    }
    platform::yield_cpu();
  }
}

bool commit_stuck(const TopicState& s) noexcept {
  // acquire: as in read_commit_pair; relaxed: the process-local note.
  const std::uint64_t v = s.pub().commit_version.load(std::memory_order_acquire);
  return (v & 1) != 0 && v == s.stuck_version.load(std::memory_order_relaxed);
}

bool sequence_at(const TopicState& s, std::uint64_t position, std::uint64_t* sequence) noexcept {
  std::uint64_t cursor = 0, next = 0;
  if (!read_commit_pair(s, &cursor, &next)) return false;
  if (!aligned(position) || !aligned(cursor)) return false;
  std::uint64_t p = position;
  for (std::uint64_t steps = 0; steps <= s.capacity / layout::kRecordHeaderSize + 2; ++steps) {
    if (p == cursor) {
      *sequence = next;
      return true;
    }
    if (p > cursor || cursor - p > s.capacity) return false;
    p = skip_implicit_padding(s, p);
    if (p >= cursor) continue;
    const layout::RecordHeader h = header_at(s, p);
    const RecordCheck c = check_record(s, h, p, cursor);
    fence_acquire();  // the copy above before the re-check of oldest
    // acquire, after the fence: a record still above oldest was intact while copied.
    if (s.pub().oldest.load(std::memory_order_acquire) > p) return false;
    if (!c.ok) return false;
    if (c.kind == layout::RecordKind::data) {
      *sequence = h.sequence;
      return true;
    }
    p += c.total;
  }
  return false;
}

bool find_sequence(const TopicState& s, std::uint64_t seq, std::uint64_t* position,
                   std::uint64_t* oldest_seq) noexcept {
  for (int attempt = 0; attempt < 64; ++attempt) {
    // acquire: pairs with the release raise of oldest; the records above it are intact.
    const std::uint64_t oldest = s.pub().oldest.load(std::memory_order_acquire);
    std::uint64_t cursor = 0, next = 0;
    if (!read_commit_pair(s, &cursor, &next)) return false;
    if (cursor < oldest || cursor - oldest > s.capacity || !aligned(oldest) || !aligned(cursor)) return false;
    std::uint64_t first = next;
    if (!sequence_at(s, oldest, &first)) continue;  // lapped while walking: retry
    *oldest_seq = first;
    if (seq < first) return false;
    if (seq >= next) {
      *position = cursor;
      return seq == next;
    }
    std::uint64_t p = oldest;
    bool lapped = false;
    while (p < cursor) {
      p = skip_implicit_padding(s, p);
      if (p >= cursor) break;
      const layout::RecordHeader h = header_at(s, p);
      const RecordCheck c = check_record(s, h, p, cursor);
      fence_acquire();  // the copy before the re-check of oldest
      // acquire, after the fence above (as in sequence_at).
      if (s.pub().oldest.load(std::memory_order_acquire) > p) {
        lapped = true;
        break;
      }
      if (!c.ok) return false;
      if (c.kind == layout::RecordKind::data && h.sequence == seq) {
        *position = p;
        return true;
      }
      p += c.total;
    }
    if (!lapped) return false;
  }
  return false;
}

}  // namespace detail

}  // namespace zipc
