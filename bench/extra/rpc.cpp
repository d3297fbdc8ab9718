// zipc-bench-rpc: request/response round trips over zipc Rpc.
//
//   zipc-bench-rpc [--full] --out FILE
//
// For each wait mode (busy, adaptive) and size (128 B, 4 KiB, 256 KiB, 4 MiB)
// it forks a server process (one handler thread) and a client process,
// pinned to different CPUs when there are two (busy mode only; see run_one). Per call: the client copies
// `size` bytes into the request (call(span)); the server reads every byte and
// echoes the request (reply(req.data()): inline data is copied to the
// response area, a block-sized request's block becomes the response without a
// copy); the client reads every byte of the response. Workload
// "rpc-roundtrip-fresh-reply" (256 KiB, 4 MiB) has the server write a new
// response into a loaned block instead (one more copy). After a warm-up,
// every call is timed; the client reports p50/p99/p99.9/max and calls per
// second. Rows go to FILE as a JSON array (transport "zipc-rpc").
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "zipc/rpc.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Result {
  double p50 = 0, p99 = 0, p999 = 0, max = 0, per_s = 0;
  int ok = 0;
};

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)::sched_setaffinity(0, sizeof set, &set);
}

int cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

// Touches every byte (a checksum, as the harness's receivers do), with four
// independent sums so it runs at memory speed rather than one add per cycle.
std::uint64_t read_all(std::span<const std::byte> d) {
  std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 32 <= d.size(); i += 32) {
    std::uint64_t w[4];
    std::memcpy(w, d.data() + i, 32);
    s0 += w[0];
    s1 += w[1];
    s2 += w[2];
    s3 += w[3];
  }
  for (; i < d.size(); ++i) s0 += static_cast<std::uint8_t>(d[i]);
  return s0 ^ s1 ^ s2 ^ s3;
}

zipc::RpcServer* g_server = nullptr;
void on_term(int) {
  if (g_server != nullptr) g_server->stop();
}

int run_server(const std::string& name, std::size_t size, zipc::WaitStrategy wait, bool fresh_reply, int cpu,
               int ready_fd) {
  if (cpu >= 0) pin(cpu);
  zipc::RpcOptions opt;
  opt.max_clients = 2;
  opt.inflight_per_client = 2;
  opt.max_request_size = opt.max_response_size = std::max<std::size_t>(size, 4096);
  opt.inline_size = 4096;
  opt.large_blocks = 4;
  opt.wait.strategy = wait;
  opt.prefault = true;
  auto server = zipc::RpcServer::create(name, opt);
  g_server = &server;
  struct sigaction sa {};
  sa.sa_handler = on_term;
  ::sigaction(SIGTERM, &sa, nullptr);
  char c = 'r';
  (void)!::write(ready_fd, &c, 1);
  ::close(ready_fd);
  volatile std::uint64_t sink = 0;
  server.serve(
      [&](zipc::RpcRequest& req) {
        sink = sink + read_all(req.data());
        if (!fresh_reply) {
          (void)req.reply(req.data());  // echo: a large request's block becomes the response
          return;
        }
        zipc::Status st;
        auto out = req.reply_loan(req.size(), &st);
        if (st != zipc::Status::ok) return;
        std::memcpy(out.data(), req.data().data(), req.size());
        (void)req.commit(out.size());
      },
      1);
  g_server = nullptr;
  return 0;
}

Result run_client(const std::string& name, std::size_t size, int calls, int cpu) {
  if (cpu >= 0) pin(cpu);
  auto client = zipc::RpcClient::connect(name, 5s);
  std::vector<std::byte> req(size);
  for (std::size_t i = 0; i < size; ++i) req[i] = static_cast<std::byte>(i * 13);
  std::uint64_t sink = 0;
  const int warmup = std::max(10, calls / 10);
  Result r;
  for (int i = 0; i < warmup; ++i) {
    auto resp = client.call({req.data(), req.size()}, 10s);
    sink += read_all(resp.data());
  }
  std::vector<double> ns(static_cast<std::size_t>(calls));
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) {
    const auto t0 = Clock::now();
    auto resp = client.call({req.data(), req.size()}, 10s);
    if (resp.ok() && resp.size() == size) ++r.ok;
    sink += read_all(resp.data());
    resp.release();
    ns[static_cast<std::size_t>(i)] = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  }
  const double total = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(ns.begin(), ns.end());
  auto pct = [&](double p) { return ns[std::min(ns.size() - 1, static_cast<std::size_t>(p * ns.size()))]; };
  r.p50 = pct(0.50);
  r.p99 = pct(0.99);
  r.p999 = pct(0.999);
  r.max = ns.back();
  r.per_s = calls / total;
  if (sink == 42) std::puts("");  // keeps the reads
  return r;
}

bool run_one(std::size_t size, zipc::WaitStrategy wait, bool fresh_reply, int calls, Result* out) {
  const std::string name = "bench.rpc." + std::to_string(::getpid()) + "." + std::to_string(size);
  // Busy-poll pins client and server to different CPUs. Adaptive is left
  // unpinned: zipc::Event's adaptive wait skips its spin phase when a thread
  // may run on one CPU only (it assumes the peer might share that CPU), which
  // would turn every adaptive wait into a futex sleep.
  const bool two = cpus() >= 2 && wait == zipc::WaitStrategy::busy_poll;
  int ready[2], results[2];
  if (::pipe(ready) != 0 || ::pipe(results) != 0) return false;
  std::fflush(nullptr);
  const pid_t server = ::fork();
  if (server == 0) {
    ::close(ready[0]);
    int code = 1;
    try {
      code = run_server(name, size, wait, fresh_reply, two ? 1 : -1, ready[1]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "zipc-bench-rpc server: %s\n", e.what());
    }
    std::_Exit(code);
  }
  ::close(ready[1]);
  char c;
  const bool started = ::read(ready[0], &c, 1) == 1;
  ::close(ready[0]);
  pid_t client = -1;
  if (started) {
    client = ::fork();
    if (client == 0) {
      ::close(results[0]);
      Result r;
      try {
        r = run_client(name, size, calls, two ? 0 : -1);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "zipc-bench-rpc client: %s\n", e.what());
      }
      (void)!::write(results[1], &r, sizeof r);
      std::_Exit(0);
    }
  }
  ::close(results[1]);
  Result r;
  const bool got = client > 0 && ::read(results[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
  ::close(results[0]);
  int st;
  if (client > 0) ::waitpid(client, &st, 0);
  ::kill(server, SIGTERM);
  ::waitpid(server, &st, 0);
  try {
    zipc::Segment::remove(name);
  } catch (...) {
  }
  *out = r;
  return got && r.ok == calls;
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false;
  std::string out_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--full") {
      full = true;
    } else if (a == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--full] --out FILE\n", argv[0]);
      return 2;
    }
  }
  if (out_path.empty()) {
    std::fprintf(stderr, "usage: %s [--full] --out FILE\n", argv[0]);
    return 2;
  }
  struct Case {
    std::size_t size;
    int calls;
    bool fresh_reply;
  };
  const int scale = full ? 5 : 1;
  // Echo at every size; a freshly written reply (one more copy) for the large ones.
  const Case cases[] = {{128, 100000, false},  {4096, 50000, false},    {256 << 10, 4000, false},
                        {4 << 20, 300, false}, {256 << 10, 4000, true}, {4 << 20, 300, true}};
  std::string json = "[\n";
  bool first = true;
  bool all_ok = true;
  for (zipc::WaitStrategy wait : {zipc::WaitStrategy::busy_poll, zipc::WaitStrategy::adaptive}) {
    for (const Case& c : cases) {
      Result r;
      const bool ok = run_one(c.size, wait, c.fresh_reply, c.calls * scale, &r);
      all_ok = all_ok && ok;
      const char* w = wait == zipc::WaitStrategy::busy_poll ? "busy" : "adaptive";
      const char* workload = c.fresh_reply ? "rpc-roundtrip-fresh-reply" : "rpc-roundtrip";
      std::fprintf(stderr, "zipc-rpc %-8s %-26s %8zu B: p50 %9.0f ns  p99 %9.0f ns  p99.9 %9.0f ns  %10.0f calls/s%s\n",
                   w, workload, c.size, r.p50, r.p99, r.p999, r.per_s, ok ? "" : "  (FAILED)");
      char row[768];
      std::snprintf(row, sizeof row,
                    "  {\"workload\": \"%s\", \"transport\": \"zipc-rpc\", \"size\": %zu, \"wait\": \"%s\", "
                    "\"processes\": 2, \"rt_p50_ns\": %.0f, \"rt_p99_ns\": %.0f, \"rt_p999_ns\": %.0f, "
                    "\"rt_max_ns\": %.0f, \"ops_per_s\": %.1f, \"msgs_per_s\": %.1f, \"gbytes_per_s\": %.4f, "
                    "\"lost\": %d}",
                    workload, c.size, w, r.p50, r.p99, r.p999, r.max, r.per_s, 2 * r.per_s,
                    2.0 * static_cast<double>(c.size) * r.per_s / 1e9, c.calls * scale - r.ok);
      json += (first ? "" : ",\n") + std::string(row);
      first = false;
    }
  }
  json += "\n]\n";
  std::ofstream(out_path) << json;
  return all_ok ? 0 : 1;
}
