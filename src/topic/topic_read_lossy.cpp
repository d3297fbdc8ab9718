// Topic subscribers, lossy path: reading copies validated against a publisher that may lap us; overruns.
#include <algorithm>
#include <utility>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/futex.hpp"
#include "topic/topic_durable.hpp"
#include "topic/topic_reader_seat.hpp"
#include "topic/topic_state.hpp"
#include "topic/topic_subscriber.hpp"
#include "zipc/process.hpp"

namespace zipc {

using detail::rr;
using detail::TopicState;
using layout::RecordHeader;
using layout::RecordKind;

namespace {
constexpr std::uint64_t kOverrunPatienceNs = 50'000'000;  // see Subscriber::overrun
}  // namespace

// Finding the oldest retained sequence fails while a publisher is caught
// half-way through a commit (the version stays odd while it is preempted) or
// keeps moving oldest during the walk: both pass. Only a state that stays
// unreadable (for the recovery time, at most kOverrunPatienceNs), or a commit
// version already known to be stuck, is reported corrupt. (Giving up after
// 16 quick tries reported a preempted publisher as corruption under load.)
ReadResult Subscriber::overrun() noexcept {
  TopicState& s = *state_;
  std::uint64_t give_up_ns = 0;
  for (std::uint32_t i = 0;; ++i) {
    if (i >= 16) {
      if (detail::commit_stuck(s)) return rr(Status::corrupt);
      const std::uint64_t now = platform::monotonic_ns();
      if (give_up_ns == 0) give_up_ns = now + std::min<std::uint64_t>(s.recovery_ns, kOverrunPatienceNs);
      if (now >= give_up_ns) return rr(Status::corrupt);
      platform::yield_cpu();  // let a preempted publisher finish its commit
    }
    // acquire: pairs with the release raise of oldest.
    const std::uint64_t o = s.pub().oldest.load(std::memory_order_acquire);
    std::uint64_t seq = 0;
    if (!detail::sequence_at(s, o, &seq)) continue;  // also refuses an unaligned o
    const std::uint64_t lost = seq > expected_ ? seq - expected_ : 0;
    lost_ += lost;
    expected_ = std::max(expected_, seq);
    slot().lost.store(lost_, std::memory_order_relaxed);          // relaxed: statistics only
    slot().sequence.store(expected_, std::memory_order_relaxed);  // relaxed: statistics only
    position_ = o;
    cursor_ = o;
    ReadResult r = rr(Status::overrun);
    r.sequence = expected_;
    r.size = static_cast<std::uint32_t>(std::min<std::uint64_t>(lost, ~0u));
    return r;
  }
}

ReadResult Subscriber::read_lossy(std::span<std::byte> buffer) noexcept {
  TopicState& s = *state_;
  auto& pub = s.pub();
  for (std::uint64_t steps = 0; steps < 1'000'000; ++steps) {
    // acquire: pairs with the release raise of oldest.
    if (pub.oldest.load(std::memory_order_acquire) > position_) return overrun();
    if (position_ == cursor_) {
      cursor_ = pub.cursor.load(std::memory_order_acquire);  // acquire: pairs with the commit's release
      if (position_ == cursor_) {
        // A try_read caller must get past a dead publisher's claim too.
        detail::poll_stuck_claim(s);
        return rr(empty_or_closed());
      }
    }
    if (cursor_ < position_ || !detail::aligned(cursor_)) return rr(Status::corrupt);
    if (cursor_ - position_ > s.capacity) return overrun();
    const std::uint64_t p = detail::skip_implicit_padding(s, position_);
    if (p >= cursor_) {
      if (p != cursor_) return rr(Status::corrupt);
      position_ = p;
      continue;
    }
    const RecordHeader h = detail::header_at(s, p);
    const detail::RecordCheck hc = detail::check_record(s, h, p, cursor_);
    const bool fits = hc.ok && hc.kind == RecordKind::data && h.size <= buffer.size();
    if (fits) detail::racy_copy(buffer.data(), s.at(p) + layout::kRecordHeaderSize, h.size);
    detail::fence_acquire();  // the copies above before re-checking oldest
    // acquire, after the fence: oldest <= p means no byte we copied was overwritten.
    if (pub.oldest.load(std::memory_order_acquire) > p) return overrun();
    if (!hc.ok) return rr(Status::corrupt);
    if (hc.kind != RecordKind::data) {
      if (hc.kind == RecordKind::abandoned) ++abandoned_;
      position_ = p + hc.total;
      continue;
    }
    if (h.sequence != expected_) return rr(Status::corrupt);
    ReadResult r{Status::ok, h.sequence, h.publish_ns, h.size};
    if (!fits) {
      position_ = p;
      r.status = Status::too_large;
      return r;
    }
    position_ = p + hc.total;
    ++expected_;
    return r;
  }
  return rr(Status::corrupt);
}

}  // namespace zipc
