// zipc create NAME: create a topic, a queue or an empty user segment.
#include "channel_options.hpp"

namespace zipc_tool {
namespace {

struct CreateOptions {
  std::string name;
  ChannelOptions channel;
  std::uint64_t size = 0;  // user segment bytes; 0: not given
};

int run_create(const CreateOptions& o) {
  const ChannelOptions& c = o.channel;
  if (c.kind == "user" || o.size != 0) {
    if (o.size == 0) fail(kUsage, o.name, "a user segment needs --size");
    zipc::SegmentOptions so;
    so.mode = c.mode;
    zipc::Segment::create(o.name, {zipc::SegmentKind::user, o.size, {}}, nullptr, so);
    std::printf("created %s (%s)\n", o.name.c_str(), exact_size(o.size).c_str());
  } else if (c.kind == "topic") {
    const zipc::Topic t = zipc::Topic::create(o.name, topic_options(c));
    say_rounding("--capacity", c.capacity, t.capacity_bytes());
    std::printf("created topic %s (%s ring, messages up to %s)\n", o.name.c_str(),
                exact_size(t.capacity_bytes()).c_str(), exact_size(t.max_message_size()).c_str());
  } else {
    const zipc::QueueOptions q = queue_options(c);
    zipc::Queue::create(o.name, q, zipc::Role::none);
    std::printf("created queue %s (%zu blocks of %s)\n", o.name.c_str(), q.block_count,
                exact_size(q.block_size).c_str());
  }
  return kOk;
}

}  // namespace

Command add_create(CLI::App& root) {
  auto o = std::make_shared<CreateOptions>();
  CLI::App* app = root.add_subcommand("create", "create a topic, a queue, or an empty user segment");
  app->footer(
      "Example:\n  zipc create prices --kind topic --capacity 16MiB --mode 660\n"
      "  zipc create jobs --kind queue --block-size 256 --block-count 4096\n"
      "  zipc create blob --size 8192             # an empty user segment");
  app->add_option("name", o->name, "channel name")->required();
  add_size(app, "--size", o->size, 1, 1ull << 40, "user segment: payload bytes (implies --kind user)")->default_str("");
  add_channel_options(app, o->channel, Kinds::any);
  return {app, [o] { return run_create(*o); }};
}

}  // namespace zipc_tool
