// zipc-bench-heap_alloc: the shared-heap allocator against glibc malloc and
// Boost.Interprocess managed_shared_memory (rbtree best fit + process-shared
// mutex), on random allocate/free mixes of 16 B - 4 KiB.
//
//   zipc-bench-heap_alloc [--full] --out FILE
//
// Each worker owns kSlots slots; an op picks a random slot and frees its block
// if it holds one, else allocates a random size there (a pre-generated
// sequence, so every allocator sees the same requests). 1 and 2 workers; the
// 2-worker runs use threads (and, for the shared-memory allocators, also
// processes). Each configuration runs in its own forked process, with a
// warm-up pass first; pools are prefaulted (glibc: trimming off) so no
// allocator pays first-touch page faults in the timed loop; the median of 5
// runs (7 with --full), interleaved, with all of them and their spread. Fragmentation = largest free block / free
// bytes, taken after the workload with the survivors still allocated.
#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/interprocess/managed_shared_memory.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "extra/isolated.hpp"
#include "repetitions.hpp"
#include "zipc/heap.hpp"

namespace bip = boost::interprocess;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kSlots = 1024;
constexpr std::size_t kHeapBytes = 32u << 20;
constexpr std::size_t kPrefaultBytes = 8u << 20;  // well above the ~2 MiB live set

struct Op {
  std::uint32_t slot;
  std::uint32_t size;
};

std::vector<Op> make_ops(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Op> ops(n);
  for (auto& op : ops) {
    op.slot = static_cast<std::uint32_t>(rng() % kSlots);
    op.size = 16 + static_cast<std::uint32_t>(rng() % (4096 - 16 + 1));
  }
  return ops;
}

// The allocators behind one interface (a template keeps calls inlined).
struct Malloc {
  void* allocate(std::size_t n) { return std::malloc(n); }
  void deallocate(void* p) { std::free(p); }
};

struct Zipc {
  zipc::Heap* heap;
  void* allocate(std::size_t n) { return heap->allocate(n); }
  void deallocate(void* p) { (void)heap->deallocate(p); }
};

struct Boost {
  bip::managed_shared_memory* shm;
  void* allocate(std::size_t n) { return shm->allocate(n, std::nothrow); }
  void deallocate(void* p) { shm->deallocate(p); }
};

// Runs ops over kSlots slots; returns ns elapsed. Leaves survivors in slots.
template <class A>
std::uint64_t run(A a, const std::vector<Op>& ops, std::vector<void*>& slots) {
  const auto t0 = Clock::now();
  for (const Op& op : ops) {
    void*& s = slots[op.slot];
    if (s != nullptr) {
      a.deallocate(s);
      s = nullptr;
    } else {
      s = a.allocate(op.size);
      if (s != nullptr) static_cast<char*>(s)[0] = 1;  // touch it
    }
  }
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

template <class A>
void release_all(A a, std::vector<void*>& slots) {
  for (void*& s : slots) {
    if (s != nullptr) a.deallocate(s);
    s = nullptr;
  }
}

// Boost exposes no "largest free block": find it by bisection with nothrow allocations.
std::size_t boost_largest(bip::managed_shared_memory& shm) {
  std::size_t lo = 0, hi = shm.get_free_memory();
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    if (void* p = shm.allocate(mid, std::nothrow)) {
      shm.deallocate(p);
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

struct Result {
  double ops_per_s = 0;
  double fragmentation = -1;  // < 0: n/a
};

// Shared between a configuration's worker processes (anonymous shared mapping).
struct Board {
  std::atomic<std::uint64_t> ns_total{0};
  std::atomic<std::uint32_t> ready{0};
  std::atomic<std::uint32_t> go{0};
};

template <class MakeAlloc>
Result measure(int workers, bool processes, std::size_t ops_per_worker, MakeAlloc make,
               const std::function<double()>& fragmentation) {
  auto* board =
      static_cast<Board*>(::mmap(nullptr, sizeof(Board), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (board) Board{};
  auto worker = [&](int id) {
    auto a = make();
    std::vector<void*> slots(kSlots, nullptr);
    const auto warm = make_ops(ops_per_worker / 4, 1000 + static_cast<unsigned>(id));
    run(a, warm, slots);
    release_all(a, slots);
    const auto ops = make_ops(ops_per_worker, 7 + static_cast<unsigned>(id));
    board->ready.fetch_add(1);
    while (board->go.load() == 0) std::this_thread::yield();
    board->ns_total.fetch_add(run(a, ops, slots));  // survivors: the fragmentation probe below
    board->ready.fetch_add(1);
    // Survivors stay for the fragmentation probe; sleeping, not yielding: a
    // worker done early must not take CPU time from the one still timed.
    while (board->go.load() == 1) std::this_thread::sleep_for(std::chrono::microseconds(100));
    release_all(a, slots);
  };
  std::vector<std::thread> threads;
  std::vector<pid_t> pids;
  for (int id = 0; id < workers; ++id) {
    if (processes) {
      std::fflush(nullptr);
      pid_t pid = ::fork();
      if (pid == 0) {
        worker(id);
        ::_exit(0);
      }
      pids.push_back(pid);
    } else {
      threads.emplace_back(worker, id);
    }
  }
  while (board->ready.load() < static_cast<unsigned>(workers)) std::this_thread::yield();
  board->go.store(1);
  // Sleeping while the workers are timed: a yielding coordinator is a third
  // runnable thread on two CPUs, and a worker that shares its CPU with it can
  // be descheduled while it holds the heap's lock.
  while (board->ready.load() < 2u * static_cast<unsigned>(workers))
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  Result r;
  r.fragmentation = fragmentation ? fragmentation() : -1;
  board->go.store(2);
  for (auto& t : threads) t.join();
  for (pid_t p : pids) ::waitpid(p, nullptr, 0);
  const double mean_ns = static_cast<double>(board->ns_total.load()) / workers;
  r.ops_per_s = static_cast<double>(ops_per_worker) * workers / (mean_ns / 1e9);
  ::munmap(board, sizeof(Board));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false;
  std::string out;
  std::string only;  // a comma-separated list of glibc-malloc, zipc-heap, boost-interprocess: run those alone
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--full") {
      full = true;
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--full] [--only ALLOCATOR[,ALLOCATOR]] --out FILE\n", argv[0]);
      return 2;
    }
  }
  const std::size_t ops = full ? 10'000'000 : 800'000;
  const int reps = zipc::bench::repetitions_for(full);
  const std::string tag = std::to_string(::getpid());
  nlohmann::json rows = nlohmann::json::array();
  auto add = [&](const char* transport, int workers, bool processes, const Result& r, const std::vector<double>& runs) {
    nlohmann::json row = {{"workload", "heap_alloc"},
                          {"transport", transport},
                          {"size", 0},
                          {"wait", "n/a"},
                          {"processes", processes ? workers : 1},
                          {"threads", processes ? 1 : workers},
                          {"workers", workers},
                          {"ops_per_s", r.ops_per_s}};
    if (r.fragmentation >= 0) row["fragmentation"] = r.fragmentation;
    zipc::bench::add_repetitions(row, "ops_per_s", runs);
    rows.push_back(row);
    std::printf("%-22s workers=%d %-9s %12.0f ops/s", transport, workers, processes ? "processes" : "threads",
                r.ops_per_s);
    if (r.fragmentation >= 0) std::printf("  largest/free=%.3f", r.fragmentation);
    std::printf("\n");
    std::fflush(stdout);
  };

  // Touches every page of a fresh pool once (one big block, written, freed),
  // so no allocator pays first-touch page faults inside the timed loop.
  auto prefault = [](auto&& alloc, auto&& free, std::size_t bytes) {
    if (void* p = alloc(bytes)) {
      std::memset(p, 0, bytes);
      free(p);
    }
  };
  struct Config {
    const char* transport;
    int workers;
    bool processes;
    std::function<Result()> run;
  };
  std::vector<Config> configs;
  for (int workers : {1, 2}) {
    for (bool processes : {false, true}) {
      if (workers == 1 && processes) continue;
      if (!processes) {
        configs.push_back({"glibc-malloc", workers, false, [=] {
                             // Its best case: no trimming of the heap top (whose
                             // page faults would otherwise land in the timed loop).
                             ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
                             ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
                             return measure(
                                 workers, false, ops, [] { return Malloc{}; }, nullptr);
                           }});
      }
      configs.push_back({"zipc-heap", workers, processes, [=] {
                           const std::string name = "bench.heap_alloc." + tag;
                           auto heap = zipc::Heap::create(name, kHeapBytes);
                           zipc::Heap::remove(name);  // the mapping stays; nothing left behind
                           prefault([&](std::size_t n) { return heap.allocate(n); },
                                    [&](void* p) { (void)heap.deallocate(p); }, kPrefaultBytes);
                           auto frag = [&] {
                             auto s = heap.stats();
                             return s.free_bytes
                                        ? static_cast<double>(s.largest_free_block) / static_cast<double>(s.free_bytes)
                                        : 0;
                           };
                           return measure(
                               workers, processes, ops, [&] { return Zipc{&heap}; }, frag);
                         }});
      configs.push_back({"boost-interprocess", workers, processes, [=] {
                           const std::string name = "zipc-bench-bip." + tag;
                           bip::shared_memory_object::remove(name.c_str());
                           bip::managed_shared_memory shm(bip::create_only, name.c_str(), kHeapBytes);
                           bip::shared_memory_object::remove(name.c_str());
                           prefault([&](std::size_t n) { return shm.allocate(n, std::nothrow); },
                                    [&](void* p) { shm.deallocate(p); }, kPrefaultBytes);
                           auto frag = [&] {
                             const double free = static_cast<double>(shm.get_free_memory());
                             return free > 0 ? static_cast<double>(boost_largest(shm)) / free : 0;
                           };
                           return measure(
                               workers, processes, ops, [&] { return Boost{&shm}; }, frag);
                         }});
    }
  }
  if (!only.empty()) {
    std::erase_if(configs, [&](const Config& c) {
      return ("," + only + ",").find("," + std::string(c.transport) + ",") == std::string::npos;
    });
    if (configs.empty()) {
      std::fprintf(stderr, "--only %s: no such allocator\n", only.c_str());
      return 2;
    }
  }
  // The median of `reps` runs (with all of them and their spread),
  // repetitions interleaved so a noisy moment on a shared machine hits every
  // configuration alike. (Best of the runs until 2026-11-25: it hid the
  // two-worker slow mode, docs/design/heap.md.)
  std::vector<std::vector<Result>> runs(configs.size());
  for (int rep = 0; rep < reps; ++rep) {
    for (std::size_t i = 0; i < configs.size(); ++i) runs[i].push_back(zipc::bench::isolated<Result>(configs[i].run));
  }
  std::vector<Result> median_run(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    std::vector<double> rates;
    for (const Result& r : runs[i]) rates.push_back(r.ops_per_s);
    std::nth_element(runs[i].begin(), runs[i].begin() + static_cast<std::ptrdiff_t>(runs[i].size() / 2), runs[i].end(),
                     [](const Result& a, const Result& b) { return a.ops_per_s < b.ops_per_s; });
    median_run[i] = runs[i][runs[i].size() / 2];
    add(configs[i].transport, configs[i].workers, configs[i].processes, median_run[i], rates);
  }
  double malloc1 = 0, zipc1 = 0, boost1 = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (configs[i].workers != 1) continue;
    const std::string t = configs[i].transport;
    (t == "glibc-malloc" ? malloc1 : t == "zipc-heap" ? zipc1 : boost1) = median_run[i].ops_per_s;
  }
  if (malloc1 > 0 && boost1 > 0) {
    std::printf("single worker: zipc = %.2fx glibc malloc (goal >= 0.5), %.2fx Boost.Interprocess (goal >= 2)\n",
                zipc1 / malloc1, zipc1 / boost1);
  }
  // Contention: two workers against one, and against glibc's two threads.
  double malloc2 = 0, zipc2_threads = 0, zipc2_processes = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (configs[i].workers != 2) continue;
    const std::string t = configs[i].transport;
    if (t == "glibc-malloc") malloc2 = median_run[i].ops_per_s;
    if (t == "zipc-heap") (configs[i].processes ? zipc2_processes : zipc2_threads) = median_run[i].ops_per_s;
  }
  if (zipc1 > 0 && malloc2 > 0 && zipc2_threads > 0) {
    std::printf(
        "two workers: zipc threads %.2fx / processes %.2fx one worker (goal >= 1.5), threads %.2fx glibc malloc's two "
        "(goal >= 0.5)\n",
        zipc2_threads / zipc1, zipc2_processes / zipc1, zipc2_threads / malloc2);
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << rows.dump(2) << "\n";
  }
  return 0;
}
