// zipc-bench-queue_oversize: a stream of mixed sizes (99% 256 B, 1% 1 MiB, a
// few 16 MiB) through two queues of the same block count:
//   oversize   block_size 256 + an oversize region (QueueOptions::oversize_bytes)
//   worst      block_size 16 MiB (every block fits the largest message)
// A producer process writes every payload byte into a write loan, a consumer
// process reads every byte from a read loan. Reports the segment's mapped
// bytes and the throughput of each, alternating the two, median of N
// repetitions, and the ratios oversize / worst. --small-only sends only 256 B
// messages and compares with the same queue without a region (the block
// path's cost); --prefault populates both segments at create.
//
//   zipc-bench-queue_oversize [--full] [--reps N] [--messages M] [--small-only] [--prefault] [--out FILE]
//
// --full: 9 repetitions of 100 000 messages (default 5 of 40 000, ~5 s).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "repetitions.hpp"
#include "zipc/queue.hpp"

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t kSmall = 256;
constexpr std::size_t kMedium = 1u << 20;
constexpr std::size_t kLarge = 16u << 20;
constexpr std::size_t kBlocks = 64;

bool g_small_only = false;  // --small-only: every message 256 B (the block path's cost)
bool g_prefault = false;    // --prefault: both segments populated at create

// Message i's size: one in a hundred is 1 MiB, four in the stream are 16 MiB.
std::size_t size_of(std::uint64_t i, std::uint64_t total) {
  if (g_small_only) return kSmall;
  if (i % (total / 4) == total / 8) return kLarge;
  if (i % 100 == 50) return kMedium;
  return kSmall;
}

struct Control {
  std::atomic<std::uint32_t> ready{0};
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> checksum{0};
};

struct Run {
  double seconds = 0;
  std::uint64_t bytes = 0;
  std::uint64_t mapped = 0;
  bool ok = false;
};

Run run_once(bool oversize, std::uint64_t messages, int rep) {
  const std::string name =
      "bench-qov-" + std::to_string(::getpid()) + "-" + std::to_string(rep) + (oversize ? "o" : "w");
  const std::string ctl_name = name + "-ctl";
  zipc::SegmentSpec spec;
  spec.payload_size = sizeof(Control);
  auto ctl_seg = zipc::Segment::create(ctl_name, spec, nullptr);
  auto* ctl = new (ctl_seg.payload()) Control{};
  zipc::QueueOptions o;
  o.block_count = kBlocks;
  o.producers = zipc::Multiplicity::single;
  o.consumers = zipc::Multiplicity::single;
  o.segment.prefault = g_prefault;
  if (oversize) {
    o.block_size = kSmall;
    o.oversize_bytes = 3 * kLarge;  // room for a 16 MiB message and the 1 MiB ones in flight
  } else {
    o.block_size = g_small_only ? kSmall : kLarge;  // small-only: the same queue without a region
  }
  Run r;
  {
    auto q = zipc::Queue::create(name, o, zipc::Role::producer);
    r.mapped = q.segment().mapped_size();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      int rc = 0;
      try {
        auto c = zipc::Queue::open(name, zipc::Role::consumer);
        ctl->ready.store(1);
        std::uint64_t sum = 0, n = 0;
        while (n < messages) {
          zipc::QueueReadLoan l = c.acquire(10s);
          if (!l) {
            rc = 1;
            break;
          }
          const auto d = l.data();
          std::uint64_t s = 0;
          for (std::size_t i = 0; i + 8 <= d.size(); i += 8) {
            std::uint64_t v;
            std::memcpy(&v, d.data() + i, 8);
            s += v;
          }
          sum += s;
          ++n;
        }
        ctl->checksum.store(sum);
        ctl->received.store(n);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "consumer: %s\n", e.what());
        rc = 2;
      }
      ::_exit(rc);
    }
    while (ctl->ready.load() == 0) std::this_thread::yield();
    std::uint64_t expect = 0;
    const auto t0 = Clock::now();
    for (std::uint64_t i = 0; i < messages; ++i) {
      const std::size_t n = size_of(i, messages);
      zipc::QueueWriteLoan l = q.reserve(n, 10s);
      if (!l) {
        std::fprintf(stderr, "reserve(%zu): %s\n", n, zipc::to_string(l.status()));
        break;
      }
      std::byte* p = l.data().data();
      const std::uint64_t v = i + 1;
      for (std::size_t k = 0; k + 8 <= n; k += 8) std::memcpy(p + k, &v, 8);
      expect += v * (n / 8);
      r.bytes += n;
      (void)l.commit(n);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && ctl->received.load() == messages &&
           ctl->checksum.load() == expect;
  }
  zipc::Queue::remove(name);
  zipc::Segment::remove(ctl_name);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  std::uint64_t messages = 40000;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--messages" && i + 1 < argc)
      messages = std::max<std::uint64_t>(800, std::strtoull(argv[++i], nullptr, 10));
    else if (a == "--full") {
      reps = 9;
      messages = 100000;
    } else if (a == "--small-only")
      g_small_only = true;
    else if (a == "--prefault")
      g_prefault = true;
    else if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--full] [--reps N] [--messages M] [--small-only] [--prefault] [--out FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  std::vector<double> rate[2], gbps[2];
  std::uint64_t mapped[2] = {0, 0};
  std::uint64_t bytes = 0;
  for (int rep = 0; rep < reps; ++rep) {
    for (int k = 0; k < 2; ++k) {
      const bool ov = (rep + k) % 2 == 0;  // alternate which goes first
      const Run r = run_once(ov, messages, rep);
      if (!r.ok) {
        std::fprintf(stderr, "%s run %d failed\n", ov ? "oversize" : "worst", rep);
        return 1;
      }
      const int idx = ov ? 0 : 1;
      mapped[idx] = r.mapped;
      bytes = r.bytes;
      rate[idx].push_back(static_cast<double>(messages) / r.seconds);
      gbps[idx].push_back(static_cast<double>(r.bytes) / r.seconds / 1e9);
    }
  }
  const char* names[2] = {"oversize", g_small_only ? "plain" : "worst"};
  std::printf("stream: %llu messages, %.1f MiB (%s); %d alternating reps, median%s\n",
              static_cast<unsigned long long>(messages), static_cast<double>(bytes) / (1 << 20),
              g_small_only ? "all 256 B; plain = no region" : "99% 256 B, 1% 1 MiB, 4 x 16 MiB", reps,
              g_prefault ? ", prefaulted" : "");
  for (int k = 0; k < 2; ++k) {
    std::printf("%-9s mapped %12.3f MiB   %10.0f msg/s   %6.2f GB/s\n", names[k],
                static_cast<double>(mapped[k]) / (1 << 20), zipc::bench::median_of(rate[k]),
                zipc::bench::median_of(gbps[k]));
  }
  std::printf("oversize/%s: mapped %.4f, throughput %.2f\n", names[1], static_cast<double>(mapped[0]) / mapped[1],
              zipc::bench::median_of(rate[0]) / zipc::bench::median_of(rate[1]));
  if (!out.empty()) {  // rows for the bench harness (docs/design/bench.md, "extra program")
    nlohmann::json rows = nlohmann::json::array();
    for (int k = 0; k < 2; ++k) {
      rows.push_back({{"workload", g_small_only ? "queue-oversize-small" : "queue-oversize-mixed"},
                      {"transport", std::string("zipc-queue-") + names[k]},
                      {"size", kSmall},
                      {"wait", "adaptive"},
                      {"processes", 2},
                      {"messages", messages},
                      {"bytes", bytes},
                      {"reps", reps},
                      {"prefault", g_prefault},
                      {"mapped_bytes", mapped[k]},
                      {"msgs_per_s", zipc::bench::median_of(rate[k])},
                      {"gbytes_per_s", zipc::bench::median_of(gbps[k])},
                      {"ratio_to_second", zipc::bench::median_of(rate[k]) / zipc::bench::median_of(rate[1])}});
      zipc::bench::add_repetitions(rows.back(), "msgs_per_s", rate[k]);
    }
    std::ofstream(out) << rows.dump(2) << "\n";
  }
  return 0;
}
