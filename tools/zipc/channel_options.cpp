// Creating and opening channels from command-line options.
#include "channel_options.hpp"

#include <thread>

namespace zipc_tool {

namespace {
constexpr std::uint64_t kMaxMessageLimit = 1u << 30;  // TopicOptions::max_message_size (1 GiB)
constexpr std::uint64_t kMaxCapacity = 1ull << 40;    // TopicOptions::capacity_bytes (1 TiB)

unsigned parse_mode(const std::string& text) {
  std::size_t used = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(text, &used, 8);
  } catch (...) {
    used = 0;
  }
  if (text.empty() || text[0] < '0' || text[0] > '7' || used != text.size() || v > 0777) {
    throw std::invalid_argument("'" + text + "' is not octal permission bits from 000 to 777 (e.g. 660)");
  }
  return static_cast<unsigned>(v);
}
}  // namespace

void add_channel_options(CLI::App* app, ChannelOptions& o, Kinds kinds) {
  if (kinds == Kinds::any) {
    app->add_option("--kind", o.kind, "what to create: topic, queue (or user: an empty segment)")
        ->check(CLI::IsMember({"topic", "queue", "user"}));
  }
  const char* t = kinds == Kinds::any ? "topic: " : "";
  add_size(app, "--capacity", o.capacity, 1, kMaxCapacity,
           std::string(t) + "ring bytes (rounded up to a power of two, at least 4KiB)");
  add_size(app, "--max-message", o.max_message, 1, kMaxMessageLimit, std::string(t) + "largest message");
  add_count32(app, "--max-subscribers", o.max_subscribers, 1, 1u << 16, std::string(t) + "subscriber slots");
  app->add_flag("--multi-publisher", o.multi_publisher, std::string(t) + "admit several publishers at once");
  if (kinds == Kinds::any) {
    add_size(app, "--block-size", o.block_size, 8, 16u << 20, "queue: largest message (multiple of 8)");
    add_count(app, "--block-count", o.block_count, 2, 1u << 24, "queue: blocks in the ring (power of two)");
    app->add_flag("--single-producer", o.single_producer, "queue: one producer at a time");
    app->add_flag("--single-consumer", o.single_consumer, "queue: one consumer at a time");
  }
  app->add_option_function<std::string>(
         "--mode",
         [&o](const std::string& text) {
           try {
             o.mode = parse_mode(text);
           } catch (const std::invalid_argument& e) {
             throw CLI::ValidationError("--mode", e.what());
           }
         },
         "permission bits, octal (600, 660, 666)")
      ->default_str("600");
}

zipc::TopicOptions topic_options(const ChannelOptions& o) {
  zipc::TopicOptions t;
  t.capacity_bytes = o.capacity;
  t.max_message_size = static_cast<std::uint32_t>(o.max_message);  // <= 1 GiB (add_channel_options)
  t.max_subscribers = o.max_subscribers;
  t.publishers = o.multi_publisher ? zipc::Multiplicity::multi : zipc::Multiplicity::single;
  t.segment.mode = o.mode;
  return t;
}

zipc::QueueOptions queue_options(const ChannelOptions& o) {
  zipc::QueueOptions q;
  q.block_size = o.block_size;
  q.block_count = o.block_count;
  q.producers = o.single_producer ? zipc::Multiplicity::single : zipc::Multiplicity::multi;
  q.consumers = o.single_consumer ? zipc::Multiplicity::single : zipc::Multiplicity::multi;
  q.segment.mode = o.mode;
  return q;
}

std::uint64_t Channel::max_message() const noexcept {
  if (is_topic) return topic.max_message_size();
  const zipc::QueueStats st = queue.stats();
  return std::max<std::uint64_t>(queue.block_size(), st.oversize_bytes);
}

std::string too_large_text(std::uint64_t size, const Channel& c) {
  return "message of " + std::to_string(size) + " bytes is larger than the " + c.whose() + " " +
         std::to_string(c.max_message()) + "-byte limit";
}

namespace {
// NAME as a topic or queue, or false when it does not exist.
bool try_open(const std::string& name, zipc::Role role, Channel* c) {
  const zipc::SegmentKind kind = kind_of(name);
  if (kind == zipc::SegmentKind::any) return false;
  if (kind == zipc::SegmentKind::topic) {
    c->topic = zipc::Topic::open(name);
  } else if (kind == zipc::SegmentKind::queue) {
    c->queue = zipc::Queue::open(name, role);
    c->is_topic = false;
  } else {
    fail(kConflict, name, std::string("is a ") + zipc::to_string(kind) + ", not a topic or queue");
  }
  return true;
}
}  // namespace

Channel open_channel(const std::string& name, bool create, const ChannelOptions& o, zipc::Role role) {
  Channel c;
  if (try_open(name, role, &c)) return c;
  if (!create) fail(kNotFound, name, "no such topic or queue (--create makes one)");
  if (o.kind == "queue") {
    c.queue = zipc::Queue::open_or_create(name, queue_options(o), role);
    c.is_topic = false;
  } else if (o.kind == "topic") {
    c.topic = zipc::Topic::open_or_create(name, topic_options(o));
    say_rounding("--capacity", o.capacity, c.topic.capacity_bytes());
  } else {
    fail(kUsage, name, "--create makes a topic or a queue, not a " + o.kind);
  }
  return c;
}

Channel await_channel(const std::string& name, Duration wait, zipc::Role role) {
  Channel c;
  const std::uint64_t give_up = wait.deadline(now_monotonic_ns());
  bool said = false;
  for (;;) {
    if (try_open(name, role, &c)) return c;
    if (now_monotonic_ns() >= give_up) {
      fail(wait.forever || wait.ns != 0 ? kTimeout : kNotFound, name,
           wait.ns == 0 ? "no such topic or queue" : "no such topic or queue after waiting " + wait.text());
    }
    if (stop_requested()) fail(kFailure, name, "interrupted while waiting for it to be created");
    if (!said && stderr_is_terminal()) {
      std::fprintf(stderr, "zipc: waiting for '%s' to be created (^C stops)\n", name.c_str());
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// --from at parse time: oldest, latest or a decimal sequence number.
CLI::Validator from_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s == "latest" || s == "oldest") return {};
        try {
          (void)parse_count(s, 0, kNoMax);
        } catch (const std::invalid_argument&) {
          return "'" + s + "' is not oldest, latest or a sequence number from 0 to 18446744073709551615";
        }
        return {};
      },
      "oldest|latest|SEQ");
}

zipc::From parse_from(const std::string& s) {
  if (s == "latest") return zipc::From::latest();
  if (s == "oldest") return zipc::From::oldest();
  return zipc::From::sequence(parse_count(s, 0, kNoMax));  // checked by from_validator
}

void wait_for_subscribers(const std::string& name, std::uint32_t n, Duration timeout) {
  if (n == 0) return;
  const std::uint64_t give_up = timeout.deadline(now_monotonic_ns());
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

void say_rounding(const char* what, std::uint64_t asked, std::uint64_t made) {
  if (asked == made) return;
  std::fprintf(stderr, "zipc: %s %s rounds up to %s\n", what, exact_size(asked).c_str(), exact_size(made).c_str());
}

}  // namespace zipc_tool
