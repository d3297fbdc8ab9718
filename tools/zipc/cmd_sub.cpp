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
  Duration timeout = Duration::infinite();  // idle time before giving up (0: take what is there)
  bool no_wait = false;                     // fail at once when the channel does not exist
  bool stats = false;
};

constexpr std::uint64_t kSliceNs = 50'000'000;  // ^C is seen within this

// Counts idleness: expired() when --timeout passed without a message; each
// blocking read waits at most slice() so that ^C is seen within 50 ms.
struct Idle {
  Duration limit;
  std::uint64_t since = now_monotonic_ns();
  void reset() { since = now_monotonic_ns(); }
  [[nodiscard]] bool expired() const { return now_monotonic_ns() >= limit.deadline(since); }
  [[nodiscard]] std::chrono::nanoseconds slice() const {
    const std::uint64_t end = limit.deadline(since), now = now_monotonic_ns();
    return std::chrono::nanoseconds(end <= now ? 0 : std::min(end - now, kSliceNs));
  }
};

int finish(const SubOptions& o, std::uint64_t n, bool timed_out, OutBuffer& out) {
  out.flush();
  std::fflush(stdout);
  if (o.stats)
    std::fprintf(stderr, "zipc sub: '%s': %llu messages\n", o.name.c_str(), static_cast<unsigned long long>(n));
  if (timed_out && o.count != 0 && n < o.count) {
    fail(kTimeout, o.name,
         "got " + std::to_string(n) + " of " + std::to_string(o.count) + " messages, then " + o.timeout.text() +
             " without one");
  }
  return kOk;
}

int sub_topic(const SubOptions& o, zipc::Topic& topic, OutFormat f, OutBuffer& out, bool appeared) {
  zipc::SubscribeOptions so;
  // A topic that appeared while we waited: from its first message (nothing
  // published between its creation and this subscribe is missed).
  so.from = appeared && o.from == "latest" ? zipc::From::oldest() : parse_from(o.from);
  so.delivery = o.lossy ? zipc::Delivery::lossy : zipc::Delivery::reliable;
  zipc::Subscriber sub = topic.subscribe(so);
  Idle idle{o.timeout};
  std::uint64_t n = 0;
  bool timed_out = false;
  if (!o.lossy) {
    while (o.count == 0 || n < o.count) {
      zipc::TopicReadLoan v = sub.try_acquire();
      if (v.status() == zipc::Status::empty) {
        out.flush();
        if (stop_requested()) break;
        if (idle.expired()) {
          timed_out = true;
          break;
        }
        v = sub.acquire(idle.slice());
      }
      if (static_cast<bool>(v)) {
        emit_message(out, f, v.sequence(), v.publish_ns(), v.data());
        ++n;
        idle.reset();
        continue;
      }
      if (v.status() == zipc::Status::timeout || v.status() == zipc::Status::empty) continue;
      fail(exit_code_for(v.status()), o.name, std::string("read failed: ") + zipc::to_string(v.status()));
    }
    return finish(o, n, timed_out, out);
  }
  std::vector<std::byte> buf(topic.max_message_size());
  while (o.count == 0 || n < o.count) {
    zipc::ReadResult r = sub.try_read(buf);
    if (r.status == zipc::Status::empty) {
      out.flush();
      if (stop_requested()) break;
      if (idle.expired()) {
        timed_out = true;
        break;
      }
      r = sub.read(buf, idle.slice());
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
      continue;
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
    zipc::QueueReadLoan in = q.try_acquire();
    if (!in && in.status() == zipc::Status::empty) {
      out.flush();
      if (stop_requested()) break;
      if (idle.expired()) {
        timed_out = true;
        break;
      }
      in = q.acquire(idle.slice());
    }
    if (in) {
      emit_message(out, f, n, 0, in.data());
      ++n;
      idle.reset();
      continue;
    }
    const zipc::Status st = in.status();
    if (st == zipc::Status::timeout || st == zipc::Status::empty) continue;
    if (st == zipc::Status::closed) break;
    fail(exit_code_for(st), o.name, std::string("receive failed: ") + zipc::to_string(st));
  }
  return finish(o, n, timed_out, out);
}

int run_sub(const SubOptions& o) {
  install_stop_handler();
  const OutFormat f = parse_out_format(o.format);
  const bool existed = kind_of(o.name) != zipc::SegmentKind::any;
  Channel c = await_channel(o.name, o.no_wait ? Duration{} : o.timeout, zipc::Role::consumer);
  OutBuffer out(stdout);
  if (c.is_topic) return sub_topic(o, c.topic, f, out, !existed);
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
      "  zipc sub jobs --timeout 2s                 # a queue: exit after 2 s without a message\n"
      "NAME need not exist yet: sub waits for it to be created (a topic is then read from its\n"
      "first message), unless --no-wait.\n"
      "json lines: {\"seq\":N,\"time_ns\":T,\"size\":S,\"data\":\"text\"} (or \"hex\" when not UTF-8 text).");
  app->add_option("name", o->name, "topic or queue name")->required();
  app->add_option("--format", o->format, "text | hex | json")->check(CLI::IsMember({"text", "hex", "json"}));
  app->add_option("--from", o->from, "topic: oldest | latest | SEQ (a sequence number)")->check(from_validator());
  add_count(app, "--count", o->count, 0, kNoMax, "stop after N messages (0: no limit)");
  app->add_flag("--lossy", o->lossy, "topic: lossy subscriber (never slows the publisher; reports losses)");
  add_duration(app, "--timeout", o->timeout, true, Duration{}, kMaxDuration,
               "give up after this long without a message, also while waiting for NAME to be created "
               "(0: take what is there; exit 5 if --count is not reached)");
  app->add_flag("--no-wait", o->no_wait, "exit 3 at once when NAME does not exist (default: wait for it)");
  app->add_flag("--stats", o->stats, "print the message count on stderr at the end");
  return {app, [o] { return run_sub(*o); }};
}

}  // namespace zipc_tool
