// Channel introspection (zipc/introspect.hpp): what zipc ls/stat/top read.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <zipc/zipc.hpp>

#include "zipc_test.hpp"

namespace introspect_test {
namespace {

using namespace std::chrono_literals;
using zipc::test::TempName;

const zipc::ParticipantReport* find_role(const zipc::ChannelReport& r, std::string_view role) {
  for (const auto& p : r.participants) {
    if (p.role == role) return &p;
  }
  return nullptr;
}

std::uint64_t field(const zipc::ReportFields& f, std::string_view key) {
  const std::uint64_t* v = zipc::find_field(f, key);
  EXPECT_NE(v, nullptr) << key;
  return v != nullptr ? *v : ~0ull;
}

std::span<const std::byte> bytes_of(const char* s) {
  return {reinterpret_cast<const std::byte*>(s), std::strlen(s)};
}

TEST(Introspect, ATopicReportsExactCountsBacklogAndEachSubscribersLag) {
  TempName name("intro-topic");
  zipc::Topic topic = zipc::Topic::create(name.str());
  zipc::Subscriber slow = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  zipc::Subscriber fast = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  zipc::Publisher pub = topic.publisher();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(pub.try_publish(bytes_of("hello")).ok());
  std::array<std::byte, 64> buf;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(fast.try_read(buf).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(slow.try_read(buf).ok());
  (void)fast.try_read(buf);                       // publishes its position (nothing left)
  (void)slow.try_read(buf);                       // the 4th
  zipc::TopicReadLoan held = slow.try_acquire();  // the 5th, held: the published position is after the 4th
  ASSERT_TRUE(held);

  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  ASSERT_TRUE(r.readable) << r.problem;
  EXPECT_EQ(r.messages, 10u);
  EXPECT_EQ(r.bytes, 50u);
  EXPECT_EQ(field(r.positions, "next_sequence"), 10u);
  EXPECT_EQ(field(r.positions, "oldest_sequence"), 0u);
  const zipc::ParticipantReport* p = find_role(r, "publisher");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->alive);
  EXPECT_EQ(field(p->fields, "messages"), 10u);
  std::vector<std::uint64_t> lags;
  for (const auto& s : r.participants) {
    if (s.role == "subscriber") lags.push_back(field(s.fields, "lag"));
  }
  std::sort(lags.begin(), lags.end());
  ASSERT_EQ(lags.size(), 2u);
  EXPECT_EQ(lags[0], 0u);
  EXPECT_EQ(lags[1], 6u);  // released 4 of 10 (the view still holds the 5th)
  EXPECT_EQ(r.backlog, 6u);
  EXPECT_EQ(r.alive_count(), 3u);
}

TEST(Introspect, ALossySubscribersLossesAreCountedInItsSlot) {
  TempName name("intro-lossy");
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  zipc::Topic topic = zipc::Topic::create(name.str(), o);
  zipc::Subscriber lossy = topic.subscribe({zipc::From::oldest(), zipc::Delivery::lossy});
  zipc::Publisher pub = topic.publisher();
  std::array<std::byte, 200> m{};
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(pub.try_publish(m).ok());
  std::array<std::byte, 256> buf;
  zipc::ReadResult got = lossy.try_read(buf);
  ASSERT_EQ(got.status, zipc::Status::overrun);
  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  ASSERT_TRUE(r.readable) << r.problem;
  EXPECT_EQ(r.lost, lossy.lost());
  EXPECT_GT(r.lost, 0u);
}

TEST(Introspect, AQueueReportsSentReceivedBacklogAndRoles) {
  TempName name("intro-queue");
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  zipc::Queue producer = zipc::Queue::create(name.str(), o, zipc::Role::producer);
  zipc::Queue consumer = zipc::Queue::open(name.str(), zipc::Role::consumer);
  for (int i = 0; i < 7; ++i) ASSERT_EQ(producer.try_send(bytes_of("x")), zipc::Status::ok);
  std::array<std::byte, 64> buf;
  ASSERT_TRUE(consumer.try_recv(buf).ok());
  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  ASSERT_TRUE(r.readable) << r.problem;
  EXPECT_EQ(r.messages, 7u);
  EXPECT_EQ(r.received, 1u);
  EXPECT_EQ(r.backlog, 6u);
  EXPECT_EQ(r.state, "open");
  ASSERT_NE(find_role(r, "producer"), nullptr);
  ASSERT_NE(find_role(r, "consumer"), nullptr);
}

TEST(Introspect, ADeadParticipantIsReportedDead) {
  TempName name("intro-dead");
  zipc::Topic topic = zipc::Topic::create(name.str());
  zipc::test::Child child = zipc::test::spawn([&] {
    zipc::Topic t = zipc::Topic::open(name.str());
    zipc::Subscriber s = t.subscribe();
    ::_exit(0);  // dies attached
    return 0;
  });
  ASSERT_TRUE(child.wait().exited);
  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  ASSERT_TRUE(r.readable) << r.problem;
  ASSERT_EQ(r.participants.size(), 1u);
  EXPECT_FALSE(r.participants[0].alive);
  EXPECT_EQ(r.dead_count(), 1u);
}

TEST(Introspect, EveryListedChannelIsReadUnderItsOwnNameWhateverZipcNamespaceSays) {
  TempName name("intro-ns");
  const std::string ns = "intro" + std::to_string(::getpid());
  zipc::SegmentOptions in_ns;
  in_ns.name_space = ns;
  zipc::Queue plain = zipc::Queue::create(name.str(), zipc::QueueOptions{});
  zipc::QueueOptions qo;
  qo.segment = in_ns;
  zipc::Queue namesake = zipc::Queue::create(name.str(), qo);
  ASSERT_EQ(plain.send(bytes_of("one"), 0s), zipc::Status::ok);
  ASSERT_EQ(namesake.send(bytes_of("two"), 0s), zipc::Status::ok);
  ASSERT_EQ(namesake.send(bytes_of("three"), 0s), zipc::Status::ok);
  ::setenv("ZIPC_NAMESPACE", ns.c_str(), 1);
  const std::vector<zipc::ChannelReport> all = zipc::inspect_channels();
  ::unsetenv("ZIPC_NAMESPACE");
  zipc::Queue::remove(name.str(), in_ns);
  int seen = 0;
  for (const zipc::ChannelReport& r : all) {
    if (r.segment.name == name.str()) {
      ++seen;
      EXPECT_EQ(r.backlog, 1u) << "the channel of no name space, not its namesake";
    } else if (r.segment.name == ns + ":" + name.str()) {
      ++seen;
      EXPECT_EQ(r.backlog, 2u);
    }
  }
  EXPECT_EQ(seen, 2);
}

// A filter is asked about every listed name, with its name space, and only
// the names it accepts are reported.
TEST(Introspect, OnlyTheChannelsTheFilterAcceptsAreReported) {
  TempName keep("intro-keep");
  TempName drop("intro-drop");
  zipc::Queue kept = zipc::Queue::create(keep.str(), zipc::QueueOptions{});
  zipc::Queue dropped = zipc::Queue::create(drop.str(), zipc::QueueOptions{});
  ASSERT_EQ(kept.send(bytes_of("one"), 0s), zipc::Status::ok);
  std::vector<std::string> asked;
  const std::vector<zipc::ChannelReport> sut = zipc::inspect_channels([&](std::string_view name) {
    asked.emplace_back(name);
    return name == keep.str();
  });
  ASSERT_EQ(sut.size(), 1u);
  EXPECT_EQ(sut[0].segment.name, keep.str());
  EXPECT_EQ(sut[0].backlog, 1u);
  EXPECT_NE(std::find(asked.begin(), asked.end(), drop.str()), asked.end()) << "every listed name is offered";
  const std::vector<zipc::ChannelReport> none = zipc::inspect_channels([](std::string_view) { return false; });
  EXPECT_TRUE(none.empty());
}

TEST(Introspect, AMissingChannelThrowsNotFound) {
  try {
    (void)zipc::inspect_channel(zipc::test::unique_name("intro-absent"));
    FAIL() << "no exception";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::not_found);
  }
}

// Hostile segments: a valid header over random payload bytes, for every kind
// the reader understands. Must report a problem or a validated state, never crash.
TEST(Introspect, RandomPayloadsBehindValidHeadersNeverCrashTheReader) {
  std::mt19937_64 rng(12345);
  const zipc::SegmentKind kinds[] = {zipc::SegmentKind::topic, zipc::SegmentKind::queue, zipc::SegmentKind::rpc};
  int refused = 0;
  for (int i = 0; i < 60; ++i) {
    TempName name("intro-fuzz");
    zipc::SegmentSpec spec;
    spec.kind = kinds[i % 3];
    spec.payload_size = 4096 * (1 + rng() % 64);
    for (auto& p : spec.params) p = (i % 2 == 0) ? rng() : rng() % 4096;
    zipc::Segment::create(name.str(), spec, [&](std::byte* p, std::size_t n) {
      for (std::size_t k = 0; k < n; ++k) p[k] = static_cast<std::byte>(rng());
    });
    const zipc::ChannelReport r = zipc::inspect_channel(name.str());
    refused += r.readable ? 0 : 1;
    if (!r.readable) {
      EXPECT_FALSE(r.problem.empty());
    }
  }
  EXPECT_GT(refused, 50);
}

TEST(Introspect, ScribbledTopicPositionsAreRefusedNotTrusted) {
  TempName name("intro-scribble");
  zipc::Topic topic = zipc::Topic::create(name.str());
  zipc::Segment seg = zipc::Segment::open(name.str(), zipc::SegmentKind::topic);
  // PublisherLine at payload offset 128: tail, cursor, next_sequence, oldest.
  auto* words = reinterpret_cast<std::uint64_t*>(seg.payload() + 128);
  words[3] = ~0ull;  // oldest beyond cursor
  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  EXPECT_FALSE(r.readable);
  EXPECT_NE(r.problem.find("positions"), std::string::npos) << r.problem;
  words[3] = 0;
}

}  // namespace

}  // namespace introspect_test
