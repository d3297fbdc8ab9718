// Durable reliable subscribers: a named position held for a grace time after
// its subscriber dies or detaches (exact resume), released after it (an exact
// lost count), one live holder per name, names validated.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <string>

#include "layout/topic_layout.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Delivery;
using zipc::Errc;
using zipc::From;
using zipc::Status;
using zipc::SubscribeOptions;
using zipc::Topic;
using zipc::TopicOptions;

namespace topic_durable_test {
namespace {

TopicOptions small_topic() {
  TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 200;
  o.recovery_time = 200ms;
  return o;
}

SubscribeOptions durable(const std::string& name, std::chrono::milliseconds grace, From from = From::oldest()) {
  SubscribeOptions s;
  s.from = from;
  s.durable_name = name;
  s.durable_grace = grace;
  return s;
}

std::array<std::byte, 8> payload(std::uint64_t n) {
  std::array<std::byte, 8> b{};
  std::memcpy(b.data(), &n, sizeof n);
  return b;
}

std::uint64_t value_of(std::span<const std::byte> b) {
  std::uint64_t n = ~0ull;
  if (b.size() == sizeof n) std::memcpy(&n, b.data(), sizeof n);
  return n;
}

// A child that subscribes with `name`, reads `count` messages (checking they
// are 0..count-1 in order), then SIGKILLs itself mid-stream.
zipc::test::Child reader_killed_after(const std::string& topic, const std::string& name, int count,
                                      std::chrono::milliseconds grace = 30s) {
  return zipc::test::spawn([=]() {
    Topic t = Topic::open(topic);
    zipc::Subscriber sub = t.subscribe(durable(name, grace));
    std::array<std::byte, 200> buf{};
    for (int i = 0; i < count; ++i) {
      const zipc::ReadResult r = sub.read(buf, 10s);
      if (!r.ok() || r.sequence != static_cast<std::uint64_t>(i)) return 2;
      if (value_of(std::span(buf).first(r.size)) != static_cast<std::uint64_t>(i)) return 3;
    }
    ::kill(::getpid(), SIGKILL);
    return 4;
  });
}

}  // namespace

TEST(TopicDurable, SubscriberKilledMidStreamResumesAtTheNextUnreadMessageWithinTheGrace) {
  zipc::test::TempName name("tdur");
  Topic t = Topic::create(name.str(), small_topic());
  zipc::Publisher pub = t.publisher();
  for (std::uint64_t i = 0; i < 40; ++i) ASSERT_TRUE(pub.try_publish(payload(i)).ok());
  auto child = reader_killed_after(name.str(), "audit", 17);
  const auto res = child.wait();
  ASSERT_EQ(res.signal, SIGKILL) << "exit " << res.exit_code << " " << res.output;
  // The dead reader's position holds the publisher back (grace 30 s)...
  std::uint64_t sent = 40;
  while (pub.try_publish(payload(sent)).ok()) ++sent;
  EXPECT_EQ(pub.publish(payload(sent), 20ms).status, Status::timeout);
  // ...and the restart reads on from there: the 23 it left, and what came after.
  zipc::Subscriber again = t.subscribe(durable("audit", 30s, From::latest()));  // `from` is ignored on a resume
  EXPECT_EQ(again.next_sequence(), 17u);
  std::array<std::byte, 200> buf{};
  for (std::uint64_t i = 17; i < sent; ++i) {
    const zipc::ReadResult r = again.try_read(buf);
    ASSERT_EQ(r.status, Status::ok) << "at " << i;
    EXPECT_EQ(r.sequence, i);
    EXPECT_EQ(value_of(std::span(buf).first(r.size)), i);
  }
  EXPECT_EQ(again.try_read(buf).status, Status::empty);
  EXPECT_EQ(again.lost(), 0u);
}

TEST(TopicDurable, DeadSubscribersPositionIsReleasedAfterTheGraceAndTheRestartLearnsTheExactCountLost) {
  zipc::test::TempName name("tdur");
  Topic t = Topic::create(name.str(), small_topic());
  zipc::Publisher pub = t.publisher();
  for (std::uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(pub.try_publish(payload(i)).ok());
  auto child = reader_killed_after(name.str(), "crashy", 3, 1s);
  ASSERT_EQ(child.wait().signal, SIGKILL);
  std::uint64_t sent = 5;
  while (pub.try_publish(payload(sent)).ok()) ++sent;
  EXPECT_EQ(pub.publish(payload(sent), 50ms).status, Status::timeout) << "held during the grace";
  ASSERT_TRUE(pub.publish(payload(sent), 20s).ok()) << "released after it";
  ++sent;
  const std::uint64_t oldest = t.oldest_sequence();
  ASSERT_GT(oldest, 3u);
  zipc::Subscriber sub = t.subscribe(durable("crashy", 1s));
  std::array<std::byte, 200> buf{};
  const zipc::TopicReadLoan gap = sub.try_acquire();  // the zero-copy call reports it too
  EXPECT_FALSE(gap);
  EXPECT_EQ(gap.status(), Status::not_retained);
  EXPECT_EQ(gap.sequence(), oldest);
  EXPECT_EQ(sub.lost(), oldest - 3);
  const zipc::ReadResult r = sub.try_read(buf);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.sequence, oldest);
}

TEST(TopicDurable, DetachedSubscriberResumesExactlyAndItsPositionHoldsThePublisherBack) {
  zipc::test::TempName name("tdur");
  Topic t = Topic::create(name.str(), small_topic());
  zipc::Publisher pub = t.publisher();
  std::array<std::byte, 200> buf{};
  {
    zipc::Subscriber sub = t.subscribe(durable("ledger", 60s, From::latest()));
    ASSERT_TRUE(pub.try_publish(payload(0)).ok());
    ASSERT_TRUE(pub.try_publish(payload(1)).ok());
    ASSERT_TRUE(sub.try_read(buf).ok());
  }  // detached: the position (next: 1) is held
  std::uint64_t sent = 2;
  while (pub.try_publish(payload(sent)).ok()) ++sent;
  EXPECT_EQ(pub.try_publish(payload(sent)).status, Status::full) << "the detached position must hold the publisher";
  EXPECT_EQ(pub.publish(payload(sent), 50ms).status, Status::timeout);
  zipc::Subscriber sub = t.subscribe(durable("ledger", 60s));
  for (std::uint64_t i = 1; i < sent; ++i) {
    const zipc::ReadResult r = sub.try_read(buf);
    ASSERT_EQ(r.status, Status::ok) << "at " << i;
    EXPECT_EQ(r.sequence, i);
  }
  EXPECT_TRUE(pub.try_publish(payload(sent)).ok()) << "read up: room again";
}

TEST(TopicDurable, AfterTheGraceThePublisherGoesOnAndTheRestartLearnsTheExactCountLost) {
  zipc::test::TempName name("tdur");
  Topic t = Topic::create(name.str(), small_topic());
  zipc::Publisher pub = t.publisher();
  {
    zipc::Subscriber sub = t.subscribe(durable("metrics", 1s, From::latest()));
    std::array<std::byte, 200> buf{};
    ASSERT_TRUE(pub.try_publish(payload(0)).ok());
    ASSERT_TRUE(pub.try_publish(payload(1)).ok());
    ASSERT_TRUE(pub.try_publish(payload(2)).ok());
    ASSERT_TRUE(sub.try_read(buf).ok());
    ASSERT_TRUE(sub.try_read(buf).ok());  // next unread: 2
  }
  std::uint64_t sent = 3;
  while (pub.try_publish(payload(sent)).ok()) ++sent;
  EXPECT_EQ(pub.publish(payload(sent), 50ms).status, Status::timeout) << "held during the grace";
  // Blocked by the held position until the grace runs out, then on.
  const auto t0 = std::chrono::steady_clock::now();
  const zipc::CommitResult late = pub.publish(payload(sent), 20s);
  const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(late.ok()) << zipc::to_string(late.status);
  ++sent;
  std::printf("[ info ] publisher held %.0f ms more by a detached durable subscriber (grace 1000 ms)\n", waited_ms);
  const std::uint64_t oldest = t.oldest_sequence();
  ASSERT_GT(oldest, 2u) << "making room must have dropped the released position";
  zipc::Subscriber sub = t.subscribe(durable("metrics", 1s));
  std::array<std::byte, 200> buf{};
  const zipc::ReadResult gap = sub.read(buf, 1s);
  EXPECT_EQ(gap.status, Status::not_retained);
  EXPECT_EQ(gap.size, oldest - 2) << "exactly the messages from the next unread one to the oldest retained";
  EXPECT_EQ(gap.sequence, oldest);
  EXPECT_EQ(sub.lost(), oldest - 2);
  for (std::uint64_t i = oldest; i < sent; ++i) {
    const zipc::ReadResult r = sub.try_read(buf);
    ASSERT_EQ(r.status, Status::ok) << "at " << i;
    EXPECT_EQ(r.sequence, i);
    EXPECT_EQ(value_of(std::span(buf).first(r.size)), i);
  }
}

// The durable slot's owner word, read from the segment (kParkedOwner once released).
static std::uint64_t owner_of_slot(const Topic& t, std::uint32_t i) {
  auto* slots =
      reinterpret_cast<const zipc::layout::SubscriberSlot*>(t.segment().payload() + zipc::layout::sub_table_offset());
  return slots[i].owner.load();
}

TEST(TopicDurable, ReleasedPositionStillRetainedResumesWithoutLoss) {
  zipc::test::TempName name("tdur");
  Topic t = Topic::create(name.str(), small_topic());
  zipc::Publisher pub = t.publisher();
  zipc::Subscriber behind = t.subscribe({From::oldest(), Delivery::reliable});  // slot 0: holds the log
  std::array<std::byte, 200> buf{};
  {
    zipc::Subscriber sub = t.subscribe(durable("slow", 0ms, From::latest()));  // slot 1
    for (std::uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(pub.try_publish(payload(i)).ok());
    ASSERT_TRUE(sub.try_read(buf).ok());
    ASSERT_TRUE(sub.try_read(buf).ok());  // next unread: 2
  }
  std::uint64_t sent = 3;
  while (pub.try_publish(payload(sent)).ok()) ++sent;
  // Full because of `behind`; the liveness check found the durable position
  // below the room needed and, with a zero grace, released it.
  // A big message: the room it needs reaches past the durable position.
  const std::array<std::byte, 200> big{};
  EXPECT_EQ(pub.publish(big, 50ms).status, Status::timeout);
  EXPECT_EQ(owner_of_slot(t, 1), zipc::layout::kParkedOwner);
  zipc::Subscriber sub = t.subscribe(durable("slow", 0ms));
  const zipc::ReadResult r = sub.try_read(buf);
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.sequence, 2u);
  EXPECT_EQ(sub.lost(), 0u);
}

TEST(TopicDurable, SecondLiveSubscriberWithTheSameNameIsRefusedInAnyProcess) {
  zipc::test::TempName name("tdur");
  Topic t = Topic::create(name.str(), small_topic());
  zipc::Subscriber first = t.subscribe(durable("only-one", 1s));
  std::string what;
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(durable("only-one", 1s)); }, &what), Errc::busy);
  EXPECT_NE(what.find("only-one"), std::string::npos) << what;
  EXPECT_NE(what.find("live"), std::string::npos) << what;
  auto child = zipc::test::spawn([&]() {
    Topic tt = Topic::open(name.str());
    return zipc::test::errc_of([&] { (void)tt.subscribe(durable("only-one", 1s)); }) == Errc::busy ? 0 : 1;
  });
  EXPECT_EQ(child.wait().exit_code, 0);
  // Other names, and plain subscribers, are unaffected; once detached, the name is free.
  zipc::Subscriber other = t.subscribe(durable("only-two", 1s));
  zipc::Subscriber plain = t.subscribe();
  first.detach();
  EXPECT_NO_THROW((void)t.subscribe(durable("only-one", 1s)));
}

TEST(TopicDurable, BadNamesAndOptionsAreRefusedWithAClearError) {
  zipc::test::TempName name("tdur");
  Topic t = Topic::create(name.str(), small_topic());
  std::string what;
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(durable("has space", 1s)); }, &what), Errc::invalid_argument);
  EXPECT_NE(what.find("durable_name"), std::string::npos) << what;
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(durable("a/b", 1s)); }), Errc::invalid_argument);
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(durable(std::string(48, 'x'), 1s)); }, &what),
            Errc::invalid_argument);
  EXPECT_NE(what.find("47"), std::string::npos) << what;
  EXPECT_NO_THROW((void)t.subscribe(durable(std::string(47, 'x'), 1s)));
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(durable(std::string("nul\0x", 5), 1s)); }),
            Errc::invalid_argument);
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(durable("ok", -1ms)); }), Errc::invalid_argument);
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(durable("ok", std::chrono::hours(24 * 8))); }),
            Errc::invalid_argument);
  SubscribeOptions lossy = durable("lossy", 1s);
  lossy.delivery = Delivery::lossy;
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(lossy); }, &what), Errc::invalid_argument);
  EXPECT_NE(what.find("reliable"), std::string::npos) << what;
}

TEST(TopicDurable, PlainSubscribersNeverTakeAHeldDurableSlot) {
  zipc::test::TempName name("tdur");
  TopicOptions o = small_topic();
  o.max_subscribers = 2;
  Topic t = Topic::create(name.str(), o);
  zipc::Publisher pub = t.publisher();
  { zipc::Subscriber d = t.subscribe(durable("keep", 60s)); }
  zipc::Subscriber plain = t.subscribe();
  EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(); }), Errc::busy) << "the held durable slot is not free";
  ASSERT_TRUE(pub.try_publish(payload(7)).ok());
  zipc::Subscriber d = t.subscribe(durable("keep", 60s));
  std::array<std::byte, 200> buf{};
  const zipc::ReadResult r = d.try_read(buf);
  ASSERT_EQ(r.status, Status::ok);
  EXPECT_EQ(value_of(std::span(buf).first(r.size)), 7u);
}

TEST(TopicDurable, TopicOfTheOlderLayoutIsRefusedNamingBothVersions) {
  zipc::test::TempName name("tdur");
  zipc::SegmentSpec spec;
  spec.kind = zipc::SegmentKind::topic;
  spec.payload_size = 1 << 16;
  spec.params[0] = 4096;
  spec.params[1] = 200;
  spec.params[2] = 4;
  spec.params[3] = 1;
  spec.params[4] = 1;  // topic layout version 1 (before durable subscribers)
  zipc::Segment seg = zipc::Segment::create(name.str(), spec, [](std::byte*, std::size_t) {});
  std::string what;
  EXPECT_EQ(zipc::test::errc_of([&] { (void)Topic::open(name.str()); }, &what), Errc::version_mismatch);
  EXPECT_NE(what.find("version 1"), std::string::npos) << what;
  EXPECT_NE(what.find("version " + std::to_string(zipc::layout::kTopicLayoutVersion)), std::string::npos) << what;
}

}  // namespace topic_durable_test
