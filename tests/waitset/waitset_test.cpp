// zipc::WaitSet: every attachment kind is reported, level-triggered, in the
// io_uring mode and the polling fallback.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Ready;
using zipc::ReadyKind;
using zipc::WaitSet;

namespace waitset_test {
namespace {

zipc::QueueOptions small_queue() {
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  return o;
}
zipc::TopicOptions small_topic(std::uint32_t subscribers = 8) {
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.max_subscribers = subscribers;
  return o;
}
std::span<const std::byte> bytes(const char* s) {
  return std::as_bytes(std::span(s, std::strlen(s)));
}
bool has_id(std::span<const Ready> r, std::uint64_t id) {
  for (const Ready& x : r)
    if (x.id == id) return true;
  return false;
}

class WaitSetModes : public ::testing::TestWithParam<bool> {
 protected:
  zipc::WaitSetOptions options() const {
    zipc::WaitSetOptions o;
    o.force_fallback = GetParam();
    return o;
  }
};

TEST_P(WaitSetModes, AQueueWithDataIsReportedAndAnEmptyOneTimesOut) {
  zipc::test::TempName name("ws.q");
  auto q = zipc::Queue::create(name.str(), small_queue());
  WaitSet ws(options());
  const auto id = ws.attach(q);
  EXPECT_NE(id, 0u);
  EXPECT_TRUE(ws.wait(20ms).empty());
  ASSERT_EQ(q.try_send(bytes("hi")), zipc::Status::ok);
  const auto r = ws.wait(5s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(r[0].kind, ReadyKind::queue);
}

TEST_P(WaitSetModes, ASubscriberIsReportedWhenAMessageIsPublished) {
  zipc::test::TempName name("ws.t");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  auto pub = topic.publisher();
  auto sub = topic.subscribe();
  WaitSet ws(options());
  const auto id = ws.attach(sub);
  EXPECT_TRUE(ws.wait(0ns).empty());
  std::thread t([&] {
    std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(pub.publish(bytes("m"), 1s).ok());
  });
  const auto r = ws.wait(5s);
  t.join();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(r[0].kind, ReadyKind::subscriber);
}

TEST_P(WaitSetModes, ReadinessIsLevelTriggeredUntilTheChannelIsDrained) {
  zipc::test::TempName name("ws.level");
  auto q = zipc::Queue::create(name.str(), small_queue());
  WaitSet ws(options());
  const auto id = ws.attach(q);
  ASSERT_EQ(q.try_send(bytes("a")), zipc::Status::ok);
  ASSERT_EQ(q.try_send(bytes("b")), zipc::Status::ok);
  std::array<std::byte, 64> buf{};
  for (int i = 0; i < 2; ++i) {
    const auto r = ws.wait(5s);
    ASSERT_TRUE(has_id(r, id)) << "round " << i;
    EXPECT_TRUE(has_id(ws.wait(0ns), id)) << "still holds data, still ready";
    EXPECT_EQ(q.try_recv(buf).status, zipc::Status::ok);
  }
  EXPECT_TRUE(ws.wait(10ms).empty()) << "drained: not ready";
}

TEST_P(WaitSetModes, FdsDeadlinesAndIntervalsAreReported) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  WaitSet ws(options());
  const auto fd_id = ws.attach_fd(p[0], POLLIN);
  const auto dl = ws.attach_deadline(zipc::Deadline::after(10ms));
  auto r = ws.wait(5s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, dl);
  EXPECT_EQ(r[0].kind, ReadyKind::deadline);
  EXPECT_TRUE(ws.wait(20ms).empty()) << "a deadline fires once";
  ASSERT_EQ(write(p[1], "x", 1), 1);
  r = ws.wait(5s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, fd_id);
  EXPECT_NE(r[0].revents & POLLIN, 0u);
  EXPECT_TRUE(has_id(ws.wait(0ns), fd_id)) << "level-triggered fd";
  char c;
  ASSERT_EQ(read(p[0], &c, 1), 1);
  EXPECT_TRUE(ws.detach(fd_id));
  EXPECT_FALSE(ws.detach(fd_id));
  const auto iv = ws.attach_interval(5ms);
  int ticks = 0;
  for (int i = 0; i < 3; ++i) {
    r = ws.wait(5s);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].id, iv);
    EXPECT_GE(r[0].expirations, 1u);
    ++ticks;
  }
  EXPECT_EQ(ticks, 3);
  close(p[0]);
  close(p[1]);
}

TEST_P(WaitSetModes, OneActiveChannelAmong1024AttachmentsIsTheOnlyOneReported) {
  std::vector<std::unique_ptr<zipc::test::TempName>> names;
  std::vector<zipc::Topic> topics;
  std::vector<zipc::Subscriber> subs;
  subs.reserve(1024);
  WaitSet ws(options());
  for (int t = 0; t < 4; ++t) {
    names.push_back(std::make_unique<zipc::test::TempName>("ws.many"));
    topics.push_back(zipc::Topic::create(names.back()->str(), small_topic(256)));
    for (int s = 0; s < 256; ++s) {
      subs.push_back(topics.back().subscribe());
      (void)ws.attach(subs.back());
    }
  }
  zipc::test::TempName qn("ws.active");
  auto q = zipc::Queue::create(qn.str(), small_queue());
  const auto id = ws.attach(q);
  EXPECT_EQ(ws.size(), 1025u);
  EXPECT_TRUE(ws.wait(0ns).empty());
  std::thread t([&] {
    std::this_thread::sleep_for(10ms);
    EXPECT_EQ(q.try_send(bytes("go")), zipc::Status::ok);
  });
  const auto r = ws.wait(5s);
  t.join();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
}

TEST_P(WaitSetModes, StopEndsRunFromAnotherThreadEvenWhileAChannelStaysReady) {
  zipc::test::TempName name("ws.stop");
  auto q = zipc::Queue::create(name.str(), small_queue());
  ASSERT_EQ(q.try_send(bytes("never drained")), zipc::Status::ok);  // ready at every wait()
  WaitSet ws(options());
  (void)ws.attach(q);
  (void)ws.attach_interval(1ms);
  std::atomic<int> calls{0};
  std::thread t([&] {
    std::this_thread::sleep_for(30ms);
    ws.stop();
  });
  ws.run([&](const Ready&) { calls.fetch_add(1); });
  t.join();
  EXPECT_GT(calls.load(), 0);
}

TEST_P(WaitSetModes, AttachingAndDetachingWhileAnotherThreadSendsLosesNoWakeUp) {
  zipc::test::TempName name("ws.race");
  auto q = zipc::Queue::create(name.str(), small_queue());
  zipc::test::TempName tn("ws.race.t");
  auto topic = zipc::Topic::create(tn.str(), small_topic());
  auto quiet = topic.subscribe();
  constexpr int kMessages = 300;
  // The producer thread has a handle of its own: a handle is used by one
  // thread at a time (debug builds refuse a second one with busy).
  auto sender = zipc::Queue::open(name.str(), zipc::Role::producer);
  std::thread producer([&] {
    for (int i = 0; i < kMessages; ++i) {
      EXPECT_EQ(sender.send(bytes("m"), 5s), zipc::Status::ok);
      if (i % 8 == 0) std::this_thread::sleep_for(100us);
    }
  });
  WaitSet ws(options());
  int received = 0;
  std::array<std::byte, 64> buf{};
  std::uint64_t qid = ws.attach(q);
  for (int round = 0; received < kMessages; ++round) {
    const auto extra = ws.attach(quiet);
    const auto r = ws.wait(10s);
    ASSERT_FALSE(r.empty()) << "lost wake-up after " << received << " messages";
    EXPECT_TRUE(ws.detach(extra));
    if (!has_id(r, qid)) continue;
    if (q.try_recv(buf).status == zipc::Status::ok) ++received;
    if (round % 3 == 0) {  // re-attach the active channel itself
      EXPECT_TRUE(ws.detach(qid));
      qid = ws.attach(q);
    }
  }
  producer.join();
  EXPECT_EQ(received, kMessages);
}

INSTANTIATE_TEST_SUITE_P(WaitSet, WaitSetModes, ::testing::Values(false, true), [](const auto& info) {
  return info.param ? std::string("Fallback") : std::string("IoUring");
});

TEST(WaitSet, UsesIoUringFutexWaitsWhereTheKernelHasThem) {
  WaitSet ws;
  if (!ws.uses_io_uring()) GTEST_SKIP() << "kernel without IORING_OP_FUTEX_WAIT (< 6.7): fallback in use";
  EXPECT_GE(ws.readiness_fd(), 0);
}

TEST(WaitSet, AQueueHandleWithoutTheConsumerRoleIsRejected) {
  zipc::test::TempName name("ws.role");
  auto q = zipc::Queue::create(name.str(), small_queue(), zipc::Role::producer);
  WaitSet ws;
  try {
    (void)ws.attach(q);
    FAIL() << "attach accepted a producer-only handle";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::invalid_argument);
  }
}

}  // namespace

}  // namespace waitset_test
