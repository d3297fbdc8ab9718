// Crash safety of the oversize region, with real processes killed by SIGKILL:
// a consumer that dies holding a big message has it redelivered, a producer
// that dies between allocation and commit has its allocation reclaimed, and
// after rounds of random kills the region's free bytes return to their
// initial value (nothing leaks).
//
// The torture runs 4 rounds by default; ZIPC_STRESS_SCALE=N runs 4*N.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "queue_test_util.hpp"
#include "zipc/queue.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Queue;
using zipc::QueueOptions;
using zipc::Role;
using zipc::Status;

namespace queue_oversize_crash_test {
namespace {

struct Flags {
  std::atomic<std::uint32_t> ready;
  std::atomic<std::uint64_t> bad;
  std::atomic<std::uint64_t> received;
};

// A shared page of flags between the test and its children.
class SharedFlags {
 public:
  SharedFlags() : name_("qovf") {
    zipc::SegmentSpec spec;
    spec.payload_size = sizeof(Flags);
    seg_ = zipc::Segment::create(name_.str(), spec, nullptr);
    flags_ = reinterpret_cast<Flags*>(seg_.payload());
  }
  Flags* operator->() const { return flags_; }

 private:
  zipc::test::TempName name_;
  zipc::Segment seg_;
  Flags* flags_ = nullptr;
};

QueueOptions options(std::size_t region) {
  QueueOptions o;
  o.block_size = 256;
  o.block_count = 64;
  o.max_participants = 16;
  o.recovery_time = 50ms;
  o.oversize_bytes = region;
  return o;
}

// A message that checks itself: its length and a seed in the first 16 bytes,
// the rest derived from them.
void fill(std::byte* p, std::size_t n, std::uint64_t seed) {
  std::memcpy(p, &n, 8);
  std::memcpy(p + 8, &seed, 8);
  for (std::size_t i = 16; i < n; i += 8) {
    const std::uint64_t v = zipc::test::mix64(seed ^ i);
    std::memcpy(p + i, &v, std::min<std::size_t>(8, n - i));
  }
}
bool intact(std::span<const std::byte> m) {
  if (m.size() < 16) return false;
  std::uint64_t n = 0, seed = 0;
  std::memcpy(&n, m.data(), 8);
  std::memcpy(&seed, m.data() + 8, 8);
  if (n != m.size()) return false;
  for (std::size_t i = 16; i < m.size(); i += 8) {
    const std::uint64_t v = zipc::test::mix64(seed ^ i);
    if (std::memcmp(m.data() + i, &v, std::min<std::size_t>(8, m.size() - i)) != 0) return false;
  }
  return true;
}

void wait_ready(const SharedFlags& f, std::uint32_t n) {
  for (int i = 0; i < 10000 && f->ready.load() < n; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_GE(f->ready.load(), n);
}

TEST(QueueOversizeCrash, AConsumerKilledHoldingABigMessageHasItRedelivered) {
  zipc::test::TempName name("qovc");
  SharedFlags f;
  auto q = Queue::create(name.str(), options(4u << 20));
  const std::uint64_t free0 = q.stats().oversize_free_bytes;
  std::vector<std::byte> msg(1u << 20);
  fill(msg.data(), msg.size(), 42);
  ASSERT_EQ(q.try_send(msg), Status::ok);
  auto child = zipc::test::spawn([&] {
    auto c = Queue::open(name.str(), Role::consumer);
    zipc::QueueReadLoan l = c.acquire(5s);
    if (!l || !intact(l.data())) return 1;
    f->ready.store(1);
    std::this_thread::sleep_for(60s);  // killed holding the loan
    return 2;
  });
  wait_ready(f, 1);
  child.kill(SIGKILL);
  (void)child.wait();
  EXPECT_EQ(q.try_acquire().status(), Status::empty);  // held by the dead: not yet recovered
  EXPECT_GE(q.recover(), 1u);
  {
    zipc::QueueReadLoan l = q.try_acquire();
    ASSERT_TRUE(l) << zipc::to_string(l.status());
    EXPECT_EQ(l.size(), msg.size());
    EXPECT_TRUE(intact(l.data()));
  }
  EXPECT_EQ(q.stats().redelivered, 1u);
  EXPECT_EQ(q.stats().oversize_free_bytes, free0);
}

TEST(QueueOversizeCrash, AProducerKilledBetweenAllocationAndCommitHasItsAllocationReclaimed) {
  zipc::test::TempName name("qovc");
  SharedFlags f;
  auto q = Queue::create(name.str(), options(4u << 20));
  const std::uint64_t free0 = q.stats().oversize_free_bytes;
  auto child = zipc::test::spawn([&] {
    auto p = Queue::open(name.str(), Role::producer);
    zipc::QueueWriteLoan a = p.try_reserve(1u << 20);  // a position and its payload
    zipc::QueueWriteLoan b = p.try_reserve(500000);
    if (!a || !b) return 1;
    std::memset(a.data().data(), 1, a.size());
    f->ready.store(1);
    std::this_thread::sleep_for(60s);  // killed before commit
    return 2;
  });
  wait_ready(f, 1);
  EXPECT_LT(q.stats().oversize_free_bytes, free0 - 1500000);
  child.kill(SIGKILL);
  (void)child.wait();
  EXPECT_GE(q.recover(), 2u);
  const zipc::QueueStats s = q.stats();
  EXPECT_EQ(s.abandoned, 2u);
  EXPECT_EQ(s.oversize_free_bytes, free0);
  EXPECT_EQ(s.oversize_live, 0u);
  EXPECT_EQ(s.oversize_reclaimed, 2u);
  EXPECT_EQ(q.try_acquire().status(), Status::empty);  // never delivered
}

TEST(QueueOversizeCrash, AProducerKilledHoldingAnAllocationWithoutAPositionHasItReclaimed) {
  // The ring is full: the producer holds its payload while it waits for a position.
  zipc::test::TempName name("qovc");
  SharedFlags f;
  QueueOptions o = options(4u << 20);
  o.block_count = 2;
  auto q = Queue::create(name.str(), o);
  ASSERT_EQ(q.try_send(std::as_bytes(std::span("a"))), Status::ok);
  ASSERT_EQ(q.try_send(std::as_bytes(std::span("b"))), Status::ok);
  const std::uint64_t free0 = q.stats().oversize_free_bytes;
  auto child = zipc::test::spawn([&] {
    auto p = Queue::open(name.str(), Role::producer);
    f->ready.store(1);
    std::vector<std::byte> big(800000, std::byte{3});
    (void)p.send(big, 60s);  // allocates, then waits for a position
    return 2;
  });
  wait_ready(f, 1);
  for (int i = 0; i < 5000 && q.stats().oversize_live == 0; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(q.stats().oversize_live, 1u);
  child.kill(SIGKILL);
  (void)child.wait();
  (void)q.recover();
  EXPECT_EQ(q.stats().oversize_free_bytes, free0);
  EXPECT_EQ(q.stats().oversize_live, 0u);
}

// Producers and consumers stream mixed sizes; every child is killed at a
// random moment (inside the allocator, between allocation and commit, while
// holding or releasing a loan, ...). The survivors' recovery then drains the
// queue intact, and the region is back to its initial free bytes.
TEST(QueueOversizeCrash, AfterRoundsOfRandomKillsNothingLeaksInTheRegion) {
  zipc::test::TempName name("qovt");
  SharedFlags f;
  auto q = Queue::create(name.str(), options(8u << 20), Role::both);
  const std::uint64_t free0 = q.stats().oversize_free_bytes;
  const int rounds = static_cast<int>(4 * zipc::test::stress_scale());
  std::mt19937_64 rng(zipc::test::test_seed());
  std::uint64_t delivered = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<zipc::test::Child> kids;
    for (int k = 0; k < 4; ++k) {
      const bool producer = k % 2 == 0;
      const std::uint64_t seed = rng();
      kids.push_back(zipc::test::spawn([&, producer, seed]() -> int {
        auto h = Queue::open(name.str(), producer ? Role::producer : Role::consumer);
        std::mt19937_64 r(seed);
        std::vector<std::byte> buf(1u << 20);
        for (std::uint64_t i = 0;; ++i) {
          if (producer) {
            const std::size_t n = r() % 8 == 0 ? 16 + r() % 700000 : 16 + r() % 240;
            if (r() % 2 == 0) {
              zipc::QueueWriteLoan l = h.reserve(n, 100ms);
              if (!l) continue;
              fill(l.data().data(), n, r());
              if (r() % 16 == 0) continue;  // aborted
              (void)l.commit(n);
            } else {
              fill(buf.data(), n, r());
              (void)h.send(std::span(buf.data(), n), 100ms);
            }
          } else if (r() % 2 == 0) {
            zipc::QueueReadLoan l = h.acquire(100ms);
            if (l) {
              if (!intact(l.data())) f->bad.fetch_add(1);
              f->received.fetch_add(1);
            }
          } else {
            const zipc::IoResult res = h.recv(buf, 100ms);
            if (res.ok()) {
              if (!intact({buf.data(), res.size})) f->bad.fetch_add(1);
              f->received.fetch_add(1);
            }
          }
        }
      }));
    }
    // Killed one after another in a random order: consumers first leave
    // messages (and held loans) for the survivor to drain.
    std::vector<std::size_t> order{0, 1, 2, 3};
    std::shuffle(order.begin(), order.end(), rng);
    for (const std::size_t k : order) zipc::test::kill_after_random_delay(kids[k], 20ms, 150ms);
    for (auto& k : kids) (void)k.wait();
    // Survivors recover what the dead held and drain the queue.
    (void)q.recover();
    for (;;) {
      zipc::QueueReadLoan l = q.try_acquire();
      if (!l) {
        if (q.recover() == 0) break;
        continue;
      }
      EXPECT_TRUE(intact(l.data()));
      ++delivered;
    }
    (void)q.recover();
    const zipc::QueueStats s = q.stats();
    EXPECT_EQ(s.oversize_live, 0u) << "round " << round;
    EXPECT_EQ(s.oversize_free_bytes, free0) << "round " << round;
  }
  EXPECT_EQ(f->bad.load(), 0u);
  EXPECT_GT(f->received.load() + delivered, 0u);
  std::printf("[zipc] %d rounds: %llu received by children, %llu drained, %llu allocations reclaimed\n", rounds,
              static_cast<unsigned long long>(f->received.load()), static_cast<unsigned long long>(delivered),
              static_cast<unsigned long long>(q.stats().oversize_reclaimed));
}

}  // namespace

}  // namespace queue_oversize_crash_test
