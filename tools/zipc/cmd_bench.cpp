// zipc bench: a few seconds' check of a deployment: queue ping-pong between two
// processes, and a topic stream whose every message is verified.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "args.hpp"
#include "bench_rpc.hpp"
#include "common.hpp"

namespace zipc_tool {
namespace {

struct BenchOptions {
  std::uint64_t round_trips = 20000;
  std::uint64_t messages = 2000000;
  std::uint64_t size = 64;
  bool rpc_only = false;
};

// A forked child never flushes stdio: its buffers are copies of the parent's.
[[noreturn]] void child_exit(int code) {
  ::_exit(code);
}

int wait_child(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

double ping_pong(const std::string& base, std::uint64_t n) {
  const std::string a = base + ".ping", b = base + ".pong";
  zipc::QueueOptions qo;
  qo.block_size = 64;
  qo.block_count = 64;
  qo.producers = zipc::Multiplicity::single;
  qo.consumers = zipc::Multiplicity::single;
  zipc::Queue ping = zipc::Queue::create(a, qo, zipc::Role::producer);
  zipc::Queue pong = zipc::Queue::create(b, qo, zipc::Role::consumer);
  std::fflush(stdout);  // or the child inherits (and could repeat) pending output
  const pid_t pid = ::fork();
  if (pid < 0) fail(kFailure, base, "fork failed");
  if (pid == 0) {
    try {
      zipc::Queue in = zipc::Queue::open(a, zipc::Role::consumer);
      zipc::Queue out = zipc::Queue::open(b, zipc::Role::producer);
      std::byte buf[64];
      for (std::uint64_t i = 0; i < n; ++i) {
        zipc::IoResult r = in.recv(buf, std::chrono::seconds(10));
        if (!r.ok() || out.send({buf, r.size}, std::chrono::seconds(10)) != zipc::Status::ok) child_exit(1);
      }
      child_exit(0);
    } catch (...) {
      child_exit(2);
    }
  }
  std::vector<std::uint64_t> rtt;
  rtt.reserve(n);
  std::byte buf[64]{};
  bool ok = true;
  for (std::uint64_t i = 0; i < n && ok; ++i) {
    std::memcpy(buf, &i, 8);
    const std::uint64_t t = now_monotonic_ns();
    ok = ping.send({buf, 8}, std::chrono::seconds(10)) == zipc::Status::ok;
    zipc::IoResult r = ok ? pong.recv(buf, std::chrono::seconds(10)) : zipc::IoResult{};
    std::uint64_t back = ~0ull;
    if (r.ok() && r.size == 8) std::memcpy(&back, buf, 8);
    ok = ok && back == i;
    rtt.push_back(now_monotonic_ns() - t);
  }
  const int rc = wait_child(pid);
  zipc::Queue::remove(a);
  zipc::Queue::remove(b);
  if (!ok || rc != 0) fail(kFailure, base, "ping-pong: a round trip failed or the echo process failed");
  std::sort(rtt.begin(), rtt.end());
  return static_cast<double>(rtt[rtt.size() / 2]);
}

double stream(const std::string& base, std::uint64_t n, std::size_t size) {
  const std::string name = base + ".stream";
  zipc::TopicOptions to;
  to.capacity_bytes = 1 << 22;
  to.max_message_size = 4096;
  zipc::Topic topic = zipc::Topic::create(name, to);
  zipc::Subscriber sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  const std::uint64_t t0 = now_monotonic_ns();
  std::fflush(stdout);  // or the child inherits (and could repeat) pending output
  const pid_t pid = ::fork();
  if (pid < 0) fail(kFailure, base, "fork failed");
  if (pid == 0) {
    try {
      zipc::Topic t = zipc::Topic::open(name);
      zipc::Publisher pub = t.publisher();
      std::vector<std::byte> m(std::max<std::size_t>(size, 8));
      for (std::uint64_t i = 0; i < n; ++i) {
        std::memcpy(m.data(), &i, 8);
        if (!pub.publish(m, std::chrono::seconds(10)).ok()) child_exit(1);
      }
      child_exit(0);
    } catch (...) {
      child_exit(2);
    }
  }
  bool ok = true;
  for (std::uint64_t i = 0; i < n && ok; ++i) {
    zipc::TopicReadLoan v = sub.acquire(std::chrono::seconds(10));
    std::uint64_t got = ~0ull;
    if (static_cast<bool>(v) && v.data().size() >= 8) std::memcpy(&got, v.data().data(), 8);
    ok = static_cast<bool>(v) && v.sequence() == i && got == i;
  }
  const double secs = static_cast<double>(now_monotonic_ns() - t0) / 1e9;
  const int rc = wait_child(pid);
  zipc::Topic::remove(name);
  if (!ok || rc != 0) fail(kFailure, name, "stream: a message was missing, out of order or damaged");
  return static_cast<double>(n) / secs;
}

int run_bench(const BenchOptions& o) {
  const std::string base = "zipc-bench-" + std::to_string(::getpid());
  if (!o.rpc_only) {
    const double rtt = ping_pong(base, o.round_trips);
    std::printf("ping-pong (queue, 2 processes): %llu round trips, median %.2f us\n",
                static_cast<unsigned long long>(o.round_trips), rtt / 1000);
  }
  const double rpc = rpc_ping_pong(base, o.round_trips);
  std::printf("ping-pong (rpc, 2 processes):   %llu calls, median %.2f us\n",
              static_cast<unsigned long long>(o.round_trips), rpc / 1000);
  if (o.rpc_only) return kOk;
  const double rate = stream(base, o.messages, o.size);
  std::printf("stream (topic, 2 processes):   %llu x %llu B messages, %s msg/s (%s/s), every message verified\n",
              static_cast<unsigned long long>(o.messages), static_cast<unsigned long long>(o.size),
              human_rate(rate).c_str(),
              human_size(static_cast<std::uint64_t>(rate * static_cast<double>(o.size))).c_str());
  std::printf("bench: ok\n");
  return kOk;
}

}  // namespace

Command add_bench(CLI::App& root) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* app =
      root.add_subcommand("bench", "a few seconds' check: queue and Rpc ping-pong, a verified topic stream");
  app->footer(
      "Example:\n  zipc bench                       # prints the median round trip and the stream rate\n"
      "  zipc bench --messages 100000 --size 1024");
  add_count(app, "--round-trips", o->round_trips, 1, 1'000'000'000, "ping-pong round trips");
  add_count(app, "--messages", o->messages, 1, kNoMax, "stream messages");
  add_size(app, "--size", o->size, 8, 4096, "stream message size (the stream topic takes up to 4KiB)");
  app->add_flag("--rpc-only", o->rpc_only, "only the Rpc ping-pong");
  return {app, [o] { return run_bench(*o); }};
}

}  // namespace zipc_tool
