// zipc-bench-authors_setup: a zipc queue measured the way iceoryx2's own
// benchmark measures iceoryx2 (iceoryx2/benchmarks/publish-subscribe, the set-up
// the peer's `pingpong-authors` rows copy: bench/peers/iceoryx2/src/authors.rs).
//
//   zipc-bench-authors_setup [--full] [--out FILE]
//
// Two threads of ONE process pinned to two CPUs, one queue each way (one
// producer, one consumer, 2 blocks: the nearest to iceoryx2's buffer of 1),
// the payload reserved and committed but never written or read, the consumer
// polling try_acquire in a tight loop, and the figure their benchmark prints:
// total time / (2 x iterations), a mean one-way latency, no percentiles.
// Rows: workload "pingpong-authors", transport "zipc-queue", family
// "reference" (beside the fair rows, never compared with them: docs/design/peers.md).
// 64 B and 8 KiB (the authors' default size), median of the repetitions.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "repetitions.hpp"
#include "zipc/queue.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::pthread_getaffinity_np(::pthread_self(), sizeof set, &set) == 0) {
    for (int i = 0; i < CPU_SETSIZE; ++i)
      if (CPU_ISSET(i, &set)) out.push_back(i);
  }
  return out;
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
}

zipc::Queue make(const std::string& name, std::size_t size) {
  zipc::QueueOptions o;
  o.block_size = (size + 7) / 8 * 8;
  o.block_count = 2;
  o.producers = zipc::Multiplicity::single;
  o.consumers = zipc::Multiplicity::single;
  return zipc::Queue::create(name, o, zipc::Role::none);  // the threads open the producer and consumer
}

// Sends a message of n bytes without touching its payload.
bool send_untouched(zipc::Queue& q, std::size_t n) {
  for (;;) {
    auto loan = q.try_reserve();
    if (loan) return loan.commit(n).status == zipc::Status::ok;
    if (loan.status() != zipc::Status::full) return false;
  }
}

// Takes one message without reading it.
bool recv_untouched(zipc::Queue& q) {
  for (;;) {
    auto loan = q.try_acquire();
    if (loan) return true;
    if (loan.status() != zipc::Status::empty) return false;
  }
}

// One run: mean one-way ns over `iterations` round trips.
double once(const std::string& prefix, std::size_t size, std::uint64_t iterations, int cpu_a, int cpu_b) {
  auto a2b = make(prefix + "-a2b", size);
  auto b2a = make(prefix + "-b2a", size);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::atomic<bool> failed{false};
  auto start_line = [&] {
    ready.fetch_add(1);                            // seq_cst: the main thread's count of ready threads
    while (!go.load(std::memory_order_acquire)) {  // pairs with the main thread's release of go
    }
  };
  // Opened here, handed to the threads (a handle may move to another thread).
  auto tx1 = zipc::Queue::open(prefix + "-a2b", zipc::Role::producer);
  auto rx1 = zipc::Queue::open(prefix + "-b2a", zipc::Role::consumer);
  auto rx2 = zipc::Queue::open(prefix + "-a2b", zipc::Role::consumer);
  auto tx2 = zipc::Queue::open(prefix + "-b2a", zipc::Role::producer);
  std::thread t1([&, tx = std::move(tx1), rx = std::move(rx1)]() mutable {
    pin(cpu_a);
    start_line();
    for (std::uint64_t i = 0; i < iterations; ++i) {
      if (!send_untouched(tx, size) || !recv_untouched(rx)) {
        failed = true;
        return;
      }
    }
  });
  std::thread t2([&, rx = std::move(rx2), tx = std::move(tx2)]() mutable {
    pin(cpu_b);
    start_line();
    for (std::uint64_t i = 0; i < iterations; ++i) {
      if (!recv_untouched(rx) || !send_untouched(tx, size)) {
        failed = true;
        return;
      }
    }
  });
  while (ready.load() < 2) std::this_thread::yield();
  const auto t0 = Clock::now();
  go.store(true, std::memory_order_release);  // publishes nothing but the start: pairs with start_line
  t1.join();
  t2.join();
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  zipc::Queue::remove(prefix + "-a2b");
  zipc::Queue::remove(prefix + "-b2a");
  return failed ? -1.0 : ns / (2.0 * static_cast<double>(iterations));
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--full") {
      full = true;
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--full] [--out FILE]\n", argv[0]);
      return 2;
    }
  }
  const auto cpus = allowed_cpus();
  nlohmann::json rows = nlohmann::json::array();
  if (cpus.size() < 2) {
    std::fprintf(stderr, "zipc-bench-authors_setup: needs two CPUs, has %zu: no rows\n", cpus.size());
  } else {
    const std::uint64_t iterations = full ? 10'000'000 : 300'000;
    const int repetitions = zipc::bench::repetitions_for(full);
    for (const std::size_t size : {std::size_t{64}, std::size_t{8192}}) {
      std::vector<double> runs;
      for (int r = 0; r < repetitions; ++r) {
        const double ns = once("zipcb-authors-" + std::to_string(::getpid()) + "-" + std::to_string(size), size,
                               iterations, cpus[0], cpus[1]);
        if (ns < 0) {
          std::fprintf(stderr, "zipc-bench-authors_setup: a %zu B run failed\n", size);
          return 1;
        }
        runs.push_back(ns);
      }
      const double med = zipc::bench::median_of(runs);
      std::printf("zipc-queue, iceoryx2 authors' set-up, %5zu B: %.0f ns mean one way\n", size, med);
      rows.push_back({{"workload", "pingpong-authors"},
                      {"transport", "zipc-queue"},
                      {"family", "reference"},
                      {"size", size},
                      {"wait", "busy"},
                      {"processes", 1},
                      {"threads", 2},
                      {"cpus", 2},
                      {"pinning", "one CPU each"},
                      {"latency", "mean one way = total time / (2 x iterations)"},
                      {"setup",
                       "iceoryx2 benchmarks/publish-subscribe: threads of one process, 2 blocks, payload untouched, "
                       "tight polling"},
                      {"oneway_mean_ns", med},
                      // Keeps the harness from setting a ratio to this machine's limits (results.cpp).
                      {"ratio_basis", "none: a reference row, measured as iceoryx2's authors measure"},
                      {"iterations", iterations},
                      {"msgs_per_s", 1e9 / med},
                      {"lost", 0}});
      zipc::bench::add_repetitions(rows.back(), "oneway_mean_ns", runs);
    }
  }
  if (!out.empty()) std::ofstream(out) << rows.dump(2) << "\n";
  return 0;
}
