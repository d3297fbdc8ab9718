// zipc-hop-study: what one hop through a queue costs its two ends in CPU
// work alone, with no cache line crossing between CPUs.
//
// One thread holds the producer and the consumer handle of one
// single-producer/single-consumer queue (busy waiting, 1,024 blocks) and
// sends and receives a message `--messages` times: write the payload,
// commit, acquire, read every byte, release. So every line stays in this
// CPU's cache, and the figure is the work the queue adds to a hop, the part
// of a ping-pong's round trip that does not depend on where the host places
// the two vCPUs (docs/bench.md, "The queue's own work per hop").
//
// Variants, alternated (A B C A B C ...) over the repetitions:
//   slot    the same payload writes and reads through a one-slot handoff
//           (a sequence word, a length, the payload; what shm-spin-slot does):
//           the floor a transport with no bookkeeping reaches
//   loans   Queue::reserve / QueueWriteLoan::commit / Queue::acquire /
//           QueueReadLoan::release (zero copy)
//   copy    Queue::send / Queue::recv (the copy API)
// Each row: ns per send+receive, median over repetitions and min-max.
//   zipc-hop-study [--reps 5] [--messages 5000000] [--size 64] [--json FILE]
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zipc/queue.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Writes n bytes (a multiple of 8) the receiver can check: the same code, out
// of line, for every variant, so that only the transport's work differs.
[[gnu::noinline]] void fill(std::byte* p, std::size_t n, std::uint64_t i) noexcept {
  for (std::size_t k = 0; k < n; k += 8) {
    const std::uint64_t v = i * 0x9E3779B97F4A7C15ull + k;
    std::memcpy(p + k, &v, 8);
  }
}
// Reads every byte back; returns a checksum the caller keeps.
[[gnu::noinline]] std::uint64_t sum(const std::byte* p, std::size_t n) noexcept {
  std::uint64_t s = 0;
  for (std::size_t k = 0; k < n; k += 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, p + k, 8);
    s += v;
  }
  return s;
}

struct Slot {
  alignas(64) std::atomic<std::uint64_t> published{0};
  alignas(64) std::uint64_t length = 0;
  alignas(64) std::byte data[4096];
};

double run_slot(std::size_t size, std::uint64_t messages, std::uint64_t* check) {
  static Slot s;
  const auto t0 = Clock::now();
  for (std::uint64_t i = 1; i <= messages; ++i) {
    fill(s.data, size, i);
    s.length = size;
    s.published.store(i, std::memory_order_release);  // release: publishes data + length
    // acquire: pairs with the store above (same thread: the pattern, not the need).
    if (s.published.load(std::memory_order_acquire) != i) return -1;
    *check += sum(s.data, s.length);
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(messages);
}

zipc::Queue make_queue(const std::string& name, std::size_t size) {
  zipc::QueueOptions o;
  o.block_size = std::max<std::size_t>(8, (size + 7) / 8 * 8);
  o.block_count = 1024;
  o.producers = zipc::Multiplicity::single;
  o.consumers = zipc::Multiplicity::single;
  o.wait.strategy = zipc::WaitStrategy::busy_poll;
  zipc::Queue::remove(name);
  return zipc::Queue::create(name, o, zipc::Role::producer);  // throws zipc::Error naming what failed
}

double run_loans(const std::string& name, std::size_t size, std::uint64_t messages, std::uint64_t* check) {
  zipc::Queue p = make_queue(name, size);
  zipc::WaitOptions w;
  w.strategy = zipc::WaitStrategy::busy_poll;
  zipc::Queue c = zipc::Queue::open(name, zipc::Role::consumer, w);
  const auto forever = std::chrono::nanoseconds::max();
  const auto t0 = Clock::now();
  for (std::uint64_t i = 1; i <= messages; ++i) {
    zipc::QueueWriteLoan out = p.reserve(forever);
    if (!out) return -1;
    fill(out.data().data(), size, i);
    if (!out.commit(size).ok()) return -1;
    zipc::QueueReadLoan in = c.acquire(forever);
    if (!in) return -1;
    *check += sum(in.data().data(), in.size());
    in.release();
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  zipc::Queue::remove(name);
  return ns / static_cast<double>(messages);
}

double run_copy(const std::string& name, std::size_t size, std::uint64_t messages, std::uint64_t* check) {
  zipc::Queue p = make_queue(name, size);
  zipc::WaitOptions w;
  w.strategy = zipc::WaitStrategy::busy_poll;
  zipc::Queue c = zipc::Queue::open(name, zipc::Role::consumer, w);
  std::vector<std::byte> out(size), in(size);
  const auto forever = std::chrono::nanoseconds::max();
  const auto t0 = Clock::now();
  for (std::uint64_t i = 1; i <= messages; ++i) {
    fill(out.data(), size, i);
    if (p.send(out, forever) != zipc::Status::ok) return -1;
    const zipc::IoResult r = c.recv(in, forever);
    if (r.status != zipc::Status::ok) return -1;
    *check += sum(in.data(), r.size);
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  zipc::Queue::remove(name);
  return ns / static_cast<double>(messages);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zipc-hop-study: the queue's own work per send+receive, in one thread"};
  int reps = 5;
  std::uint64_t messages = 5'000'000;
  std::size_t size = 64;
  std::string json_path;
  app.add_option("--reps", reps, "repetitions of each variant, alternated")->check(CLI::Range(1, 100));
  app.add_option("--messages", messages, "messages per repetition")->check(CLI::Range(1000, 1'000'000'000));
  app.add_option("--size", size, "payload bytes, a multiple of 8")->check(CLI::Range(8, 4096));
  app.add_option("--json", json_path, "also write the rows here");
  CLI11_PARSE(app, argc, argv);
  if (size % 8 != 0) {
    std::fprintf(stderr, "zipc-hop-study: --size %zu is not a multiple of 8\n", size);
    return 2;
  }

  const std::string name = "hop-study-" + std::to_string(::getpid());
  const char* variants[] = {"slot", "loans", "copy"};
  std::vector<double> ns[3];
  std::uint64_t check = 0;
  // Warm-up: one short pass of each (page faults, caches, the CPU's clock).
  (void)run_slot(size, messages / 10, &check);
  (void)run_loans(name, size, messages / 10, &check);
  (void)run_copy(name, size, messages / 10, &check);
  for (int r = 0; r < reps; ++r) {
    for (int v = 0; v < 3; ++v) {
      const double x = v == 0   ? run_slot(size, messages, &check)
                       : v == 1 ? run_loans(name, size, messages, &check)
                                : run_copy(name, size, messages, &check);
      if (x < 0) {
        std::fprintf(stderr, "zipc-hop-study: variant %s failed (queue '%s' could not be made or used)\n", variants[v],
                     name.c_str());
        return 1;
      }
      ns[v].push_back(x);
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  std::printf("%-6s %10s %16s %10s\n", "hop", "ns p50", "min-max", "vs slot");
  std::vector<double> slot_sorted = ns[0];
  std::sort(slot_sorted.begin(), slot_sorted.end());
  const double slot_med = slot_sorted[slot_sorted.size() / 2];
  for (int v = 0; v < 3; ++v) {
    std::vector<double> s = ns[v];
    std::sort(s.begin(), s.end());
    const double med = s[s.size() / 2];
    std::printf("%-6s %10.2f %7.2f-%-8.2f %9.2fx\n", variants[v], med, s.front(), s.back(), med / slot_med);
    rows.push_back({{"variant", variants[v]},
                    {"size", size},
                    {"messages", messages},
                    {"ns_per_hop_median", med},
                    {"ns_per_hop_min", s.front()},
                    {"ns_per_hop_max", s.back()},
                    {"runs", ns[v]}});
  }
  std::printf("(checksum %llu)\n", static_cast<unsigned long long>(check));
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << rows.dump(2) << "\n";
    if (!f) {
      std::fprintf(stderr, "zipc-hop-study: cannot write %s\n", json_path.c_str());
      return 1;
    }
  }
  return 0;
}
