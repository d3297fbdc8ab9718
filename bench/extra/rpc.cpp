// zipc-bench-rpc: request/response round trips over zipc Rpc.
//
//   zipc-bench-rpc [--full] --out FILE
//
// For each wait mode (busy, adaptive) and size (128 B, 4 KiB, 256 KiB, 4 MiB)
// it forks a server process (one handler thread) and a client process,
// pinned to different CPUs when there are two (busy mode only; see run_one).
// Workload "reqrep", as the harness runs its request/response baselines: the
// client writes every byte of the request (header + pattern) straight into a
// request loan; the server checks every byte and writes a fresh response of
// the same size (reserve_reply_in_place: a block-sized response overwrites the
// request's block, already checked); the client checks every byte of the
// response where it lies. Workload "reqrep-echo" (256 KiB, 4 MiB): the server
// checks the request and answers with it (reply(req.data()): the request's
// block becomes the response, no copy). After a warm-up every call is timed;
// rows (transport "zipc-rpc") give p50/p99/p99.9/max and calls per second.
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

#include "payload.hpp"
#include "repetitions.hpp"
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

// Message bytes as the harness's transports carry them (bench/payload.hpp):
// the writer writes every byte, the reader reads and checks every byte.
using Head = zipc::bench::MessageHeader;

void fill(std::byte* p, std::size_t n, const Head& h) {
  if (n >= zipc::bench::kMinMessage) zipc::bench::fill_message(p, n, h);
}

bool check(std::span<const std::byte> d, Head* h) {
  return zipc::bench::check_message(d.data(), d.size(), h);
}

zipc::RpcServer* g_server = nullptr;
void on_term(int) {
  if (g_server != nullptr) g_server->stop();
}

int run_server(const std::string& name, std::size_t size, zipc::WaitStrategy wait, bool echo, int cpu, int ready_fd) {
  if (cpu >= 0) pin(cpu);
  zipc::RpcOptions opt;
  opt.max_clients = 2;
  opt.inflight_per_client = 2;
  opt.max_request_size = opt.max_response_size = std::max<std::size_t>(size, 4096);
  opt.inline_size = 4096;
  opt.large_blocks = 4;
  opt.wait.strategy = wait;
  opt.segment.prefault = true;
  auto server = zipc::RpcServer::create(name, opt);
  g_server = &server;
  struct sigaction sa {};
  sa.sa_handler = on_term;
  ::sigaction(SIGTERM, &sa, nullptr);
  char c = 'r';
  (void)!::write(ready_fd, &c, 1);
  ::close(ready_fd);
  server.serve(
      [&](zipc::RpcRequest& req) {
        Head h{};
        const bool good = check(req.data(), &h);
        if (echo) {
          (void)req.reply(req.data());  // zero copy: a block-sized request's block becomes the response
          return;
        }
        zipc::Status st;
        auto out = req.reserve_reply_in_place(req.size(), &st);  // the checked request's block takes the response
        if (st != zipc::Status::ok) return;
        h.sender = good ? 1u : 0xbadu;
        fill(out.data(), out.size(), h);
        (void)req.commit(out.size());
      },
      1);
  g_server = nullptr;
  return 0;
}

Result run_client(const std::string& name, std::size_t size, bool echo, int calls, int cpu) {
  if (cpu >= 0) pin(cpu);
  auto client = zipc::RpcClient::connect(name, 5s);
  const int warmup = std::max(10, calls / 10);
  Result r;
  std::vector<double> ns(static_cast<std::size_t>(calls));
  Clock::time_point start{};
  for (int i = -warmup; i < calls; ++i) {
    if (i == 0) start = Clock::now();
    const auto t0 = Clock::now();
    // Zero copy both ways: the request is written into its slot or block,
    // the response read where the server wrote it.
    zipc::RpcWriteLoan loan = client.reserve(size);
    if (!loan) continue;
    const Head sent{static_cast<std::uint64_t>(i + warmup), 0, 0, 0, 0};
    fill(loan.data().data(), size, sent);
    zipc::RpcResponse resp = client.call(std::move(loan), 10s);
    Head got{};
    const bool good = resp.ok() && resp.size() == size && check(resp.data(), &got) && got.seq == sent.seq &&
                      got.sender == (echo ? 0u : 1u);
    resp.release();
    if (i < 0) continue;
    if (good) ++r.ok;
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
  return r;
}

bool run_one(std::size_t size, zipc::WaitStrategy wait, bool echo, int calls, Result* out) {
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
      code = run_server(name, size, wait, echo, two ? 1 : -1, ready[1]);
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
        r = run_client(name, size, echo, calls, two ? 0 : -1);
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
    bool echo;
  };
  const int scale = full ? 5 : 1;
  // "reqrep" as the harness's baselines run it (fresh response) at every
  // size; "reqrep-echo" (the request's block answered in place) for large ones.
  const Case cases[] = {{128, 100000, false},  {4096, 50000, false},    {256 << 10, 4000, false},
                        {4 << 20, 300, false}, {256 << 10, 4000, true}, {4 << 20, 300, true}};
  // msgs_per_s counts round trips, as the harness does for its round-trip
  // workloads, so rows compare like for like. Repetitions are passes over
  // every row (as zipc-bench schedules its own); a row is its median
  // repetition by p50, with the spread of p50 and rate across repetitions.
  const zipc::WaitStrategy waits[] = {zipc::WaitStrategy::busy_poll, zipc::WaitStrategy::adaptive};
  const int reps = zipc::bench::repetitions_for(full);
  std::vector<std::vector<Result>> results(std::size(waits) * std::size(cases));
  bool all_ok = true;
  for (int rep = 0; rep < reps; ++rep) {
    std::size_t k = 0;
    for (zipc::WaitStrategy wait : waits) {
      for (const Case& c : cases) {
        Result r;
        const bool ok = run_one(c.size, wait, c.echo, c.calls * scale, &r);
        all_ok = all_ok && ok;
        results[k++].push_back(r);
      }
    }
  }
  std::string json = "[\n";
  bool first = true;
  std::size_t k = 0;
  for (zipc::WaitStrategy wait : waits) {
    for (const Case& c : cases) {
      std::vector<Result>& runs = results[k++];
      std::sort(runs.begin(), runs.end(), [](const Result& a, const Result& b) { return a.p50 < b.p50; });
      const Result& r = runs[runs.size() / 2];
      const auto [lo_rate, hi_rate] = std::minmax_element(
          runs.begin(), runs.end(), [](const Result& a, const Result& b) { return a.per_s < b.per_s; });
      const double lo_p50 = runs.front().p50, hi_p50 = runs.back().p50;
      const char* w = wait == zipc::WaitStrategy::busy_poll ? "busy" : "adaptive";
      const char* workload = c.echo ? "reqrep-echo" : "reqrep";
      std::fprintf(stderr,
                   "zipc-rpc %-8s %-12s %8zu B: p50 %9.0f ns (%.0f-%.0f)  p99 %9.0f ns  p99.9 %9.0f ns  %10.0f "
                   "calls/s%s\n",
                   w, workload, c.size, r.p50, lo_p50, hi_p50, r.p99, r.p999, r.per_s,
                   r.ok == c.calls * scale ? "" : "  (FAILED)");
      char row[1024];
      std::snprintf(row, sizeof row,
                    "  {\"workload\": \"%s\", \"transport\": \"zipc-rpc\", \"size\": %zu, \"wait\": \"%s\", "
                    "\"processes\": 2, \"latency\": \"round trip\", \"repetitions\": %d, \"rt_p50_ns\": %.0f, "
                    "\"rt_p99_ns\": %.0f, \"rt_p999_ns\": %.0f, \"rt_max_ns\": %.0f, \"ops_per_s\": %.1f, "
                    "\"msgs_per_s\": %.1f, \"gbytes_per_s\": %.4f, \"lost\": %d, \"spread\": {\"rt_p50_ns\": "
                    "{\"min\": %.0f, \"max\": %.0f}, \"msgs_per_s\": {\"min\": %.1f, \"max\": %.1f}}}",
                    workload, c.size, w, reps, r.p50, r.p99, r.p999, r.max, r.per_s, r.per_s,
                    2.0 * static_cast<double>(c.size) * r.per_s / 1e9, c.calls * scale - r.ok, lo_p50, hi_p50,
                    lo_rate->per_s, hi_rate->per_s);
      if (!first) json += ",\n";
      json += row;
      first = false;
    }
  }
  json += "\n]\n";
  std::ofstream(out_path) << json;
  return all_ok ? 0 : 1;
}
