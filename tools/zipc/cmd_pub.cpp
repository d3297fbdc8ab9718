// zipc pub NAME: stdin into a topic (publish) or a queue (send).
#include "channel_options.hpp"
#include "message_format.hpp"

namespace zipc_tool {
namespace {

struct PubOptions {
  std::string name;
  std::string format = "line";
  bool create = false;
  ChannelOptions channel;
  std::uint32_t wait_subscribers = 0;
  Duration wait_timeout = Duration::seconds(10);
  std::uint64_t generate = 0;
  std::uint64_t size = 64;
  double rate = 0;
  bool stats = false;
};

// Sends one message, waiting for room as long as it takes (or until ^C).
class Sender {
 public:
  Sender(Channel& c, std::string name) : c_(c), name_(std::move(name)), limit_(c.max_message()) {
    if (c_.is_topic) pub_ = c_.topic.publisher();
  }
  // The channel's largest message: what reading stdin may buffer for one.
  [[nodiscard]] std::uint64_t limit() const noexcept { return limit_; }
  // Refuses a message over the limit before it is read or built.
  void check_size(std::uint64_t n, bool at_least = false) const {
    if (n <= limit_) return;
    if (at_least) {
      fail(kUsage, name_,
           "message of more than " + std::to_string(limit_) + " bytes is larger than the " + c_.whose() + " " +
               std::to_string(limit_) + "-byte limit");
    }
    fail(kUsage, name_, too_large_text(n, c_));
  }
  void send(std::span<const std::byte> m) {
    zipc::Status st;
    if (c_.is_topic) {
      zipc::CommitResult r = pub_.try_publish(m);
      while ((r.status == zipc::Status::full || r.status == zipc::Status::timeout) && !stop_requested()) {
        r = pub_.publish(m, std::chrono::milliseconds(100));  // a slow reliable subscriber: keep waiting
      }
      st = r.status;
    } else {
      st = c_.queue.try_send(m);
      while ((st == zipc::Status::full || st == zipc::Status::timeout) && !stop_requested()) {
        st = c_.queue.send(m, std::chrono::milliseconds(100));
      }
    }
    if (st == zipc::Status::ok) {
      ++messages;
      bytes += m.size();
      return;
    }
    if (stop_requested()) fail(kFailure, name_, "interrupted");
    if (st == zipc::Status::too_large) fail(kUsage, name_, too_large_text(m.size(), c_));
    fail(exit_code_for(st), name_, std::string("send failed: ") + zipc::to_string(st));
  }
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;

 private:
  Channel& c_;
  std::string name_;
  std::uint64_t limit_;
  zipc::Publisher pub_;
};

std::span<const std::byte> as_bytes(const char* p, std::size_t n) {
  return {reinterpret_cast<const std::byte*>(p), n};
}

void read_lines(Sender& s, bool json) {
  std::vector<char> buf(4 << 20);
  std::size_t have = 0;
  for (;;) {
    if (have == buf.size()) {  // a line longer than the buffer: grows up to the channel's limit
      s.check_size(have, true);
      buf.resize(std::min<std::uint64_t>(buf.size() * 2, s.limit() + 2));
    }
    const std::size_t got = std::fread(buf.data() + have, 1, buf.size() - have, stdin);
    const std::size_t end = have + got;
    std::size_t start = 0;
    for (;;) {
      const void* nl = std::memchr(buf.data() + start, '\n', end - start);
      if (nl == nullptr) break;
      const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data());
      if (json) {
        const std::string m = json_line_payload({buf.data() + start, at - start});
        s.send(as_bytes(m.data(), m.size()));
      } else {
        s.send(as_bytes(buf.data() + start, at - start));
      }
      start = at + 1;
    }
    std::memmove(buf.data(), buf.data() + start, end - start);
    have = end - start;
    if (got == 0) {
      if (std::ferror(stdin)) fail(kIo, "stdin", std::strerror(errno));
      if (have != 0) {  // a last line without '\n'
        if (json) {
          const std::string m = json_line_payload({buf.data(), have});
          s.send(as_bytes(m.data(), m.size()));
        } else {
          s.send(as_bytes(buf.data(), have));
        }
      }
      return;
    }
  }
}

bool read_exact(void* p, std::size_t n) {
  const std::size_t got = std::fread(p, 1, n, stdin);
  if (got == n) return true;
  if (got == 0 && std::feof(stdin)) return false;
  fail(kIo, "stdin", "input ends inside a len32 frame");
}

void read_len32(Sender& s) {
  std::vector<char> msg;
  for (;;) {
    unsigned char len[4];
    if (!read_exact(len, 4)) return;
    const std::uint32_t n = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<std::uint32_t>(len[3]) << 24);
    s.check_size(n);  // before allocating what the frame claims
    msg.resize(n);
    if (n != 0 && !read_exact(msg.data(), n)) fail(kIo, "stdin", "input ends inside a len32 frame");
    s.send(as_bytes(msg.data(), n));
  }
}

void read_raw(Sender& s) {
  std::vector<char> all;
  std::vector<char> chunk(1 << 20);
  while (std::size_t got = std::fread(chunk.data(), 1, chunk.size(), stdin)) {
    all.insert(all.end(), chunk.data(), chunk.data() + got);
    s.check_size(all.size(), true);  // stdin longer than one message can be
  }
  if (std::ferror(stdin)) fail(kIo, "stdin", std::strerror(errno));
  s.send(as_bytes(all.data(), all.size()));
}

void generate(Sender& s, std::uint64_t count, std::uint64_t size, double rate) {
  s.check_size(size);  // before allocating it
  std::vector<std::byte> m(size);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::byte>('a' + i % 26);
  const std::uint64_t start = now_monotonic_ns();
  for (std::uint64_t i = 0; i < count && !stop_requested(); ++i) {
    if (m.size() >= 8) std::memcpy(m.data(), &i, 8);
    s.send(m);
    if (rate > 0 && (i & 63) == 63) {
      const auto due = start + static_cast<std::uint64_t>(static_cast<double>(i + 1) * 1e9 / rate);
      if (!pause_until(due)) break;
    }
  }
}

int run_pub(const PubOptions& o) {
  install_stop_handler();
  Channel c = open_channel(o.name, o.create, o.channel, zipc::Role::producer);
  if (c.is_topic) wait_for_subscribers(o.name, o.wait_subscribers, o.wait_timeout);
  Sender s(c, o.name);
  std::vector<char> inbuf(1 << 20);
  std::setvbuf(stdin, inbuf.data(), _IOFBF, inbuf.size());
  const std::uint64_t t0 = now_monotonic_ns();
  if (o.generate != 0) {
    generate(s, o.generate, o.size, o.rate);
  } else if (o.format == "line" || o.format == "json") {
    read_lines(s, o.format == "json");
  } else if (o.format == "len32") {
    read_len32(s);
  } else {
    read_raw(s);
  }
  const double secs = static_cast<double>(now_monotonic_ns() - t0) / 1e9;
  if (o.stats) {
    std::fprintf(stderr, "zipc pub: '%s': %llu messages, %s in %.3f s (%s msg/s, %s/s)\n", o.name.c_str(),
                 static_cast<unsigned long long>(s.messages), human_size(s.bytes).c_str(), secs,
                 human_rate(static_cast<double>(s.messages) / secs).c_str(),
                 human_size(static_cast<std::uint64_t>(static_cast<double>(s.bytes) / secs)).c_str());
  }
  return stop_requested() ? kFailure : kOk;
}

}  // namespace

Command add_pub(CLI::App& root) {
  auto o = std::make_shared<PubOptions>();
  CLI::App* app = root.add_subcommand("pub", "publish stdin to a topic (or send it to a queue)");
  app->footer(
      "Example:\n  seq 1000000 | zipc pub numbers --create --wait-subscribers 1\n"
      "  echo '{\"hex\":\"00ff\"}' | zipc pub jobs --format json       # a queue: sends\n"
      "  zipc pub load --generate 1000000 --size 1KiB --rate 100000 --stats\n"
      "Formats: line (one message per line, without the '\\n'), len32 (4-byte little-endian\n"
      "length + bytes), raw (all of stdin is one message), json (one JSON value per line:\n"
      "a string, {\"data\":\"text\"} or {\"hex\":\"...\"}; other values are sent as JSON text).");
  app->add_option("name", o->name, "topic or queue name")->required();
  app->add_option("--format", o->format, "line | len32 | raw | json")
      ->check(CLI::IsMember({"line", "len32", "raw", "json"}));
  app->add_flag("--create", o->create, "create the channel when absent (with the options below)");
  add_channel_options(app, o->channel, Kinds::any);
  add_count32(app, "--wait-subscribers", o->wait_subscribers, 0, 1u << 16,
              "topic: wait until this many subscribers are attached");
  add_duration(app, "--wait-timeout", o->wait_timeout, true, Duration{}, kMaxDuration,
               "how long --wait-subscribers waits (exit 5 after; 0: looks once)");
  add_count(app, "--generate", o->generate, 0, kNoMax,
            "send this many synthetic messages instead of reading stdin (0: read stdin)");
  add_size(app, "--size", o->size, 0, 1ull << 40, "--generate: message size (e.g. 1KiB; at most the channel's limit)");
  add_real(app, "--rate", o->rate, 0, true, 1e9, "--generate: messages per second (0: as fast as possible)");
  app->add_flag("--stats", o->stats, "print messages, bytes and rate on stderr at the end");
  return {app, [o] { return run_pub(*o); }};
}

}  // namespace zipc_tool
