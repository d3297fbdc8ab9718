// Topic: create / open / validate, and the shared helpers of topic_state.hpp.
#include <algorithm>
#include <bit>
#include <new>

#include "core/options_mismatch.hpp"
#include "layout/segment_header.hpp"
#include "layout/topic_reader_layout.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/file.hpp"
#include "topic/topic_state.hpp"
#include "zipc/log.hpp"
#include "zipc/process.hpp"

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
    if ((v1 & 1) != 0 && v1 == s.stuck_version.load(std::memory_order_relaxed) && tries >= 16) return false;
    if (tries < 2000) {
      platform::cpu_relax();
      continue;
    }
    const std::uint64_t now = platform::monotonic_ns();
    if (give_up_ns == 0) give_up_ns = now + s.recovery_ns / 4 + 1;
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
    layout::RecordHeader h;
    racy_copy(&h, s.at(p), sizeof h);
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
      layout::RecordHeader h;
      racy_copy(&h, s.at(p), sizeof h);
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
        layout::RecordHeader h;  // a private copy: the fields checked are the fields used
        std::memcpy(&h, s.at(p), sizeof h);
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

namespace {

using detail::topic_fail;
using detail::TopicState;

enum Param : std::size_t { kCapacity = 0, kMaxMessage, kMaxSubs, kPubMode, kVersion };

const SegmentOptions& segment_options(const TopicOptions& o) {
  return o.segment;
}

struct Geometry {
  std::uint64_t capacity;
  std::uint32_t max_message;
  std::uint32_t max_subscribers;
  layout::PublisherMode mode;
};

Geometry geometry_of(std::string_view name, const TopicOptions& o) {
  if (o.capacity_bytes > layout::kMaxCapacity) topic_fail(Errc::invalid_argument, name, "capacity_bytes over 1 TiB");
  Geometry g;
  g.capacity = std::bit_ceil(std::max<std::uint64_t>(o.capacity_bytes, layout::kMinCapacity));
  g.max_message = o.max_message_size;
  g.max_subscribers = o.max_subscribers;
  g.mode = o.publishers == Multiplicity::multi ? layout::PublisherMode::multi : layout::PublisherMode::single;
  if (g.max_message == 0 || g.max_message > layout::kMaxMessageLimit) {
    topic_fail(Errc::invalid_argument, name, "max_message_size must be in [1, 2^30]");
  }
  if (g.max_subscribers == 0 || g.max_subscribers > layout::kMaxSubscribersLimit) {
    topic_fail(Errc::invalid_argument, name, "max_subscribers must be in [1, 65536]");
  }
  if (2 * layout::record_bytes(g.max_message) > g.capacity) {
    topic_fail(Errc::invalid_argument, name,
               "capacity_bytes " + std::to_string(g.capacity) + " cannot hold two records of max_message_size " +
                   std::to_string(g.max_message));
  }
  return g;
}

SegmentSpec spec_of(const Geometry& g) {
  SegmentSpec spec;
  spec.kind = SegmentKind::topic;
  spec.payload_size = layout::ring_table_offset(g.max_subscribers) + g.capacity;
  spec.params[kCapacity] = g.capacity;
  spec.params[kMaxMessage] = g.max_message;
  spec.params[kMaxSubs] = g.max_subscribers;
  spec.params[kPubMode] = static_cast<std::uint64_t>(g.mode);
  spec.params[kVersion] = layout::kTopicLayoutVersion;
  return spec;
}

InitFn init_of(const Geometry& g) {
  return [g](std::byte* p, std::size_t n) {
    if (n < layout::ring_table_offset(g.max_subscribers)) throw Error(Errc::corrupt, "topic payload too small");
    // The creator is alone here: plain construction, published by the segment's init_state.
    auto* control = new (p) layout::TopicControl{};
    control->config.magic = layout::kTopicMagic;
    control->config.layout_version = layout::kTopicLayoutVersion;
    control->config.publisher_mode = static_cast<std::uint32_t>(g.mode);
    control->config.capacity = g.capacity;
    control->config.max_message = g.max_message;
    control->config.max_subscribers = g.max_subscribers;
    control->config.ring_offset = layout::ring_table_offset(g.max_subscribers);
    control->config.sub_offset = layout::sub_table_offset();
    // No record yet: the first header's tag must not read as "position 0, committed".
    reinterpret_cast<layout::RecordHeader*>(p + layout::ring_table_offset(g.max_subscribers))->position = ~0ull;
    auto* subs = reinterpret_cast<layout::SubscriberSlot*>(p + layout::sub_table_offset());
    for (std::uint32_t i = 0; i < g.max_subscribers; ++i) new (subs + i) layout::SubscriberSlot{};
  };
}

std::shared_ptr<TopicState> attach(Segment seg, const TopicOptions& o) {
  const std::string name = seg.name();
  const auto& pr = seg.params();
  if (pr[kVersion] != layout::kTopicLayoutVersion) {
    topic_fail(Errc::version_mismatch, name,
               "created by topic layout version " + std::to_string(pr[kVersion]) + ", this library reads version " +
                   std::to_string(layout::kTopicLayoutVersion));
  }
  Geometry g;
  g.capacity = pr[kCapacity];
  g.max_message = static_cast<std::uint32_t>(pr[kMaxMessage]);
  g.max_subscribers = static_cast<std::uint32_t>(pr[kMaxSubs]);
  g.mode = static_cast<layout::PublisherMode>(pr[kPubMode]);
  const bool sane =
      std::has_single_bit(g.capacity) && g.capacity >= layout::kMinCapacity && g.capacity <= layout::kMaxCapacity &&
      pr[kMaxMessage] >= 1 && pr[kMaxMessage] <= layout::kMaxMessageLimit && pr[kMaxSubs] >= 1 &&
      pr[kMaxSubs] <= layout::kMaxSubscribersLimit && 2 * layout::record_bytes(g.max_message) <= g.capacity &&
      (g.mode == layout::PublisherMode::single || g.mode == layout::PublisherMode::multi);
  if (!sane) topic_fail(Errc::corrupt_header, name, "topic parameters out of range");
  const std::uint64_t need = layout::ring_table_offset(g.max_subscribers) + g.capacity;
  if (seg.payload_size() < need) {
    topic_fail(Errc::truncated, name,
               "payload of " + std::to_string(seg.payload_size()) + " bytes, the topic needs " + std::to_string(need));
  }
  auto* control = reinterpret_cast<layout::TopicControl*>(seg.payload());
  const auto& cfg = control->config;
  if (cfg.magic != layout::kTopicMagic || cfg.capacity != g.capacity || cfg.max_message != g.max_message ||
      cfg.max_subscribers != g.max_subscribers || cfg.ring_offset != layout::ring_table_offset(g.max_subscribers) ||
      cfg.sub_offset != layout::sub_table_offset() || cfg.publisher_mode != static_cast<std::uint32_t>(g.mode)) {
    topic_fail(Errc::corrupt, name, "topic control block disagrees with the segment header");
  }
  auto st = std::make_shared<TopicState>();
  st->segment = std::move(seg);
  st->control = control;
  st->subscribers = reinterpret_cast<layout::SubscriberSlot*>(st->segment.payload() + layout::sub_table_offset());
  st->ring = st->segment.payload() + cfg.ring_offset;
  st->capacity = g.capacity;
  st->mask = g.capacity - 1;
  st->max_message = g.max_message;
  st->max_subscribers = g.max_subscribers;
  st->mode = g.mode;
  st->wait = o.wait;
  st->barrier = detail::AsymmetricWait::here();  // registers for membarrier(2) when it can
  st->recovery_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(o.recovery_time).count());
  st->streaming_stores = o.streaming_stores;
  st->read_only = st->segment.read_only();
  st->incarnation = reinterpret_cast<const layout::SegmentHeader*>(st->segment.base())->checksum;
  st->me = pack(ProcessId::current());
  return st;
}

}  // namespace

Topic Topic::create(std::string_view name, const TopicOptions& options) {
  const Geometry g = geometry_of(name, options);
  Topic t;
  t.state_ = attach(Segment::create(name, spec_of(g), init_of(g), segment_options(options)), options);
  return t;
}

Topic Topic::open(std::string_view name, const TopicOptions& options) {
  Topic t;
  t.state_ = attach(Segment::open(name, SegmentKind::topic, segment_options(options)), options);
  return t;
}

Topic Topic::open_or_create(std::string_view name, const TopicOptions& options, bool* created) {
  const Geometry g = geometry_of(name, options);
  Topic t;
  bool made = false;
  t.state_ = attach(Segment::open_or_create(name, spec_of(g), init_of(g), segment_options(options), &made), options);
  if (created) *created = made;
  if (!made) {
    const TopicState& s = *t.state_;
    detail::check_existing_geometry(
        "topic '" + std::string(name) + "'", options.accept_existing,
        {{"capacity_bytes", g.capacity, s.capacity, " bytes"},
         {"max_message_size", g.max_message, s.max_message, " bytes"},
         {"max_subscribers", g.max_subscribers, s.max_subscribers, ""},
         {"publishers (multi)", g.mode == layout::PublisherMode::multi, s.mode == layout::PublisherMode::multi, ""}});
  }
  return t;
}

Topic Topic::open_fd(int fd, const TopicOptions& options) {
  Topic t;
  const std::string name = "fd " + std::to_string(fd);
  t.state_ = attach(Segment::open_fd(fd, SegmentKind::topic, segment_options(options), name), options);
  return t;
}

bool Topic::remove(std::string_view name, const SegmentOptions& segment) {
  // The seats of read-only reliable readers (src/topic/topic_reader_seat.hpp) go
  // with the topic; a reader still holding one keeps it mapped until it leaves.
  const std::string path = Segment::path_for(name, segment);
  for (std::uint32_t k = 0; k < layout::kMaxReaderSeats; ++k) {
    (void)platform::unlink_path(path + ".ro" + std::to_string(k));
  }
  return Segment::remove(name, segment);
}

Topic::~Topic() = default;

void Publisher::detach() noexcept {
  Publisher gone(std::move(*this));  // its destructor gives the slot back
}

void Subscriber::detach() noexcept {
  Subscriber gone(std::move(*this));  // its destructor gives the slot back
}

void Topic::sync() const {
  if (state_) state_->segment.sync();
}

std::uint64_t Topic::capacity_bytes() const noexcept {
  return state_->capacity;
}
std::uint32_t Topic::max_message_size() const noexcept {
  return state_->max_message;
}
std::uint32_t Topic::max_subscribers() const noexcept {
  return state_->max_subscribers;
}
Multiplicity Topic::publishers() const noexcept {
  return state_->mode == layout::PublisherMode::multi ? Multiplicity::multi : Multiplicity::single;
}
std::uint64_t Topic::next_sequence() const noexcept {
  std::uint64_t c = 0, n = 0;
  (void)detail::read_commit_pair(*state_, &c, &n);
  return n;
}
std::uint64_t Topic::oldest_sequence() const noexcept {
  for (int i = 0; i < 16; ++i) {
    // acquire: pairs with the release raise of oldest.
    const std::uint64_t o = state_->pub().oldest.load(std::memory_order_acquire);
    std::uint64_t seq = 0;
    if (detail::sequence_at(*state_, o, &seq)) return seq;
  }
  return next_sequence();
}
std::uint64_t Topic::abandoned() const noexcept {
  return state_->admin().abandoned_total.load(std::memory_order_relaxed);  // relaxed: a statistic
}
void Topic::close() noexcept {
  TopicState& s = *state_;
  if (s.read_only) {
    detail::log_message(LogLevel::error, s.name(), "close() on a topic opened read-only: not closed");
    return;
  }
  // seq_cst: the closer's half of the Dekker pairs (a publisher's claim then
  // check; a reader's check, barrier, then tail); notify_all then wakes sleepers.
  s.admin().closed.store(1, std::memory_order_seq_cst);
  s.events().data.notify_all();
  s.events().space.notify_all();
  s.events().commit.notify_all();
}
bool Topic::closed() const noexcept {
  return state_->admin().closed.load(std::memory_order_acquire) != 0;  // acquire: pairs with close()
}
const Segment& Topic::segment() const noexcept {
  return state_->segment;
}

}  // namespace zipc
