// zipc sub NAME: print a topic's messages (or receive a queue's).
#include "channel_options.hpp"
#include "message_format.hpp"

namespace zipc_tool {
namespace {

struct SubOptions {
  std::string name;
  std::string format = "text";
  std::string from = "latest";
  std::uint64_t count = 0;
  bool lossy = false;
  double timeout = 0;  // idle seconds before giving up (0: wait forever)
  bool stats = false;
};

zipc::From parse_from(const std::string& s) {
  if (s == "latest") return zipc::From::latest();
  if (s == "oldest") return zipc::From::oldest();
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used, 10);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != s.size()) fail(kUsage, "--from", "'" + s + "' is not oldest, latest or a sequence number");
  return zipc::From::sequence(v);
}

// Counts idleness; true when --timeout ran out.
struct Idle {
  double limit;
  std::uint64_t since = now_monotonic_ns();
  void reset() { since = 0; }
  bool expired() {
    if (limit <= 0) return false;
    const std::uint64_t now = now_monotonic_ns();
    if (since == 0) since = now;
    return static_cast<double>(now - since) / 1e9 >= limit;
  }
};

constexpr auto kSlice = std::chrono::milliseconds(50);

int finish(const SubOptions& o, std::uint64_t n, bool timed_out, OutBuffer& out) {
  out.flush();
  std::fflush(stdout);
  if (o.stats)
    std::fprintf(stderr, "zipc sub: '%s': %llu messages\n", o.name.c_str(), static_cast<unsigned long long>(n));
  if (timed_out && o.count != 0 && n < o.count) {
    fail(kTimeout, o.name,
         "got " + std::to_string(n) + " of " + std::to_string(o.count) + " messages before " +
             std::to_string(o.timeout) + " s without one");
  }
  return kOk;
}

int sub_topic(const SubOptions& o, zipc::Topic& topic, OutFormat f, OutBuffer& out) {
  zipc::SubscribeOptions so;
  so.from = parse_from(o.from);
  so.delivery = o.lossy ? zipc::Delivery::lossy : zipc::Delivery::reliable;
  zipc::Subscriber sub = topic.subscribe(so);
  Idle idle{o.timeout};
  std::uint64_t n = 0;
  bool timed_out = false;
  if (!o.lossy) {
    while (o.count == 0 || n < o.count) {
      zipc::MessageView v = sub.try_read_view();
      if (v.status == zipc::Status::empty) {
        out.flush();
        if (stop_requested()) break;
        v = sub.read_view(kSlice);
      }
      if (v.ok()) {
        emit_message(out, f, v.sequence, v.publish_ns, v.data);
        ++n;
        idle.reset();
        continue;
      }
      if (v.status == zipc::Status::timeout || v.status == zipc::Status::empty) {
        if (idle.expired()) {
          timed_out = true;
          break;
        }
        continue;
      }
      fail(exit_code_for(v.status), o.name, std::string("read failed: ") + zipc::to_string(v.status));
    }
    return finish(o, n, timed_out, out);
  }
  std::vector<std::byte> buf(topic.max_message_size());
  while (o.count == 0 || n < o.count) {
    zipc::ReadResult r = sub.try_read(buf);
    if (r.status == zipc::Status::empty) {
      out.flush();
      if (stop_requested()) break;
      r = sub.read(buf, kSlice);
    }
    if (r.ok()) {
      emit_message(out, f, r.sequence, r.publish_ns, {buf.data(), r.size});
      ++n;
      idle.reset();
    } else if (r.status == zipc::Status::overrun) {
      out.flush();
      std::fprintf(stderr, "zipc sub: '%s': lost %u message(s) (lapped; %llu lost in all)\n", o.name.c_str(), r.size,
                   static_cast<unsigned long long>(sub.lost()));
    } else if (r.status == zipc::Status::timeout || r.status == zipc::Status::empty) {
      if (idle.expired()) {
        timed_out = true;
        break;
      }
    } else {
      fail(exit_code_for(r.status), o.name, std::string("read failed: ") + zipc::to_string(r.status));
    }
  }
  return finish(o, n, timed_out, out);
}

int sub_queue(const SubOptions& o, zipc::Queue& q, OutFormat f, OutBuffer& out) {
  Idle idle{o.timeout};
  std::uint64_t n = 0;
  bool timed_out = false;
  while (o.count == 0 || n < o.count) {
    zipc::ReadLoan in = q.try_acquire();
    if (!in && in.status() == zipc::Status::empty) {
      out.flush();
      if (stop_requested()) break;
      in = q.acquire(kSlice);
    }
    if (in) {
      emit_message(out, f, n, 0, in.bytes());
      ++n;
      idle.reset();
      continue;
    }
    const zipc::Status st = in.status();
    if (st == zipc::Status::timeout || st == zipc::Status::empty) {
      if (idle.expired()) {
        timed_out = true;
        break;
      }
      continue;
    }
    if (st == zipc::Status::closed) break;
    fail(exit_code_for(st), o.name, std::string("receive failed: ") + zipc::to_string(st));
  }
  return finish(o, n, timed_out, out);
}

int run_sub(const SubOptions& o) {
  install_stop_handler();
  const OutFormat f = parse_out_format(o.format);
  Channel c = open_channel(o.name, false, {}, zipc::Role::consumer);
  OutBuffer out(stdout);
  if (c.is_topic) return sub_topic(o, c.topic, f, out);
  if (o.lossy || o.from != "latest") fail(kUsage, o.name, "--lossy and --from apply to topics; this is a queue");
  return sub_queue(o, c.queue, f, out);
}

}  // namespace

Command add_sub(CLI::App& root) {
  auto o = std::make_shared<SubOptions>();
  CLI::App* app = root.add_subcommand("sub", "print a topic's messages (a queue's are received, i.e. consumed)");
  app->footer(
      "Example:\n  zipc sub prices --from oldest --count 10 --format json\n"
      "  zipc sub prices --lossy > ticks.txt        # never holds the publisher back\n"
      "  zipc sub jobs --timeout 2                  # a queue: exit after 2 s without a message\n"
      "json lines: {\"seq\":N,\"time_ns\":T,\"size\":S,\"data\":\"text\"} (or \"hex\" when not UTF-8 text).");
  app->add_option("name", o->name, "topic or queue name")->required();
  app->add_option("--format", o->format, "text | hex | json")->check(CLI::IsMember({"text", "hex", "json"}));
  app->add_option("--from", o->from, "topic: oldest | latest | SEQ (a sequence number)");
  app->add_option("--count", o->count, "stop after N messages");
  app->add_flag("--lossy", o->lossy, "topic: lossy subscriber (never slows the publisher; reports losses)");
  app->add_option("--timeout", o->timeout,
                  "give up after this many seconds without a message (exit 5 if --count not reached)");
  app->add_flag("--stats", o->stats, "print the message count on stderr at the end");
  return {app, [o] { return run_sub(*o); }};
}

}  // namespace zipc_tool
