// Random-kill torture of a durable reliable subscriber: one publisher process
// publishes ids 0..N-1 (mixing try_publish, 10 ms and 1 s waits) while the
// subscriber process, named "torture", is SIGKILLed at random times (attaching,
// reading, holding a loan) and restarted within its grace. The ledger (shared
// memory outside the topic) is reconciled: every id delivered, in order, each
// restart resuming at the last message delivered (its loan was not released)
// or the one after it; repeats never above the kills. The publisher's longest
// wait is printed, not asserted. Rounds: ZIPC_TORTURE_ROUNDS (default 20).
#include <gtest/gtest.h>
#include <signal.h>

#include <array>
#include <cstring>
#include <random>
#include <string>

#include "liveness_support.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

namespace zipc {
namespace topic_durable_torture_test {
namespace {

using namespace std::chrono_literals;
using test::SharedArray;
using test::SharedFlags;

// Ledger words.
enum Word : std::size_t {
  kLastSeq,      // last sequence delivered + 1 (0: none yet)
  kBadOrder,     // deliveries out of order (not last or last + 1 after a restart, not last + 1 otherwise)
  kRepeats,      // restarts that began with the last message again
  kReady,        // the first subscriber has joined
  kPublished,    // messages the publisher confirmed
  kLongestWait,  // the publisher's longest blocked publish, us
  kDone,         // the final subscriber read everything
  kWords
};

std::chrono::nanoseconds mixed(std::mt19937_64& r) {
  switch (r() % 3) {
    case 0: return 0ns;
    case 1: return 10ms;
    default: return 1s;
  }
}

TEST(TopicDurableTorture, KilledAndRestartedDurableSubscriberMissesNothingAndRepeatsAtMostOnePerKill) {
  const int rounds = test::torture_rounds(20);
  const std::uint64_t total = 400 * static_cast<std::uint64_t>(rounds) + 1000;
  test::TempName name("lv.durable");
  TopicOptions o;
  o.capacity_bytes = 8192;  // small: the publisher is held back by the subscriber often
  o.max_message_size = 64;
  o.recovery_time = 50ms;
  Topic t = Topic::create(name.str(), o);
  SharedFlags ledger(kWords);
  SharedArray<std::uint8_t> seen(total);
  ASSERT_TRUE(ledger.ok() && seen.ok());
  std::mt19937_64 rng(test::test_seed());
  SubscribeOptions so;
  so.from = From::oldest();
  so.durable_name = "torture";
  so.durable_grace = 60s;  // every restart comes within it
  // final: read to the end and exit; otherwise read until killed.
  const auto subscriber = [&](std::uint64_t seed, bool final) {
    return test::spawn([&, seed, final]() {
      Topic tt = Topic::open(name.str(), o);
      Subscriber sub = tt.subscribe(so);
      ledger[kReady].store(1);
      std::mt19937_64 r(seed);
      bool first = true;
      for (;;) {
        const auto timeout = final ? 1s : mixed(r);
        TopicReadLoan l = timeout.count() == 0 ? sub.try_acquire() : sub.acquire(timeout);
        if (!l) {
          if (l.status() != Status::empty && l.status() != Status::timeout) {
            test::report(std::string("acquire: ") + to_string(l.status()));
            return 3;
          }
          continue;
        }
        std::uint64_t id = ~0ull;
        if (l.size() == sizeof id) std::memcpy(&id, l.data().data(), sizeof id);
        if (id >= seen.size() || id != l.sequence()) return 4;
        const std::uint64_t last = ledger[kLastSeq].load();  // last delivered + 1
        if (first && last != 0 && id + 1 == last) {
          ledger[kRepeats].fetch_add(1);
        } else if (id != last) {
          ledger[kBadOrder].fetch_add(1);
        }
        first = false;
        seen[id].fetch_add(1);
        ledger[kLastSeq].store(id + 1);
        if (final && id + 1 == total) {
          ledger[kDone].store(1);
          return 0;
        }
        if (r() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(r() % 500));  // hold the loan
      }
    });
  };
  test::Child sub = subscriber(rng(), false);
  ASSERT_TRUE(test::eventually([&] { return ledger[kReady].load() == 1; }, 20s));
  const std::uint64_t pub_seed = rng();
  test::Child publisher = test::spawn([&]() {
    Topic tt = Topic::open(name.str(), o);
    Publisher p = tt.publisher();
    std::mt19937_64 r(pub_seed);
    for (std::uint64_t id = 0; id < total;) {
      const auto timeout = mixed(r);
      const auto t0 = std::chrono::steady_clock::now();
      const CommitResult c = timeout.count() == 0 ? p.try_publish(std::as_bytes(std::span(&id, 1)))
                                                  : p.publish(std::as_bytes(std::span(&id, 1)), timeout);
      if (timeout.count() != 0) {
        test::raise_max(
            ledger[kLongestWait],
            static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count()));
      }
      if (c.ok()) {
        if (c.sequence != id) return 5;
        ledger[kPublished].store(++id);
      } else if (c.status != Status::full && c.status != Status::timeout) {
        test::report(std::string("publish: ") + to_string(c.status));
        return 3;
      }
    }
    return 0;
  });
  for (int round = 0; round < rounds; ++round) {
    std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 15000));
    sub.kill(SIGKILL);
    const test::ChildResult r = sub.wait(20s);
    ASSERT_EQ(r.signal, SIGKILL) << "subscriber exit " << r.exit_code << ": " << r.output;
    sub = subscriber(rng(), false);  // killed again next round, wherever it is (attaching included)
  }
  sub.kill(SIGKILL);
  (void)sub.wait(20s);
  sub = subscriber(rng(), true);
  // The drain grows with the rounds (400 messages each): a long soak gets longer.
  const test::ChildResult fr = sub.wait(120s + std::chrono::milliseconds(200) * rounds);
  EXPECT_TRUE(fr.exited && fr.exit_code == 0) << "final subscriber " << fr.exit_code << ": " << fr.output;
  const test::ChildResult pr = publisher.wait(60s + std::chrono::milliseconds(100) * rounds);
  EXPECT_TRUE(pr.exited && pr.exit_code == 0) << "publisher " << pr.exit_code << ": " << pr.output;
  std::uint64_t missing = 0, extra = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    const std::uint8_t s = seen[i].load();
    if (s == 0) ++missing;
    if (s > 1) extra += s - 1u;
  }
  const auto kills = static_cast<std::uint64_t>(rounds) + 1;
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(ledger[kBadOrder].load(), 0u) << "a restart skipped or went back";
  // (A kill between the two ledger stores shifts one repeat between the two counts.)
  EXPECT_LE(extra, kills);
  EXPECT_LE(ledger[kRepeats].load(), kills);
  std::printf(
      "[ info ] durable subscriber: %llu kills, %llu messages, %llu delivered again (loan held at the kill), "
      "longest publisher wait %.1f ms\n",
      static_cast<unsigned long long>(kills), static_cast<unsigned long long>(total),
      static_cast<unsigned long long>(extra), static_cast<double>(ledger[kLongestWait].load()) / 1000.0);
}

}  // namespace

}  // namespace topic_durable_torture_test
}  // namespace zipc
