// Topic setup: geometry, create / open / attach / remove, and the Topic handle's accessors.
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

void Topic::sync() const {
  if (state_) state_->segment.sync();
}

// A detached handle (docs/guide/handles.md): zeros, closed, an empty segment.
std::uint64_t Topic::capacity_bytes() const noexcept {
  return state_ ? state_->capacity : 0;
}
std::uint32_t Topic::max_message_size() const noexcept {
  return state_ ? state_->max_message : 0;
}
std::uint32_t Topic::max_subscribers() const noexcept {
  return state_ ? state_->max_subscribers : 0;
}
Multiplicity Topic::publishers() const noexcept {
  return !state_ || state_->mode == layout::PublisherMode::multi ? Multiplicity::multi : Multiplicity::single;
}
std::uint64_t Topic::next_sequence() const noexcept {
  if (!state_) return 0;
  std::uint64_t c = 0, n = 0;
  (void)detail::read_commit_pair(*state_, &c, &n);
  return n;
}
std::uint64_t Topic::oldest_sequence() const noexcept {
  if (!state_) return 0;
  for (int i = 0; i < 16; ++i) {
    // acquire: pairs with the release raise of oldest.
    const std::uint64_t o = state_->pub().oldest.load(std::memory_order_acquire);
    std::uint64_t seq = 0;
    if (detail::sequence_at(*state_, o, &seq)) return seq;
  }
  return next_sequence();
}
std::uint64_t Topic::abandoned() const noexcept {
  if (!state_) return 0;
  return state_->admin().abandoned_total.load(std::memory_order_relaxed);  // relaxed: a statistic
}
void Topic::close() noexcept {
  if (!state_) return;
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
  // acquire: pairs with close().
  return !state_ || state_->admin().closed.load(std::memory_order_acquire) != 0;
}
const Segment& Topic::segment() const noexcept {
  static const Segment none;
  return state_ ? state_->segment : none;
}

}  // namespace zipc
