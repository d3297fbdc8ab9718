// P producers x C consumers moving (producer, sequence, checksum) messages:
// no loss, no duplicate, per-producer order. Processes (fork) and, with the
// same algorithm, threads (for TSan).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>
#include <vector>

#include "queue_test_util.hpp"
#include "zipc/queue.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Queue;
using zipc::Role;
using zipc::Status;

namespace queue_stress_test {
namespace {

struct StressPlan {
  zipc::test::QueueMode mode;
  int producers;
  int consumers;
  std::uint64_t per_producer;
};

std::uint64_t scaled(std::uint64_t n) {
  const double v = static_cast<double>(n) * zipc::test::stress_scale() / zipc::test::sanitizer_divisor();
  return std::max<std::uint64_t>(1000, static_cast<std::uint64_t>(v));
}

// Producer body: every third producer uses loans, the next batches, the rest copies.
bool produce(Queue& q, int p, std::uint64_t n) {
  std::vector<std::byte> buf(q.block_size());
  for (std::uint64_t seq = 0; seq < n;) {
    switch (p % 3) {
      case 0: {
        auto loan = q.reserve(30s);
        if (!loan) return false;
        const std::size_t len =
            zipc::test::stress_fill(loan.data().data(), loan.size(), static_cast<std::uint32_t>(p), 0, seq);
        if (loan.commit(len).status != Status::ok) return false;
        ++seq;
        break;
      }
      case 1: {
        constexpr std::size_t kBatch = 8;
        std::vector<std::vector<std::byte>> store;
        std::vector<std::span<const std::byte>> msgs;
        for (std::size_t i = 0; i < kBatch && seq + i < n; ++i) {
          store.emplace_back(q.block_size());
          store.back().resize(
              zipc::test::stress_fill(store.back().data(), q.block_size(), static_cast<std::uint32_t>(p), 0, seq + i));
        }
        for (auto& m : store) msgs.emplace_back(m);
        std::size_t done = 0;
        while (done < msgs.size()) {
          const std::size_t k = q.send_batch(std::span(msgs).subspan(done), 30s);
          if (k == 0) return false;
          done += k;
        }
        seq += msgs.size();
        break;
      }
      default: {
        const std::size_t len = zipc::test::stress_fill(buf.data(), buf.size(), static_cast<std::uint32_t>(p), 0, seq);
        if (q.send(std::span(buf).first(len), 30s) != Status::ok) return false;
        ++seq;
      }
    }
  }
  return true;
}

// Consumer body: checks each message and marks it in seen (count per message).
// Returns the number of problems (bad checksum, out of order, bad producer).
std::uint64_t consume(Queue& q, int c, const StressPlan& plan, std::atomic<std::uint8_t>* seen) {
  std::vector<std::int64_t> last(static_cast<std::size_t>(plan.producers), -1);
  std::uint64_t bad = 0;
  auto take = [&](std::span<const std::byte> m) {
    zipc::test::StressHeader h{};
    if (!zipc::test::stress_check(m, h) || h.producer >= static_cast<std::uint32_t>(plan.producers) ||
        h.seq >= plan.per_producer) {
      ++bad;
      return;
    }
    if (static_cast<std::int64_t>(h.seq) <= last[h.producer]) ++bad;  // FIFO per producer
    last[h.producer] = static_cast<std::int64_t>(h.seq);
    seen[h.producer * plan.per_producer + h.seq].fetch_add(1, std::memory_order_relaxed);
  };
  std::vector<std::byte> buf(q.block_size());
  for (;;) {
    switch (c % 3) {
      case 0: {
        auto loan = q.acquire(60s);
        if (!loan) return loan.status() == Status::closed ? bad : bad + 1;
        take(loan.data());
        break;
      }
      case 1: {
        Status st = Status::ok;
        const std::size_t n = q.recv_batch(16, 60s, take, &st);
        if (n == 0) return st == Status::closed ? bad : bad + 1;
        break;
      }
      default: {
        auto r = q.recv(buf, 60s);
        if (!r.ok()) return r.status == Status::closed ? bad : bad + 1;
        take(std::span(buf).first(r.size));
      }
    }
  }
}

void check_seen(const StressPlan& plan, const std::atomic<std::uint8_t>* seen) {
  std::uint64_t missing = 0, dup = 0;
  for (std::uint64_t i = 0; i < plan.per_producer * static_cast<std::uint64_t>(plan.producers); ++i) {
    const auto v = seen[i].load();
    if (v == 0) ++missing;
    if (v > 1) ++dup;
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(dup, 0u);
}

zipc::QueueOptions stress_options(const StressPlan& plan) {
  auto o = zipc::test::queue_options(plan.mode, 256, 120);
  o.max_participants = static_cast<std::uint32_t>(plan.producers + plan.consumers + 2);
  return o;
}

void run_processes(const StressPlan& plan) {
  zipc::test::TempName name("qs");
  zipc::test::TempName seen_name("qseen");
  const std::uint64_t total = plan.per_producer * static_cast<std::uint64_t>(plan.producers);
  zipc::SegmentSpec spec;
  spec.payload_size = total;
  auto seen_seg = zipc::Segment::create(seen_name.str(), spec, nullptr);
  auto* seen = reinterpret_cast<std::atomic<std::uint8_t>*>(seen_seg.payload());
  auto sut = Queue::create(name.str(), stress_options(plan), Role::none);

  std::vector<zipc::test::Child> consumers, producers;
  for (int c = 0; c < plan.consumers; ++c) {
    consumers.push_back(zipc::test::spawn([&, c] {
      auto q = Queue::open(name.str(), Role::consumer);
      const std::uint64_t bad = consume(q, c, plan, seen);
      if (bad) zipc::test::report("consumer " + std::to_string(c) + ": " + std::to_string(bad) + " bad messages");
      return bad ? 1 : 0;
    }));
  }
  for (int p = 0; p < plan.producers; ++p) {
    producers.push_back(zipc::test::spawn([&, p] {
      auto q = Queue::open(name.str(), Role::producer);
      return produce(q, p, plan.per_producer) ? 0 : 1;
    }));
  }
  for (auto& k : producers) {
    auto r = k.wait(std::chrono::seconds(600));
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  sut.close();
  for (auto& k : consumers) {
    auto r = k.wait(std::chrono::seconds(600));
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  check_seen(plan, seen);
  const auto st = sut.stats();
  EXPECT_EQ(st.sent, total);
  EXPECT_EQ(st.received, total);
  EXPECT_EQ(st.redelivered, 0u);
  EXPECT_EQ(st.abandoned, 0u);
}

void run_threads(const StressPlan& plan) {
  zipc::test::TempName name("qt");
  const std::uint64_t total = plan.per_producer * static_cast<std::uint64_t>(plan.producers);
  std::vector<std::atomic<std::uint8_t>> seen(total);
  auto sut = Queue::create(name.str(), stress_options(plan), Role::none);
  std::atomic<std::uint64_t> bad{0};
  std::vector<std::thread> consumers, producers;
  for (int c = 0; c < plan.consumers; ++c) {
    consumers.emplace_back([&, c] {
      auto q = Queue::open(name.str(), Role::consumer);
      bad += consume(q, c, plan, seen.data());
    });
  }
  for (int p = 0; p < plan.producers; ++p) {
    producers.emplace_back([&, p] {
      auto q = Queue::open(name.str(), Role::producer);
      if (!produce(q, p, plan.per_producer)) ++bad;
    });
  }
  for (auto& t : producers) t.join();
  sut.close();
  for (auto& t : consumers) t.join();
  EXPECT_EQ(bad.load(), 0u);
  check_seen(plan, seen.data());
  EXPECT_EQ(sut.stats().received, total);
}

}  // namespace

TEST(QueueStress, OneProducerOneConsumerSingleModeProcessesDeliverEverythingOnceInOrder) {
  run_processes({zipc::test::kSpsc, 1, 1, scaled(1'000'000)});
}
TEST(QueueStress, OneByOneMultiModeProcessesDeliverEverythingOnceInOrder) {
  run_processes({zipc::test::kMpmc, 1, 1, scaled(1'000'000)});
}
TEST(QueueStress, TwoByTwoProcessesDeliverEverythingOncePerProducerInOrder) {
  run_processes({zipc::test::kMpmc, 2, 2, scaled(500'000)});
}
TEST(QueueStress, FourByFourProcessesDeliverEverythingOncePerProducerInOrder) {
  run_processes({zipc::test::kMpmc, 4, 4, scaled(250'000)});
}
TEST(QueueStress, EightByEightProcessesDeliverEverythingOncePerProducerInOrder) {
  run_processes({zipc::test::kMpmc, 8, 8, scaled(125'000)});
}
TEST(QueueStress, OneProducerFourConsumersProcessesDeliverEverythingOnceInOrder) {
  run_processes({zipc::test::kSpmc, 1, 4, scaled(500'000)});
}
TEST(QueueStress, FourProducersOneConsumerProcessesDeliverEverythingOncePerProducerInOrder) {
  run_processes({zipc::test::kMpsc, 4, 1, scaled(500'000)});
}

TEST(QueueStressThreads, OneByOneSingleModeThreadsDeliverEverythingOnceInOrder) {
  run_threads({zipc::test::kSpsc, 1, 1, scaled(500'000)});
}
TEST(QueueStressThreads, FourProducersOneConsumerThreadsDeliverEverythingOncePerProducerInOrder) {
  run_threads({zipc::test::kMpsc, 4, 1, scaled(250'000)});
}
TEST(QueueStressThreads, TwoByTwoThreadsDeliverEverythingOncePerProducerInOrder) {
  run_threads({zipc::test::kMpmc, 2, 2, scaled(250'000)});
}
TEST(QueueStressThreads, FourByFourThreadsDeliverEverythingOncePerProducerInOrder) {
  run_threads({zipc::test::kMpmc, 4, 4, scaled(125'000)});
}
TEST(QueueStressThreads, EightByEightThreadsDeliverEverythingOncePerProducerInOrder) {
  run_threads({zipc::test::kMpmc, 8, 8, scaled(60'000)});
}

}  // namespace queue_stress_test
