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
  Duration duration = Duration::infinite();  // 0: what is there now
  Duration timeout = Duration::infinite();   // idle; 0: stop at the first empty read
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
  so.from = parse_from(o.from);
  zipc::Subscriber sub = topic.subscribe(so);
  RecordWriter w(o.file, o.name);
  const std::size_t max_message = topic.max_message_size();
  const std::uint64_t t0 = now_monotonic_ns();
  const std::uint64_t end_ns = o.duration.deadline(t0);
  std::uint64_t n = 0, idle_since = t0;
  // How long a read may block: 50 ms at most (^C), and not past --duration or --timeout.
  auto slice = [&] {
    const std::uint64_t now = now_monotonic_ns();
    const std::uint64_t until = std::min(end_ns, o.timeout.deadline(idle_since));
    return std::chrono::nanoseconds(until <= now ? 0 : std::min<std::uint64_t>(until - now, 50'000'000));
  };
  while ((o.count == 0 || n < o.count) && !stop_requested()) {
    if ((n & 1023) == 0 && now_monotonic_ns() >= end_ns && !o.duration.forever && o.duration.ns != 0) break;
    zipc::Status st;
    if (!o.lossy) {
      zipc::TopicReadLoan v = sub.try_acquire();
      if (v.status() == zipc::Status::empty) v = sub.acquire(slice());
      st = v.status();
      if (static_cast<bool>(v)) w.append(v.sequence(), v.publish_ns(), v.data());
    } else {
      // Read straight into the file's next chunk (one copy, as reliable).
      const std::span<std::byte> area = w.begin(max_message);
      zipc::ReadResult r = sub.try_read(area);
      if (r.status == zipc::Status::empty) r = sub.read(area, slice());
      st = r.status;
      if (r.ok()) w.finish(r.sequence, r.publish_ns, r.size);
      if (st == zipc::Status::overrun) continue;  // counted in sub.lost()
    }
    if (st == zipc::Status::ok) {
      ++n;
      idle_since = now_monotonic_ns();
      continue;
    }
    if (st == zipc::Status::timeout || st == zipc::Status::empty) {
      const std::uint64_t now = now_monotonic_ns();
      if (now >= end_ns || now >= o.timeout.deadline(idle_since)) break;
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
      "Example:\n  zipc record prices prices.zrec --duration 60s    # ^C also stops it cleanly\n"
      "  zipc replay prices.zrec prices-copy --create\n"
      "The file format is versioned and append-only; see docs/guide/cli.md.");
  app->add_option("name", o->name, "topic name")->required();
  app->add_option("file", o->file, "output file (created or truncated)")->required();
  app->add_option("--from", o->from, "oldest | latest | SEQ (a sequence number)")->check(from_validator());
  add_count(app, "--count", o->count, 0, kNoMax, "stop after N messages (0: no limit)");
  add_duration(app, "--duration", o->duration, true, Duration{}, kMaxDuration,
               "stop after this long (e.g. 60s, 10m; 0: only what the topic holds now)");
  add_duration(app, "--timeout", o->timeout, true, Duration{}, kMaxDuration,
               "stop after this long without a message (0: at the first empty read)");
  app->add_flag("--lossy", o->lossy, "never hold the publisher back (losses are counted and reported)");
  app->add_flag("--stats", o->stats, "print messages, bytes and time on stderr at the end");
  return {app, [o] { return run_record(*o); }};
}

}  // namespace zipc_tool
