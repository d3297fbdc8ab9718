// Helpers shared by the topic tests: checksummed messages and a start gate.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "layout/topic_layout.hpp"
#include "zipc/process.hpp"
#include "zipc/segment.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

namespace topic_test {

// A message carrying (publisher, per-publisher sequence, checksum) and filler.
struct Stamp {
  std::uint32_t publisher;
  std::uint32_t size;
  std::uint64_t sequence;
  std::uint64_t checksum;
};
static_assert(sizeof(Stamp) == 24);

inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

inline std::uint64_t checksum_of(const std::byte* p, std::size_t n, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<std::uint8_t>(p[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

inline std::size_t size_for(std::uint32_t publisher, std::uint64_t seq, std::size_t max) {
  return sizeof(Stamp) + mix(seq * 131 + publisher) % (max - sizeof(Stamp) + 1);
}

// Fills buf (at least size_for bytes) and returns the message size.
inline std::size_t fill(std::byte* buf, std::uint32_t publisher, std::uint64_t seq, std::size_t max) {
  const std::size_t size = size_for(publisher, seq, max);
  for (std::size_t i = sizeof(Stamp); i < size; ++i) buf[i] = static_cast<std::byte>(mix(seq + i) & 0xff);
  Stamp s{publisher, static_cast<std::uint32_t>(size), seq, 0};
  s.checksum = checksum_of(buf + sizeof(Stamp), size - sizeof(Stamp), mix(publisher * 7919 + seq));
  std::memcpy(buf, &s, sizeof s);
  return size;
}

// True when a received message is intact; *stamp gets its header.
inline bool intact(std::span<const std::byte> m, Stamp* stamp) {
  if (m.size() < sizeof(Stamp)) return false;
  std::memcpy(stamp, m.data(), sizeof(Stamp));
  if (stamp->size != m.size()) return false;
  return stamp->checksum == checksum_of(m.data() + sizeof(Stamp), m.size() - sizeof(Stamp),
                                        mix(stamp->publisher * 7919 + stamp->sequence));
}

// A few shared counters in their own segment, for start gates and reports.
class Board {
 public:
  explicit Board(const std::string& name)
      : seg_(zipc::Segment::create(name, zipc::SegmentSpec{zipc::SegmentKind::user, 4096, {}},
                                   [](std::byte* p, std::size_t n) { std::memset(p, 0, n); })) {}
  std::atomic<std::uint64_t>& at(int i) const {
    return reinterpret_cast<std::atomic<std::uint64_t>*>(seg_.payload())[i * 8];  // one line each
  }
  // Waits until counter i reaches n (bounded).
  bool wait_for(int i, std::uint64_t n, std::chrono::seconds limit = std::chrono::seconds(30)) const {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (at(i).load() < n) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }

 private:
  zipc::Segment seg_;
};

inline bool sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#else
  return false;
#endif
}

inline std::uint64_t scaled(std::uint64_t n) {
  const double s = zipc::test::stress_scale() * (sanitized() ? 0.1 : 1.0);
  const auto v = static_cast<std::uint64_t>(static_cast<double>(n) * s);
  return v > 10 ? v : 10;
}

// The topic's control block, to set up a state a test needs.
inline zipc::layout::TopicControl* control_of(const zipc::Topic& t) {
  return reinterpret_cast<zipc::layout::TopicControl*>(t.segment().payload());
}

// A packed id of a process that is gone (forked, exited, reaped).
inline std::uint64_t dead_process() {
  auto child = zipc::test::spawn([] { return 0; });
  const pid_t pid = child.pid();
  (void)child.wait();
  return zipc::pack(zipc::ProcessId{pid, 1});
}

}  // namespace topic_test
