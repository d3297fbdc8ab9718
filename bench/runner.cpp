#include "runner.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>

#include "payload.hpp"
#include "shm_map.hpp"
#include "sysinfo.hpp"

namespace zipc::bench {
namespace {

constexpr int kMaxProcs = 64;
constexpr std::uint64_t kMaxSamplesPerProc = 4'000'000;

std::uint64_t now_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void sleep_us(long us) noexcept {
  timespec ts{us / 1'000'000, (us % 1'000'000) * 1000};
  ::nanosleep(&ts, nullptr);
}

struct ProcStats {
  std::uint64_t t_start = 0;   // first measured send (senders)
  std::uint64_t t_end = 0;     // last measured receipt
  std::uint64_t sent = 0;      // measured messages / round trips
  std::uint64_t received = 0;  // measured messages received
  std::uint64_t lost = 0;
  std::uint64_t nsamples = 0;
};

// Lives in anonymous shared memory, made before fork.
struct Control {
  std::atomic<std::uint32_t> ready{0};   // workers with every end open
  std::atomic<std::uint32_t> go{0};      // set by the parent once all are ready
  std::atomic<std::uint32_t> failed{0};  // first failing worker claims error[]
  char error[1024] = {};
  ProcStats procs[kMaxProcs];
};

struct Worker {
  Control* ctl;
  std::uint64_t* samples;  // this process's sample area
  std::uint64_t cap;       // its capacity
  int index;

  void record(std::uint64_t ns) noexcept {
    auto& p = ctl->procs[index];
    if (p.nsamples < cap) samples[p.nsamples] = ns;
    ++p.nsamples;
  }
};

[[noreturn]] void fail(Control* ctl, const std::string& what) {
  std::uint32_t expected = 0;
  // acq_rel: the first failure owns error[]; the parent reads it after waitpid.
  if (ctl->failed.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    std::snprintf(ctl->error, sizeof ctl->error, "%s", what.c_str());
  }
  ::_exit(3);
}

// One message: prepare, write every byte, commit.
void send_one(Worker& w, Sender& s, std::size_t size, const MessageHeader& h) {
  void* buf = s.prepare(size);
  if (!buf) fail(w.ctl, "prepare() failed (channel broke or message too large)");
  fill_message(buf, size, h);
  if (!s.commit(size)) fail(w.ctl, "commit() failed (channel broke)");
}

// One message: acquire, read and check every byte, release.
MessageHeader recv_one(Worker& w, Receiver& r, std::size_t expect_size) {
  std::size_t n = 0;
  const void* p = r.acquire(&n);
  if (!p) fail(w.ctl, "acquire() failed (channel broke or closed)");
  MessageHeader h{};
  if (!check_message(p, n, &h)) {
    fail(w.ctl, "checksum mismatch: message of " + std::to_string(n) + " bytes (seq " + std::to_string(h.seq) +
                    ") does not carry the bytes its sender wrote");
  }
  if (h.flags == kFlagData && expect_size && n != expect_size) {
    fail(w.ctl, "wrong size: got " + std::to_string(n) + " bytes, expected " + std::to_string(expect_size));
  }
  r.release();
  return h;
}

void wait_for_go(Control* ctl) {
  // acq_rel / acquire: pairs with the parent's release of go, after it saw every worker ready.
  ctl->ready.fetch_add(1, std::memory_order_acq_rel);
  while (ctl->go.load(std::memory_order_acquire) == 0) sleep_us(50);
}

struct Ends {
  std::unique_ptr<Sender> tx;
  std::unique_ptr<Receiver> rx;
};

void round_trip_worker(Worker& w, Transport& t, const RunConfig& c, std::vector<ChannelSpec>& ch) {
  Ends e;
  const bool client = w.index == 0;
  // Same opening order in both processes (channel 0, then 1): FIFOs block on open.
  if (client) {
    e.tx = t.open_sender(ch[0], 0);
    e.rx = t.open_receiver(ch[1], 0);
  } else {
    e.rx = t.open_receiver(ch[0], 0);
    e.tx = t.open_sender(ch[1], 0);
  }
  if (!e.tx || !e.rx) fail(w.ctl, "open returned no end");
  wait_for_go(w.ctl);
  auto& st = w.ctl->procs[w.index];
  if (client) {
    const std::uint64_t budget = static_cast<std::uint64_t>(c.budget_s * 1e9);
    std::uint64_t measured = 0;
    for (std::uint64_t i = 0; i < c.warmup + c.iterations; ++i) {
      const bool warm = i < c.warmup;
      const std::uint64_t t0 = now_ns();
      if (!warm && measured == 0) st.t_start = t0;
      send_one(w, *e.tx, c.size, MessageHeader{i, t0, 0, warm ? kFlagWarmup : kFlagData, 0});
      const MessageHeader h = recv_one(w, *e.rx, c.size);
      const std::uint64_t t1 = now_ns();
      if (h.seq != i || h.sender != 1) {
        fail(w.ctl, "reply out of order: expected seq " + std::to_string(i) + ", got " + std::to_string(h.seq));
      }
      if (!warm) {
        w.record(t1 - t0);
        ++measured;
        st.t_end = t1;
        if (t1 - st.t_start > budget) break;
      }
    }
    st.sent = st.received = measured;
    send_one(w, *e.tx, kMinMessage, MessageHeader{measured, now_ns(), 0, kFlagStop, 0});
  } else {
    for (;;) {
      const MessageHeader h = recv_one(w, *e.rx, 0);
      if (h.flags == kFlagStop) break;
      send_one(w, *e.tx, c.size, MessageHeader{h.seq, h.t_send_ns, 1, h.flags, 0});
    }
  }
  e.tx.reset();
  e.rx.reset();
}

// Flat-out senders time one message in kLatencyEvery (and check their time
// budget with the same clock reading); the others carry kUntimed as their
// send time (a real CLOCK_MONOTONIC reading is never 0). At 25 M msgs/s a
// 0.2 s run still takes ~80,000 samples; a clock read (~20 ns) per 16
// messages was 3% of a 100 B topic publisher's time.
constexpr std::uint64_t kLatencyEvery = 64;
constexpr std::uint64_t kUntimed = 0;

void pace_until(std::uint64_t t) noexcept {
  for (;;) {
    const std::uint64_t n = now_ns();
    if (n >= t) return;
    if (t - n > 200'000) sleep_us(static_cast<long>((t - n - 100'000) / 1000));
  }
}

void sender_loop(Worker& w, Sender& tx, const RunConfig& c, std::uint32_t id, int stops) {
  auto& st = w.ctl->procs[w.index];
  for (std::uint64_t i = 0; i < c.warmup; ++i) send_one(w, tx, c.size, MessageHeader{i, now_ns(), id, kFlagWarmup, 0});
  const std::uint64_t budget = static_cast<std::uint64_t>(c.budget_s * 1e9);
  const std::uint64_t start = now_ns();
  st.t_start = start;
  const double interval = c.rate > 0 ? 1e9 / c.rate : 0;
  std::uint64_t i = 0;
  for (; i < c.iterations; ++i) {
    std::uint64_t t_send;
    if (interval > 0) {
      t_send = start + static_cast<std::uint64_t>(static_cast<double>(i) * interval);
      pace_until(t_send);  // latency counts from here, even if we are late (no coordinated omission)
    } else {
      // Flat out: one message in kLatencyEvery carries a send time, so two
      // clock reads per message do not become what the row measures.
      t_send = i % kLatencyEvery == 0 ? now_ns() : kUntimed;
    }
    send_one(w, tx, c.size, MessageHeader{i, t_send, id, kFlagData, 0});
    // The budget, checked on the timed messages (their clock reading, when flat out).
    if (i % kLatencyEvery == 0 && (interval > 0 ? now_ns() : t_send) - start > budget) {
      ++i;
      break;
    }
  }
  st.sent = i;
  for (int k = 0; k < stops; ++k) send_one(w, tx, kMinMessage, MessageHeader{i, now_ns(), id, kFlagStop, 0});
}

void receiver_loop(Worker& w, Receiver& rx, const RunConfig& c, int nsenders) {
  auto& st = w.ctl->procs[w.index];
  std::vector<std::int64_t> next(static_cast<std::size_t>(nsenders), 0);
  // Counted here and stored once at the end: the parent reads them after the
  // worker exits, and a shared-memory store per message is not what we measure.
  std::uint64_t received = 0, lost = 0;
  for (;;) {
    const MessageHeader h = recv_one(w, rx, c.size);
    if (h.sender >= static_cast<std::uint32_t>(nsenders)) fail(w.ctl, "message from unknown sender");
    if (h.flags == kFlagWarmup) continue;
    if (h.flags == kFlagStop) {
      st.t_end = now_ns();
      // Stream (one sender): everything below the stop's seq should have come.
      if (nsenders == 1 && h.seq > static_cast<std::uint64_t>(next[0])) lost += h.seq - next[0];
      break;
    }
    auto& n = next[h.sender];
    if (static_cast<std::int64_t>(h.seq) < n) {
      fail(w.ctl, "message out of order from sender " + std::to_string(h.sender) + ": seq " + std::to_string(h.seq) +
                      " after " + std::to_string(n - 1));
    }
    if (nsenders == 1) lost += h.seq - n;  // gaps: a lossy broadcast dropped them
    n = static_cast<std::int64_t>(h.seq) + 1;
    ++received;
    if (h.t_send_ns == kUntimed) continue;  // counted, not timed (see sender_loop)
    const std::uint64_t t = now_ns();
    st.t_end = t;
    w.record(t > h.t_send_ns ? t - h.t_send_ns : 0);
  }
  st.received = received;
  st.lost = lost;
}

void stream_worker(Worker& w, Transport& t, const RunConfig& c, std::vector<ChannelSpec>& ch) {
  Ends e;
  if (w.index == 0) {
    e.tx = t.open_sender(ch[0], 0);
    wait_for_go(w.ctl);
    sender_loop(w, *e.tx, c, 0, 1);
  } else {
    e.rx = t.open_receiver(ch[0], w.index - 1);
    wait_for_go(w.ctl);
    receiver_loop(w, *e.rx, c, 1);
  }
}

void many_worker(Worker& w, Transport& t, const RunConfig& c, std::vector<ChannelSpec>& ch) {
  Ends e;
  if (w.index < c.senders) {
    e.tx = t.open_sender(ch[0], w.index);
    wait_for_go(w.ctl);
    int stops = 0;  // R stop messages in all, spread over the senders
    for (int j = 0; j < c.receivers; ++j)
      if (j % c.senders == w.index) ++stops;
    sender_loop(w, *e.tx, c, static_cast<std::uint32_t>(w.index), stops);
  } else {
    e.rx = t.open_receiver(ch[0], w.index - c.senders);
    wait_for_go(w.ctl);
    receiver_loop(w, *e.rx, c, c.senders);
  }
}

void kill_all(const std::vector<pid_t>& pids) {
  for (pid_t p : pids)
    if (p > 0) ::kill(p, SIGKILL);
}

}  // namespace

int process_count(const RunConfig& c) {
  switch (c.shape) {
    case Shape::round_trip: return 2;
    case Shape::stream: return 1 + c.receivers;
    case Shape::many: return c.senders + c.receivers;
  }
  return 2;
}

RunResult run_workload(Transport& t, const RunConfig& c) {
  RunResult res;
  const int nproc = process_count(c);
  if (nproc > kMaxProcs) {
    res.error = "too many processes";
    return res;
  }
  if (c.size < kMinMessage) {
    res.error = "message size below " + std::to_string(kMinMessage) + " bytes (the header)";
    return res;
  }
  static std::atomic<unsigned> counter{0};
  const std::string base = c.tag + "." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  std::vector<ChannelSpec> ch;
  auto spec = [&](const std::string& suffix, int s, int r, bool b) {
    ChannelSpec sp;
    sp.name = base + suffix;
    sp.max_message = c.size;
    sp.senders = s;
    sp.receivers = r;
    sp.broadcast = b;
    sp.wait = c.wait;
    return sp;
  };
  switch (c.shape) {
    case Shape::round_trip:
      ch.push_back(spec(".req", 1, 1, false));
      ch.push_back(spec(".rsp", 1, 1, false));
      break;
    case Shape::stream: ch.push_back(spec(".data", 1, c.receivers, c.broadcast)); break;
    case Shape::many: ch.push_back(spec(".data", c.senders, c.receivers, false)); break;
  }
  for (const auto& s : ch) {
    std::string why;
    if (!t.supports(s, &why)) {
      res.error = "unsupported: " + why;
      return res;
    }
  }

  const std::uint64_t per_proc =
      c.shape == Shape::many ? c.iterations * static_cast<std::uint64_t>(c.senders) : c.iterations;
  const std::uint64_t cap = std::min<std::uint64_t>(per_proc + 16, kMaxSamplesPerProc);
  const std::size_t samples_bytes = static_cast<std::size_t>(cap) * 8 * static_cast<std::size_t>(nproc);
  Control* ctl = nullptr;
  std::uint64_t* samples = nullptr;
  std::size_t created = 0;
  std::vector<pid_t> pids;
  try {
    ctl = new (map_shared_anonymous(sizeof(Control))) Control();
    samples = static_cast<std::uint64_t*>(map_shared_anonymous(samples_bytes));
    for (; created < ch.size(); ++created) t.create(ch[created]);
    std::fflush(nullptr);
    for (int i = 0; i < nproc; ++i) {
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error("fork failed");
      if (pid == 0) {
        Worker w{ctl, samples + static_cast<std::size_t>(cap) * static_cast<std::size_t>(i), cap, i};
        try {
          if (!c.cpus.empty()) pin_self(c.cpus[static_cast<std::size_t>(i) % c.cpus.size()]);
          switch (c.shape) {
            case Shape::round_trip: round_trip_worker(w, t, c, ch); break;
            case Shape::stream: stream_worker(w, t, c, ch); break;
            case Shape::many: many_worker(w, t, c, ch); break;
          }
        } catch (const std::exception& ex) {
          fail(ctl, std::string("worker ") + std::to_string(i) + ": " + ex.what());
        } catch (...) {
          fail(ctl, "worker " + std::to_string(i) + ": unknown exception");
        }
        ::_exit(0);
      }
      pids.push_back(pid);
    }
    // Release everyone together once every end is open (or give up).
    const std::uint64_t open_deadline = now_ns() + 10'000'000'000ull;
    while (ctl->ready.load(std::memory_order_acquire) < static_cast<std::uint32_t>(nproc) &&
           ctl->failed.load(std::memory_order_acquire) == 0 && now_ns() < open_deadline) {
      sleep_us(100);
    }
    // release: workers start after seeing go, with every peer's end open.
    ctl->go.store(1, std::memory_order_release);
    const std::uint64_t deadline = now_ns() + static_cast<std::uint64_t>(c.timeout_s * 1e9);
    int alive = nproc;
    bool timed_out = false;
    while (alive > 0) {
      int status = 0;
      pid_t p = 0;
      for (pid_t q : pids) {
        if (q > 0 && ::waitpid(q, &status, WNOHANG) == q) {
          p = q;
          break;
        }
      }
      if (p > 0) {
        auto it = std::find(pids.begin(), pids.end(), p);
        if (it != pids.end()) {
          *it = -1;
          --alive;
          if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) && ctl->failed.load() == 0) {
            res.error = WIFSIGNALED(status) ? "worker killed by signal " + std::to_string(WTERMSIG(status))
                                            : "worker exited with " + std::to_string(WEXITSTATUS(status));
          }
          // One worker failing leaves its peers blocked: end them.
          if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) kill_all(pids);
        }
        continue;
      }
      if (now_ns() > deadline) {
        timed_out = true;
        kill_all(pids);
        for (pid_t& q : pids) {
          if (q > 0) ::waitpid(q, &status, 0);
          q = -1;
        }
        alive = 0;
        break;
      }
      sleep_us(500);
    }
    if (ctl->ready.load() < static_cast<std::uint32_t>(nproc) && res.error.empty() && ctl->failed.load() == 0) {
      res.error = "workers did not open their ends in 10 s";
    }
    if (ctl->failed.load()) res.error = ctl->error;
    if (timed_out && res.error.empty()) {
      res.error = "timed out after " + std::to_string(static_cast<int>(c.timeout_s)) + " s (a worker hung)";
    }
  } catch (const std::exception& ex) {
    kill_all(pids);
    for (pid_t p : pids)
      if (p > 0) ::waitpid(p, nullptr, 0);
    res.error = std::string("setup: ") + ex.what();
  }
  for (std::size_t i = 0; i < created; ++i) {
    try {
      t.destroy(ch[i]);
    } catch (...) {
    }
  }

  if (res.error.empty() && ctl) {
    std::uint64_t t_start = UINT64_MAX, t_end = 0;
    for (int i = 0; i < nproc; ++i) {
      const ProcStats& p = ctl->procs[i];
      const bool is_sender = c.shape == Shape::round_trip ? i == 0 : c.shape == Shape::stream ? i == 0 : i < c.senders;
      const bool is_receiver = c.shape == Shape::round_trip ? i == 0 : !is_sender;
      if (is_sender) {
        res.sent += p.sent;
        if (p.t_start) t_start = std::min(t_start, p.t_start);
      }
      if (is_receiver) {
        res.delivered += p.received;
        res.lost += p.lost;
        t_end = std::max(t_end, p.t_end);
      }
      const std::uint64_t n = std::min(p.nsamples, cap);
      const std::uint64_t* s = samples + static_cast<std::size_t>(cap) * static_cast<std::size_t>(i);
      res.latencies_ns.insert(res.latencies_ns.end(), s, s + n);
    }
    if (c.shape == Shape::many) {
      const std::uint64_t expected = res.sent;
      res.lost = expected > res.delivered ? expected - res.delivered : 0;
    }
    res.seconds = t_end > t_start && t_start != UINT64_MAX ? static_cast<double>(t_end - t_start) / 1e9 : 0;
    res.ok = true;
    if (!c.broadcast && res.lost > 0) {
      res.ok = false;
      res.error = std::to_string(res.lost) + " messages lost on a channel that delivers each message once";
    } else if (res.delivered == 0) {
      res.ok = false;
      res.error = "no message was delivered in the measured phase";
    }
  }
  if (ctl) unmap(ctl, sizeof(Control));
  if (samples) unmap(samples, samples_bytes);
  return res;
}

}  // namespace zipc::bench
