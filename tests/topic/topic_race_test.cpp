// Races and corner cases of zipc::Topic replayed deterministically: a test
// point (src/topic/topic_state.hpp) lets a test act between two steps of a call, as
// a racing or hostile peer would at that instant; the rest set up the shared
// state through src/layout/topic_layout.hpp.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "layout/topic_layout.hpp"
#include "sync/asymmetric_wait.hpp"
#include "topic/topic_state.hpp"
#include "topic_support.hpp"
#include "zipc/process.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using topic_test::control_of;
using topic_test::dead_process;
using topic_test::Stamp;
using zipc::Delivery;
using zipc::From;
using zipc::Status;
using zipc::Topic;
using zipc::TopicOptions;
using zipc::detail::TestPoint;

namespace topic_race_test {
namespace {

// What the current test does at a test point (empty: nothing).
std::function<void(TestPoint, std::uint64_t)> g_at_point;

// Installs an action for the scope of a test.
class AtPoint {
 public:
  explicit AtPoint(std::function<void(TestPoint, std::uint64_t)> f) { g_at_point = std::move(f); }
  ~AtPoint() { g_at_point = nullptr; }
  AtPoint(const AtPoint&) = delete;
  AtPoint& operator=(const AtPoint&) = delete;
};

zipc::layout::RecordHeader* header_at(const Topic& t, std::uint64_t position) {
  std::byte* ring = t.segment().payload() + control_of(t)->config.ring_offset;
  return reinterpret_cast<zipc::layout::RecordHeader*>(ring + (position & (t.capacity_bytes() - 1)));
}

zipc::layout::SubscriberSlot* subscriber_slot(const Topic& t, std::uint32_t i) {
  return reinterpret_cast<zipc::layout::SubscriberSlot*>(t.segment().payload() + zipc::layout::sub_table_offset()) + i;
}

std::vector<std::byte> bytes(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<std::byte>((seed * 131 + i) & 0xff);
  return m;
}

// The ring most of these tests replay their races in: 4 KiB, a few records.
TopicOptions small_ring(std::uint32_t max_message = 256) {
  TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = max_message;
  return o;
}

constexpr std::uint32_t kScribbledSize = 0x7fffff00;  // far past max_message and the ring

}  // namespace

}  // namespace topic_race_test

// The test point the library calls (a weak symbol there; defined only here).
void zipc::detail::topic_test_point(TestPoint point, std::uint64_t position) noexcept {
  if (topic_race_test::g_at_point) topic_race_test::g_at_point(point, position);
}

namespace topic_race_test {

// Regression: try_read / try_acquire re-read the size from the ring
// after checking it, so a size scribbled in between was trusted.
TEST(TopicRace, ReadUsesTheSizeItCheckedWhenAPeerScribblesItJustAfterTheCheck) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small_ring());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  const auto m = bytes(100, 1);
  ASSERT_TRUE(pub.try_publish(m).ok());
  AtPoint scribble([&](TestPoint p, std::uint64_t position) {
    if (p == TestPoint::reader_checked_record) header_at(topic, position)->size = kScribbledSize;
  });
  std::vector<std::byte> buf(64 * 1024);
  const auto r = sut.try_read(buf);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.size, 100u);
  EXPECT_TRUE(std::equal(m.begin(), m.end(), buf.begin()));
}

TEST(TopicRace, ViewSpansTheSizeItCheckedWhenAPeerScribblesItJustAfterTheCheck) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small_ring());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  const auto m = bytes(100, 2);
  ASSERT_TRUE(pub.try_publish(m).ok());
  AtPoint scribble([&](TestPoint p, std::uint64_t position) {
    if (p == TestPoint::reader_checked_record) header_at(topic, position)->size = kScribbledSize;
  });
  const auto v = sut.try_acquire();
  ASSERT_EQ(v.status(), Status::ok);
  EXPECT_EQ(v.data().size(), 100u);
  EXPECT_TRUE(std::equal(m.begin(), m.end(), v.data().begin(), v.data().end()));
}

// Regression: making room stopped at any record crossing "an eighth of
// the ring", so a record larger than that straddling the room needed was
// never dropped: publishing stayed full for ever, with no subscriber at all.
TEST(TopicRace, RecordLargerThanAnEighthOfTheRingIsDroppedWhenItStraddlesTheRoomNeeded) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small_ring(1984));  // two records of it fill 4032 of the 4096 bytes
  auto sut = topic.publisher();
  // The review's sequence: [0, 1032) and [1032, 3048), then a record needing [0, 2016) back.
  EXPECT_EQ(sut.try_publish(bytes(1000, 0)).status, Status::ok);
  EXPECT_EQ(sut.try_publish(bytes(1984, 1)).status, Status::ok);
  EXPECT_EQ(sut.try_publish(bytes(1984, 2)).status, Status::ok);
  // And any mix of large and small records keeps flowing.
  const std::array<std::size_t, 6> sizes{1984, 8, 1500, 1984, 1000, 600};
  for (std::uint64_t n = 3; n < 300; ++n) {
    ASSERT_EQ(sut.try_publish(bytes(sizes[n % sizes.size()], n)).status, Status::ok) << n;
  }
  // A reader joining from the oldest still reads intact records.
  auto reader = topic.subscribe({From::oldest(), Delivery::reliable});
  std::vector<std::byte> buf(2048);
  const auto r = reader.try_read(buf);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.sequence, topic.oldest_sequence());
  const auto want = bytes(sizes[r.sequence % sizes.size()], r.sequence);
  EXPECT_EQ(r.size, want.size());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), buf.begin()));
}

TEST(TopicRace, LargeRecordStraddlingTheRoomNeededIsDroppedOnceEveryReliableReaderPassedIt) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small_ring(1984));
  auto reader = topic.subscribe({From::latest(), Delivery::reliable});
  auto sut = topic.publisher();
  std::vector<std::byte> buf(2048);
  for (std::uint64_t n = 0; n < 200; ++n) {
    const auto m = bytes(n % 2 == 0 ? 1000 : 1984, n);
    ASSERT_EQ(sut.try_publish(m).status, Status::ok) << n;
    const auto r = reader.try_read(buf);
    ASSERT_EQ(r.status, Status::ok) << n;
    ASSERT_EQ(r.sequence, n);
    ASSERT_TRUE(std::equal(m.begin(), m.end(), buf.begin())) << n;
  }
}

// Regression: with several publishers and streaming stores, the tag that
// lets a reader right behind take a record was stored before the streaming
// stores of its payload were fenced. (A memory-ordering race: this stress run
// can catch it on x86, it cannot force it.)
TEST(TopicRace, MultiPublisherStreamingRecordsAreIntactForAReaderRightBehind) {
  zipc::test::TempName name("topic");
  TopicOptions o;
  o.capacity_bytes = 256 * 1024;
  o.max_message_size = 4096;
  o.publishers = zipc::Multiplicity::multi;
  o.streaming_stores = true;
  auto topic = Topic::create(name.str(), o);
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  const std::uint64_t per = topic_test::scaled(20000);
  constexpr std::uint32_t kPublishers = 2;
  std::vector<std::thread> pubs;
  // A publisher that gives up says where and why (the reader then waits in
  // vain). Each writes only its own entry; the reader reads them after join().
  std::array<Status, kPublishers> failed_with{};  // ok: none failed
  std::array<std::uint64_t, kPublishers> failed_at{};
  for (std::uint32_t id = 0; id < kPublishers; ++id) {
    pubs.emplace_back([&, id, pub = topic.publisher()]() mutable {
      std::vector<std::byte> m(o.max_message_size);
      for (std::uint64_t n = 0; n < per; ++n) {
        const std::size_t size = topic_test::fill(m.data(), id, n, o.max_message_size);
        if (const Status s = pub.publish(std::span(m).first(size), 30s).status; s != Status::ok) {
          failed_with[id] = s;
          failed_at[id] = n;
          return;
        }
      }
    });
  }
  const auto publishers = [&] {
    std::string text;
    for (std::uint32_t id = 0; id < kPublishers; ++id) {
      text += (id == 0 ? " publisher " : "; publisher ") + std::to_string(id) + ": " +
              (failed_with[id] == Status::ok
                   ? std::string("no failure")
                   : "publish " + std::to_string(failed_at[id]) + " got " + zipc::to_string(failed_with[id]));
    }
    return text;
  };
  std::array<std::uint64_t, kPublishers> next{};
  std::uint64_t bad = 0;
  for (std::uint64_t got = 0; got < per * kPublishers; ++got) {
    const auto v = sut.acquire(30s);
    if (v.status() != Status::ok) {
      for (auto& t : pubs) t.join();  // (each gives up within 30 s)
      FAIL() << "record " << got << ": " << zipc::to_string(v.status()) << ";" << publishers();
    }
    Stamp st;
    if (!topic_test::intact(v.data(), &st) || st.publisher >= kPublishers || st.sequence != next[st.publisher]) {
      ++bad;
      continue;
    }
    ++next[st.publisher];
  }
  for (auto& t : pubs) t.join();
  EXPECT_EQ(bad, 0u);
}

// Regression: a publisher freeing a dead subscriber's slot stored its
// mode after giving up the owner word, erasing the mode of a reliable
// subscriber that took the slot in between: that reader's unread records were
// then overwritten.
TEST(TopicRace, ReliableSubscriberTakingASlotAPublisherJustFreedKeepsItsRecords) {
  zipc::test::TempName name("topic");
  TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.max_subscribers = 4;
  auto topic = Topic::create(name.str(), o);
  // A reliable subscriber that died at position 0 without detaching.
  auto* slot = subscriber_slot(topic, 0);
  slot->position.store(0);
  slot->mode.store(static_cast<std::uint32_t>(zipc::layout::SubscriberMode::reliable));
  slot->owner.store(dead_process());
  control_of(topic)->admin.subscriber_generation.fetch_add(1);
  zipc::Subscriber joiner;
  bool join_failed = false;
  AtPoint join([&](TestPoint p, std::uint64_t) {
    if (p != TestPoint::subscriber_slot_freed || joiner.is_attached()) return;
    try {  // the instant a racing process would join
      joiner = topic.subscribe({From::latest(), Delivery::reliable});
    } catch (const zipc::Error&) {
      join_failed = true;
    }
  });
  auto sut = topic.publisher();
  std::uint64_t sent = 0;
  // Fill the ring: the dead subscriber holds the publisher until its slot is freed.
  while (sent < 1000 && !joiner.is_attached()) {
    ASSERT_TRUE(sut.publish(bytes(200, sent), 5s).ok()) << sent;
    ++sent;
  }
  ASSERT_TRUE(joiner.is_attached());
  ASSERT_FALSE(join_failed);
  const std::uint64_t first = joiner.next_sequence();
  // The new subscriber has read nothing: the publisher must fill up and stop.
  Status st = Status::ok;
  std::uint64_t n = sent;
  for (; n < sent + 100; ++n) {
    st = sut.try_publish(bytes(200, n)).status;
    if (st != Status::ok) break;
  }
  EXPECT_EQ(st, Status::full);
  std::array<std::byte, 256> buf;
  for (std::uint64_t k = first; k < n; ++k) {
    const auto r = joiner.try_read(buf);
    ASSERT_EQ(r.status, Status::ok) << k;
    ASSERT_EQ(r.sequence, k);
    const auto want = bytes(200, k);
    ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin())) << k;
  }
  EXPECT_EQ(joiner.try_read(buf).status, Status::empty);
}

// Regression: a publisher that lost the claim CAS kept its intent at the
// position another publisher claimed; when that one died, recovery took the
// loser for the claim's (live) owner and never made the hole: the topic
// stalled for good.
TEST(TopicRace, PublisherThatLostTheClaimRaceDoesNotShieldTheDeadWinnersClaimFromRecovery) {
  zipc::test::TempName name("topic");
  TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 1984;
  o.publishers = zipc::Multiplicity::multi;
  o.recovery_time = 20ms;
  auto topic = Topic::create(name.str(), o);
  auto reader = topic.subscribe({From::latest(), Delivery::reliable});
  auto sut = topic.publisher();
  const std::uint64_t dead = dead_process();
  auto* ctl = control_of(topic);
  bool raced = false;
  AtPoint race([&](TestPoint p, std::uint64_t position) {
    if (p != TestPoint::before_claim_cas || raced) return;
    raced = true;
    // Another publisher claims [position, position + 4032) first and dies before committing.
    auto& winner = ctl->publishers[zipc::layout::kMaxPublishers - 1];
    winner.owner.store(dead);
    winner.intent.store(position);
    header_at(topic, position)->position = ~0ull;  // its tag: not committed
    ctl->pub.tail.store(position + 4032);
  });
  // Our claim loses the race; what is left is full behind the dead claim.
  EXPECT_EQ(sut.publish(bytes(100, 0), 10ms).status, Status::timeout);
  ASSERT_TRUE(raced);
  // A reader waiting on the stuck cursor recovers the hole after the recovery time.
  std::array<std::byte, 256> buf;
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (topic.abandoned() == 0 && std::chrono::steady_clock::now() < give_up) {
    EXPECT_EQ(reader.read(buf, 50ms).status, Status::timeout);
  }
  EXPECT_EQ(topic.abandoned(), 1u);
  EXPECT_EQ(reader.abandoned(), 1u);
  // Publishing flows again, with dense sequences.
  const auto m = bytes(100, 1);
  EXPECT_EQ(sut.publish(m, 5s).status, Status::ok);
  const auto r = reader.read(buf, 5s);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.sequence, 0u);
  EXPECT_TRUE(std::equal(m.begin(), m.end(), buf.begin()));
}

// Regression (found by the model, tests/model/topic_recovery.pml): recovery
// read the cursor, then scanned the publisher slots for the owner of the
// claim there. A live publisher that committed that claim and detached in
// between was not found, and recovery wrote a hole over its committed
// message. It now re-reads the cursor after the scan and stops if it moved.
TEST(TopicRace, RecoveryDoesNotHoleAMessageCommittedWhileItLookedForTheClaimsOwner) {
  zipc::test::TempName name("topic");
  TopicOptions o = small_ring();
  o.publishers = zipc::Multiplicity::multi;
  o.recovery_time = 20ms;
  auto topic = Topic::create(name.str(), o);
  auto reader = topic.subscribe({From::oldest(), Delivery::reliable});
  auto* ctl = control_of(topic);
  // A publisher claimed [0, 256) and died before committing.
  auto& dead_slot = ctl->publishers[zipc::layout::kMaxPublishers - 1];
  dead_slot.owner.store(dead_process());
  dead_slot.intent.store(0);
  header_at(topic, 0)->position = ~0ull;  // its tag: not committed
  ctl->pub.tail.store(256);
  const auto m = bytes(100, 7);
  std::thread live;  // publishes m behind the dead claim, then detaches
  std::atomic<bool> committed{false};
  const std::thread::id recoverer = std::this_thread::get_id();
  int frontier_reads = 0;
  AtPoint race([&](TestPoint p, std::uint64_t position) {
    if (p != TestPoint::recovery_read_frontier || std::this_thread::get_id() != recoverer) return;
    ++frontier_reads;
    if (position == 0) {
      // The first round, at the dead claim: the live publisher claims behind it.
      live = std::thread([&] {
        auto pub = topic.publisher();
        committed = pub.publish(m, 5s).status == Status::ok;
      });
      const auto until = std::chrono::steady_clock::now() + 5s;
      while (ctl->pub.tail.load() == 256 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    } else {
      // The next round, at the live publisher's claim: it commits and
      // detaches before this recovery looks for the claim's owner.
      live.join();
    }
  });
  std::array<std::byte, 256> buf;
  const auto r = reader.read(buf, 5s);
  if (live.joinable()) live.join();
  ASSERT_TRUE(committed);
  ASSERT_GE(frontier_reads, 1);
  EXPECT_EQ(topic.abandoned(), 1u) << "only the dead claim is a hole";
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.sequence, 0u);
  EXPECT_TRUE(std::equal(m.begin(), m.end(), buf.begin()));
}

// Regression: in multi mode a publisher may wait for room that only a
// commit makes (claims fill the ring); commits did not wake it.
TEST(TopicRace, CommitInMultiModeWakesPublishersWaitingForRoom) {
  zipc::test::TempName name("topic");
  TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.publishers = zipc::Multiplicity::multi;
  auto topic = Topic::create(name.str(), o);
  auto sut = topic.publisher();
  auto& space = control_of(topic)->events.space;
  space.waiters.fetch_add(1);  // a publisher registered to sleep for room
  const std::uint32_t before = space.seq.load();
  EXPECT_TRUE(sut.try_publish(bytes(100, 0)).ok());
  EXPECT_NE(space.seq.load(), before);
  space.waiters.fetch_sub(1);
}

// The 1-CPU latency problem: the topic's own wait (now the channels' shared
// AsymmetricWait) spun its whole budget on
// every wait because it never told the adaptive strategy where waits ended.
// A wait that succeeds right after the first yield (the peer could only run
// once we gave up the CPU) must teach the thread that its CPU is shared, as
// zipc::Event::wait_until does.
TEST(TopicRace, TopicWaitLearnsThatTheCpuIsSharedLikeEventDoes) {
  zipc::WaitOptions opt;
  opt.strategy = zipc::WaitStrategy::adaptive;
  opt.spin_ns = 1;  // the spin phase ends at its first clock check: 64 steps, then the first yield
  // True on the 65th call: the first call precedes the spin; call 65 follows the first yield.
  auto after_first_yield = [] { return [calls = 0]() mutable { return ++calls >= 65; }; };
  auto learned = [&](bool through_topic) {
    bool shared = false;
    std::thread t([&] {  // a fresh thread: nothing learned yet
      zipc::Event ev;
      // Eight such waits in a row teach it (see event.cpp).
      for (int i = 0; i < 8; ++i) {
        // A deadline, not never(): a wait that has learnt to skip its spin
        // polls fewer times before sleeping, and nobody notifies ev.
        const zipc::Deadline d = zipc::Deadline::after(10s);
        const Status st = through_topic ? zipc::detail::AsymmetricWait::here().wait(ev, after_first_yield(), d, opt)
                                        : ev.wait_until(after_first_yield(), d, opt);
        if (st != Status::ok) return;
      }
      shared = zipc::detail::cpu_looks_shared();
    });
    t.join();
    return shared;
  };
  ASSERT_TRUE(learned(false));  // the foundation's behaviour this scenario relies on
  EXPECT_TRUE(learned(true));
}

// The header is written at commit; a claim spoils only a tag that already
// reads as its position. Old bytes laid out as a complete record at the next
// position (tag, kind, size and the expected sequence) must not be delivered
// while the real record there is only claimed.
TEST(TopicRace, LeftoverBytesThatLookLikeACommittedRecordAreNotReadWhileItIsClaimed) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small_ring());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  const auto first = bytes(40, 1);
  ASSERT_TRUE(pub.try_publish(first).ok());
  std::vector<std::byte> buf(256);
  ASSERT_EQ(sut.try_read(buf).status, Status::ok);  // the reader is now right behind, at the next position
  const std::uint64_t next = zipc::layout::record_bytes(first.size());
  auto* fake = header_at(topic, next);
  fake->size = 8;
  fake->kind = static_cast<std::uint16_t>(zipc::layout::RecordKind::data);
  fake->slack = 0;
  fake->sequence = 1;  // the sequence the reader expects next
  fake->publish_ns = 1;
  fake->position = next;  // the tag: reads as committed
  zipc::TopicWriteLoan loan = pub.reserve(8, 0ns);
  ASSERT_TRUE(loan);
  EXPECT_EQ(sut.try_read(buf).status, Status::empty) << "a claimed record was read before its commit";
  std::memcpy(loan.data().data(), "realdata", 8);
  ASSERT_TRUE(loan.commit(8).ok());
  const auto r = sut.try_read(buf);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.sequence, 1u);
  EXPECT_EQ(std::memcmp(buf.data(), "realdata", 8), 0);
}

// A single publisher drops old records up to record starts it noted itself
// (no header walk). After many laps of mixed sizes, a reader joining at the
// oldest record must find a record boundary there and read intact, dense
// records from it to the newest.
TEST(TopicRace, OldestStaysOnARecordBoundaryAcrossManyLapsOfMixedSizes) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small_ring());
  auto pub = topic.publisher();
  std::vector<std::byte> buf(256);
  std::uint64_t checked = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    const auto m = bytes(1 + (i * 37) % 250, i);
    ASSERT_TRUE(pub.try_publish(m).ok()) << "message " << i;
    if (i % 97 != 96) continue;
    auto sut = topic.subscribe({From::oldest(), Delivery::reliable});
    std::uint64_t expect = ~0ull;
    for (;;) {
      const auto r = sut.try_read(buf);
      if (r.status == Status::empty) break;
      ASSERT_EQ(r.status, Status::ok) << "after message " << i;
      if (expect != ~0ull) {
        ASSERT_EQ(r.sequence, expect) << "after message " << i;
      }
      const auto want = bytes(1 + (r.sequence * 37) % 250, r.sequence);
      ASSERT_EQ(r.size, want.size());
      ASSERT_TRUE(std::equal(want.begin(), want.end(), buf.begin())) << "record " << r.sequence;
      expect = r.sequence + 1;
      ++checked;
    }
    ASSERT_EQ(expect, i + 1) << "the reader from the oldest did not reach the newest";
  }
  EXPECT_GT(checked, 1000u);
}

// A reliable reader at the frontier polls the next record's tag, not the
// cursor line. A peer that scribbles that tag after the commit must not make
// the reader wait for ever beside records the cursor says are there: it reads
// the cursor now and then, and reports the bad record as corrupt.
TEST(TopicRace, AReaderWhoseNextTagIsScribbledStillFindsTheCursorAndReportsCorrupt) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small_ring());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  for (std::uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(pub.try_publish(bytes(40, i)).ok());
  header_at(topic, 0)->position = 0x5a5a5a5a5a5a5a5aull;  // the first record's tag
  std::vector<std::byte> buf(256);
  const auto r = sut.read(buf, 10s);
  EXPECT_EQ(r.status, Status::corrupt);
}

// A lossy reader that finds itself lapped looks up the oldest retained
// sequence, which needs a consistent (cursor, next sequence) pair. A publisher
// preempted half-way through a commit leaves the pair's version odd for as
// long as it is descheduled: the reader gave up after 16 quick tries and
// reported corrupt (seen once in CI, under TSan and load). It must wait for
// the commit to finish and report the overrun.
TEST(TopicRace, ALossyReaderLappedWhileAPublisherIsPreemptedMidCommitReportsTheOverrun) {
  zipc::test::TempName name("topic");
  TopicOptions o = small_ring();
  o.recovery_time = 10s;  // the bound on waiting for a stuck commit; far above the 50 ms below
  auto topic = Topic::create(name.str(), o);
  auto sut = topic.subscribe({From::oldest(), Delivery::lossy});
  auto pub = topic.publisher();
  for (std::uint64_t i = 0; i < 400; ++i) ASSERT_TRUE(pub.try_publish(bytes(40, i)).ok());  // laps the reader
  auto& version = control_of(topic)->pub.commit_version;
  const std::uint64_t even = version.load();
  ASSERT_EQ(even % 2, 0u);
  version.store(even + 1);  // a commit caught half-way
  std::thread publisher_resumes([&] {
    std::this_thread::sleep_for(50ms);
    version.store(even);
  });
  std::vector<std::byte> buf(256);
  const auto r = sut.try_read(buf);
  publisher_resumes.join();
  EXPECT_EQ(r.status, Status::overrun);
  EXPECT_GT(sut.lost(), 0u);
}

// Multi mode passes the commit token with the cursor store, before the
// committer's last version store. The next committer, committing at once,
// reads the odd version and marks its own change with odd + 2; the first
// one's late last store must not set the version back to odd + 1 (a value a
// reader may have taken for a consistent pair while the second wrote it):
// it is a CAS from its own odd value.
TEST(TopicRace, ACommitterStalledBeforeItsLastVersionStoreDoesNotSetTheVersionBack) {
  zipc::test::TempName name("topic");
  TopicOptions o = small_ring();
  o.publishers = zipc::Multiplicity::multi;
  auto topic = Topic::create(name.str(), o);
  auto reader = topic.subscribe({From::oldest(), Delivery::reliable});
  auto first = topic.publisher();
  auto second = topic.publisher();
  auto& version = control_of(topic)->pub.commit_version;
  std::uint64_t stalled_at = 0, after_second = 0;
  bool raced = false;
  AtPoint race([&](TestPoint p, std::uint64_t) {
    if (p != TestPoint::before_last_version || raced) return;
    raced = true;
    stalled_at = version.load();  // the first committer's odd value
    ASSERT_EQ(second.try_publish(bytes(40, 1)).sequence, 1u);
    after_second = version.load();
  });
  ASSERT_EQ(first.try_publish(bytes(40, 0)).sequence, 0u);
  ASSERT_TRUE(raced);
  EXPECT_EQ(stalled_at % 2, 1u);
  EXPECT_EQ(after_second % 2, 0u) << "the second committer leaves the version even";
  EXPECT_GT(after_second, stalled_at + 1);
  EXPECT_EQ(version.load(), after_second) << "the first committer's late store set the version back";
  std::vector<std::byte> buf(256);
  EXPECT_EQ(reader.try_read(buf).sequence, 0u);
  EXPECT_EQ(reader.try_read(buf).sequence, 1u);
}

}  // namespace topic_race_test
