// zipc replay FILE NAME: publish a recording again (original pace, --rate or --fast).
#include <cmath>

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
  Duration wait_timeout = Duration::seconds(10);
  bool stats = false;
};

// t0 + offset_ns / speed, saturated (a gap of centuries waits until ^C).
std::uint64_t due_at(std::uint64_t t0, long double offset_ns, double speed) {
  const long double due = static_cast<long double>(t0) + offset_ns / speed;
  return due >= 1.8e19L ? ~0ull : static_cast<std::uint64_t>(due);
}

int run_replay(const ReplayOptions& o) {
  install_stop_handler();
  RecordReader reader(o.file);
  ChannelOptions copt = o.channel;
  copt.kind = "topic";
  Channel c = open_channel(o.name, o.create, copt, zipc::Role::producer);
  if (!c.is_topic) fail(kConflict, o.name, "replay publishes to a topic; this is a queue");
  reader.limit_payload(c.max_message(), "the topic " + o.name + "'s");
  wait_for_subscribers(o.name, o.wait_subscribers, o.wait_timeout);
  zipc::Publisher pub = c.topic.publisher();
  Progress progress("replay " + o.file, reader.file_size());
  const std::uint64_t t0 = now_monotonic_ns();
  std::uint64_t first_ns = 0, n = 0, bytes = 0;
  RecordView r;
  while (!stop_requested() && reader.next(&r)) {
    if (o.fast) {
    } else if (o.rate > 0) {
      if (!pause_until(due_at(t0, static_cast<long double>(n) * 1e9L, o.rate))) break;
    } else {
      if (n == 0) first_ns = r.publish_ns;
      const std::uint64_t offset = r.publish_ns > first_ns ? r.publish_ns - first_ns : 0;
      if (!pause_until(due_at(t0, static_cast<long double>(offset), o.speed))) break;
    }
    zipc::CommitResult res = pub.try_publish(r.payload);
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
  CLI::Option* rate = add_real(app, "--rate", o->rate, 0, true, 1e9,
                               "messages per second instead of the original pace (0: original pace)");
  CLI::Option* fast = app->add_flag("--fast", o->fast, "as fast as possible");
  CLI::Option* speed =
      add_real(app, "--speed", o->speed, 0.001, true, 1e6, "original pace times this factor (10: ten times faster)");
  fast->excludes(rate)->excludes(speed);
  rate->excludes(speed);
  app->add_flag("--create", o->create, "create the topic when absent (with the options below)");
  add_channel_options(app, o->channel, Kinds::topic);
  add_count32(app, "--wait-subscribers", o->wait_subscribers, 0, 1u << 16,
              "wait until this many subscribers are attached");
  add_duration(app, "--wait-timeout", o->wait_timeout, true, Duration{}, kMaxDuration,
               "how long --wait-subscribers waits (exit 5 after; 0: looks once)");
  app->add_flag("--stats", o->stats, "print messages, bytes and rate on stderr at the end");
  return {app, [o] { return run_replay(*o); }};
}

}  // namespace zipc_tool
