// zipc-bench-heap_map: docs/design/reference.md §4's experiment. N workers (threads or
// processes) each repeatedly erase and insert key_<id>_<k> -> val_<i>
// (k = i mod 100) in ONE std::map<string, string> that lives in a fixed-address
// zipc::Heap, under a lock: zipc::SpinLock, zipc::Mutex (robust, process-shared),
// or std::mutex (threads only). Reports ops/s (one op = erase + insert).
//
//   zipc-bench-heap_map [--full] --out FILE
//
// Every configuration runs in a forked process of its own, warm-up included;
// the median of 5 interleaved runs of 0.35 s (--full: 5 runs of 3 s, and N = 8 too);
// the default run takes about 20 s (5 lock/mode pairs x N = 1, 2, 4). Every
// row also states its rate against the one-thread std::mutex configuration
// of the same repetition (ratio_to_limit): the host's speed of the moment,
// which moved every row of a run by 20% (one worker too) while the probes
// around the program agreed, cancels there.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "extra/isolated.hpp"
#include "repetitions.hpp"
#include "zipc/heap.hpp"
#include "zipc/mutex.hpp"
#include "zipc/stl_allocator.hpp"

using Clock = std::chrono::steady_clock;
using String = std::basic_string<char, std::char_traits<char>, zipc::StlAllocator<char>>;
using Map = std::map<String, String, std::less<>, zipc::StlAllocator<std::pair<const String, String>>>;

namespace {

constexpr int kKeys = 100;

struct Control {
  std::atomic<std::uint32_t> ready{0};
  std::atomic<std::uint32_t> go{0};  // 1: measure, 2: stop
  std::atomic<std::uint64_t> ops{0};
  std::atomic<std::uint64_t> failures{0};
};

template <class Lock>
struct Shared {
  explicit Shared(const zipc::StlAllocator<char>& a) : map(a) {}
  Control control;
  Lock lock;
  Map map;
};

template <class Lock>
void worker(Shared<Lock>* s, const zipc::StlAllocator<char>& alloc, int id) {
  auto one = [&](std::uint64_t i) {
    String key("key_", alloc);
    key += std::to_string(id);
    key += '_';
    key += std::to_string(i % kKeys);
    String value("val_", alloc);
    value += std::to_string(i);
    std::lock_guard guard(s->lock);
    s->map.erase(key);
    s->map.emplace(std::move(key), std::move(value));
  };
  std::uint64_t i = 0;
  for (; i < 2000; ++i) one(i);  // warm-up
  s->control.ready.fetch_add(1);
  while (s->control.go.load(std::memory_order_acquire) == 0) std::this_thread::yield();
  std::uint64_t n = 0;
  while (s->control.go.load(std::memory_order_relaxed) == 1) {
    for (int k = 0; k < 64; ++k) one(i++);
    n += 64;
  }
  s->control.ops.fetch_add(n);
}

template <class Lock>
double measure(const std::string& name, int workers, bool processes, double seconds) {
  zipc::HeapOptions options;
  options.address_mode = zipc::AddressMode::fixed;
  auto heap = zipc::Heap::create(name, 64u << 20, options);
  zipc::Heap::remove(name);  // forked workers share the mapping; nothing left in /dev/shm
  zipc::StlAllocator<char> alloc(heap);
  auto* s = heap.construct<Shared<Lock>>("shared", alloc);
  std::vector<std::thread> threads;
  std::vector<pid_t> pids;
  for (int id = 0; id < workers; ++id) {
    if (processes) {
      std::fflush(nullptr);
      const pid_t pid = ::fork();
      if (pid == 0) {
        worker(s, alloc, id);
        ::_exit(0);
      }
      pids.push_back(pid);
    } else {
      threads.emplace_back([&, id] { worker(s, alloc, id); });
    }
  }
  while (s->control.ready.load() < static_cast<unsigned>(workers)) std::this_thread::yield();
  const auto t0 = Clock::now();
  s->control.go.store(1, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  s->control.go.store(2);
  for (auto& t : threads) t.join();
  for (pid_t p : pids) ::waitpid(p, nullptr, 0);
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  const bool ok = s->map.size() == static_cast<std::size_t>(workers * kKeys);
  return ok ? static_cast<double>(s->control.ops.load()) / elapsed : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--full") {
      full = true;
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--full] --out FILE\n", argv[0]);
      return 2;
    }
  }
  const double seconds = full ? 3.0 : 0.35;
  const int reps = 5;  // 4 spinning workers on 2 CPUs swing by +-10% run to run
  std::vector<int> counts = {1, 2, 4};
  if (full) counts.push_back(8);
  const std::string tag = "bench.heap_map." + std::to_string(::getpid());
  struct Config {
    int workers;
    const char* lock;
    bool processes;
    std::function<double()> run;
  };
  std::vector<Config> configs;
  for (int n : counts) {
    configs.push_back({n, "std::mutex", false, [=] { return measure<std::mutex>(tag, n, false, seconds); }});
    configs.push_back({n, "zipc::SpinLock", false, [=] { return measure<zipc::SpinLock>(tag, n, false, seconds); }});
    configs.push_back({n, "zipc::Mutex", false, [=] { return measure<zipc::Mutex>(tag, n, false, seconds); }});
    configs.push_back({n, "zipc::SpinLock", true, [=] { return measure<zipc::SpinLock>(tag, n, true, seconds); }});
    configs.push_back({n, "zipc::Mutex", true, [=] { return measure<zipc::Mutex>(tag, n, true, seconds); }});
  }
  // The median of `reps`, interleaved so a noisy moment on a shared machine
  // hits every configuration alike; every run and their spread go in the row.
  std::vector<std::vector<double>> runs(configs.size());
  for (int rep = 0; rep < reps; ++rep) {
    for (std::size_t i = 0; i < configs.size(); ++i) runs[i].push_back(zipc::bench::isolated<double>(configs[i].run));
  }
  std::vector<double> median(configs.size(), 0);
  for (std::size_t i = 0; i < configs.size(); ++i) median[i] = zipc::bench::median_of(runs[i]);
  nlohmann::json rows = nlohmann::json::array();
  double threads_spin = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const bool spin = std::string(c.lock) == "zipc::SpinLock";
    const std::string transport = std::string(c.processes ? "processes+" : "threads+") + c.lock;
    nlohmann::json row = {{"workload", "heap_map"},
                          {"transport", transport},
                          {"size", 0},
                          {"wait", spin ? "busy" : "block"},
                          {"processes", c.processes ? c.workers : 1},
                          {"threads", c.processes ? 1 : c.workers},
                          {"workers", c.workers},
                          {"ops_per_s", median[i]}};
    zipc::bench::add_repetitions(row, "ops_per_s", runs[i]);
    // Each repetition against the uncontended baseline of the same
    // repetition (one thread, std::mutex: configs[0], seconds apart): the
    // speed the host gave this vCPU then cancels (docs/design/bench.md,
    // "heap_map against its own baseline").
    std::vector<double> ratios;
    for (int rep = 0; rep < reps; ++rep)
      if (runs[0][rep] > 0) ratios.push_back(runs[i][rep] / runs[0][rep]);
    if (!ratios.empty()) {
      row["ratio_to_limit"] = zipc::bench::median_of(ratios);
      row["spread"]["ratio_to_limit"] = zipc::bench::spread_of(ratios);
      row["ratio_basis"] = std::string("ops_per_s / ops_per_s of threads+std::mutex workers=1 in the ") +
                           zipc::bench::kSameRepetitionMark;
    }
    if (spin && !c.processes) threads_spin = median[i];
    std::printf("workers=%d %-26s %12.0f ops/s", c.workers, transport.c_str(), median[i]);
    if (spin && c.processes && threads_spin > 0) {
      row["ratio_vs_threads_spinlock"] = median[i] / threads_spin;
      std::printf("  = %.2fx threads+SpinLock (goal >= 0.9)", median[i] / threads_spin);
    }
    std::printf("\n");
    rows.push_back(row);
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << rows.dump(2) << "\n";
  }
  return 0;
}
