// zipc-pause-study: does PAUSE in a spin loop cost VM exits here
// (pause-loop exiting), and what does the spin body do to ping-pong tails?
//
// Two processes on two CPUs play ping-pong on two cache lines. The answering
// side holds each request for `hold` (0, 20 us, 200 us: reading the clock,
// no PAUSE) before it answers, so the asking side spins that long in the loop
// under test. Spin bodies: `pause` (one PAUSE per poll, zipc's cpu_relax),
// `none` (a plain load loop), `pause4` (four PAUSEs per poll). The figure is
// the round trip minus the hold: what the spin loop adds. The spinning side
// also counts gaps between two polls longer than 2 us: with pause-loop
// exiting on, a PAUSE loop longer than the host's window (KVM: ple_window,
// 4096 cycles by default; AMD: the pause filter count) leaves the guest, and
// each exit shows up as such a gap; without PAUSE there are none to cause.
// Variants alternate (A B C A B C ...) over the repetitions; each cell is the
// median over repetitions with the min-max of p99 beside it.
//   zipc-pause-study [--reps 3] [--cpus 0,1] [--json FILE]
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "shm_map.hpp"
#include "sysinfo.hpp"

namespace {

using zipc::bench::map_shared_anonymous;
using zipc::bench::pin_self;

std::uint64_t now_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return now_ns();
#endif
}

inline void pause_once() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  asm volatile("" ::: "memory");
#endif
}

enum class Body { pause, none, pause4 };
const char* name(Body b) {
  return b == Body::pause ? "pause" : b == Body::none ? "none" : "pause4";
}

constexpr std::size_t kMaxRounds = 20'000;

struct Shared {
  alignas(128) std::atomic<std::uint64_t> ping{0};
  alignas(128) std::atomic<std::uint64_t> pong{0};
  alignas(128) std::uint64_t rtt_ns[kMaxRounds];
  std::uint64_t gaps = 0;     // polls more than 2 us apart, asking side
  std::uint64_t spin_ns = 0;  // time the asking side spent spinning
  std::uint64_t polls = 0;    // polls the asking side made
  std::uint64_t rounds = 0;
};

template <Body B>
inline void body() noexcept {
  if constexpr (B == Body::pause) pause_once();
  if constexpr (B == Body::pause4) {
    pause_once();
    pause_once();
    pause_once();
    pause_once();
  }
  if constexpr (B == Body::none) asm volatile("" ::: "memory");
}

// Spins until a >= v; counts polls and gaps longer than gap_ticks.
template <Body B>
void spin_until(std::atomic<std::uint64_t>& a, std::uint64_t v, std::uint64_t gap_ticks, std::uint64_t* polls,
                std::uint64_t* gaps) {
  std::uint64_t prev = ticks();
  // acquire: pairs with the peer's release store of v.
  while (a.load(std::memory_order_acquire) < v) {
    body<B>();
    const std::uint64_t t = ticks();
    if (t - prev > gap_ticks) ++*gaps;
    prev = t;
    ++*polls;
  }
}

double ticks_per_ns() {
  const std::uint64_t t0 = now_ns(), k0 = ticks();
  while (now_ns() - t0 < 20'000'000) {
  }
  const std::uint64_t t1 = now_ns(), k1 = ticks();
  return static_cast<double>(k1 - k0) / static_cast<double>(t1 - t0);
}

template <Body B>
void asker(Shared* s, std::uint64_t rounds, std::uint64_t warmup, std::uint64_t hold, std::uint64_t gap_ticks) {
  std::uint64_t polls = 0, gaps = 0, spin = 0;
  for (std::uint64_t r = 1; r <= warmup + rounds; ++r) {
    const std::uint64_t t0 = now_ns();
    s->ping.store(r, std::memory_order_release);  // release: asks round r
    std::uint64_t p = 0, g = 0;
    spin_until<B>(s->pong, r, gap_ticks, &p, &g);
    const std::uint64_t t1 = now_ns();
    if (r > warmup) {
      s->rtt_ns[r - warmup - 1] = t1 - t0 > hold ? t1 - t0 - hold : 0;
      polls += p;
      gaps += g;
      spin += t1 - t0;
    }
  }
  s->polls = polls;
  s->gaps = gaps;
  s->spin_ns = spin;
  s->rounds = rounds;
}

void answerer(Shared* s, std::uint64_t total, std::uint64_t hold) {
  for (std::uint64_t r = 1; r <= total; ++r) {
    // acquire: pairs with the asker's release of round r. The answering side
    // spins with PAUSE in every variant: only the asking side's body varies.
    while (s->ping.load(std::memory_order_acquire) < r) pause_once();
    if (hold) {
      const std::uint64_t until = now_ns() + hold;
      while (now_ns() < until) {
      }
    }
    s->pong.store(r, std::memory_order_release);  // release: answers round r
  }
}

constexpr std::size_t bodies_count() {
  return 3;
}

// Runs f in a forked child (so pinning stays there) and returns its JSON.
template <class F>
nlohmann::json in_child(F f) {
  constexpr std::size_t kMax = 4096;
  char* buf = static_cast<char*>(map_shared_anonymous(kMax));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const std::string s = f().dump();
    std::snprintf(buf, kMax, "%s", s.c_str());
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  nlohmann::json j = nlohmann::json::parse(buf, nullptr, false);
  zipc::bench::unmap(buf, kMax);
  return j.is_discarded() ? nlohmann::json::object() : j;
}

struct Cell {
  double p50 = 0, p99 = 0, p999 = 0, gaps_per_s = 0, poll_ns = 0;
};

Cell run_once(Body b, int cpu_a, int cpu_b, std::uint64_t hold, std::uint64_t rounds, std::uint64_t gap_ticks) {
  auto* s = new (map_shared_anonymous(sizeof(Shared))) Shared();
  const std::uint64_t warmup = std::max<std::uint64_t>(rounds / 10, 100);
  std::fflush(nullptr);
  const pid_t ans = ::fork();
  if (ans == 0) {
    pin_self(cpu_b);
    answerer(s, warmup + rounds, hold);
    ::_exit(0);
  }
  const pid_t ask = ::fork();
  if (ask == 0) {
    pin_self(cpu_a);
    switch (b) {
      case Body::pause: asker<Body::pause>(s, rounds, warmup, hold, gap_ticks); break;
      case Body::none: asker<Body::none>(s, rounds, warmup, hold, gap_ticks); break;
      case Body::pause4: asker<Body::pause4>(s, rounds, warmup, hold, gap_ticks); break;
    }
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(ask, &st, 0);
  ::waitpid(ans, &st, 0);
  Cell c;
  std::vector<std::uint64_t> v(s->rtt_ns, s->rtt_ns + s->rounds);
  std::sort(v.begin(), v.end());
  if (!v.empty()) {
    auto at = [&](double q) {
      return static_cast<double>(
          v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))]);
    };
    c.p50 = at(0.5);
    c.p99 = at(0.99);
    c.p999 = at(0.999);
  }
  c.gaps_per_s = s->spin_ns ? static_cast<double>(s->gaps) * 1e9 / static_cast<double>(s->spin_ns) : 0;
  c.poll_ns = s->polls ? static_cast<double>(s->spin_ns) / static_cast<double>(s->polls) : 0;
  zipc::bench::unmap(s, sizeof(Shared));
  return c;
}

// One process spinning alone on one CPU for 2,000,000 polls of each body:
// the time per poll, and how often a poll took more than 1 us. With
// pause-loop exiting on, a PAUSE loop exits every window (KVM's default
// ple_window of 4096 cycles is ~1.5 us; AMD's pause filter, 3000 PAUSEs):
// hundreds of thousands of such gaps per second, none without PAUSE.
template <Body B>
nlohmann::json census(int cpu, double tpn) {
  pin_self(cpu);
  constexpr std::size_t kPolls = 2'000'000;
  std::vector<std::uint32_t> d(kPolls);
  std::uint64_t prev = ticks();
  const std::uint64_t start = prev;
  for (std::size_t i = 0; i < kPolls; ++i) {
    body<B>();
    const std::uint64_t t = ticks();
    d[i] = static_cast<std::uint32_t>(std::min<std::uint64_t>(t - prev, 0xffffffffu));
    prev = t;
  }
  const double total_s = static_cast<double>(prev - start) / tpn / 1e9;
  std::size_t over = 0;
  for (auto x : d)
    if (static_cast<double>(x) / tpn > 1000) ++over;
  std::sort(d.begin(), d.end());
  const auto at = [&](double q) { return static_cast<double>(d[static_cast<std::size_t>(q * (kPolls - 1))]) / tpn; };
  return {{"body", name(B)},           {"poll_p50_ns", at(0.5)}, {"poll_p99_ns", at(0.99)},
          {"poll_p999_ns", at(0.999)}, {"gaps_over_1us", over},  {"gaps_per_s", static_cast<double>(over) / total_s}};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zipc-pause-study: PAUSE in spin loops, VM exits and ping-pong tails"};
  int reps = 3;
  std::string cpus_s, json_path;
  app.add_option("--reps", reps, "repetitions of each variant, alternating (default 3)");
  app.add_option("--cpus", cpus_s, "two CPUs (default: the first two allowed)");
  app.add_option("--json", json_path, "write every repetition's figures here");
  CLI11_PARSE(app, argc, argv);
  std::vector<int> cpus;
  std::stringstream ss(cpus_s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) cpus.push_back(std::stoi(item));
  if (cpus.empty()) cpus = zipc::bench::allowed_cpus();
  if (cpus.size() < 2) {
    std::fprintf(stderr, "zipc-pause-study: needs two CPUs\n");
    return 1;
  }
  const double tpn = ticks_per_ns();
  const auto gap_ticks = static_cast<std::uint64_t>(2000 * tpn);
  // Census first, each body alternating over the repetitions.
  nlohmann::json census_rows = nlohmann::json::array();
  std::printf("Spinning alone on CPU %d (2,000,000 polls per run):\n\n", cpus[1]);
  std::printf("| spin body | ns per poll p50 | p99.9 | polls > 1 us per s (median, min-max) |\n|---|---:|---:|---:|\n");
  {
    std::vector<std::vector<nlohmann::json>> c(bodies_count());
    for (int rep = 0; rep < reps; ++rep) {
      c[0].push_back(in_child([&] { return census<Body::pause>(cpus[1], tpn); }));
      c[1].push_back(in_child([&] { return census<Body::none>(cpus[1], tpn); }));
      c[2].push_back(in_child([&] { return census<Body::pause4>(cpus[1], tpn); }));
    }
    for (auto& runs : c) {
      std::vector<double> p50, p999, gaps;
      for (auto& r : runs) {
        p50.push_back(r.value("poll_p50_ns", 0.0));
        p999.push_back(r.value("poll_p999_ns", 0.0));
        gaps.push_back(r.value("gaps_per_s", 0.0));
        census_rows.push_back(r);
      }
      std::printf("| %s | %.0f | %.0f | %.0f (%.0f-%.0f) |\n", runs.front().value("body", "").c_str(), median(p50),
                  median(p999), median(gaps), *std::min_element(gaps.begin(), gaps.end()),
                  *std::max_element(gaps.begin(), gaps.end()));
    }
    std::printf(
        "\nPing-pong, two processes on CPUs %d and %d; the answer held for `hold`; figures are the round "
        "trip minus the hold:\n\n",
        cpus[0], cpus[1]);
  }
  const std::vector<std::uint64_t> holds = {0, 20'000, 200'000};
  const std::vector<Body> bodies = {Body::pause, Body::none, Body::pause4};
  // cells[hold][body] = one Cell per repetition
  std::vector<std::vector<std::vector<Cell>>> cells(holds.size(), std::vector<std::vector<Cell>>(bodies.size()));
  for (int rep = 0; rep < reps; ++rep) {
    for (std::size_t h = 0; h < holds.size(); ++h) {
      const std::uint64_t rounds = holds[h] == 0 ? 20'000 : holds[h] <= 20'000 ? 5'000 : 1'000;
      for (std::size_t b = 0; b < bodies.size(); ++b)
        cells[h][b].push_back(run_once(bodies[b], cpus[0], cpus[1], holds[h], rounds, gap_ticks));
    }
  }
  nlohmann::json out = nlohmann::json::array();
  std::printf(
      "| hold | spin body | added p50 | added p99 (min-max) | added p99.9 | gaps > 2 us per s spinning | ns per poll "
      "|\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|\n");
  for (std::size_t h = 0; h < holds.size(); ++h) {
    for (std::size_t b = 0; b < bodies.size(); ++b) {
      std::vector<double> p50, p99, p999, gaps, poll;
      for (const Cell& c : cells[h][b]) {
        p50.push_back(c.p50);
        p99.push_back(c.p99);
        p999.push_back(c.p999);
        gaps.push_back(c.gaps_per_s);
        poll.push_back(c.poll_ns);
        out.push_back({{"hold_ns", holds[h]},
                       {"body", name(bodies[b])},
                       {"p50_ns", c.p50},
                       {"p99_ns", c.p99},
                       {"p999_ns", c.p999},
                       {"gaps_per_s", c.gaps_per_s},
                       {"ns_per_poll", c.poll_ns}});
      }
      std::printf("| %.0f us | %s | %.0f ns | %.0f ns (%.0f-%.0f) | %.0f ns | %.0f | %.1f |\n",
                  static_cast<double>(holds[h]) / 1000, name(bodies[b]), median(p50), median(p99),
                  *std::min_element(p99.begin(), p99.end()), *std::max_element(p99.begin(), p99.end()), median(p999),
                  median(gaps), median(poll));
    }
  }
  if (!json_path.empty()) {
    std::ofstream f(json_path);
    f << nlohmann::json{{"machine", zipc::bench::cpu_model()}, {"reps", reps}, {"census", census_rows}, {"runs", out}}
             .dump(2)
      << "\n";
  }
  return 0;
}
