// Random-kill torture per channel: participants are forked processes, one is
// SIGKILLed at a random time each round, survivors mix try_*, 10 ms and 1 s
// waits, and the ledgers (shared memory outside the channel) are reconciled:
// nothing lost, duplicates never above `redelivered`, close() drains. The
// longest stall a survivor saw is printed, not asserted. Rounds:
// ZIPC_TORTURE_ROUNDS (default 20; the soak runs 1000).
#include <gtest/gtest.h>
#include <signal.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "liveness_support.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

namespace zipc {
namespace liveness_torture_test {
namespace {

using namespace std::chrono_literals;
using test::SharedArray;
using test::SharedFlags;

constexpr std::uint64_t kPerChild = 2000;  // ids a producer child may send in one round

// Shared control words of one torture run.
enum Ctl : std::size_t { kStopProducers, kStopConsumers, kLongestGapUs, kKilledConsumers, kCtlWords };

std::chrono::nanoseconds mixed_timeout(std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0: return 0ns;
    case 1: return 10ms;
    default: return 1s;
  }
}

struct QueueCase {
  Multiplicity producers;
  Multiplicity consumers;
  const char* label;
};

class QueueTorture : public ::testing::TestWithParam<QueueCase> {};

TEST_P(QueueTorture, RandomKillsLoseNothingAndCloseDrains) {
  const QueueCase qc = GetParam();
  const int rounds = test::torture_rounds(20);
  const std::size_t np = qc.producers == Multiplicity::multi ? 2 : 1;
  const std::size_t nc = qc.consumers == Multiplicity::multi ? 2 : 1;
  test::TempName name(std::string("lv.tq.") + qc.label);
  QueueOptions o;
  o.block_size = 16;
  o.block_count = 64;
  o.producers = qc.producers;
  o.consumers = qc.consumers;
  o.recovery_time = 50ms;
  o.max_participants = 16;
  { Queue q = Queue::create(name.str(), o, Role::none); }  // the segment outlives its creator handle
  const std::size_t per_round = np + 1;                    // producer children per round (a replacement included)
  const std::size_t ids = static_cast<std::size_t>(rounds) * per_round * kPerChild;
  SharedArray<std::uint8_t> seen(ids);
  SharedFlags confirmed(static_cast<std::size_t>(rounds) * per_round);  // ids confirmed sent per producer child
  SharedFlags ctl(kCtlWords);
  ASSERT_TRUE(seen.ok() && confirmed.ok() && ctl.ok());
  std::mt19937_64 rng(test::test_seed());
  std::uint64_t kills = 0;
  const auto mark = [&](const std::byte* data) {
    std::uint64_t id = 0;
    std::memcpy(&id, data, sizeof id);
    if (id < seen.size()) seen[id].fetch_add(1);
  };
  // A consumer: copies (recv) or holds loans for a while (acquire), with
  // try_*, 10 ms and 1 s waits; records every message in the ledger and the
  // longest gap between two deliveries while producers run.
  const auto spawn_consumer = [&](std::uint64_t seed) {
    return test::spawn([&, seed]() {
      Queue q = Queue::open(name.str(), Role::consumer);
      std::mt19937_64 r(seed);
      std::array<std::byte, 16> buf{};
      auto last = std::chrono::steady_clock::now();
      for (;;) {
        const bool stopping = ctl[kStopConsumers].load() != 0;
        const auto timeout = stopping ? 10ms : mixed_timeout(r);
        Status st;
        if (r() % 2 == 0) {
          const IoResult res = q.recv(buf, timeout);
          st = res.status;
          if (st == Status::ok) mark(buf.data());
        } else {
          QueueReadLoan in = q.acquire(timeout);
          st = in.status();
          if (st == Status::ok) {
            mark(in.data().data());
            if (r() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(r() % 1000));  // hold it
          }
        }
        const auto now = std::chrono::steady_clock::now();
        if (st == Status::ok) {
          if (ctl[kStopProducers].load() == 0) {
            test::raise_max(
                ctl[kLongestGapUs],
                static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - last).count()));
          }
          last = now;
        } else if (stopping) {
          return 0;
        } else if (st != Status::empty && st != Status::timeout) {
          test::report(std::string("status ") + to_string(st));
          return 3;
        }
      }
    });
  };
  // A producer: copies (send) or fills a loan and holds it a while before commit.
  const auto spawn_producer = [&](std::size_t child, std::uint64_t seed) {
    return test::spawn([&, child, seed]() {
      Queue q = Queue::open(name.str(), Role::producer);
      std::mt19937_64 r(seed);
      for (std::uint64_t i = 0; i < kPerChild && ctl[kStopProducers].load() == 0;) {
        const std::uint64_t id = child * kPerChild + i;
        Status st;
        if (r() % 2 == 0) {
          st = q.send(std::as_bytes(std::span(&id, 1)), mixed_timeout(r));
        } else {
          QueueWriteLoan loan = q.reserve(mixed_timeout(r));
          st = loan.status();
          if (st == Status::ok) {
            std::memcpy(loan.data().data(), &id, sizeof id);
            if (r() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(r() % 1000));  // hold it
            st = loan.commit(sizeof id).status;
          }
        }
        if (st == Status::ok) {
          confirmed[child].store(++i);
        } else if (st != Status::full && st != Status::timeout) {
          test::report(std::string("status ") + to_string(st) + " at message " + std::to_string(i));
          return 3;
        }
      }
      return 0;
    });
  };
  for (int round = 0; round < rounds; ++round) {
    ctl[kStopProducers].store(0);
    ctl[kStopConsumers].store(0);
    std::vector<test::Child> producers, consumers;
    for (std::size_t c = 0; c < nc; ++c) consumers.push_back(spawn_consumer(rng()));
    for (std::size_t k = 0; k < np; ++k) producers.push_back(spawn_producer(round * per_round + k, rng()));
    // One victim per round, at a random time, replaced at once by a survivor
    // of the same role (single modes: it takes over at attach).
    std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 10000));
    const bool kill_consumer = rng() % 2 == 0;
    const std::size_t victim_index = kill_consumer ? rng() % nc : rng() % np;
    test::Child& victim = kill_consumer ? consumers[victim_index] : producers[victim_index];
    victim.kill(SIGKILL);
    (void)victim.wait();
    ++kills;
    if (kill_consumer) {
      ctl[kKilledConsumers].fetch_add(1);
      consumers[victim_index] = spawn_consumer(rng());
    } else {
      producers[victim_index] = spawn_producer(round * per_round + np, rng());
    }
    // Long enough for the survivors to stall behind what the victim held and recover it.
    std::this_thread::sleep_for(std::chrono::microseconds(60000 + rng() % 50000));
    ctl[kStopProducers].store(1);
    for (auto& p : producers) {
      const test::ChildResult r = p.wait(30s);
      EXPECT_TRUE(r.exited && r.exit_code == 0) << "producer exit " << r.exit_code << " signal " << r.signal
                                                << (r.timed_out ? " (timed out)" : "") << ": " << r.output;
    }
    ctl[kStopConsumers].store(1);
    {
      // Wake consumers sleeping in a 1 s wait: one message each, outside the ledger.
      Queue waker = Queue::open(name.str(), Role::producer);
      const std::uint64_t poison = ~std::uint64_t{0};
      for (std::size_t c = 0; c < nc; ++c) (void)waker.send(std::as_bytes(std::span(&poison, 1)), 100ms);
    }
    for (auto& c : consumers) {
      const test::ChildResult r = c.wait(30s);
      EXPECT_TRUE(r.exited && r.exit_code == 0) << "consumer exit " << r.exit_code << " signal " << r.signal
                                                << (r.timed_out ? " (timed out)" : "") << ": " << r.output;
    }
  }
  // The drain: close, then receive until closed (a survivor recovers what the
  // dead still hold).
  Queue q = Queue::open(name.str(), Role::consumer);
  q.close();
  std::array<std::byte, 16> buf{};
  Status last = Status::ok;
  const auto t0 = std::chrono::steady_clock::now();
  while (test::ms_since(t0) < 30000) {
    const IoResult res = q.recv(buf, 1s);
    last = res.status;
    if (last == Status::closed) break;
    if (last == Status::ok) mark(buf.data());
  }
  EXPECT_EQ(last, Status::closed) << "close() did not drain";
  // Reconcile the ledger.
  std::uint64_t missing = 0, duplicates = 0, confirmed_total = 0;
  for (std::size_t child = 0; child < confirmed.size(); ++child) {
    const std::uint64_t n = confirmed[child].load();
    confirmed_total += n;  // (a producer killed between commit and ledger sent one more)
    for (std::uint64_t i = 0; i < kPerChild; ++i) {
      const std::uint8_t s = seen[child * kPerChild + i].load();
      if (i < n && s == 0) ++missing;
      if (s > 1) duplicates += s - 1;
    }
  }
  const QueueStats st = q.stats();
  // A consumer killed between taking a message and writing the ledger loses
  // at most that one message from the ledger (the queue delivered it).
  EXPECT_LE(missing, ctl[kKilledConsumers].load()) << "messages lost";
  EXPECT_LE(duplicates, st.redelivered);
  if (qc.producers == Multiplicity::multi || qc.consumers == Multiplicity::multi) {
    EXPECT_EQ(st.received, st.sent) << "counters after a full drain (redelivered " << st.redelivered << ")";
  }
  std::printf(
      "[ info ] queue %s: %d rounds, %llu kills, %llu confirmed, %llu missing from the ledger (killed "
      "consumers %llu), %llu duplicates, sent %llu received %llu redelivered %llu abandoned %llu, longest "
      "stall %.1f ms\n",
      qc.label, rounds, static_cast<unsigned long long>(kills), static_cast<unsigned long long>(confirmed_total),
      static_cast<unsigned long long>(missing), static_cast<unsigned long long>(ctl[kKilledConsumers].load()),
      static_cast<unsigned long long>(duplicates), static_cast<unsigned long long>(st.sent),
      static_cast<unsigned long long>(st.received), static_cast<unsigned long long>(st.redelivered),
      static_cast<unsigned long long>(st.abandoned), static_cast<double>(ctl[kLongestGapUs].load()) / 1000.0);
}

INSTANTIATE_TEST_SUITE_P(AllModes, QueueTorture,
                         ::testing::Values(QueueCase{Multiplicity::single, Multiplicity::single, "spsc"},
                                           QueueCase{Multiplicity::multi, Multiplicity::single, "mpsc"},
                                           QueueCase{Multiplicity::single, Multiplicity::multi, "spmc"},
                                           QueueCase{Multiplicity::multi, Multiplicity::multi, "mpmc"}),
                         [](const auto& info) { return std::string(info.param.label); });

// Topic: publishers killed at random (one per round); a reliable subscriber in
// the parent reads everything between rounds. Every confirmed message is seen
// exactly once, in sequence order.
class TopicTorture : public ::testing::TestWithParam<Multiplicity> {};

TEST_P(TopicTorture, RandomPublisherKillsLoseNoConfirmedMessage) {
  const Multiplicity kind = GetParam();
  const bool multi = kind == Multiplicity::multi;
  const int rounds = test::torture_rounds(20);
  const std::size_t np = multi ? 3 : 1;
  const std::size_t per_round = np + 1;  // a replacement included
  constexpr std::uint64_t kMax = 1500;   // per publisher child
  test::TempName name(multi ? "lv.tt.multi" : "lv.tt.single");
  TopicOptions o;
  o.capacity_bytes = 1 << 16;
  o.max_message_size = 64;
  o.publishers = kind;
  o.recovery_time = 50ms;
  Topic t = Topic::create(name.str(), o);
  SharedFlags confirmed(static_cast<std::size_t>(rounds) * per_round);
  SharedArray<std::uint8_t> seen(static_cast<std::size_t>(rounds) * per_round * kMax);
  SharedFlags ctl(8);  // 0 publishing, 1 done, 2 longest gap us, 3 read, 4 bad sequence, 5 ready
  ASSERT_TRUE(confirmed.ok() && seen.ok() && ctl.ok());
  std::mt19937_64 rng(test::test_seed());
  // The reliable reader: a survivor for the whole run (try_read, 10 ms, 1 s).
  const std::uint64_t reader_seed = rng();
  test::Child reader = test::spawn([&]() {
    Topic tt = Topic::open(name.str(), o);
    Subscriber sub = tt.subscribe();
    ctl[5].store(1);
    std::mt19937_64 r(reader_seed);
    std::array<std::byte, 64> buf{};
    auto last = std::chrono::steady_clock::now();
    std::uint64_t next_seq = 0, n = 0, holes_seen = 0;
    for (;;) {
      const bool done = ctl[1].load() != 0;
      const auto timeout = done ? 1s : mixed_timeout(r);
      const ReadResult rr = timeout.count() == 0 ? sub.try_read(buf) : sub.read(buf, timeout);
      const auto now = std::chrono::steady_clock::now();
      if (rr.status == Status::ok) {
        if (n > 0 && rr.sequence != next_seq) ctl[4].fetch_add(1);
        next_seq = rr.sequence + 1;
        ++n;
        std::uint64_t id = 0;
        std::memcpy(&id, buf.data(), sizeof id);
        if (id < seen.size()) seen[id].fetch_add(1);
        if (ctl[0].load() != 0) {
          const auto gap =
              static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - last).count());
          if (gap > ctl[2].load()) ctl[6].store(sub.abandoned() != holes_seen ? 1 : 0);  // behind a hole?
          test::raise_max(ctl[2], gap);
        }
        holes_seen = sub.abandoned();
        last = now;
      } else if (done) {
        ctl[3].store(n);
        return 0;
      } else if (rr.status != Status::empty && rr.status != Status::timeout) {
        test::report(std::string("status ") + to_string(rr.status));
        return 3;
      }
      if (ctl[0].load() == 0) last = now;  // idle between rounds is not a stall
    }
  });
  ASSERT_TRUE(test::eventually([&] { return ctl[5].load() == 1; }, 10s));
  const auto spawn_publisher = [&](std::size_t child, std::uint64_t seed) {
    return test::spawn([&, child, seed]() {
      Topic tt = Topic::open(name.str(), o);
      Publisher p = tt.publisher();
      std::mt19937_64 r(seed);
      for (std::uint64_t i = 0; i < kMax;) {
        const std::uint64_t id = child * kMax + i;
        const auto timeout = mixed_timeout(r);
        Status st;
        if (r() % 2 == 0) {
          const CommitResult pr = timeout.count() == 0 ? p.try_publish(std::as_bytes(std::span(&id, 1)))
                                                       : p.publish(std::as_bytes(std::span(&id, 1)), timeout);
          st = pr.status;
        } else {
          TopicWriteLoan l = timeout.count() == 0 ? p.try_reserve(sizeof id) : p.reserve(sizeof id, timeout);
          st = l.status();
          if (l) {
            std::memcpy(l.data().data(), &id, sizeof id);
            if (r() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(r() % 1000));  // hold the claim
            st = l.commit(sizeof id).status;
          }
        }
        if (st == Status::ok) {
          confirmed[child].store(++i);
        } else if (st != Status::full && st != Status::timeout) {
          test::report(std::string("status ") + to_string(st) + " at message " + std::to_string(i));
          return 3;
        }
      }
      return 0;
    });
  };
  for (int round = 0; round < rounds; ++round) {
    ctl[0].store(1);
    std::vector<test::Child> pubs;
    for (std::size_t k = 0; k < np; ++k) pubs.push_back(spawn_publisher(round * per_round + k, rng()));
    std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 10000));
    const std::size_t victim_index = rng() % np;
    pubs[victim_index].kill(SIGKILL);
    (void)pubs[victim_index].wait();
    pubs[victim_index] = spawn_publisher(round * per_round + np, rng());
    // (the survivors keep publishing: the reader stalls behind a dead claim until recovery)
    for (auto& p : pubs) {
      const test::ChildResult r = p.wait(60s);
      EXPECT_TRUE(r.exited && r.exit_code == 0) << "publisher exit " << r.exit_code << " signal " << r.signal
                                                << (r.timed_out ? " (timed out)" : "") << ": " << r.output;
    }
    ctl[0].store(0);
  }
  ctl[1].store(1);
  const test::ChildResult rr = reader.wait(60s);
  EXPECT_TRUE(rr.exited && rr.exit_code == 0) << "reader exit " << rr.exit_code << ": " << rr.output;
  std::uint64_t missing = 0, duplicates = 0, confirmed_total = 0;
  for (std::size_t child = 0; child < confirmed.size(); ++child) {
    const std::uint64_t n = confirmed[child].load();
    confirmed_total += n;
    for (std::uint64_t i = 0; i < kMax; ++i) {
      const std::uint8_t s = seen[child * kMax + i].load();
      if (i < n && s == 0) ++missing;
      if (s > 1) ++duplicates;
    }
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_EQ(ctl[4].load(), 0u) << "sequence numbers skipped or repeated";
  std::printf(
      "[ info ] topic %s: %d rounds, %d kills, %llu confirmed, %llu read, holes %llu, longest gap between deliveries "
      "%.1f ms "
      "(%s)\n",
      multi ? "multi" : "single", rounds, rounds, static_cast<unsigned long long>(confirmed_total),
      static_cast<unsigned long long>(ctl[3].load()), static_cast<unsigned long long>(t.abandoned()),
      static_cast<double>(ctl[2].load()) / 1000.0, ctl[6].load() != 0 ? "behind a hole" : "no hole");
}

INSTANTIATE_TEST_SUITE_P(BothKinds, TopicTorture, ::testing::Values(Multiplicity::single, Multiplicity::multi),
                         [](const auto& info) {
                           return std::string(info.param == Multiplicity::multi ? "multi" : "single");
                         });

}  // namespace

}  // namespace liveness_torture_test
}  // namespace zipc
