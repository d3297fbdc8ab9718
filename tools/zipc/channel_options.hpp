// Options that create a channel (zipc create, pub --create, replay --create),
// and opening a topic or queue by name for pub/sub/record/replay.
#pragma once

#include "args.hpp"
#include "common.hpp"

namespace zipc_tool {

struct ChannelOptions {
  std::string kind = "topic";  // topic | queue | user
  std::uint64_t capacity = 4u << 20;
  std::uint64_t max_message = 64u << 10;
  std::uint32_t max_subscribers = 256;
  bool multi_publisher = false;
  std::uint64_t block_size = 1024;
  std::uint64_t block_count = 1024;
  bool single_producer = false;
  bool single_consumer = false;
  unsigned mode = 0600;
};

// Which options a subcommand takes: replay makes topics only.
enum class Kinds { topic, any };
void add_channel_options(CLI::App* app, ChannelOptions& o, Kinds kinds);
zipc::TopicOptions topic_options(const ChannelOptions& o);
zipc::QueueOptions queue_options(const ChannelOptions& o);

// A topic or queue to write to or read from: exactly one is attached.
struct Channel {
  zipc::Topic topic;
  zipc::Queue queue;
  bool is_topic = true;
  // The largest message it takes, and "topic's"/"queue's" for messages.
  [[nodiscard]] std::uint64_t max_message() const noexcept;
  [[nodiscard]] const char* whose() const noexcept { return is_topic ? "topic's" : "queue's"; }
};
// Opens NAME (a topic or queue); with create, creates it when absent with o.
// Without create, an absent NAME is kNotFound (the message names what helps).
Channel open_channel(const std::string& name, bool create, const ChannelOptions& o, zipc::Role role);
// As open_channel without create, but waits up to `wait` for NAME to appear
// (polled every 50 ms; ^C stops the wait, kTimeout after it).
Channel await_channel(const std::string& name, Duration wait, zipc::Role role);

// "message of 70000 bytes is larger than the topic's 65536-byte limit"
std::string too_large_text(std::uint64_t size, const Channel& c);

// Waits until a topic has at least n live subscribers (inspect_channel), or
// fails with kTimeout after `timeout` (0: looks once).
void wait_for_subscribers(const std::string& name, std::uint32_t n, Duration timeout);

// --from: oldest | latest | SEQ, checked when the command line is read.
CLI::Validator from_validator();
zipc::From parse_from(const std::string& s);

// Says when the library rounded what was asked ("capacity 3 MiB rounds up to 4 MiB").
void say_rounding(const char* what, std::uint64_t asked, std::uint64_t made);

}  // namespace zipc_tool
