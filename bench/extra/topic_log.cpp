// zipc-bench-topic_log: the shared-memory log experiment of docs/design/reference.md §5.
//
//   zipc-bench-topic_log [--full] [--records N] --out FILE
//
// One publisher process appends 1,000,000 records of 1 KiB (message number,
// status byte, text content) to a topic large enough to hold them all (no
// wrap, as in §5); then 1 and then 2 subscriber processes each read every
// record back (copying it out and checking its number and content). Rows: the
// publish time and, per subscriber count, the time for every subscriber to
// read them all. A second pair of rows ("topic-log-live") runs publisher and
// subscribers at the same time over a 64 MiB ring. Each measurement runs 5
// times (--full: 7); a row is the median by wall time, with the spread of
// the rate across them. Rows carry wall time ("ms") and the measured
// process's CPU time ("cpu_ms"; the slowest subscriber's).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "repetitions.hpp"
#include "zipc/topic.hpp"

namespace {

constexpr std::size_t kRecord = 1024;
constexpr std::uint64_t kWarmup = 10'000;

// CPU time of this process: on a shared machine the wall time also counts the
// time other processes held our CPU; both are reported.
std::uint64_t cpu_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// A record as in §5: message number, status byte, text content.
void make_template(std::byte* buf) {
  static const char kText[] = "The quick brown fox jumps over the lazy dog. ";
  for (std::size_t i = 0; i < kRecord; ++i) buf[i] = static_cast<std::byte>(kText[i % (sizeof kText - 1)]);
}

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe(fd) != 0) std::abort();
  }
};

// Runs body in a child; body returns a figure (ns, or 0 on failure) sent back through a pipe.
// CPU ns of the measured section of the last publish()/consume() in this process.
std::uint64_t g_cpu_ns = 0;

struct Figures {
  std::uint64_t wall_ns = 0;
  std::uint64_t cpu_ns = 0;
};

template <class F>
pid_t run(Pipe& p, F body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    Figures f;
    try {
      f.wall_ns = body();
      f.cpu_ns = g_cpu_ns;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "topic_log child: %s\n", e.what());
    }
    if (::write(p.fd[1], &f, sizeof f) != sizeof f) ::_exit(2);
    ::_exit(f.wall_ns == 0 ? 1 : 0);
  }
  return pid;
}

Figures collect(Pipe& p, pid_t pid) {
  Figures f;
  if (::read(p.fd[0], &f, sizeof f) != sizeof f) f = {};
  int status = 0;
  ::waitpid(pid, &status, 0);
  return f;
}

// Publishes `count` records numbered from `first`; returns the elapsed ns.
std::uint64_t publish(zipc::Publisher& pub, std::uint64_t first, std::uint64_t count) {
  std::vector<std::byte> buf(kRecord);
  make_template(buf.data());
  const std::uint64_t c0 = cpu_ns();
  const std::uint64_t t0 = now_ns();
  for (std::uint64_t n = first; n < first + count; ++n) {
    std::memcpy(buf.data(), &n, sizeof n);
    buf[8] = std::byte{1};  // status
    const zipc::CommitResult r = pub.publish(buf, std::chrono::seconds(30));
    if (!r.ok() || r.sequence != n) return 0;
  }
  const std::uint64_t wall = now_ns() - t0;
  g_cpu_ns = cpu_ns() - c0;
  return wall;
}

// Reads `count` records from sequence `first`, checking each; returns the elapsed ns.
std::uint64_t consume(zipc::Subscriber& sub, std::uint64_t first, std::uint64_t count, bool timed_from_first) {
  std::vector<std::byte> buf(kRecord), want(kRecord);
  make_template(want.data());
  const std::uint64_t c0 = cpu_ns();
  std::uint64_t t0 = now_ns();
  for (std::uint64_t n = first; n < first + count; ++n) {
    const zipc::ReadResult r = sub.read(buf, std::chrono::seconds(30));
    if (!r.ok() || r.sequence != n || r.size != kRecord) return 0;
    if (timed_from_first && n == first) t0 = now_ns();
    std::uint64_t number = 0;
    std::memcpy(&number, buf.data(), sizeof number);
    if (number != n || buf[8] != std::byte{1} || std::memcmp(buf.data() + 9, want.data() + 9, kRecord - 9) != 0) {
      return 0;
    }
  }
  const std::uint64_t wall = std::max<std::uint64_t>(now_ns() - t0, 1);
  g_cpu_ns = cpu_ns() - c0;
  return wall;
}

nlohmann::json row(const std::string& workload, int processes, std::uint64_t records, std::uint64_t ns,
                   std::uint64_t cpu) {
  nlohmann::json r;
  r["workload"] = workload;
  r["transport"] = "zipc-topic";
  r["size"] = kRecord;
  r["wait"] = "adaptive";
  r["processes"] = processes;
  const double s = static_cast<double>(ns) / 1e9;
  r["records"] = records;
  r["ms"] = static_cast<double>(ns) / 1e6;
  r["cpu_ms"] = static_cast<double>(cpu) / 1e6;  // the measured process's CPU time (worst subscriber)
  r["msgs_per_s"] = static_cast<double>(records) / s;
  r["gbytes_per_s"] = static_cast<double>(records * kRecord) / s / 1e9;
  return r;
}

// Repeated measurements of one row: the median by wall time, with every
// repetition's rate and the spread of them (as zipc-bench's own rows).
nlohmann::json median_row(const std::string& workload, int processes, std::uint64_t records, std::vector<Figures> v) {
  std::sort(v.begin(), v.end(), [](const Figures& a, const Figures& b) { return a.wall_ns < b.wall_ns; });
  const Figures& m = v[v.size() / 2];
  nlohmann::json r = row(workload, processes, records, m.wall_ns, m.cpu_ns);
  const auto rate = [records](const Figures& f) {
    return static_cast<double>(records) / (static_cast<double>(f.wall_ns) / 1e9);
  };
  std::vector<double> runs;
  for (const Figures& f : v) runs.push_back(rate(f));
  zipc::bench::add_repetitions(r, "msgs_per_s", runs);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false;
  std::string out;
  std::uint64_t records = 1'000'000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--full") {
      full = true;
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--records" && i + 1 < argc) {
      records = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--full] [--records N] --out FILE\n", argv[0]);
      return 2;
    }
  }
  if (out.empty() || records == 0) {
    std::fprintf(stderr, "usage: %s [--full] [--records N] --out FILE\n", argv[0]);
    return 2;
  }
  const int repeats = zipc::bench::repetitions_for(full);
  const std::string name = "bench-topic-log-" + std::to_string(::getpid());
  nlohmann::json rows = nlohmann::json::array();
  bool ok = true;

  // §5: the whole log fits; publish everything, then read it back.
  zipc::TopicOptions o;
  o.capacity_bytes = (kWarmup + records) * (kRecord + 32);
  o.max_message_size = kRecord;
  o.max_subscribers = 8;
  o.segment.prefault = true;  // page faults at create time, as a pre-sized region would have them
  o.streaming_stores = true;  // nobody reads while we log: bypass the cache (docs/design/topic.md)
  auto worst_of = [](const Figures& a, const Figures& b) {
    return Figures{std::max(a.wall_ns, b.wall_ns), std::max(a.cpu_ns, b.cpu_ns)};
  };
  std::vector<Figures> pub_runs;
  std::vector<std::vector<Figures>> read_runs(3);
  for (int rep = 0; rep < repeats && ok; ++rep) {
    zipc::Topic::remove(name);
    auto topic = zipc::Topic::create(name, o);
    Pipe p;
    const pid_t pid = run(p, [&] {
      auto t = zipc::Topic::open(name, o);
      auto pub = t.publisher();
      if (publish(pub, 0, kWarmup) == 0) return std::uint64_t{0};  // warm-up: caches, branch predictors
      return publish(pub, kWarmup, records);
    });
    const Figures f = collect(p, pid);
    if (f.wall_ns == 0) ok = false;
    pub_runs.push_back(f);
    for (int subs = 1; subs <= 2 && ok; ++subs) {
      std::vector<Pipe> pipes(static_cast<std::size_t>(subs));
      std::vector<pid_t> pids;
      for (int k = 0; k < subs; ++k) {
        pids.push_back(run(pipes[static_cast<std::size_t>(k)], [&] {
          auto t = zipc::Topic::open(name, o);
          auto sub = t.subscribe({zipc::From::sequence(0), zipc::Delivery::reliable});
          if (consume(sub, 0, kWarmup, false) == 0) return std::uint64_t{0};
          return consume(sub, kWarmup, records, false);
        }));
      }
      Figures worst{};
      for (int k = 0; k < subs; ++k) {
        const Figures v = collect(pipes[static_cast<std::size_t>(k)], pids[static_cast<std::size_t>(k)]);
        if (v.wall_ns == 0) ok = false;
        worst = worst_of(worst, v);
      }
      read_runs[static_cast<std::size_t>(subs)].push_back(worst);
    }
    zipc::Topic::remove(name);
  }
  if (ok) {
    rows.push_back(median_row("topic-log-publish", 1, records, pub_runs));
    for (int subs = 1; subs <= 2; ++subs) {
      auto r = median_row("topic-log-read", subs, records, read_runs[static_cast<std::size_t>(subs)]);
      r["subscribers"] = subs;
      rows.push_back(r);
    }
  }

  // Live: publisher and subscribers at once over a 64 MiB ring (reliable back-pressure).
  for (int subs = 1; subs <= 2 && ok; ++subs) {
    std::vector<Figures> live_runs;
    for (int rep = 0; rep < repeats && ok; ++rep) {
      zipc::TopicOptions lo = o;
      lo.capacity_bytes = 64u << 20;
      lo.streaming_stores = false;  // readers right behind: keep the records in cache for them
      zipc::Topic::remove(name);
      auto topic = zipc::Topic::create(name, lo);
      std::vector<Pipe> pipes(static_cast<std::size_t>(subs) + 1);
      std::vector<pid_t> pids;
      // Subscribers join before the publisher starts: the slots are taken here
      // and each child reads through its own (forked) copy of one.
      std::vector<zipc::Subscriber> joined;
      for (int k = 0; k < subs; ++k) {
        joined.push_back(topic.subscribe({zipc::From::sequence(0), zipc::Delivery::reliable}));
      }
      for (int k = 0; k < subs; ++k) {
        pids.push_back(run(pipes[static_cast<std::size_t>(k)], [&, k] {
          return consume(joined[static_cast<std::size_t>(k)], 0, kWarmup + records, false);
        }));
      }
      pids.push_back(run(pipes.back(), [&] {
        auto t = zipc::Topic::open(name, lo);
        auto pub = t.publisher();
        return publish(pub, 0, kWarmup + records);
      }));
      Figures worst{};
      for (std::size_t k = 0; k < pids.size(); ++k) {
        const Figures v = collect(pipes[k], pids[k]);
        if (v.wall_ns == 0) ok = false;
        worst = worst_of(worst, v);
      }
      live_runs.push_back(worst);
      zipc::Topic::remove(name);
    }
    if (ok) {
      auto r = median_row("topic-log-live", subs + 1, kWarmup + records, live_runs);
      r["subscribers"] = subs;
      rows.push_back(r);
    }
  }
  zipc::Topic::remove(name);
  std::ofstream f(out);
  f << rows.dump(2) << "\n";
  for (const auto& r : rows) {
    std::printf("%-18s subs=%d  %8.1f ms wall  %8.1f ms cpu  %6.2f GB/s\n", r["workload"].get<std::string>().c_str(),
                r.value("subscribers", 0), r["ms"].get<double>(), r["cpu_ms"].get<double>(),
                r["gbytes_per_s"].get<double>());
  }
  if (!ok) std::fprintf(stderr, "topic_log: a process failed or saw a wrong record\n");
  return ok ? 0 : 1;
}
