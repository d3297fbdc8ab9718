// API misuse has its own status codes (wrong_role, not_supported), and the
// verbs mean one thing: close() closes a channel for everyone, detach() lets
// go of one's own mapping.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <string>

#include "zipc/heap.hpp"
#include "zipc/queue.hpp"
#include "zipc/segment.hpp"
#include "zipc/topic.hpp"
#include "zipc/zipc.h"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Role;
using zipc::Status;

namespace status_test {
namespace {

zipc::QueueOptions small_queue() {
  zipc::QueueOptions o;
  o.block_count = 8;
  o.block_size = 64;
  return o;
}

const std::array<std::byte, 4> kMessage{};

TEST(Statuses, SendingOnAConsumerOnlyQueueHandleIsWrongRole) {
  zipc::test::TempName name("api");
  auto q = zipc::Queue::create(name.str(), small_queue(), Role::consumer);
  EXPECT_EQ(q.try_send(kMessage), Status::wrong_role);
  EXPECT_EQ(q.send(kMessage, 1ms), Status::wrong_role);
  EXPECT_EQ(q.try_reserve().status(), Status::wrong_role);
  EXPECT_FALSE(q.try_reserve());
  EXPECT_EQ(q.stats().sent, 0u);
}

TEST(Statuses, ReceivingOnAProducerOnlyQueueHandleIsWrongRole) {
  zipc::test::TempName name("api");
  auto q = zipc::Queue::create(name.str(), small_queue(), Role::producer);
  ASSERT_EQ(q.try_send(kMessage), Status::ok);
  std::array<std::byte, 64> buf{};
  EXPECT_EQ(q.try_recv(buf).status, Status::wrong_role);
  EXPECT_EQ(q.try_acquire().status(), Status::wrong_role);
  auto rx = zipc::Queue::open(name.str(), Role::consumer);
  EXPECT_TRUE(rx.try_recv(buf).ok());  // the message was left alone
}

TEST(Statuses, AcquireOnALossySubscriberIsNotSupported) {
  zipc::test::TempName name("api");
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 64;
  auto topic = zipc::Topic::create(name.str(), o);
  auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::lossy});
  auto pub = topic.publisher();
  ASSERT_TRUE(pub.try_publish(kMessage).ok());
  zipc::TopicReadLoan loan = sub.try_acquire();
  EXPECT_FALSE(loan);
  EXPECT_EQ(loan.status(), Status::not_supported);
  EXPECT_EQ(sub.acquire(1ms).status(), Status::not_supported);
  std::array<std::byte, 64> buf{};
  EXPECT_TRUE(sub.try_read(buf).ok());  // the copy read still works and got the message
}

TEST(Statuses, EveryStatusAndErrcHasItsOwnName) {
  EXPECT_STREQ(zipc::to_string(Status::wrong_role), "wrong_role");
  EXPECT_STREQ(zipc::to_string(Status::not_supported), "not_supported");
  EXPECT_STREQ(zipc::to_string(zipc::Errc::options_mismatch), "options mismatch");
  EXPECT_STREQ(zipc::to_string(zipc::Errc::type_mismatch), "type mismatch");
  EXPECT_STREQ(zipc::to_string(zipc::Errc::wrong_role), "wrong role");
  EXPECT_EQ(static_cast<int>(zipc::Errc::options_mismatch), 23);
  EXPECT_EQ(static_cast<int>(zipc::Errc::type_mismatch), 24);
  EXPECT_EQ(static_cast<int>(zipc::Errc::wrong_role), 25);
}

TEST(Statuses, EveryErrcHasItsEnumeratorSpellingAndNothingElseHasOne) {
  EXPECT_STREQ(zipc::errc_name(zipc::Errc::ok), "ok");
  EXPECT_STREQ(zipc::errc_name(zipc::Errc::not_found), "not_found");
  EXPECT_STREQ(zipc::errc_name(zipc::Errc::version_mismatch), "version_mismatch");
  EXPECT_STREQ(zipc::errc_name(zipc::Errc::system), "system");
  EXPECT_STREQ(zipc::errc_name(zipc::Errc::wrong_role), "wrong_role");
  EXPECT_EQ(zipc::errc_name(static_cast<zipc::Errc>(26)), nullptr);
  EXPECT_EQ(zipc::errc_name(static_cast<zipc::Errc>(-1)), nullptr);
  EXPECT_STREQ(zipc::to_string(static_cast<zipc::Errc>(26)), "unknown zipc error");
  // The C ABI's names are the same table.
  for (int i = 0; i <= static_cast<int>(zipc::Errc::wrong_role); ++i) {
    EXPECT_STREQ(zipc_status_str(static_cast<zipc_status_t>(i)), zipc::errc_name(static_cast<zipc::Errc>(i))) << i;
  }
}

TEST(Verbs, DetachLetsGoOfOneHandleAndLeavesTheChannelOpenForOthers) {
  zipc::test::TempName name("api");
  auto q = zipc::Queue::create(name.str(), small_queue());
  auto other = zipc::Queue::open(name.str());
  ASSERT_TRUE(q.is_attached());
  q.detach();
  EXPECT_FALSE(q.is_attached());
  EXPECT_EQ(other.try_send(kMessage), Status::ok);  // not closed
  EXPECT_FALSE(other.closed());
  other.close();  // close: for everyone
  EXPECT_EQ(other.try_send(kMessage), Status::closed);
}

TEST(Verbs, TopicHandlesDetach) {
  zipc::test::TempName name("api");
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 64;
  o.max_subscribers = 1;
  auto topic = zipc::Topic::create(name.str(), o);
  auto sub = topic.subscribe();
  auto pub = topic.publisher();
  EXPECT_THROW((void)topic.publisher(), zipc::Error);  // single publisher: taken
  pub.detach();
  EXPECT_FALSE(pub.is_attached());
  auto again = topic.publisher();  // the slot came back
  EXPECT_TRUE(again.is_attached());
  sub.detach();
  EXPECT_FALSE(sub.is_attached());
  EXPECT_TRUE(topic.subscribe().is_attached());  // the only subscriber slot came back
  topic.detach();
  EXPECT_FALSE(topic.is_attached());
}

TEST(Verbs, SegmentAndHeapDetachUnmapOnlyTheirOwnView) {
  zipc::test::TempName name("api");
  auto heap = zipc::Heap::create(name.str(), 1 << 16);
  *heap.construct<int>("x", 0) = 7;
  heap.detach();
  EXPECT_FALSE(heap.is_attached());
  auto again = zipc::Heap::open(name.str());
  ASSERT_TRUE(again.is_attached());
  EXPECT_EQ(*again.find<int>("x"), 7);
  zipc::Segment seg = zipc::Segment::open(name.str(), zipc::SegmentKind::heap);
  EXPECT_TRUE(seg.is_attached());
  seg.detach();
  EXPECT_FALSE(seg.is_attached());
}

}  // namespace

}  // namespace status_test
