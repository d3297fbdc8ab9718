// Multi-process behaviour of zipc::Topic: fan-out, many publishers, lossy loss
// accounting, dead subscribers and publishers, persistence across kill -9.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <thread>
#include <vector>

#include "layout/topic_layout.hpp"
#include "topic_support.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using topic_test::Board;
using topic_test::Stamp;
using zipc::Delivery;
using zipc::From;
using zipc::Status;
using zipc::Topic;
using zipc::TopicOptions;

namespace topic_multiprocess_test {
namespace {

constexpr std::size_t kMax = 512;

struct FanOut {
  int publishers;
  int subscribers;
};

// Every subscriber reads every message, in order per publisher, intact.
int subscriber_body(const std::string& name, const Board& board, int publishers, std::uint64_t per_publisher,
                    Delivery delivery) {
  auto topic = Topic::open(name);
  auto sub = topic.subscribe({From::sequence(0), delivery});
  board.at(0).fetch_add(1);
  std::vector<std::uint64_t> next(static_cast<std::size_t>(publishers), 0);
  std::array<std::byte, kMax> buf;
  std::uint64_t expected_seq = 0;
  const std::uint64_t total = per_publisher * static_cast<std::uint64_t>(publishers);
  for (std::uint64_t got = 0; got < total;) {
    const auto r = sub.read(buf, 20s);
    if (r.status != Status::ok) {
      zipc::test::report("read failed: " + std::string(zipc::to_string(r.status)) + " after " + std::to_string(got));
      return 1;
    }
    if (r.sequence != expected_seq++) return 2;
    Stamp st;
    if (!topic_test::intact(std::span(buf).first(r.size), &st)) return 3;
    if (st.publisher >= next.size() || st.sequence != next[st.publisher]++) return 4;
    ++got;
  }
  return 0;
}

int publisher_body(const std::string& name, const Board& board, int index, int subscribers,
                   std::uint64_t per_publisher) {
  auto topic = Topic::open(name);
  auto pub = topic.publisher();
  if (!board.wait_for(0, static_cast<std::uint64_t>(subscribers))) return 10;
  std::array<std::byte, kMax> buf;
  for (std::uint64_t n = 0; n < per_publisher; ++n) {
    if (n % 3 == 0) {
      auto loan = pub.reserve(topic_test::size_for(static_cast<std::uint32_t>(index), n, kMax), 20s);
      if (!loan) return 11;
      topic_test::fill(loan.data().data(), static_cast<std::uint32_t>(index), n, kMax);
      if (!loan.commit(loan.size()).ok()) return 12;
    } else {
      const std::size_t size = topic_test::fill(buf.data(), static_cast<std::uint32_t>(index), n, kMax);
      if (!pub.publish(std::span(buf).first(size), 20s).ok()) return 13;
    }
  }
  return 0;
}

void run_fan_out(const FanOut& f) {
  zipc::test::TempName name("topic");
  zipc::test::TempName gate("gate");
  TopicOptions o;
  o.capacity_bytes = 64 * 1024;
  o.max_message_size = kMax;
  o.max_subscribers = 32;
  o.publishers = f.publishers > 1 ? zipc::Multiplicity::multi : zipc::Multiplicity::single;
  auto topic = Topic::create(name.str(), o);
  Board board(gate.str());
  const std::uint64_t per = topic_test::scaled(f.publishers > 1 ? 10000 : 20000);
  std::vector<zipc::test::Child> subs, pubs;
  for (int i = 0; i < f.subscribers; ++i) {
    subs.push_back(
        zipc::test::spawn([&] { return subscriber_body(name.str(), board, f.publishers, per, Delivery::reliable); }));
  }
  for (int i = 0; i < f.publishers; ++i) {
    pubs.push_back(zipc::test::spawn([&, i] { return publisher_body(name.str(), board, i, f.subscribers, per); }));
  }
  for (auto& c : pubs) {
    const auto r = c.wait(120s);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  for (auto& c : subs) {
    const auto r = c.wait(120s);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  EXPECT_EQ(topic.next_sequence(), per * static_cast<std::uint64_t>(f.publishers));
}

}  // namespace

TEST(TopicMultiProcess, OnePublisherOneSubscriberSeesEveryMessageInOrder) {
  run_fan_out({1, 1});
}
TEST(TopicMultiProcess, OnePublisherFourSubscribersEachSeeEveryMessage) {
  run_fan_out({1, 4});
}
TEST(TopicMultiProcess, OnePublisherSixteenSubscribersEachSeeEveryMessage) {
  run_fan_out({1, 16});
}
TEST(TopicMultiProcess, FourPublishersFourSubscribersSeeEveryMessageInOrderPerPublisher) {
  run_fan_out({4, 4});
}

TEST(TopicMultiProcess, SlowLossySubscriberReportsExactlyTheMessagesItMissed) {
  zipc::test::TempName name("topic");
  zipc::test::TempName gate("gate");
  TopicOptions o;
  o.capacity_bytes = 16 * 1024;
  o.max_message_size = kMax;
  auto topic = Topic::create(name.str(), o);
  Board board(gate.str());
  const std::uint64_t total = topic_test::scaled(50000);
  auto reader = zipc::test::spawn([&] {
    auto t = Topic::open(name.str());
    auto sub = t.subscribe({From::sequence(0), Delivery::lossy});
    board.at(0).store(1);
    std::array<std::byte, kMax> buf;
    std::uint64_t seen = 0, overruns = 0, gaps = 0, last = ~0ull;
    for (;;) {
      const auto r = sub.read(buf, 10ms);
      if (r.status == Status::timeout) {
        if (board.at(1).load() == 1) break;  // publisher finished and we drained
        continue;
      }
      if (r.status == Status::overrun) {
        ++overruns;
        continue;
      }
      if (r.status != Status::ok) return 1;
      Stamp st;
      if (!topic_test::intact(std::span(buf).first(r.size), &st)) return 2;  // never a torn record
      if (st.sequence != r.sequence) return 3;
      if (last != ~0ull) {
        if (r.sequence <= last) return 4;
        gaps += r.sequence - last - 1;
      } else {
        gaps += r.sequence;
      }
      last = r.sequence;
      ++seen;
      if (seen == 1) board.wait_for(2, total / 2);             // certainly lapped, whatever the speeds
      if (seen % 64 == 0) std::this_thread::sleep_for(200us);  // and deliberately slow
    }
    if (last != total - 1) {
      zipc::test::report("last seen " + std::to_string(last));
      return 5;
    }
    if (sub.lost() != gaps) {
      zipc::test::report("lost() " + std::to_string(sub.lost()) + " but missed " + std::to_string(gaps));
      return 6;
    }
    if (seen + sub.lost() != total) return 7;
    zipc::test::report("seen " + std::to_string(seen) + " lost " + std::to_string(sub.lost()) + " overruns " +
                       std::to_string(overruns));
    return overruns > 0 ? 0 : 8;  // the test must really have lapped the reader
  });
  ASSERT_TRUE(board.wait_for(0, 1));
  auto pub = topic.publisher();
  std::array<std::byte, kMax> buf;
  for (std::uint64_t n = 0; n < total; ++n) {
    const std::size_t size = topic_test::fill(buf.data(), 0, n, kMax);
    ASSERT_TRUE(pub.try_publish(std::span(buf).first(size)).ok());  // a lossy reader never blocks us
    if (n % 100 == 0) board.at(2).store(n);
  }
  board.at(2).store(total);
  board.at(1).store(1);
  const auto r = reader.wait(120s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(TopicMultiProcess, DeadReliableSubscriberReleasesThePublisherAndItsSlotIsReused) {
  zipc::test::TempName name("topic");
  zipc::test::TempName gate("gate");
  TopicOptions o;
  o.capacity_bytes = 8192;
  o.max_message_size = 256;
  o.max_subscribers = 2;
  auto topic = Topic::create(name.str(), o);
  Board board(gate.str());
  auto child = zipc::test::spawn([&] {
    auto t = Topic::open(name.str());
    auto sub = t.subscribe({From::latest(), Delivery::reliable});
    board.at(0).store(1);
    for (;;) ::pause();  // never reads
    return 0;
  });
  ASSERT_TRUE(board.wait_for(0, 1));
  auto pub = topic.publisher();
  std::array<std::byte, 200> buf{};
  std::uint64_t sent = 0;
  while (pub.try_publish(buf).ok()) ++sent;
  EXPECT_EQ(pub.try_publish(buf).status, Status::full);  // held back by the live subscriber
  child.kill(SIGKILL);
  (void)child.wait(10s);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(pub.publish(buf, 5s).status, Status::ok) << i;
  auto a = topic.subscribe();
  auto b = topic.subscribe();  // both slots usable again
  EXPECT_TRUE(a.is_attached() && b.is_attached());
}

TEST(TopicMultiProcess, PublisherKilledBetweenClaimAndCommitLeavesAHoleOthersSkip) {
  zipc::test::TempName name("topic");
  zipc::test::TempName gate("gate");
  TopicOptions o;
  o.capacity_bytes = 64 * 1024;
  o.max_message_size = kMax;
  o.publishers = zipc::Multiplicity::multi;
  o.recovery_time = 200ms;
  auto topic = Topic::create(name.str(), o);
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  Board board(gate.str());
  auto victim = zipc::test::spawn([&] {
    auto t = Topic::open(name.str(), o);
    auto pub = t.publisher();
    std::array<std::byte, kMax> buf;
    for (std::uint64_t n = 0; n < 5; ++n) {
      const std::size_t size = topic_test::fill(buf.data(), 0, n, kMax);
      if (!pub.try_publish(std::span(buf).first(size)).ok()) return 1;
    }
    auto loan = pub.try_reserve(100);  // reserved, never committed
    if (!loan) return 2;
    board.at(0).store(1);
    for (;;) ::pause();
    return 0;
  });
  ASSERT_TRUE(board.wait_for(0, 1));
  std::array<std::byte, kMax> buf;
  for (std::uint64_t n = 0; n < 5; ++n) {
    const auto r = sut.read(buf, 5s);
    ASSERT_EQ(r.status, Status::ok);
    EXPECT_EQ(r.sequence, n);
  }
  victim.kill(SIGKILL);
  (void)victim.wait(10s);
  // A reader alone notices the stuck claim and skips it after the recovery time.
  EXPECT_EQ(sut.read(buf, 2s).status, Status::timeout);
  EXPECT_EQ(sut.abandoned(), 1u);
  EXPECT_EQ(topic.abandoned(), 1u);
  // Nothing after the hole is lost, and the sequence stays dense.
  auto pub = topic.publisher();
  for (std::uint64_t n = 5; n < 50; ++n) {
    const std::size_t size = topic_test::fill(buf.data(), 1, n, kMax);
    ASSERT_EQ(pub.publish(std::span(buf).first(size), 5s).sequence, n);
  }
  for (std::uint64_t n = 5; n < 50; ++n) {
    const auto r = sut.read(buf, 5s);
    ASSERT_EQ(r.status, Status::ok);
    EXPECT_EQ(r.sequence, n);
  }
}

TEST(TopicMultiProcess, PublisherWaitingBehindADeadClaimantCommitsAfterRecovery) {
  zipc::test::TempName name("topic");
  zipc::test::TempName gate("gate");
  TopicOptions o;
  o.capacity_bytes = 64 * 1024;
  o.max_message_size = kMax;
  o.publishers = zipc::Multiplicity::multi;
  o.recovery_time = 200ms;
  auto topic = Topic::create(name.str(), o);
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  Board board(gate.str());
  auto victim = zipc::test::spawn([&] {
    auto t = Topic::open(name.str(), o);
    auto pub = t.publisher();
    auto loan = pub.try_reserve(300);
    if (!loan) return 2;
    board.at(0).store(1);
    for (;;) ::pause();
    return 0;
  });
  ASSERT_TRUE(board.wait_for(0, 1));
  auto survivor = zipc::test::spawn([&] {
    auto t = Topic::open(name.str(), o);
    auto pub = t.publisher();
    std::array<std::byte, kMax> buf;
    for (std::uint64_t n = 0; n < 20; ++n) {
      const std::size_t size = topic_test::fill(buf.data(), 1, n, kMax);
      if (pub.publish(std::span(buf).first(size), 10s).sequence != n) return 1;
    }
    return 0;
  });
  std::this_thread::sleep_for(50ms);
  victim.kill(SIGKILL);
  (void)victim.wait(10s);
  const auto r = survivor.wait(30s);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::array<std::byte, kMax> buf;
  for (std::uint64_t n = 0; n < 20; ++n) {
    const auto got = sut.read(buf, 5s);
    ASSERT_EQ(got.status, Status::ok);
    Stamp st;
    ASSERT_TRUE(topic_test::intact(std::span(buf).first(got.size), &st));
    EXPECT_EQ(got.sequence, n);
    EXPECT_EQ(st.sequence, n);
  }
  EXPECT_EQ(sut.abandoned(), 1u);
}

TEST(TopicMultiProcess, SinglePublisherKilledMidClaimIsReplacedAndItsClaimSkipped) {
  zipc::test::TempName name("topic");
  zipc::test::TempName gate("gate");
  TopicOptions o;
  o.capacity_bytes = 64 * 1024;
  o.max_message_size = kMax;
  auto topic = Topic::create(name.str(), o);
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  Board board(gate.str());
  auto victim = zipc::test::spawn([&] {
    auto t = Topic::open(name.str(), o);
    auto pub = t.publisher();
    std::array<std::byte, 8> one{};
    if (!pub.try_publish(one).ok()) return 1;
    auto loan = pub.try_reserve(100);
    if (!loan) return 2;
    board.at(0).store(1);
    for (;;) ::pause();
    return 0;
  });
  ASSERT_TRUE(board.wait_for(0, 1));
  victim.kill(SIGKILL);
  (void)victim.wait(10s);
  auto pub = topic.publisher();  // takes over from the dead publisher
  std::array<std::byte, 8> one{};
  EXPECT_EQ(pub.try_publish(one).sequence, 1u);
  std::array<std::byte, kMax> buf;
  EXPECT_EQ(sut.read(buf, 1s).sequence, 0u);
  EXPECT_EQ(sut.read(buf, 1s).sequence, 1u);
  EXPECT_EQ(sut.abandoned(), 1u);
}

TEST(TopicMultiProcess, PersistentTopicReplaysExactlyTheCommittedRecordsAfterKillNine) {
  zipc::test::TempName name("ptopic", /*file_backed=*/true);
  zipc::test::TempName gate("gate");
  TopicOptions o;
  o.capacity_bytes = 256 * 1024;
  o.max_message_size = kMax;
  o.segment.path = name.path();
  Board board(gate.str());
  { auto created = Topic::create(name.str(), o); }
  auto publisher = zipc::test::spawn([&] {
    auto t = Topic::open(name.str(), o);
    auto pub = t.publisher();
    for (std::uint64_t n = 0;; ++n) {
      auto loan = pub.reserve(topic_test::size_for(0, n, kMax), 10s);
      if (!loan) return 1;
      topic_test::fill(loan.data().data(), 0, n, kMax);
      if (loan.commit(loan.size()).sequence != n) return 2;
      board.at(0).store(n + 1);  // committed count, for the check after the crash
      if (n % 1000 == 999) t.sync();
    }
  });
  auto reader = zipc::test::spawn([&] {
    auto t = Topic::open(name.str(), o);
    auto sub = t.subscribe({From::latest(), Delivery::lossy});
    std::array<std::byte, kMax> buf;
    for (;;) (void)sub.read(buf, 10ms);
    return 0;
  });
  ASSERT_TRUE(board.wait_for(0, 2000));
  zipc::test::kill_after_random_delay(publisher, 1ms, 30ms);
  reader.kill(SIGKILL);
  (void)publisher.wait(10s);
  (void)reader.wait(10s);
  const std::uint64_t committed = board.at(0).load();

  // Restart: everything is gone but the file.
  auto topic = Topic::open(name.str(), o);
  const std::uint64_t next = topic.next_sequence();
  EXPECT_GE(next, committed);
  EXPECT_LE(next, committed + 1);  // killed after commit, before the count
  auto sut = topic.subscribe({From::oldest(), Delivery::reliable});
  std::array<std::byte, kMax> buf;
  std::uint64_t expect = topic.oldest_sequence();
  EXPECT_GT(expect, 0u);  // the log wrapped
  for (;;) {
    const auto r = sut.try_read(buf);
    if (r.status == Status::empty) break;
    ASSERT_EQ(r.status, Status::ok);
    ASSERT_EQ(r.sequence, expect);
    Stamp st;
    ASSERT_TRUE(topic_test::intact(std::span(buf).first(r.size), &st)) << r.sequence;
    ASSERT_EQ(st.sequence, r.sequence);
    ++expect;
  }
  EXPECT_EQ(expect, next);
  // Replay any retained sequence, and carry on publishing where the log stopped.
  auto again = topic.subscribe({From::sequence(next - 10), Delivery::reliable});
  EXPECT_EQ(again.try_read(buf).sequence, next - 10);
  auto pub = topic.publisher();
  std::array<std::byte, 64> m{};
  EXPECT_EQ(pub.try_publish(m).sequence, next);
  topic.sync();
}

TEST(TopicMultiProcess, RecordFinishedByAPublisherThatDiedBeforeMovingTheCursorIsKept) {
  zipc::test::TempName name("topic");
  TopicOptions o;
  o.capacity_bytes = 64 * 1024;
  o.max_message_size = kMax;
  auto topic = Topic::create(name.str(), o);
  auto sut = topic.subscribe({From::oldest(), Delivery::reliable});
  std::array<std::byte, 100> m{};
  {
    auto pub = topic.publisher();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(pub.try_publish(m).ok());
  }
  // Rewind to "record 2 complete (tag stored), cursor and next_sequence not yet
  // moved, publisher dead": the state a kill -9 between those stores leaves.
  auto dead = zipc::test::spawn([] { return 0; });
  const pid_t dead_pid = dead.pid();
  (void)dead.wait();
  auto* control = reinterpret_cast<zipc::layout::TopicControl*>(topic.segment().payload());
  const std::uint64_t third = 2 * zipc::layout::record_bytes(m.size());
  control->pub.cursor.store(third);
  control->pub.next_sequence.store(2);
  control->admin.single_publisher.store(zipc::pack(zipc::ProcessId{dead_pid, 1}));
  auto pub = topic.publisher();  // replaces the dead one, recovering its claim
  EXPECT_EQ(pub.try_publish(m).sequence, 3u);
  std::array<std::byte, kMax> buf;
  for (std::uint64_t n = 0; n < 4; ++n) {
    const auto r = sut.try_read(buf);
    ASSERT_EQ(r.status, Status::ok) << n;
    EXPECT_EQ(r.sequence, n);
  }
  EXPECT_EQ(sut.abandoned(), 0u);
}

}  // namespace topic_multiprocess_test
