// zipc replay FILE NAME: publish a recording again (original pace, --rate or --fast).
#include <thread>

#include "channel_options.hpp"
#include "record_file.hpp"

namespace zipc_tool {
namespace {

struct ReplayOptions {
  std::string file;
  std::string name;
  double rate = 0;
  bool fast = false;
  double speed = 1.0;
  bool create = false;
  ChannelOptions channel;
  std::uint32_t wait_subscribers = 0;
  double wait_timeout = 10;
  bool stats = false;
};

void sleep_until(std::uint64_t due_ns) {
  const std::uint64_t now = now_monotonic_ns();
  if (due_ns > now + 50'000) std::this_thread::sleep_for(std::chrono::nanoseconds(due_ns - now - 20'000));
  while (now_monotonic_ns() < due_ns) {
  }
}

int run_replay(const ReplayOptions& o) {
  install_stop_handler();
  if (o.fast && o.rate > 0) fail(kUsage, "--fast", "use either --fast or --rate");
  RecordReader reader(o.file);
  ChannelOptions copt = o.channel;
  copt.kind = "topic";
  Channel c = open_channel(o.name, o.create, copt, zipc::Role::producer);
  if (!c.is_topic) fail(kConflict, o.name, "replay publishes to a topic; this is a queue");
  wait_for_subscribers(o.name, o.wait_subscribers, o.wait_timeout);
  zipc::Publisher pub = c.topic.publisher();
  Progress progress("replay " + o.file, reader.file_size());
  const std::uint64_t t0 = now_monotonic_ns();
  std::uint64_t first_ns = 0, n = 0, bytes = 0;
  RecordView r;
  while (!stop_requested() && reader.next(&r)) {
    if (o.fast) {
    } else if (o.rate > 0) {
      sleep_until(t0 + static_cast<std::uint64_t>(static_cast<double>(n) * 1e9 / o.rate));
    } else {
      if (n == 0) first_ns = r.publish_ns;
      const std::uint64_t offset = r.publish_ns > first_ns ? r.publish_ns - first_ns : 0;
      sleep_until(t0 + static_cast<std::uint64_t>(static_cast<double>(offset) / o.speed));
    }
    zipc::PublishResult res = pub.try_publish(r.payload);
    while ((res.status == zipc::Status::full || res.status == zipc::Status::timeout) && !stop_requested()) {
      res = pub.publish(r.payload, std::chrono::milliseconds(100));
    }
    if (!res.ok()) {
      if (stop_requested()) break;
      fail(exit_code_for(res.status), o.name, std::string("publish failed: ") + zipc::to_string(res.status));
    }
    ++n;
    bytes += r.payload.size();
    if ((n & 1023) == 0) progress.update(reader.offset());
  }
  progress.finish();
  if (!reader.tail_problem().empty()) {
    std::fprintf(stderr, "zipc replay: '%s': %s\n", o.file.c_str(), reader.tail_problem().c_str());
  }
  const double secs = static_cast<double>(now_monotonic_ns() - t0) / 1e9;
  if (o.stats) {
    std::fprintf(stderr, "zipc replay: '%s': %llu messages, %s in %.3f s (%s msg/s)\n", o.name.c_str(),
                 static_cast<unsigned long long>(n), human_size(bytes).c_str(), secs,
                 human_rate(static_cast<double>(n) / secs).c_str());
  }
  return stop_requested() ? kFailure : kOk;
}

}  // namespace

Command add_replay(CLI::App& root) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* app = root.add_subcommand("replay", "publish a recording again: original pace, --rate, or --fast");
  app->footer(
      "Example:\n  zipc replay prices.zrec prices --create --fast --wait-subscribers 1\n"
      "  zipc replay prices.zrec prices --speed 10        # ten times the original pace\n"
      "A truncated or corrupt tail (a recorder that crashed) is reported and skipped.");
  app->add_option("file", o->file, "a file written by zipc record")->required();
  app->add_option("name", o->name, "topic to publish to")->required();
  app->add_option("--rate", o->rate, "messages per second instead of the original pace");
  app->add_flag("--fast", o->fast, "as fast as possible");
  app->add_option("--speed", o->speed, "original pace times this factor")->check(CLI::PositiveNumber);
  app->add_flag("--create", o->create, "create the topic when absent (with the options below)");
  add_channel_options(app, o->channel, false);
  app->add_option("--wait-subscribers", o->wait_subscribers, "wait until this many subscribers are attached");
  app->add_option("--wait-timeout", o->wait_timeout, "seconds --wait-subscribers waits (exit 5 after)");
  app->add_flag("--stats", o->stats, "print messages, bytes and rate on stderr at the end");
  return {app, [o] { return run_replay(*o); }};
}

}  // namespace zipc_tool
