// zipc-bench-waitset_latency: wake-up latency (send to handler) of a sleeping
// receiver, in separate processes.
//
//   zipc-bench-waitset_latency [--messages N] [--reps R] [--gap-us G] [--cpus RECV,SEND] [--full] [--out FILE]
//
// Rows: a blocking recv on one queue (WaitStrategy::block: it sleeps at once,
// like the WaitSet; the baseline), a WaitSet over 1, 64 and 1,024 queues of
// which one is active, and an epoll loop on the WaitSet's readiness fd (64
// queues). A sender process writes its CLOCK_MONOTONIC time into each message
// and sends one every --gap-us (200 us), so the receiver is asleep each time.
// Rows alternate; each prints p50/p99 (us) per repetition and the median over
// repetitions, and its ratio to the baseline's median.
//
// Seven short repetitions (800 messages), not three long ones: on a 2-vCPU
// guest the WaitSet rows' p50 is ~5 us or ~9 us for a whole repetition, the
// scheduler's choice (both modes show with the two processes pinned to one
// CPU too), so the median of three flipped between runs; seven show both
// modes in the spread. --cpus pins the receiver and the sender (by default
// the scheduler places them; pinned to two CPUs, every wake-up is a
// cross-CPU wake of an idle vCPU: ~23 us here).
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "platform/cpu.hpp"
#include "repetitions.hpp"
#include "zipc/zipc.hpp"

namespace {

std::uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

int g_messages = 800;
int g_gap_us = 200;
int g_receiver_cpu = -1, g_sender_cpu = -1;

enum class Mode { recv, waitset, epoll };
struct Row {
  const char* name;
  Mode mode;
  int channels;
};

zipc::QueueOptions qopts() {
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 64;
  o.max_participants = 4;
  o.wait.strategy = zipc::WaitStrategy::block;
  return o;
}

// One run of a row: returns the latencies (ns).
std::vector<std::uint64_t> run(const Row& row, const std::string& base) {
  std::vector<zipc::Queue> queues;
  queues.reserve(static_cast<std::size_t>(row.channels));
  for (int i = 0; i < row.channels; ++i) {
    const std::string n = base + "." + std::to_string(i);
    zipc::Queue::remove(n);
    queues.push_back(zipc::Queue::create(n, qopts(), zipc::Role::consumer));
  }
  const std::size_t active = static_cast<std::size_t>(row.channels / 2);
  const std::string active_name = base + "." + std::to_string(active);
  const pid_t child = fork();
  if (child == 0) {
    if (g_sender_cpu >= 0 && zipc::platform::pin_to_cpu(g_sender_cpu) != 0) _exit(3);
    zipc::WaitOptions w;
    w.strategy = zipc::WaitStrategy::block;
    auto q = zipc::Queue::open(active_name, zipc::Role::producer, w);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (int i = 0; i < g_messages; ++i) {
      const std::uint64_t t = now_ns();
      if (q.send(std::as_bytes(std::span(&t, 1)), std::chrono::seconds(5)) != zipc::Status::ok) _exit(1);
      std::this_thread::sleep_for(std::chrono::microseconds(g_gap_us));
    }
    _exit(0);
  }
  std::vector<std::uint64_t> lat;
  lat.reserve(static_cast<std::size_t>(g_messages));
  std::array<std::byte, 64> buf{};
  const auto take = [&](zipc::Queue& q) {
    for (;;) {
      const zipc::IoResult r = q.try_recv(buf);
      if (r.status != zipc::Status::ok) return;
      std::uint64_t t;
      std::memcpy(&t, buf.data(), sizeof t);
      lat.push_back(now_ns() - t);
    }
  };
  if (row.mode == Mode::recv) {
    while (lat.size() < static_cast<std::size_t>(g_messages)) {
      const zipc::IoResult r = queues[active].recv(buf, std::chrono::seconds(10));
      if (r.status != zipc::Status::ok) break;
      std::uint64_t t;
      std::memcpy(&t, buf.data(), sizeof t);
      lat.push_back(now_ns() - t);
    }
  } else {
    zipc::WaitSet ws;
    std::vector<std::uint64_t> ids;
    for (auto& q : queues) ids.push_back(ws.attach(q));
    int ep = -1;
    if (row.mode == Mode::epoll) {
      ep = epoll_create1(EPOLL_CLOEXEC);
      epoll_event e{};
      e.events = EPOLLIN;
      epoll_ctl(ep, EPOLL_CTL_ADD, ws.readiness_fd(), &e);
    }
    while (lat.size() < static_cast<std::size_t>(g_messages)) {
      if (ep >= 0) {
        epoll_event e{};
        int n;
        do n = epoll_wait(ep, &e, 1, 10'000);
        while (n < 0 && errno == EINTR);
        if (n <= 0) break;
      }
      const auto ready =
          ws.wait(ep >= 0 ? std::chrono::nanoseconds(0) : std::chrono::nanoseconds(std::chrono::seconds(10)));
      if (ready.empty() && ep < 0) break;
      for (const auto& r : ready)
        for (std::size_t i = 0; i < ids.size(); ++i)
          if (ids[i] == r.id) take(queues[i]);
    }
    if (ep >= 0) close(ep);
  }
  int st = 0;
  waitpid(child, &st, 0);
  queues.clear();
  for (int i = 0; i < row.channels; ++i) zipc::Queue::remove(base + "." + std::to_string(i));
  return lat;
}

double pct(std::vector<std::uint64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--full") == 0) {
      reps = 15;  // zipc-bench --full
    } else if (has_value && std::strcmp(argv[i], "--messages") == 0) {
      g_messages = std::atoi(argv[++i]);
    } else if (has_value && std::strcmp(argv[i], "--reps") == 0) {
      reps = std::atoi(argv[++i]);
    } else if (has_value && std::strcmp(argv[i], "--gap-us") == 0) {
      g_gap_us = std::atoi(argv[++i]);
    } else if (has_value && std::strcmp(argv[i], "--cpus") == 0) {
      if (std::sscanf(argv[++i], "%d,%d", &g_receiver_cpu, &g_sender_cpu) != 2 || g_receiver_cpu < 0 ||
          g_sender_cpu < 0) {
        std::fprintf(stderr, "--cpus wants two CPU numbers, RECV,SEND (e.g. 0,1)\n");
        return 2;
      }
    } else if (has_value && std::strcmp(argv[i], "--out") == 0) {
      out = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--messages N] [--reps R] [--gap-us G] [--cpus RECV,SEND] [--full] [--out FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  if (g_messages <= 0 || reps <= 0 || g_gap_us < 0) {
    std::fprintf(stderr, "--messages and --reps must be positive, --gap-us not negative\n");
    return 2;
  }
  const std::vector<Row> rows = {{"blocking recv, 1 queue (baseline)", Mode::recv, 1},
                                 {"WaitSet, 1 queue", Mode::waitset, 1},
                                 {"WaitSet, 64 queues, 1 active", Mode::waitset, 64},
                                 {"WaitSet, 1024 queues, 1 active", Mode::waitset, 1024},
                                 {"epoll on readiness_fd, 64 queues", Mode::epoll, 64}};
  std::vector<std::vector<double>> p50(rows.size()), p99(rows.size());
  // The sender's CPU is tried here first, so a bad one is named now, not as
  // a sender that never sent.
  if (const int e = g_sender_cpu >= 0 ? zipc::platform::pin_to_cpu(g_sender_cpu) : 0; e != 0) {
    std::fprintf(stderr, "--cpus: cannot pin the sender to CPU %d: %s\n", g_sender_cpu, std::strerror(-e));
    return 2;
  }
  if (const int e = g_receiver_cpu >= 0 ? zipc::platform::pin_to_cpu(g_receiver_cpu) : 0; e != 0) {
    std::fprintf(stderr, "--cpus: cannot pin the receiver to CPU %d: %s\n", g_receiver_cpu, std::strerror(-e));
    return 2;
  }
  const std::string base = "bench-wsl-" + std::to_string(getpid());
  for (int r = 0; r < reps; ++r)
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto lat = run(rows[i], base);
      if (lat.size() != static_cast<std::size_t>(g_messages)) {
        std::fprintf(stderr, "%s: got %zu of %d messages\n", rows[i].name, lat.size(), g_messages);
        return 1;
      }
      p50[i].push_back(pct(lat, 0.5));
      p99[i].push_back(pct(lat, 0.99));
    }
  const double base50 = zipc::bench::median_of(p50[0]), base99 = zipc::bench::median_of(p99[0]);
  std::printf("%-36s %9s %9s %8s %8s   (median of %d alternating reps, %d msgs, gap %d us)\n", "row", "p50 us",
              "p99 us", "x p50", "x p99", reps, g_messages, g_gap_us);
  nlohmann::json doc = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::printf("%-36s %9.1f %9.1f %8.2f %8.2f\n", rows[i].name, zipc::bench::median_of(p50[i]),
                zipc::bench::median_of(p99[i]), zipc::bench::median_of(p50[i]) / base50,
                zipc::bench::median_of(p99[i]) / base99);
    const char* transport = rows[i].mode == Mode::recv      ? "zipc-queue-recv"
                            : rows[i].mode == Mode::waitset ? "zipc-waitset"
                                                            : "zipc-waitset-epoll";
    doc.push_back({{"workload", "wakeup-latency"},
                   {"transport", transport},
                   {"name", rows[i].name},
                   {"wait", "block"},
                   {"processes", 2},
                   {"queues", rows[i].channels},
                   {"messages", g_messages},
                   {"gap_us", g_gap_us},
                   {"repetitions", reps},
                   {"oneway_p50_us", zipc::bench::median_of(p50[i])},
                   {"oneway_p99_us", zipc::bench::median_of(p99[i])},
                   {"x_baseline_p50", zipc::bench::median_of(p50[i]) / base50},
                   {"x_baseline_p99", zipc::bench::median_of(p99[i]) / base99}});
    zipc::bench::add_repetitions(doc.back(), "oneway_p50_us", p50[i]);
  }
  if (!out.empty()) std::ofstream(out) << doc.dump(2) << "\n";
  return 0;
}
