// zipc-bench-topic_log: the shared-memory log experiment of REFERENCE.md §5.
//
//   zipc-bench-topic_log [--full] [--records N] --out FILE
//
// One publisher process appends 1,000,000 records of 1 KiB (message number,
// status byte, text content) to a topic large enough to hold them all (no
// wrap, as in §5); then 1 and then 2 subscriber processes each read every
// record back (copying it out and checking its number and content). Rows: the
// publish time and, per subscriber count, the time for every subscriber to
// read them all. A second pair of rows ("topic-log-live") runs publisher and
// subscribers at the same time over a 64 MiB ring. --full repeats each
// measurement 3 times and keeps the best.
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

#include "zipc/topic.hpp"

namespace {

constexpr std::size_t kRecord = 1024;
constexpr std::uint64_t kWarmup = 10'000;

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
template <class F>
pid_t run(Pipe& p, F body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::uint64_t v = 0;
    try {
      v = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "topic_log child: %s\n", e.what());
    }
    if (::write(p.fd[1], &v, sizeof v) != sizeof v) ::_exit(2);
    ::_exit(v == 0 ? 1 : 0);
  }
  return pid;
}

std::uint64_t collect(Pipe& p, pid_t pid) {
  std::uint64_t v = 0;
  if (::read(p.fd[0], &v, sizeof v) != sizeof v) v = 0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return v;
}

// Publishes `count` records numbered from `first`; returns the elapsed ns.
std::uint64_t publish(zipc::Publisher& pub, std::uint64_t first, std::uint64_t count) {
  std::vector<std::byte> buf(kRecord);
  make_template(buf.data());
  const std::uint64_t t0 = now_ns();
  for (std::uint64_t n = first; n < first + count; ++n) {
    std::memcpy(buf.data(), &n, sizeof n);
    buf[8] = std::byte{1};  // status
    const zipc::PublishResult r = pub.publish(buf, std::chrono::seconds(30));
    if (!r.ok() || r.sequence != n) return 0;
  }
  return now_ns() - t0;
}

// Reads `count` records from sequence `first`, checking each; returns the elapsed ns.
std::uint64_t consume(zipc::Subscriber& sub, std::uint64_t first, std::uint64_t count, bool timed_from_first) {
  std::vector<std::byte> buf(kRecord), want(kRecord);
  make_template(want.data());
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
  return std::max<std::uint64_t>(now_ns() - t0, 1);
}

nlohmann::json row(const std::string& workload, int processes, std::uint64_t records, std::uint64_t ns) {
  nlohmann::json r;
  r["workload"] = workload;
  r["transport"] = "zipc-topic";
  r["size"] = kRecord;
  r["wait"] = "adaptive";
  r["processes"] = processes;
  const double s = static_cast<double>(ns) / 1e9;
  r["records"] = records;
  r["ms"] = static_cast<double>(ns) / 1e6;
  r["msgs_per_s"] = static_cast<double>(records) / s;
  r["gbytes_per_s"] = static_cast<double>(records * kRecord) / s / 1e9;
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
  const int repeats = full ? 3 : 1;
  const std::string name = "bench-topic-log-" + std::to_string(::getpid());
  nlohmann::json rows = nlohmann::json::array();
  bool ok = true;

  // §5: the whole log fits; publish everything, then read it back.
  zipc::TopicOptions o;
  o.capacity = (kWarmup + records) * (kRecord + 32);
  o.max_message = kRecord;
  o.max_subscribers = 8;
  o.prefault = true;          // page faults at create time, as a pre-sized region would have them
  o.streaming_stores = true;  // nobody reads while we log: bypass the cache (docs/topic.md)
  std::uint64_t best_pub = ~0ull;
  std::vector<std::uint64_t> best_read(3, ~0ull);
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
    const std::uint64_t ns = collect(p, pid);
    if (ns == 0) ok = false;
    best_pub = std::min(best_pub, ns);
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
      std::uint64_t worst = 0;
      for (int k = 0; k < subs; ++k) {
        const std::uint64_t v = collect(pipes[static_cast<std::size_t>(k)], pids[static_cast<std::size_t>(k)]);
        if (v == 0) ok = false;
        worst = std::max(worst, v);
      }
      best_read[static_cast<std::size_t>(subs)] = std::min(best_read[static_cast<std::size_t>(subs)], worst);
    }
    zipc::Topic::remove(name);
  }
  if (ok) {
    rows.push_back(row("topic-log-publish", 1, records, best_pub));
    for (int subs = 1; subs <= 2; ++subs) {
      auto r = row("topic-log-read", subs, records, best_read[static_cast<std::size_t>(subs)]);
      r["subscribers"] = subs;
      rows.push_back(r);
    }
  }

  // Live: publisher and subscribers at once over a 64 MiB ring (reliable back-pressure).
  for (int subs = 1; subs <= 2 && ok; ++subs) {
    std::uint64_t best = ~0ull;
    for (int rep = 0; rep < repeats && ok; ++rep) {
      zipc::TopicOptions lo = o;
      lo.capacity = 64u << 20;
      lo.streaming_stores = false;  // readers right behind: keep the records in cache for them
      zipc::Topic::remove(name);
      auto topic = zipc::Topic::create(name, lo);
      std::vector<Pipe> pipes(static_cast<std::size_t>(subs) + 1);
      std::vector<pid_t> pids;
      // Subscribers join before the publisher starts: the slots are taken here
      // and each child reads through its own (forked) copy of one.
      std::vector<zipc::Subscriber> joined;
      for (int k = 0; k < subs; ++k)
        joined.push_back(topic.subscribe({zipc::From::sequence(0), zipc::Delivery::reliable}));
      for (int k = 0; k < subs; ++k) {
        pids.push_back(run(pipes[static_cast<std::size_t>(k)], [&, k] {
          return consume(joined[static_cast<std::size_t>(k)], 0, kWarmup + records, false);
        }));
      }
      pids.push_back(run(pipes.back(), [&] {
        auto t = zipc::Topic::open(name, o);
        auto pub = t.publisher();
        return publish(pub, 0, kWarmup + records);
      }));
      std::uint64_t worst = 0;
      for (std::size_t k = 0; k < pids.size(); ++k) {
        const std::uint64_t v = collect(pipes[k], pids[k]);
        if (v == 0) ok = false;
        worst = std::max(worst, v);
      }
      best = std::min(best, worst);
      zipc::Topic::remove(name);
    }
    if (ok) {
      auto r = row("topic-log-live", subs + 1, kWarmup + records, best);
      r["subscribers"] = subs;
      rows.push_back(r);
    }
  }
  zipc::Topic::remove(name);
  std::ofstream f(out);
  f << rows.dump(2) << "\n";
  for (const auto& r : rows) {
    std::printf("%-18s subs=%d  %8.1f ms  %6.2f GB/s\n", r["workload"].get<std::string>().c_str(),
                r.value("subscribers", 0), r["ms"].get<double>(), r["gbytes_per_s"].get<double>());
  }
  if (!ok) std::fprintf(stderr, "topic_log: a process failed or saw a wrong record\n");
  return ok ? 0 : 1;
}
