// Creating and opening channels from command-line options.
#include "channel_options.hpp"

#include <thread>

namespace zipc_tool {

unsigned parse_mode(const std::string& text) {
  std::size_t used = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(text, &used, 8);
  } catch (...) {
    used = 0;
  }
  if (used != text.size() || v > 0777) fail(kUsage, "--mode", "'" + text + "' is not octal permission bits (e.g. 660)");
  return static_cast<unsigned>(v);
}

void add_channel_options(CLI::App* app, ChannelOptions& o, bool with_kind) {
  if (with_kind) {
    app->add_option("--kind", o.kind, "what to create: topic, queue (or user: an empty segment)")
        ->check(CLI::IsMember({"topic", "queue", "user"}));
  }
  app->add_option("--capacity", o.capacity, "topic: ring bytes (power of two, e.g. 4MiB)");
  app->add_option("--max-message", o.max_message, "topic: largest message (e.g. 64KiB)");
  app->add_option("--max-subscribers", o.max_subscribers, "topic: subscriber slots");
  app->add_flag("--multi-publisher", o.multi_publisher, "topic: admit several publishers at once");
  app->add_option("--block-size", o.block_size, "queue: largest message (multiple of 8)");
  app->add_option("--block-count", o.block_count, "queue: blocks in the ring (power of two)");
  app->add_flag("--single-producer", o.single_producer, "queue: one producer at a time");
  app->add_flag("--single-consumer", o.single_consumer, "queue: one consumer at a time");
  app->add_option("--mode", o.mode, "permission bits, octal (600, 660, 666)");
}

zipc::TopicOptions topic_options(const ChannelOptions& o) {
  zipc::TopicOptions t;
  t.capacity_bytes = parse_size(o.capacity, "--capacity");
  t.max_message_size = static_cast<std::uint32_t>(parse_size(o.max_message, "--max-message"));
  t.max_subscribers = o.max_subscribers;
  t.publishers = o.multi_publisher ? zipc::Multiplicity::multi : zipc::Multiplicity::single;
  t.segment.mode = parse_mode(o.mode);
  return t;
}

zipc::QueueOptions queue_options(const ChannelOptions& o) {
  zipc::QueueOptions q;
  q.block_size = parse_size(o.block_size, "--block-size");
  q.block_count = o.block_count;
  q.producers = o.single_producer ? zipc::Multiplicity::single : zipc::Multiplicity::multi;
  q.consumers = o.single_consumer ? zipc::Multiplicity::single : zipc::Multiplicity::multi;
  q.segment.mode = parse_mode(o.mode);
  return q;
}

Channel open_channel(const std::string& name, bool create, const ChannelOptions& o, zipc::Role role) {
  Channel c;
  zipc::SegmentKind kind = kind_of(name);
  if (kind == zipc::SegmentKind::any) {
    if (!create) fail(kNotFound, name, "no such channel (use --create to make one)");
    if (o.kind == "queue") {
      c.queue = zipc::Queue::open_or_create(name, queue_options(o), role);
      c.is_topic = false;
    } else if (o.kind == "topic") {
      c.topic = zipc::Topic::open_or_create(name, topic_options(o));
    } else {
      fail(kUsage, name, "--create makes a topic or a queue, not a " + o.kind);
    }
    return c;
  }
  if (kind == zipc::SegmentKind::topic) {
    c.topic = zipc::Topic::open(name);
  } else if (kind == zipc::SegmentKind::queue) {
    c.queue = zipc::Queue::open(name, role);
    c.is_topic = false;
  } else {
    fail(kConflict, name, std::string("is a ") + zipc::to_string(kind) + ", not a topic or queue");
  }
  return c;
}

void wait_for_subscribers(const std::string& name, std::uint32_t n, double timeout_s) {
  if (n == 0) return;
  const std::uint64_t give_up = now_monotonic_ns() + static_cast<std::uint64_t>(timeout_s * 1e9);
  for (;;) {
    const zipc::ChannelReport r = zipc::inspect_channel(name);
    std::uint32_t subs = 0;
    for (const auto& p : r.participants) subs += (p.role == "subscriber" && p.alive) ? 1 : 0;
    if (subs >= n) return;
    if (now_monotonic_ns() >= give_up || stop_requested()) {
      fail(kTimeout, name, "only " + std::to_string(subs) + " of " + std::to_string(n) + " subscriber(s) attached");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace zipc_tool
