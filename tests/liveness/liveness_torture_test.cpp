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
  o.capacity = 64;
  o.producers = qc.producers;
  o.consumers = qc.consumers;
  o.recovery_time = 50ms;
  o.max_participants = 16;
  { Queue q = Queue::create(name.str(), o, Role::none); }  // the segment outlives its creator handle
  const std::size_t ids = static_cast<std::size_t>(rounds) * np * kPerChild;
  SharedArray<std::uint8_t> seen(ids);
  SharedFlags confirmed(static_cast<std::size_t>(rounds) * np);  // ids confirmed sent per producer child
  SharedFlags ctl(kCtlWords);
  ASSERT_TRUE(seen.ok() && confirmed.ok() && ctl.ok());
  std::mt19937_64 rng(test::test_seed());
  std::uint64_t kills = 0;
  for (int round = 0; round < rounds; ++round) {
    ctl[kStopProducers].store(0);
    ctl[kStopConsumers].store(0);
    std::vector<test::Child> producers, consumers;
    for (std::size_t c = 0; c < nc; ++c) {
      const std::uint64_t seed = rng();
      consumers.push_back(test::spawn([&, seed]() {
        Queue q = Queue::open(name.str(), Role::consumer);
        std::mt19937_64 r(seed);
        std::array<std::byte, 16> buf{};
        auto last = std::chrono::steady_clock::now();
        for (;;) {
          const IoResult res = q.recv(buf, mixed_timeout(r));
          const auto now = std::chrono::steady_clock::now();
          if (res.status == Status::ok) {
            std::uint64_t id = 0;
            std::memcpy(&id, buf.data(), sizeof id);
            if (id < seen.size()) seen[id].fetch_add(1);
            test::raise_max(ctl[kLongestGapUs], static_cast<std::uint64_t>(
                                                    std::chrono::duration_cast<std::chrono::microseconds>(now - last).count()));
            last = now;
          } else if (ctl[kStopConsumers].load() != 0) {
            return 0;
          } else if (res.status != Status::empty && res.status != Status::timeout) {
            return 3;
          }
          if (res.status != Status::ok && ctl[kStopProducers].load() == 0) last = now;  // idle is not a stall
        }
      }));
    }
    for (std::size_t k = 0; k < np; ++k) {
      const std::size_t child = static_cast<std::size_t>(round) * np + k;
      const std::uint64_t seed = rng();
      producers.push_back(test::spawn([&, child, seed]() {
        Queue q = Queue::open(name.str(), Role::producer);
        std::mt19937_64 r(seed);
        for (std::uint64_t i = 0; i < kPerChild && ctl[kStopProducers].load() == 0;) {
          const std::uint64_t id = child * kPerChild + i;
          const Status st = q.send(std::as_bytes(std::span(&id, 1)), mixed_timeout(r));
          if (st == Status::ok) confirmed[child].store(++i);
          else if (st != Status::full && st != Status::timeout) return 3;
        }
        return 0;
      }));
    }
    // One victim per round, at a random time.
    std::this_thread::sleep_for(std::chrono::microseconds(500 + rng() % 15000));
    const bool kill_consumer = rng() % 2 == 0;
    const std::size_t victim_index = kill_consumer ? rng() % nc : rng() % np;
    test::Child& victim = kill_consumer ? consumers[victim_index] : producers[victim_index];
    victim.kill(SIGKILL);
    (void)victim.wait();
    ++kills;
    if (kill_consumer) ctl[kKilledConsumers].fetch_add(1);
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 5000));
    ctl[kStopProducers].store(1);
    for (std::size_t k = 0; k < np; ++k) {
      if (!kill_consumer && k == victim_index) continue;
      const test::ChildResult r = producers[k].wait(30s);
      EXPECT_TRUE(r.exited && r.exit_code == 0) << "producer exit " << r.exit_code << " signal " << r.signal
                                                 << (r.timed_out ? " (timed out)" : "") << ": " << r.output;
    }
    ctl[kStopConsumers].store(1);
    for (std::size_t k = 0; k < nc; ++k) {
      if (kill_consumer && k == victim_index) continue;
      const test::ChildResult r = consumers[k].wait(30s);
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
    if (last == Status::ok) {
      std::uint64_t id = 0;
      std::memcpy(&id, buf.data(), sizeof id);
      if (id < seen.size()) seen[id].fetch_add(1);
    }
  }
  EXPECT_EQ(last, Status::closed) << "close() did not drain";
  // Reconcile the ledger.
  std::uint64_t missing = 0, duplicates = 0, confirmed_total = 0;
  for (std::size_t child = 0; child < confirmed.size(); ++child) {
    const std::uint64_t n = confirmed[child].load();
    confirmed_total += n;
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
  std::printf("[ info ] queue %s: %d rounds, %llu kills, %llu confirmed, %llu missing from the ledger (killed "
              "consumers %llu), %llu duplicates, sent %llu received %llu redelivered %llu abandoned %llu, longest "
              "stall %.1f ms\n",
              qc.label, rounds, static_cast<unsigned long long>(kills),
              static_cast<unsigned long long>(confirmed_total), static_cast<unsigned long long>(missing),
              static_cast<unsigned long long>(ctl[kKilledConsumers].load()),
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
class TopicTorture : public ::testing::TestWithParam<PublisherKind> {};

TEST_P(TopicTorture, RandomPublisherKillsLoseNoConfirmedMessage) {
  const PublisherKind kind = GetParam();
  const bool multi = kind == PublisherKind::multi;
  const int rounds = test::torture_rounds(20);
  const std::size_t np = multi ? 3 : 1;
  constexpr std::uint64_t kMax = 300;  // per publisher per round: never fills the ring
  test::TempName name(multi ? "lv.tt.multi" : "lv.tt.single");
  TopicOptions o;
  o.capacity = 1 << 20;
  o.max_message = 64;
  o.publishers = kind;
  o.recovery_time = 50ms;
  Topic t = Topic::create(name.str(), o);
  Subscriber sub = t.subscribe();
  SharedFlags confirmed(static_cast<std::size_t>(rounds) * np);
  ASSERT_TRUE(confirmed.ok());
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(rounds) * np * kMax, 0);
  std::mt19937_64 rng(test::test_seed());
  double longest_ms = 0;
  std::uint64_t last_seq = 0, read_ok = 0;
  bool ordered = true;
  for (int round = 0; round < rounds; ++round) {
    std::vector<test::Child> pubs;
    for (std::size_t k = 0; k < np; ++k) {
      const std::size_t child = static_cast<std::size_t>(round) * np + k;
      const std::uint64_t seed = rng();
      pubs.push_back(test::spawn([&, child, seed]() {
        Topic tt = Topic::open(name.str(), o);
        Publisher p = tt.publisher();
        std::mt19937_64 r(seed);
        for (std::uint64_t i = 0; i < kMax; ++i) {
          const std::uint64_t id = child * kMax + i;
          const auto timeout = mixed_timeout(r);
          const PublishResult pr = timeout.count() == 0 ? p.try_publish(std::as_bytes(std::span(&id, 1)))
                                                        : p.publish(std::as_bytes(std::span(&id, 1)), timeout);
          if (!pr.ok()) return 3;
          confirmed[child].store(i + 1);
          if (r() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(r() % 200));
        }
        return 0;
      }));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 3000));
    const std::size_t victim_index = rng() % np;
    pubs[victim_index].kill(SIGKILL);
    for (std::size_t k = 0; k < np; ++k) {
      const test::ChildResult r = pubs[k].wait(30s);
      if (k == victim_index && r.signal == SIGKILL) continue;
      EXPECT_TRUE(r.exited && r.exit_code == 0) << "publisher exit " << r.exit_code << " signal " << r.signal
                                                 << (r.timed_out ? " (timed out)" : "") << ": " << r.output;
    }
    // Read until every confirmed message of this round arrived (holes are skipped).
    std::uint64_t want = 0;
    for (std::size_t k = 0; k < np; ++k) want += confirmed[static_cast<std::size_t>(round) * np + k].load();
    std::uint64_t got = 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (test::ms_since(t0) < 30000) {
      std::array<std::byte, 64> buf{};
      const auto tr = std::chrono::steady_clock::now();
      const ReadResult rr = sub.read(buf, mixed_timeout(rng) == 0ns ? 10ms : 1s);
      if (rr.status == Status::ok) {
        longest_ms = std::max(longest_ms, test::ms_since(tr));
        if (read_ok > 0 && rr.sequence != last_seq + 1) ordered = false;
        last_seq = rr.sequence;
        ++read_ok;
        std::uint64_t id = 0;
        std::memcpy(&id, buf.data(), sizeof id);
        if (id / kMax / np == static_cast<std::uint64_t>(round) && id < seen.size()) {
          ++seen[id];
          ++got;
        }
      } else if (got >= want) {
        break;
      }
    }
  }
  std::uint64_t missing = 0, duplicates = 0;
  for (std::size_t child = 0; child < confirmed.size(); ++child) {
    const std::uint64_t n = confirmed[child].load();
    for (std::uint64_t i = 0; i < kMax; ++i) {
      const std::uint8_t s = seen[child * kMax + i];
      if (i < n && s == 0) ++missing;
      if (s > 1) ++duplicates;
    }
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_TRUE(ordered) << "sequence numbers skipped or repeated";
  std::printf("[ info ] topic %s: %d rounds, %llu read, holes %llu, longest read behind a kill %.1f ms\n",
              multi ? "multi" : "single", rounds, static_cast<unsigned long long>(read_ok),
              static_cast<unsigned long long>(t.abandoned()), longest_ms);
}

INSTANTIATE_TEST_SUITE_P(BothKinds, TopicTorture, ::testing::Values(PublisherKind::single, PublisherKind::multi),
                         [](const auto& info) {
                           return std::string(info.param == PublisherKind::multi ? "multi" : "single");
                         });

}  // namespace
}  // namespace zipc
