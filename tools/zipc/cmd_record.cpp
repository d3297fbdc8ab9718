// zipc record NAME FILE: a topic's messages, with sequence and stamp, to a file.
#include "channel_options.hpp"
#include "record_file.hpp"

namespace zipc_tool {
namespace {

struct RecordOptions {
  std::string name;
  std::string file;
  std::string from = "latest";
  std::uint64_t count = 0;
  double duration = 0;
  double timeout = 0;
  bool lossy = false;
  bool stats = false;
};

int run_record(const RecordOptions& o) {
  install_stop_handler();
  const zipc::SegmentKind kind = kind_of(o.name);
  if (kind == zipc::SegmentKind::any) fail(kNotFound, o.name, "no such topic");
  if (kind != zipc::SegmentKind::topic)
    fail(kConflict, o.name, std::string("is a ") + zipc::to_string(kind) + ", not a topic");
  zipc::Topic topic = zipc::Topic::open(o.name);
  zipc::SubscribeOptions so;
  so.delivery = o.lossy ? zipc::Delivery::lossy : zipc::Delivery::reliable;
  if (o.from == "oldest") {
    so.from = zipc::From::oldest();
  } else if (o.from != "latest") {
    so.from = zipc::From::sequence(std::stoull(o.from));
  }
  zipc::Subscriber sub = topic.subscribe(so);
  RecordWriter w(o.file, o.name);
  const std::size_t max_message = topic.max_message_size();
  const std::uint64_t t0 = now_monotonic_ns();
  const std::uint64_t end_ns = o.duration > 0 ? t0 + static_cast<std::uint64_t>(o.duration * 1e9) : ~0ull;
  std::uint64_t n = 0, idle_since = 0;
  while ((o.count == 0 || n < o.count) && !stop_requested()) {
    if ((n & 1023) == 0 && now_monotonic_ns() >= end_ns) break;
    zipc::Status st;
    if (!o.lossy) {
      zipc::TopicReadLoan v = sub.try_acquire();
      if (v.status() == zipc::Status::empty) v = sub.acquire(std::chrono::milliseconds(50));
      st = v.status();
      if (static_cast<bool>(v)) w.append(v.sequence(), v.publish_ns(), v.data());
    } else {
      // Read straight into the file's next chunk (one copy, as reliable).
      const std::span<std::byte> area = w.begin(max_message);
      zipc::ReadResult r = sub.try_read(area);
      if (r.status == zipc::Status::empty) r = sub.read(area, std::chrono::milliseconds(50));
      st = r.status;
      if (r.ok()) w.finish(r.sequence, r.publish_ns, r.size);
      if (st == zipc::Status::overrun) continue;  // counted in sub.lost()
    }
    if (st == zipc::Status::ok) {
      ++n;
      idle_since = 0;
      continue;
    }
    if (st == zipc::Status::timeout || st == zipc::Status::empty) {
      const std::uint64_t now = now_monotonic_ns();
      if (now >= end_ns) break;
      if (idle_since == 0) idle_since = now;
      if (o.timeout > 0 && static_cast<double>(now - idle_since) / 1e9 >= o.timeout) break;
      continue;
    }
    fail(exit_code_for(st), o.name, std::string("read failed: ") + zipc::to_string(st));
  }
  w.close();
  const double secs = static_cast<double>(now_monotonic_ns() - t0) / 1e9;
  if (o.stats || o.lossy) {
    std::fprintf(stderr, "zipc record: '%s': %llu messages (%s) in %.3f s, %llu lost\n", o.name.c_str(),
                 static_cast<unsigned long long>(n), human_size(w.bytes_written()).c_str(), secs,
                 static_cast<unsigned long long>(sub.lost()));
  }
  return kOk;
}

}  // namespace

Command add_record(CLI::App& root) {
  auto o = std::make_shared<RecordOptions>();
  CLI::App* app = root.add_subcommand("record", "write a topic's messages (sequence, time stamp, bytes) to a file");
  app->footer(
      "Example:\n  zipc record prices prices.zrec --duration 60     # ^C also stops it cleanly\n"
      "  zipc replay prices.zrec prices-copy --create\n"
      "The file format is versioned and append-only; see docs/cli.md.");
  app->add_option("name", o->name, "topic name")->required();
  app->add_option("file", o->file, "output file (created or truncated)")->required();
  app->add_option("--from", o->from, "oldest | latest | SEQ");
  app->add_option("--count", o->count, "stop after N messages");
  app->add_option("--duration", o->duration, "stop after this many seconds");
  app->add_option("--timeout", o->timeout, "stop after this many seconds without a message");
  app->add_flag("--lossy", o->lossy, "never hold the publisher back (losses are counted and reported)");
  app->add_flag("--stats", o->stats, "print messages, bytes and time on stderr at the end");
  return {app, [o] { return run_record(*o); }};
}

}  // namespace zipc_tool
