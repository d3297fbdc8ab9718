// Memory bandwidth and steal time (host_state.hpp).
#include "host_state.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>

#include "peer_common.hpp"

namespace zipc::bench {

namespace {

constexpr std::size_t kBandwidthBytes = std::size_t{128} << 20;

// The buffer, its pages made real once (not counted: a first touch measures
// the page allocator, not the memory).
const std::uint64_t* bandwidth_buffer() {
  static const std::unique_ptr<std::uint64_t[]> buf = [] {
    auto b = std::make_unique<std::uint64_t[]>(kBandwidthBytes / sizeof(std::uint64_t));
    for (std::size_t i = 0; i < kBandwidthBytes / sizeof(std::uint64_t); ++i) b[i] = i;
    return b;
  }();
  return buf.get();
}

}  // namespace

double memory_read_gbps() {
  const std::uint64_t* b = bandwidth_buffer();
  const std::size_t n = kBandwidthBytes / sizeof(std::uint64_t);
  double best = 0;
  std::uint64_t sink = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const std::uint64_t t0 = mono_ns();
    // Four sums: independent chains, so the loads, not the adds, set the pace.
    std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (std::size_t i = 0; i + 3 < n; i += 4) {
      s0 += b[i];
      s1 += b[i + 1];
      s2 += b[i + 2];
      s3 += b[i + 3];
    }
    sink += s0 + s1 + s2 + s3;
    const std::uint64_t dt = mono_ns() - t0;
    if (dt > 0)
      best = std::max(best, static_cast<double>(kBandwidthBytes) / static_cast<double>(dt));  // bytes/ns = GB/s
  }
  // The sums are used, so the loop is not optimised away.
  asm volatile("" : : "r"(sink));
  return best;
}

double parse_steal_ms(const std::string& proc_stat, long ticks_per_s) {
  std::istringstream in(proc_stat);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    // user nice system idle iowait irq softirq steal
    std::uint64_t v[8] = {};
    for (auto& x : v)
      if (!(fields >> x)) return -1;
    if (ticks_per_s <= 0) return -1;
    return static_cast<double>(v[7]) * 1000.0 / static_cast<double>(ticks_per_s);
  }
  return -1;
}

double steal_ms() {
  std::ifstream f("/proc/stat");
  if (!f) return -1;
  std::ostringstream text;
  text << f.rdbuf();
  return parse_steal_ms(text.str(), sysconf(_SC_CLK_TCK));
}

}  // namespace zipc::bench
