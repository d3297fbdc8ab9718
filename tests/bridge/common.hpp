// Shared setup of the bridge tests. Two "hosts" share no segments: each has
// its own zipc name prefix (<unique>.hostA.*, <unique>.hostB.*) and its own
// bridge with its own host id and NATS connection. (Not network namespaces:
// they do not separate /dev/shm, so they would not keep the hosts apart.)
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "harness.hpp"
#include "zipc/bridge.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

namespace zipc::bridge_test {

struct Hosts {
  std::string base = zipc::test::unique_name("br");
  std::string a(const std::string& ch) const { return base + ".hostA." + ch; }
  std::string b(const std::string& ch) const { return base + ".hostB." + ch; }
  std::string subject(const std::string& ch) const { return "zipc." + base + "." + ch; }
  ~Hosts() {
    for (const char* ch : {"prices", "orders", "jobs"}) {
      Topic::remove(a(ch));
      Topic::remove(b(ch));
    }
  }
};

// Polls a bridge in a thread of its own until destroyed; sums what poll() said it moved.
class Poller {
 public:
  explicit Poller(Bridge& b)
      : t_([this, &b] {
          while (!stop_.load()) moved_ += b.poll(std::chrono::milliseconds(20));
        }) {}
  ~Poller() {
    stop_ = true;
    t_.join();
  }
  [[nodiscard]] std::uint64_t moved() const { return moved_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> moved_{0};
  std::thread t_;
};

// Two hosts on one nats-server of the test's own.
struct Pair {
  TempDir dir;
  Hosts h;
  NatsServer server{dir.path()};
};

inline BridgeConfig host_config(const std::string& host, std::vector<std::string> urls, const std::string& state_dir) {
  BridgeConfig c;
  c.host_id = host;
  c.state_dir = state_dir;
  c.nats.servers = std::move(urls);
  c.nats.reconnect_wait = std::chrono::milliseconds(50);
  return c;
}

inline BridgeMapping mapping(const std::string& channel, const std::string& subject, BridgeDirection dir,
                             BridgeMode mode, const std::string& stream = "") {
  BridgeMapping m;
  m.channel = channel;
  m.subject = subject;
  m.direction = dir;
  m.mode = mode;
  m.stream = stream;
  m.envelope = dir != BridgeDirection::outbound;
  return m;
}

// Publishes messages [from, to) into a topic whose next sequence is from.
inline void publish_range(Topic& t, std::uint64_t from, std::uint64_t to, std::chrono::microseconds gap = {}) {
  auto pub = t.publisher();
  for (std::uint64_t i = from; i < to; ++i) {
    auto p = payload(i);
    auto r = pub.publish(p, std::chrono::seconds(10));
    ASSERT_TRUE(r.ok()) << "publish " << i << ": " << to_string(r.status);
    ASSERT_EQ(r.sequence, i);
    if (gap.count() > 0 && i % 64 == 0) std::this_thread::sleep_for(gap);
  }
}

// The remote reader got exactly messages 0..n-1, in order, intact.
inline void expect_all_in_order(const RemoteReader& r, std::uint64_t n) {
  const auto seqs = r.seqs();
  ASSERT_EQ(seqs.size(), n);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(seqs[i], i) << "at " << i;
  EXPECT_EQ(r.bad(), 0u);
}

inline bool strictly_increasing(const std::vector<std::uint64_t>& v) {
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] <= v[i - 1]) return false;
  return true;
}

inline std::vector<std::string> bridge_args(const std::string& host, const std::string& url, const std::string& state,
                                            const std::string& channel, const std::string& subject,
                                            const std::string& direction, const std::string& mode,
                                            const std::string& stream) {
  std::vector<std::string> a{bridge_exe(), "--host-id", host,    "--state-dir", state,     "-s",     url, "--channel",
                             channel,      "--subject", subject, "--direction", direction, "--mode", mode};
  if (!stream.empty()) a.insert(a.end(), {"--stream", stream});
  if (direction != "out") a.push_back("--envelope");
  return a;
}

}  // namespace zipc::bridge_test
