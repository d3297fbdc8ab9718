// zipc-hop-study: what one hop through a queue costs its two ends in CPU
// work alone, with no cache line crossing between CPUs.
//
// One thread holds the producer and the consumer handle of one
// single-producer/single-consumer queue (busy waiting, 1,024 blocks) and
// sends and receives a message `--messages` times: write the payload,
// commit, acquire, read every byte, release. So every line stays in this
// CPU's cache, and the figure is the work the queue adds to a hop, the part
// of a ping-pong's round trip that does not depend on where the host places
// the two vCPUs (docs/journal/2026-11-27-bench-runs.md, "The queue's own work
// per hop").
//
// Variants, alternated (A B C A B C ...) over the repetitions:
// Every variant writes and checks the harness's payload (bench/payload.hpp).
//   slot    the same payload writes and reads through a one-slot handoff
//           (a sequence word, a length, the payload; what shm-spin-slot does):
//           the floor a transport with no bookkeeping reaches
//   loans   Queue::reserve / QueueWriteLoan::commit / Queue::acquire /
//           QueueReadLoan::release (zero copy)
//   copy    Queue::send / Queue::recv (the copy API)
// Each row: ns per send+receive, the median over repetitions and their spread
// (bench/repetitions.hpp, as every benchmark row).
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

#include "payload.hpp"
#include "repetitions.hpp"
#include "zipc/queue.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// The harness's payload (bench/payload.hpp): the sender writes a header and a
// pattern, the receiver reads every byte and checks it. Out of line in
// zipc_bench_payload, so every variant does the same payload work, the work
// a ping-pong row does.
zipc::bench::MessageHeader header_of(std::uint64_t i) noexcept {
  return {i, 0, 1, zipc::bench::kFlagData, 0};
}

struct Slot {
  alignas(64) std::atomic<std::uint64_t> published{0};
  alignas(64) std::uint64_t length = 0;
  alignas(64) std::byte data[4096];
};

double run_slot(std::size_t size, std::uint64_t messages) {
  static Slot s;
  const auto t0 = Clock::now();
  for (std::uint64_t i = 1; i <= messages; ++i) {
    zipc::bench::fill_message(s.data, size, header_of(i));
    s.length = size;
    s.published.store(i, std::memory_order_release);  // release: publishes data + length
    // acquire: pairs with the store above (same thread: the pattern, not the need).
    if (s.published.load(std::memory_order_acquire) != i) return -1;
    zipc::bench::MessageHeader h;
    if (!zipc::bench::check_message(s.data, s.length, &h) || h.seq != i) return -1;
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(messages);
}

// Both ends of one single-producer/single-consumer queue, busy waiting.
struct QueuePair {
  zipc::Queue producer, consumer;
};
QueuePair make_pair(const std::string& name, std::size_t size) {
  zipc::QueueOptions o;
  o.block_size = std::max<std::size_t>(8, (size + 7) / 8 * 8);
  o.block_count = 1024;
  o.producers = zipc::Multiplicity::single;
  o.consumers = zipc::Multiplicity::single;
  o.wait.strategy = zipc::WaitStrategy::busy_poll;
  zipc::Queue::remove(name);
  // Both throw zipc::Error naming what failed.
  zipc::Queue p = zipc::Queue::create(name, o, zipc::Role::producer);
  return {std::move(p), zipc::Queue::open(name, zipc::Role::consumer, o.wait)};
}

double run_loans(const std::string& name, std::size_t size, std::uint64_t messages) {
  auto [p, c] = make_pair(name, size);
  const auto forever = std::chrono::nanoseconds::max();
  const auto t0 = Clock::now();
  for (std::uint64_t i = 1; i <= messages; ++i) {
    zipc::QueueWriteLoan out = p.reserve(forever);
    if (!out) return -1;
    zipc::bench::fill_message(out.data().data(), size, header_of(i));
    if (!out.commit(size).ok()) return -1;
    zipc::QueueReadLoan in = c.acquire(forever);
    zipc::bench::MessageHeader h;
    if (!in || !zipc::bench::check_message(in.data().data(), in.size(), &h) || h.seq != i) return -1;
    in.release();
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  zipc::Queue::remove(name);
  return ns / static_cast<double>(messages);
}

double run_copy(const std::string& name, std::size_t size, std::uint64_t messages) {
  auto [p, c] = make_pair(name, size);
  std::vector<std::byte> out(size), in(size);
  const auto forever = std::chrono::nanoseconds::max();
  const auto t0 = Clock::now();
  for (std::uint64_t i = 1; i <= messages; ++i) {
    zipc::bench::fill_message(out.data(), size, header_of(i));
    if (p.send(out, forever) != zipc::Status::ok) return -1;
    const zipc::IoResult r = c.recv(in, forever);
    zipc::bench::MessageHeader h;
    if (r.status != zipc::Status::ok || !zipc::bench::check_message(in.data(), r.size, &h) || h.seq != i) return -1;
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
  app.add_option("--size", size, "payload bytes (at least the 32-byte message header)")
      ->check(CLI::Range(zipc::bench::kMinMessage, std::size_t{4096}));
  app.add_option("--json", json_path, "also write the rows here");
  CLI11_PARSE(app, argc, argv);

  const std::string name = "hop-study-" + std::to_string(::getpid());
  const char* variants[] = {"slot", "loans", "copy"};
  const auto run = [&](int v, std::uint64_t n) {
    return v == 0 ? run_slot(size, n) : v == 1 ? run_loans(name, size, n) : run_copy(name, size, n);
  };
  std::vector<double> ns[3];
  for (int v = 0; v < 3; ++v) (void)run(v, messages / 10);  // warm-up: page faults, caches, the CPU's clock
  for (int r = 0; r < reps; ++r) {
    for (int v = 0; v < 3; ++v) {
      const double x = run(v, messages);
      if (x < 0) {
        std::fprintf(stderr, "zipc-hop-study: variant %s: a message arrived wrong or the queue '%s' refused a call\n",
                     variants[v], name.c_str());
        return 1;
      }
      ns[v].push_back(x);
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  std::printf("%-6s %10s %16s %10s\n", "hop", "ns p50", "min-max", "vs slot");
  const double slot_med = zipc::bench::median_of(ns[0]);
  for (int v = 0; v < 3; ++v) {
    const double med = zipc::bench::median_of(ns[v]);
    nlohmann::json row = {{"variant", variants[v]}, {"size", size}, {"messages", messages}, {"ns_per_hop", med}};
    zipc::bench::add_repetitions(row, "ns_per_hop", ns[v]);
    const auto& spread = row["spread"]["ns_per_hop"];
    std::printf("%-6s %10.2f %7.2f-%-8.2f %9.2fx\n", variants[v], med, spread["min"].get<double>(),
                spread["max"].get<double>(), med / slot_med);
    rows.push_back(row);
  }
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
