#include "limits.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

#include "payload.hpp"
#include "shm_map.hpp"
#include "sysinfo.hpp"
#include "zipc/event.hpp"

namespace zipc::bench {
namespace {

std::uint64_t now_ns() noexcept {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Two lines, one per direction, so each side writes only its own line.
struct PingPong {
  alignas(128) std::atomic<std::uint64_t> ping{0};
  alignas(128) std::atomic<std::uint64_t> pong{0};
  alignas(128) zipc::Event ping_event;
  alignas(128) zipc::Event pong_event;
  alignas(128) double batch_ns[4096];
  std::uint32_t batches;
};

enum class Mode { spin, yield, futex };

void wait_value(std::atomic<std::uint64_t>& a, std::uint64_t v, zipc::Event& e, Mode m) {
  if (m == Mode::futex) {
    zipc::WaitOptions o;
    o.strategy = zipc::WaitStrategy::block;
    // acquire: pairs with the peer's release store of v.
    (void)e.wait_until([&] { return a.load(std::memory_order_acquire) >= v; }, zipc::Deadline::never(), o);
    return;
  }
  // acquire: pairs with the peer's release store of v.
  while (a.load(std::memory_order_acquire) < v) {
    if (m == Mode::yield)
      ::sched_yield();
    else
      relax();
  }
}

// Runs rounds of ping-pong between two forked processes; returns the median
// round trip (ns) over batches of `batch` rounds.
double process_round_trip(int cpu_a, int cpu_b, Mode m, std::uint64_t warmup, std::uint32_t batches,
                          std::uint32_t batch) {
  auto* pp = new (map_shared_anonymous(sizeof(PingPong))) PingPong();
  batches = std::min<std::uint32_t>(batches, 4096);
  const std::uint64_t total = warmup + static_cast<std::uint64_t>(batches) * batch;
  std::fflush(nullptr);
  const pid_t pong = ::fork();
  if (pong == 0) {
    pin_self(cpu_b);
    for (std::uint64_t r = 1; r <= total; ++r) {
      wait_value(pp->ping, r, pp->ping_event, m);
      pp->pong.store(r, std::memory_order_release);  // release: answers round r
      if (m == Mode::futex) pp->pong_event.notify_one();
    }
    ::_exit(0);
  }
  const pid_t ping = ::fork();
  if (ping == 0) {
    pin_self(cpu_a);
    std::uint64_t r = 1;
    for (; r <= warmup; ++r) {
      pp->ping.store(r, std::memory_order_release);  // release: starts round r
      if (m == Mode::futex) pp->ping_event.notify_one();
      wait_value(pp->pong, r, pp->pong_event, m);
    }
    for (std::uint32_t b = 0; b < batches; ++b) {
      const std::uint64_t t0 = now_ns();
      for (std::uint32_t k = 0; k < batch; ++k, ++r) {
        pp->ping.store(r, std::memory_order_release);  // release: starts round r
        if (m == Mode::futex) pp->ping_event.notify_one();
        wait_value(pp->pong, r, pp->pong_event, m);
      }
      pp->batch_ns[b] = static_cast<double>(now_ns() - t0) / batch;
    }
    pp->batches = batches;
    ::_exit(0);
  }
  int st = 0;
  bool ok = ping > 0 && pong > 0;
  if (ping > 0) ok = ::waitpid(ping, &st, 0) == ping && WIFEXITED(st) && WEXITSTATUS(st) == 0 && ok;
  if (pong > 0) ok = ::waitpid(pong, &st, 0) == pong && WIFEXITED(st) && WEXITSTATUS(st) == 0 && ok;
  double r = 0;
  if (ok) r = median(std::vector<double>(pp->batch_ns, pp->batch_ns + pp->batches));
  unmap(pp, sizeof(PingPong));
  return r;
}

double memcpy_gbps(std::size_t size, double scale) {
  // Source and destination in one buffer larger than the copy, rotated so
  // small copies do not sit in one cache line forever.
  std::vector<unsigned char> src(size + 4096, 1), dst(size + 4096, 0);
  double best = 0;
  const std::uint64_t budget = static_cast<std::uint64_t>(20'000'000 * scale);
  for (int rep = 0; rep < 3; ++rep) {
    std::uint64_t bytes = 0, iters = 0;
    const std::uint64_t t0 = now_ns();
    std::uint64_t t = t0;
    while (t - t0 < budget) {
      for (int k = 0; k < 64; ++k, ++iters) {
        const std::size_t off = (iters * 64) & 4095;
        std::memcpy(dst.data() + off, src.data() + off, size);
        asm volatile("" : : "r"(dst.data()) : "memory");  // keep the copy
        bytes += size;
      }
      t = now_ns();
    }
    best = std::max(best, static_cast<double>(bytes) / static_cast<double>(t - t0));
  }
  return best;  // bytes per ns == GB/s
}

void pin_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set);
}

// A plain in-process single-producer single-consumer ring of fixed-size
// messages: what two threads sharing an address space reach on this machine.
// The producer copies each message in, the consumer copies it out. 1024
// slots, fewer if that would pass 64 MiB (as the bench's zipc queue sizes
// its ring), at least 2. With `payload` the two threads also do the
// harness's payload work (bench/payload.hpp): the producer fills the
// pattern into its message before copying it in, the consumer checks every
// byte of the copy it took out (0 if a byte is wrong).
double spsc_msgs_per_s(std::size_t size, int cpu_a, int cpu_b, std::uint64_t messages, bool payload = false) {
  const std::size_t stride = (size + 7) & ~std::size_t{7};
  std::size_t kSlots = 1024;
  while (kSlots > 2 && kSlots * (stride + 64) > (std::size_t{64} << 20)) kSlots /= 2;
  std::vector<unsigned char> ring(kSlots * stride);
  struct alignas(128) Cursor {
    std::atomic<std::uint64_t> v{0};
  };
  Cursor head, tail;  // head: next to write (producer), tail: next to read (consumer)
  std::uint64_t sink = 0;
  std::uint64_t t_start = 0, t_end = 0;
  std::atomic<bool> bad{false};
  std::thread consumer([&] {
    if (cpu_b >= 0) pin_thread(cpu_b);
    std::vector<unsigned char> out(size);
    std::uint64_t cached_head = 0, sum = 0;
    for (std::uint64_t i = 0; i < messages; ++i) {
      // acquire: pairs with the producer's release of head (slot i is written).
      while (cached_head <= i) cached_head = head.v.load(std::memory_order_acquire);
      std::memcpy(out.data(), &ring[(i % kSlots) * stride], size);
      sum += out[0] + out[size - 1];
      if (payload) {
        MessageHeader h{};
        if (!check_message(out.data(), size, &h) || h.seq != i) bad.store(true, std::memory_order_relaxed);
      }
      tail.v.store(i + 1, std::memory_order_release);  // release: slot i may be reused
    }
    t_end = now_ns();
    sink = sum;
  });
  // Restore this thread's CPU set afterwards: the harness forks and execs
  // everything else from this thread, and children inherit the mask.
  cpu_set_t before;
  CPU_ZERO(&before);
  const bool saved = ::pthread_getaffinity_np(::pthread_self(), sizeof before, &before) == 0;
  if (cpu_a >= 0) pin_thread(cpu_a);
  std::vector<unsigned char> msg(size, 7);
  std::uint64_t cached_tail = 0;
  t_start = now_ns();
  for (std::uint64_t i = 0; i < messages; ++i) {
    // acquire: pairs with the consumer's release of tail (slot is free).
    while (i - cached_tail >= kSlots) cached_tail = tail.v.load(std::memory_order_acquire);
    if (payload)
      fill_message(msg.data(), size, MessageHeader{i, 0, 0, kFlagData, 0});
    else
      msg[0] = static_cast<unsigned char>(i);
    std::memcpy(&ring[(i % kSlots) * stride], msg.data(), size);
    head.v.store(i + 1, std::memory_order_release);  // release: publishes slot i
  }
  consumer.join();
  if (saved) ::pthread_setaffinity_np(::pthread_self(), sizeof before, &before);
  asm volatile("" : : "r"(sink) : "memory");
  if (bad.load(std::memory_order_relaxed)) return 0;  // joined: the consumer's flag is visible
  return t_end > t_start ? static_cast<double>(messages) * 1e9 / static_cast<double>(t_end - t_start) : 0;
}

// The ring's msgs/s, median of three runs: on a VM one run can land well
// above or below the others (where the host runs the two vCPUs moves under us).
double ring_median_of_three(std::size_t size, int cpu_a, int cpu_b, std::uint64_t messages, bool payload = false) {
  std::vector<double> v;
  v.reserve(3);
  for (int rep = 0; rep < 3; ++rep) v.push_back(spsc_msgs_per_s(size, cpu_a, cpu_b, messages, payload));
  return median(v);
}

std::string fmt(double v, int prec = 1) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

}  // namespace

Limits measure_limits(const LimitsOptions& opt) {
  Limits l;
  std::vector<int> cpus = opt.cpus.empty() ? allowed_cpus() : opt.cpus;
  const double s = opt.scale;
  const bool two = cpus.size() >= 2;
  l.cpus_used = two ? 2 : 1;
  // Small batches, median over them: on a shared machine most long batches
  // include a preemption, and the floor is what an undisturbed round costs.
  const auto batches = [&](double n) { return static_cast<std::uint32_t>(std::min(4096.0, n * s)); };
  if (two) {
    l.cacheline_rtt_ns = process_round_trip(cpus[0], cpus[1], Mode::spin, 20'000, batches(1000), 100);
    // Each futex round trip timed alone (batches of one), as the futex
    // probe: a batch's mean carries any preemption inside it.
    l.futex_rtt_ns = process_round_trip(cpus[0], cpus[1], Mode::futex, 500, batches(4000), 1);
  } else {
    l.note = "one CPU only: cross-CPU probes (cacheline_rtt_ns, futex_rtt_ns) not measured";
  }
  l.cacheline_rtt_1cpu_yield_ns = process_round_trip(cpus[0], cpus[0], Mode::yield, 2'000, batches(400), 25);
  for (std::size_t size : {std::size_t{100}, std::size_t{3000}, std::size_t{65536}, std::size_t{1048576}}) {
    l.memcpy_gbps[size] = memcpy_gbps(size, s);
  }
  const int a = cpus[0], b = two ? cpus[1] : cpus[0];
  const auto ring = [&](std::size_t size, std::uint64_t messages) {
    return ring_median_of_three(size, a, b, messages);
  };
  l.spsc_inproc_msgs_per_s[8] = ring(8, static_cast<std::uint64_t>(4'000'000 * s));
  l.spsc_inproc_msgs_per_s[100] = ring(100, static_cast<std::uint64_t>(2'000'000 * s));
  // The same ring moving big messages: the bytes must leave one core's cache
  // for the other's, which bounds any copying transport far below memcpy.
  for (std::size_t size : kXcoreSizes) {
    if (!two) break;  // one CPU: no cross-core figure; big-message ratios use memcpy
    const auto messages = static_cast<std::uint64_t>(std::max(2000.0, 1.0e9 * s / static_cast<double>(size)));
    l.xcore_copy_gbps[size] = ring(size, messages) * static_cast<double>(size) / 1e9;
  }
  return l;
}

ThroughputBasis throughput_basis(std::size_t size) {
  const auto gap = [size](std::size_t v) { return v > size ? v - size : size - v; };
  const auto nearest = [&](const auto& sizes) {
    std::size_t best = sizes.front();
    for (std::size_t k : sizes)
      if (gap(k) < gap(best)) best = k;
    return best;
  };
  return size <= 1024 ? ThroughputBasis{nearest(kRingSizes), false} : ThroughputBasis{nearest(kXcoreSizes), true};
}

// About 2-10 ms a run of the ring, median of three: short enough to take
// before and after every throughput run, long enough to lap the ring.
RingProbe ring_probe(std::size_t row_size, int cpu_a, int cpu_b) {
  RingProbe p;
  p.basis = throughput_basis(row_size);
  const std::size_t n = p.basis.size;
  const auto messages =
      p.basis.gbps ? std::max<std::uint64_t>(1000, (std::uint64_t{64} << 20) / n) : std::uint64_t{200'000};
  const double rate = ring_median_of_three(n, cpu_a, cpu_b, messages);
  p.value = p.basis.gbps ? rate * static_cast<double>(n) / 1e9 : rate;
  if (p.basis.gbps)
    p.payload_gbps = ring_median_of_three(row_size, cpu_a, cpu_b, messages, true) * static_cast<double>(row_size) / 1e9;
  return p;
}

double cacheline_probe_ns(int cpu_a, int cpu_b) {
  const Mode m = cpu_a == cpu_b ? Mode::yield : Mode::spin;
  return process_round_trip(cpu_a, cpu_b, m, 1'000, 40, 50);
}

double futex_probe_ns(int cpu_a, int cpu_b) {
  // The median of single round trips: on a loaded 2-vCPU guest, medians of
  // batches of ten lay up to 2.7x apart from one probe to the next, single
  // ones at most 1.4x (zipc-limits --probes).
  return process_round_trip(cpu_a, cpu_b, Mode::futex, 50, 400, 1);
}

double latency_probe_ns(const std::string& kind, int cpu_a, int cpu_b) {
  if (kind == kProbeFutex) return futex_probe_ns(cpu_a, cpu_b);
  return kind == kProbeYield ? cacheline_probe_ns(cpu_a, cpu_a) : cacheline_probe_ns(cpu_a, cpu_b);
}

nlohmann::json to_json(const Limits& l) {
  nlohmann::json j;
  j["cacheline_rtt_ns"] = l.cacheline_rtt_ns;
  j["cacheline_rtt_1cpu_yield_ns"] = l.cacheline_rtt_1cpu_yield_ns;
  j["futex_rtt_ns"] = l.futex_rtt_ns;
  j["memcpy_gbps"] = nlohmann::json::object();
  for (auto& [k, v] : l.memcpy_gbps) j["memcpy_gbps"][std::to_string(k)] = v;
  j["spsc_inproc_msgs_per_s"] = nlohmann::json::object();
  for (auto& [k, v] : l.spsc_inproc_msgs_per_s) j["spsc_inproc_msgs_per_s"][std::to_string(k)] = v;
  j["xcore_copy_gbps"] = nlohmann::json::object();
  for (auto& [k, v] : l.xcore_copy_gbps) j["xcore_copy_gbps"][std::to_string(k)] = v;
  j["cpus_used"] = l.cpus_used;
  if (!l.note.empty()) j["note"] = l.note;
  return j;
}

Limits limits_from_json(const nlohmann::json& j) {
  Limits l;
  l.cacheline_rtt_ns = j.value("cacheline_rtt_ns", 0.0);
  l.cacheline_rtt_1cpu_yield_ns = j.value("cacheline_rtt_1cpu_yield_ns", 0.0);
  l.futex_rtt_ns = j.value("futex_rtt_ns", 0.0);
  if (j.contains("memcpy_gbps"))
    for (auto& [k, v] : j["memcpy_gbps"].items()) l.memcpy_gbps[std::stoul(k)] = v.get<double>();
  if (j.contains("spsc_inproc_msgs_per_s"))
    for (auto& [k, v] : j["spsc_inproc_msgs_per_s"].items()) l.spsc_inproc_msgs_per_s[std::stoul(k)] = v.get<double>();
  if (j.contains("xcore_copy_gbps"))
    for (auto& [k, v] : j["xcore_copy_gbps"].items()) l.xcore_copy_gbps[std::stoul(k)] = v.get<double>();
  l.cpus_used = j.value("cpus_used", 0);
  l.note = j.value("note", std::string());
  return l;
}

std::string limits_table(const Limits& l) {
  std::ostringstream o;
  o << "| limit (this machine, this run) | value |\n|---|---|\n";
  o << "| cache-line round trip, 2 processes on 2 CPUs | " << fmt(l.cacheline_rtt_ns) << " ns |\n";
  o << "| same, both on one CPU with sched_yield | " << fmt(l.cacheline_rtt_1cpu_yield_ns) << " ns |\n";
  o << "| futex wake round trip across CPUs | " << fmt(l.futex_rtt_ns / 1000.0, 2) << " us |\n";
  for (auto& [k, v] : l.memcpy_gbps) o << "| memcpy " << k << " B, one thread | " << fmt(v, 2) << " GB/s |\n";
  for (auto& [k, v] : l.spsc_inproc_msgs_per_s)
    o << "| in-process SPSC ring, two threads, " << k << " B | " << fmt(v / 1e6, 2) << " M msgs/s |\n";
  for (auto& [k, v] : l.xcore_copy_gbps)
    o << "| same ring, " << k << " B messages copied in and out (cross-core copy) | " << fmt(v, 2) << " GB/s |\n";
  if (!l.note.empty()) o << "\nnote: " << l.note << "\n";
  return o.str();
}

}  // namespace zipc::bench
