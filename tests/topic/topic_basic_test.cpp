// Single-process behaviour of zipc::Topic: API, semantics, late joins, loss accounting.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Delivery;
using zipc::Errc;
using zipc::From;
using zipc::Status;
using zipc::Topic;
using zipc::TopicOptions;

namespace topic_basic_test {
namespace {

TopicOptions small(std::uint64_t capacity = 4096, std::uint32_t max_message = 256) {
  TopicOptions o;
  o.capacity_bytes = capacity;
  o.max_message_size = max_message;
  o.max_subscribers = 8;
  return o;
}

std::vector<std::byte> message(std::uint64_t n, std::size_t size) {
  std::vector<std::byte> m(size);
  for (std::size_t i = 0; i < size; ++i) m[i] = static_cast<std::byte>((n * 31 + i) & 0xff);
  return m;
}

bool matches(std::span<const std::byte> got, std::uint64_t n, std::size_t size) {
  const auto want = message(n, size);
  return got.size() == size && (size == 0 || std::memcmp(got.data(), want.data(), size) == 0);
}

}  // namespace

TEST(Topic, PublishedMessageIsReadWithSequenceTimeAndSize) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  const auto m = message(7, 100);
  const auto sent = pub.try_publish(m);
  ASSERT_EQ(sent.status, Status::ok);
  EXPECT_EQ(sent.sequence, 0u);
  std::array<std::byte, 256> buf;
  const auto got = sut.try_read(buf);
  ASSERT_EQ(got.status, Status::ok);
  EXPECT_EQ(got.sequence, 0u);
  EXPECT_EQ(got.size, 100u);
  EXPECT_GT(got.publish_ns, 0u);
  EXPECT_TRUE(matches(std::span(buf).first(got.size), 7, 100));
  EXPECT_EQ(sut.try_read(buf).status, Status::empty);
}

TEST(Topic, SequenceNumbersAreDenseAcrossManyWrapsWithVariableSizes) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small(4096, 300));
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  std::array<std::byte, 300> buf;
  for (std::uint64_t n = 0; n < 2000; ++n) {
    const std::size_t size = (n * 37) % 301;
    ASSERT_EQ(pub.try_publish(message(n, size)).sequence, n);
    const auto got = sut.try_read(buf);
    ASSERT_EQ(got.status, Status::ok) << n;
    ASSERT_EQ(got.sequence, n);
    ASSERT_TRUE(matches(std::span(buf).first(got.size), n, size)) << n;
  }
}

TEST(Topic, MessageOverMaxSizeFailsWithTooLarge) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto pub = topic.publisher();
  EXPECT_EQ(pub.try_publish(message(0, 257)).status, Status::too_large);
  EXPECT_EQ(pub.try_reserve(1000).status(), Status::too_large);
  EXPECT_EQ(pub.try_publish(message(0, 256)).status, Status::ok);
}

TEST(Topic, ReliableSubscriberIsNeverOverwrittenAndTryPublishSaysFull) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  std::uint64_t sent = 0;
  while (pub.try_publish(message(sent, 100)).ok()) ++sent;
  EXPECT_GT(sent, 20u);
  EXPECT_EQ(pub.try_publish(message(sent, 100)).status, Status::full);
  EXPECT_EQ(pub.publish(message(sent, 100), 20ms).status, Status::timeout);
  std::array<std::byte, 256> buf;
  for (std::uint64_t n = 0; n < sent; ++n) {
    const auto got = sut.try_read(buf);
    ASSERT_EQ(got.status, Status::ok);
    ASSERT_EQ(got.sequence, n);
    ASSERT_TRUE(matches(std::span(buf).first(got.size), n, 100));
  }
  EXPECT_TRUE(pub.try_publish(message(sent, 100)).ok());
}

TEST(Topic, LossySubscriberNeverHoldsThePublisherAndCountsExactlyWhatItLost) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto sut = topic.subscribe({From::latest(), Delivery::lossy});
  auto pub = topic.publisher();
  for (std::uint64_t n = 0; n < 500; ++n) ASSERT_TRUE(pub.try_publish(message(n, 100)).ok()) << n;
  std::array<std::byte, 256> buf;
  auto first = sut.try_read(buf);
  ASSERT_EQ(first.status, Status::overrun);
  const std::uint64_t oldest = topic.oldest_sequence();
  EXPECT_EQ(sut.lost(), oldest);
  std::uint64_t expect = oldest;
  for (;;) {
    const auto got = sut.try_read(buf);
    if (got.status == Status::empty) break;
    ASSERT_EQ(got.status, Status::ok);
    ASSERT_EQ(got.sequence, expect);
    ASSERT_TRUE(matches(std::span(buf).first(got.size), expect, 100));
    ++expect;
  }
  EXPECT_EQ(expect, 500u);
  EXPECT_EQ(sut.lost() + (expect - oldest), 500u);
}

TEST(Topic, LateJoinerFromOldestReplaysWhatTheLogHolds) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small(8192));
  auto pub = topic.publisher();
  for (std::uint64_t n = 0; n < 10; ++n) ASSERT_TRUE(pub.try_publish(message(n, 50)).ok());
  auto sut = topic.subscribe({From::oldest(), Delivery::reliable});
  std::array<std::byte, 256> buf;
  for (std::uint64_t n = 0; n < 10; ++n) {
    const auto got = sut.try_read(buf);
    ASSERT_EQ(got.status, Status::ok);
    EXPECT_EQ(got.sequence, n);
  }
  EXPECT_EQ(sut.try_read(buf).status, Status::empty);
}

TEST(Topic, LateJoinerFromLatestSeesOnlyNewMessages) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small(8192));
  auto pub = topic.publisher();
  for (std::uint64_t n = 0; n < 10; ++n) ASSERT_TRUE(pub.try_publish(message(n, 50)).ok());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  std::array<std::byte, 256> buf;
  EXPECT_EQ(sut.try_read(buf).status, Status::empty);
  ASSERT_TRUE(pub.try_publish(message(10, 50)).ok());
  const auto got = sut.try_read(buf);
  ASSERT_EQ(got.status, Status::ok);
  EXPECT_EQ(got.sequence, 10u);
}

TEST(Topic, LateJoinerFromSequenceStartsExactlyThere) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small(8192));
  auto pub = topic.publisher();
  for (std::uint64_t n = 0; n < 20; ++n) ASSERT_TRUE(pub.try_publish(message(n, 10 + n)).ok());
  for (const bool lossy : {false, true}) {
    auto sut = topic.subscribe({From::sequence(13), lossy ? Delivery::lossy : Delivery::reliable});
    std::array<std::byte, 256> buf;
    for (std::uint64_t n = 13; n < 20; ++n) {
      const auto got = sut.try_read(buf);
      ASSERT_EQ(got.status, Status::ok);
      ASSERT_EQ(got.sequence, n);
      ASSERT_TRUE(matches(std::span(buf).first(got.size), n, 10 + n));
    }
    EXPECT_EQ(sut.try_read(buf).status, Status::empty);
  }
}

TEST(Topic, JoiningAtASequenceNoLongerRetainedFailsNamingTheOldest) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto pub = topic.publisher();
  for (std::uint64_t n = 0; n < 300; ++n) ASSERT_TRUE(pub.try_publish(message(n, 100)).ok());
  const std::uint64_t oldest = topic.oldest_sequence();
  ASSERT_GT(oldest, 0u);
  try {
    (void)topic.subscribe({From::sequence(oldest - 1), Delivery::reliable});
    FAIL() << "joined at a sequence that is gone";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::not_retained);
    EXPECT_NE(std::string(e.what()).find("oldest available is " + std::to_string(oldest)), std::string::npos)
        << e.what();
  }
  auto sut = topic.subscribe({From::sequence(oldest), Delivery::reliable});
  std::array<std::byte, 256> buf;
  EXPECT_EQ(sut.try_read(buf).sequence, oldest);
  EXPECT_EQ(zipc::test::errc_of([&] {
              (void)topic.subscribe({From::sequence(10'000), Delivery::reliable});
            }),
            Errc::invalid_argument);
}

TEST(Topic, ZeroCopyLoanCommitsAndAbortsOnDestruction) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  {
    auto loan = pub.try_reserve(64);
    ASSERT_TRUE(loan);
    std::memset(loan.data().data(), 0x5a, 64);
  }  // aborted
  {
    auto loan = pub.try_reserve(200);
    ASSERT_TRUE(loan);
    std::memset(loan.data().data(), 0x33, 200);
    const auto r = loan.commit(40);  // shorter than reserved
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.sequence, 0u);
  }
  const auto view = sut.try_acquire();
  ASSERT_EQ(view.status(), Status::ok);
  EXPECT_EQ(view.sequence(), 0u);
  ASSERT_EQ(view.data().size(), 40u);
  EXPECT_EQ(view.data()[39], std::byte{0x33});
  EXPECT_EQ(sut.try_acquire().status(), Status::empty);
}

TEST(Topic, ViewsAreRefusedToLossySubscribers) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto sut = topic.subscribe({From::latest(), Delivery::lossy});
  EXPECT_EQ(sut.try_acquire().status(), Status::not_supported);
}

TEST(Topic, ReadWithTimeoutTimesOutOnAnEmptyLog) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto sut = topic.subscribe();
  std::array<std::byte, 256> buf;
  EXPECT_EQ(sut.read(buf, 5ms).status, Status::timeout);
}

TEST(Topic, TooSmallBufferReportsTheSizeAndConsumesNothing) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto sut = topic.subscribe();
  auto pub = topic.publisher();
  ASSERT_TRUE(pub.try_publish(message(0, 100)).ok());
  std::array<std::byte, 10> tiny;
  const auto r = sut.try_read(tiny);
  EXPECT_EQ(r.status, Status::too_large);
  EXPECT_EQ(r.size, 100u);
  std::array<std::byte, 256> buf;
  EXPECT_EQ(sut.try_read(buf).status, Status::ok);
}

TEST(Topic, TwoHundredFiftySixSubscribersEachSeeEveryMessage) {
  zipc::test::TempName name("topic");
  TopicOptions o = small(1 << 16);
  o.max_subscribers = 300;
  auto topic = Topic::create(name.str(), o);
  std::vector<zipc::Subscriber> subs;
  for (int i = 0; i < 300; ++i) subs.push_back(topic.subscribe({From::latest(), Delivery::reliable}));
  EXPECT_EQ(zipc::test::errc_of([&] { (void)topic.subscribe(); }), Errc::busy);
  auto pub = topic.publisher();
  std::array<std::byte, 256> buf;
  for (std::uint64_t round = 0; round < 3; ++round) {
    for (std::uint64_t n = 0; n < 50; ++n) ASSERT_TRUE(pub.try_publish(message(round * 50 + n, 64)).ok());
    for (auto& sut : subs) {
      for (std::uint64_t n = 0; n < 50; ++n) {
        const auto got = sut.try_read(buf);
        ASSERT_EQ(got.status, Status::ok);
        ASSERT_EQ(got.sequence, round * 50 + n);
      }
    }
  }
  subs.pop_back();
  EXPECT_NO_THROW((void)topic.subscribe());  // the freed slot is reused
}

TEST(Topic, SecondLivePublisherOfASingleTopicIsRefused) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), small());
  auto pub = topic.publisher();
  EXPECT_EQ(zipc::test::errc_of([&] { (void)topic.publisher(); }), Errc::busy);
}

TEST(Topic, OpenSeesTheCreatorsGeometryAndMessages) {
  zipc::test::TempName name("topic");
  TopicOptions o = small(10000, 1000);
  o.publishers = zipc::Multiplicity::multi;
  auto topic = Topic::create(name.str(), o);
  auto sut = Topic::open(name.str());
  EXPECT_EQ(sut.capacity_bytes(), 16384u);
  EXPECT_EQ(sut.max_message_size(), 1000u);
  EXPECT_EQ(sut.publishers(), zipc::Multiplicity::multi);
  auto pub = topic.publisher();
  ASSERT_TRUE(pub.try_publish(message(0, 10)).ok());
  auto sub = sut.subscribe({From::oldest(), Delivery::reliable});
  std::array<std::byte, 1000> buf;
  EXPECT_EQ(sub.try_read(buf).status, Status::ok);
  bool created = true;
  auto again = Topic::open_or_create(name.str(), o, &created);
  EXPECT_FALSE(created);
}

TEST(Topic, BadOptionsAreRefused) {
  zipc::test::TempName name("topic");
  EXPECT_EQ(zipc::test::errc_of([&] { (void)Topic::create(name.str(), small(4096, 4000)); }), Errc::invalid_argument);
  TopicOptions o = small();
  o.max_subscribers = 0;
  EXPECT_EQ(zipc::test::errc_of([&] { (void)Topic::create(name.str(), o); }), Errc::invalid_argument);
  EXPECT_EQ(zipc::test::errc_of([&] { (void)Topic::open(name.str()); }), Errc::not_found);
}

TEST(Topic, MultiPublisherHandlesInOneProcessInterleaveWithDenseSequences) {
  zipc::test::TempName name("topic");
  TopicOptions o = small(8192, 200);
  o.publishers = zipc::Multiplicity::multi;
  auto topic = Topic::create(name.str(), o);
  auto sut = topic.subscribe();
  auto a = topic.publisher();
  auto b = topic.publisher();
  std::array<std::byte, 256> buf;
  for (std::uint64_t n = 0; n < 1000; n += 2) {
    ASSERT_EQ(a.try_publish(message(n, n % 200)).sequence, n);
    ASSERT_EQ(b.try_publish(message(n + 1, (n + 1) % 200)).sequence, n + 1);
    for (std::uint64_t k = n; k < n + 2; ++k) {
      const auto got = sut.try_read(buf);
      ASSERT_EQ(got.status, Status::ok);
      ASSERT_EQ(got.sequence, k);
      ASSERT_TRUE(matches(std::span(buf).first(got.size), k, k % 200));
    }
  }
}

// A streaming-mode (bulk) topic of the given ring size, 300 B messages.
TopicOptions streaming(std::uint64_t capacity = 1 << 16) {
  TopicOptions o = small(capacity, 300);
  o.streaming_stores = true;
  return o;
}

std::uint64_t realtime_now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

TEST(Topic, StreamingPublisherStampsABatchWhenItBecomesVisible) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), streaming());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  // One commit: a batch's age is first compared at its second commit, so a lone
  // commit stays pending however slowly this runs (more than one could reach the
  // 100 us age on a slow host, under TSan, and show themselves before the flush).
  ASSERT_TRUE(pub.try_publish(message(0, 200)).ok());
  std::array<std::byte, 300> buf;
  ASSERT_EQ(sut.try_read(buf).status, Status::empty);  // pending: not visible yet
  std::this_thread::sleep_for(2ms);
  const std::uint64_t before_flush = realtime_now_ns();
  pub.flush();
  const std::uint64_t after_flush = realtime_now_ns();
  const auto got = sut.try_read(buf);
  ASSERT_EQ(got.status, Status::ok);
  EXPECT_EQ(got.sequence, 0U);
  // Stamped at the flush (a stamp may reuse a clock reading up to 1 us old), not 2 ms earlier at commit.
  EXPECT_GE(got.publish_ns + 1000, before_flush);
  EXPECT_LE(got.publish_ns, after_flush);
}

TEST(Topic, StreamingPublisherMakesABatchVisibleOnceItIsOlderThan100us) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), streaming());
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  ASSERT_TRUE(pub.try_publish(message(0, 100)).ok());
  std::this_thread::sleep_for(1ms);
  std::array<std::byte, 300> buf;
  // Far fewer than a batch (256), but the batch is old: the next commit's age
  // check (made on each of a batch's first 4 commits) makes all of it visible
  // without flush().
  std::uint64_t sent = 1;
  for (; sent < 8 && sut.try_acquire().status() == Status::empty; ++sent) {
    ASSERT_TRUE(pub.try_publish(message(sent, 100)).ok());
  }
  EXPECT_EQ(sent, 2u);
  std::uint64_t read = 1;  // the view above took sequence 0
  while (sut.try_read(buf).status == Status::ok) ++read;
  EXPECT_EQ(read, sent);
}

TEST(Topic, StreamingPublisherMakesCommitsVisibleInBatchesAndOnFlush) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), streaming(16384));
  auto sut = topic.subscribe({From::latest(), Delivery::reliable});
  auto pub = topic.publisher();
  std::array<std::byte, 300> buf;
  std::uint64_t read = 0;
  for (std::uint64_t n = 0; n < 3000; ++n) {
    // A ring this small fills before a batch does: a full ring flushes, so the reader can make room.
    auto sent = pub.try_publish(message(n, 290));
    if (sent.status == Status::full) {
      ASSERT_EQ(sut.try_read(buf).status, Status::ok);  // visible now
      ++read;
      sent = pub.try_publish(message(n, 290));
    }
    ASSERT_EQ(sent.status, Status::ok);
    ASSERT_EQ(sent.sequence, n);
    for (;;) {
      const auto got = sut.try_read(buf);
      if (got.status == Status::empty) break;
      ASSERT_EQ(got.status, Status::ok);
      ASSERT_EQ(got.sequence, read);
      ASSERT_TRUE(matches(std::span(buf).first(got.size), read, 290));
      ++read;
    }
  }
  pub.flush();
  while (sut.try_read(buf).status == Status::ok) ++read;
  EXPECT_EQ(read, 3000u);
  EXPECT_EQ(topic.next_sequence(), 3000u);
}

}  // namespace topic_basic_test
