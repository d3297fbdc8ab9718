// Options that create a channel (zipc create, pub --create, replay --create),
// and opening a topic or queue by name for pub/sub/record/replay.
#pragma once

#include "common.hpp"

namespace zipc_tool {

struct ChannelOptions {
  std::string kind = "topic";  // topic | queue | user
  std::string capacity = "4MiB";
  std::string max_message = "64KiB";
  std::uint32_t max_subscribers = 256;
  bool multi_publisher = false;
  std::string block_size = "1KiB";
  std::size_t block_count = 1024;
  bool single_producer = false;
  bool single_consumer = false;
  std::string size = "0";  // user segments
  std::string mode = "600";
};

void add_channel_options(CLI::App* app, ChannelOptions& o, bool with_kind);
zipc::TopicOptions topic_options(const ChannelOptions& o);
zipc::QueueOptions queue_options(const ChannelOptions& o);
unsigned parse_mode(const std::string& text);

// A topic or queue to write to or read from: exactly one is attached.
struct Channel {
  zipc::Topic topic;
  zipc::Queue queue;
  bool is_topic = true;
};
// Opens NAME (a topic or queue); with create, creates it when absent with o.
Channel open_channel(const std::string& name, bool create, const ChannelOptions& o, zipc::Role role);

// Waits until a topic has at least n live subscribers (inspect_channel), or
// fails with kTimeout after timeout_s seconds.
void wait_for_subscribers(const std::string& name, std::uint32_t n, double timeout_s);

}  // namespace zipc_tool
