// Introspection of a topic segment (read-only; see introspect_map.hpp).
#include <cstring>

#include "core/introspect_map.hpp"
#include "layout/topic_layout.hpp"

namespace zipc::detail {
namespace {

using namespace layout;

// The sequence of the first data record at or after `oldest`, walking at most
// a few records; false when the walk meets anything it cannot validate (the
// ring may be overwritten under us: a copy whose tag is wrong is discarded).
bool oldest_sequence(const ReadOnlyView& v, const TopicConfig& cfg, std::uint64_t oldest, std::uint64_t cursor,
                     std::uint64_t* seq) {
  const std::byte* ring = v.at<std::byte>(cfg.ring_offset);
  const std::uint64_t mask = cfg.capacity - 1;
  std::uint64_t p = oldest;
  for (int step = 0; step < 64 && p < cursor; ++step) {
    const std::uint64_t room = cfg.capacity - (p & mask);
    if (room < kRecordHeaderSize) {
      p += room;
      continue;
    }
    RecordHeader h;
    std::memcpy(&h, ring + (p & mask), sizeof h);  // racy copy, validated below
    if (h.position != p || p % kRecordAlign != 0) return false;
    std::uint64_t total = record_bytes(h.size);
    switch (static_cast<RecordKind>(h.kind)) {
      case RecordKind::data: *seq = h.sequence; return true;
      case RecordKind::padding: total = room; break;
      case RecordKind::abandoned: total = record_bytes(hole_body_bytes(h)); break;
      case RecordKind::aborted: break;
      default: return false;
    }
    if (total == 0 || total > cfg.capacity) return false;
    p += total;
  }
  return false;
}

}  // namespace

void inspect_topic(const ReadOnlyView& v, ChannelReport& report) {
  if (!v.fits(0, sizeof(TopicControl))) {
    report.problem = "payload too small for a topic's control block";
    return;
  }
  const auto* ctl = v.at<TopicControl>(0);
  TopicConfig cfg;
  std::memcpy(&cfg, &ctl->config, sizeof cfg);
  if (cfg.magic != kTopicMagic) {
    report.problem = "topic control block has a bad magic";
    return;
  }
  if (cfg.layout_version != kTopicLayoutVersion) {
    report.problem = "topic layout version " + std::to_string(cfg.layout_version) + ", this tool reads " +
                     std::to_string(kTopicLayoutVersion);
    return;
  }
  const bool pow2 = cfg.capacity != 0 && (cfg.capacity & (cfg.capacity - 1)) == 0;
  if (!pow2 || cfg.capacity < kMinCapacity || cfg.capacity > kMaxCapacity || cfg.max_message > kMaxMessageLimit ||
      cfg.max_subscribers == 0 || cfg.max_subscribers > kMaxSubscribersLimit || cfg.sub_offset != sub_table_offset() ||
      cfg.ring_offset != ring_table_offset(cfg.max_subscribers) || !v.fits(cfg.ring_offset, cfg.capacity) ||
      (cfg.publisher_mode != static_cast<std::uint32_t>(PublisherMode::single) &&
       cfg.publisher_mode != static_cast<std::uint32_t>(PublisherMode::multi))) {
    report.problem = "topic geometry does not validate";
    return;
  }
  const auto& params = report.segment.params;
  if (params[0] != cfg.capacity || params[1] != cfg.max_message || params[2] != cfg.max_subscribers) {
    report.problem = "topic geometry disagrees with the segment header";
    return;
  }
  const bool multi = cfg.publisher_mode == static_cast<std::uint32_t>(PublisherMode::multi);
  add(report.geometry, "capacity_bytes", cfg.capacity);
  add(report.geometry, "max_message_size", cfg.max_message);
  add(report.geometry, "max_subscribers", cfg.max_subscribers);
  add(report.geometry, "multi_publisher", multi ? 1 : 0);

  // Monotonic positions, read oldest first so that oldest <= cursor <= tail
  // holds in the snapshot unless the words are scribbled.
  const std::uint64_t oldest = peek(ctl->pub.oldest);
  const std::uint64_t next_seq = peek(ctl->pub.next_sequence);
  const std::uint64_t cursor = peek(ctl->pub.cursor);
  const std::uint64_t tail = peek(ctl->pub.tail);
  if (!(oldest <= cursor && cursor <= tail)) {
    report.problem = "topic positions do not validate (oldest <= cursor <= tail fails)";
    return;
  }
  add(report.positions, "oldest", oldest);
  add(report.positions, "cursor", cursor);
  add(report.positions, "tail", tail);
  add(report.positions, "next_sequence", next_seq);
  std::uint64_t first = 0;
  if (cursor == oldest) {
    add(report.positions, "oldest_sequence", next_seq);
  } else if (oldest_sequence(v, cfg, oldest, cursor, &first) && first <= next_seq) {
    add(report.positions, "oldest_sequence", first);
  }

  std::uint64_t bytes = 0;
  for (std::uint32_t i = 0; i < kMaxPublishers; ++i) bytes += peek(ctl->publishers[i].bytes);
  auto add_publisher = [&](std::uint64_t owner, std::uint32_t slot) {
    ParticipantReport p;
    p.role = "publisher";
    p.process = unpack(owner);
    p.alive = is_alive_packed(owner);
    p.slot = slot;
    add(p.fields, "messages", peek(ctl->publishers[slot].messages));
    add(p.fields, "bytes", peek(ctl->publishers[slot].bytes));
    report.participants.push_back(std::move(p));
  };
  if (!multi) {
    if (const std::uint64_t w = peek(ctl->admin.single_publisher); w != 0) add_publisher(w, 0);
  } else {
    for (std::uint32_t i = 0; i < kMaxPublishers; ++i) {
      if (const std::uint64_t w = peek(ctl->publishers[i].owner); w != 0) add_publisher(w, i);
    }
  }

  const auto* subs = v.at<SubscriberSlot>(cfg.sub_offset);
  for (std::uint32_t i = 0; i < cfg.max_subscribers; ++i) {
    const SubscriberSlot& s = subs[i];
    const std::uint64_t owner = peek(s.owner);
    const std::uint32_t mode = peek(s.mode);
    if (owner == 0 || mode == static_cast<std::uint32_t>(SubscriberMode::free)) continue;
    ParticipantReport p;
    p.role = "subscriber";
    p.process = unpack(owner);
    p.alive = is_alive_packed(owner);
    p.slot = i;
    const std::uint64_t seq = peek(s.sequence);
    if (mode == static_cast<std::uint32_t>(SubscriberMode::reliable)) {
      p.mode = "reliable";
      const std::uint64_t pos = peek(s.position);
      add(p.fields, "position", pos);
      add(p.fields, "sequence", seq);
      const std::uint64_t lag = seq <= next_seq ? next_seq - seq : 0;
      add(p.fields, "lag", lag);
      add(p.fields, "lag_bytes", pos <= cursor ? cursor - pos : 0);
      if (p.alive && lag > report.backlog) report.backlog = lag;
      if (lag > report.max_lag) report.max_lag = lag;
    } else if (mode == static_cast<std::uint32_t>(SubscriberMode::lossy)) {
      p.mode = "lossy";
      const std::uint64_t lost = peek(s.lost);
      add(p.fields, "sequence", seq);
      add(p.fields, "lost", lost);
      report.lost += lost;
    } else {
      p.mode = "unknown";
    }
    report.participants.push_back(std::move(p));
  }
  report.messages = next_seq;
  report.messages_known = true;
  report.bytes = bytes;
  report.bytes_known = true;
  report.abandoned = peek(ctl->admin.abandoned_total);
  add(report.counters, "published", next_seq);
  add(report.counters, "published_bytes", bytes);
  add(report.counters, "abandoned", report.abandoned);
  add(report.counters, "lost", report.lost);
  add(report.counters, "backlog", report.backlog);
  report.readable = true;
}

}  // namespace zipc::detail
