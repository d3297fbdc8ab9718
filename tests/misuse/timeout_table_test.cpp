// docs/guide/timeouts.md, the C++ and C rows: forever waits (until a peer acts),
// zero tries once, negative tries once too (never forever, never an error),
// and a try that finds nothing says empty/full, not timeout; a positive
// timeout that expires says timeout. Every blocking call kind is covered.
// A forever wait is released by a thread acting after it started, so no
// case depends on timing; each runs isolated (a hang is a watchdog failure).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <thread>

#include "isolated.hpp"
#include "zipc/event_channel.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc/waitset.hpp"
#include "zipc/zipc.h"

using namespace std::chrono_literals;
using zipc::Status;
using zipc::misuse::bytes_of;
using zipc::misuse::isolated;

namespace timeout_table_test {
namespace {

constexpr std::chrono::nanoseconds kNegative[] = {-1ns, -1s, std::chrono::nanoseconds::min()};

zipc::QueueOptions tiny_queue() {
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 2;
  return o;
}

zipc::TopicOptions tiny_topic() {
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 1024;
  o.max_subscribers = 2;
  return o;
}

TEST(TimeoutTable, ForeverIsTheLargestDuration) {
  static_assert(zipc::forever == std::chrono::nanoseconds::max());
  static_assert(ZIPC_FOREVER == INT64_MAX);
  EXPECT_EQ(zipc::forever.count(), ZIPC_FOREVER);
}

// ---------------------------------------------------------------- Queue

TEST(TimeoutTable, QueueRecvTriesOnceAtZeroAndNegative) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto sut = zipc::Queue::create(name.str(), tiny_queue());
    std::array<std::byte, 64> buf{};
    EXPECT_EQ(sut.recv(buf, 0ns).status, Status::empty);
    for (auto t : kNegative) EXPECT_EQ(sut.recv(buf, t).status, Status::empty);
    EXPECT_EQ(sut.acquire(0ns).status(), Status::empty);
    for (auto t : kNegative) EXPECT_EQ(sut.acquire(t).status(), Status::empty);
    EXPECT_EQ(sut.recv(buf, 1ms).status, Status::timeout);
    ASSERT_EQ(sut.try_send(bytes_of("x")), Status::ok);
    EXPECT_EQ(sut.recv(buf, -1s).status, Status::ok);  // a try that finds a message takes it
  });
}

TEST(TimeoutTable, QueueSendTriesOnceAtZeroAndNegative) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto sut = zipc::Queue::create(name.str(), tiny_queue());
    ASSERT_EQ(sut.try_send(bytes_of("1")), Status::ok);
    ASSERT_EQ(sut.try_send(bytes_of("2")), Status::ok);
    EXPECT_EQ(sut.send(bytes_of("3"), 0ns), Status::full);
    for (auto t : kNegative) EXPECT_EQ(sut.send(bytes_of("3"), t), Status::full);
    EXPECT_EQ(sut.reserve(0ns).status(), Status::full);
    for (auto t : kNegative) EXPECT_EQ(sut.reserve(t).status(), Status::full);
    EXPECT_EQ(sut.send(bytes_of("3"), 1ms), Status::timeout);
  });
}

TEST(TimeoutTable, QueueRecvForeverWaitsForAMessage) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto sut = zipc::Queue::create(name.str(), tiny_queue());
    std::thread peer([&] {
      auto p = zipc::Queue::open(name.str());
      std::this_thread::sleep_for(20ms);
      (void)p.send(bytes_of("late"), zipc::forever);
    });
    std::array<std::byte, 64> buf{};
    const zipc::IoResult r = sut.recv(buf, zipc::forever);
    peer.join();
    EXPECT_EQ(r.status, Status::ok);
    EXPECT_EQ(r.size, 4u);
  });
}

TEST(TimeoutTable, QueueSendForeverWaitsForRoom) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto sut = zipc::Queue::create(name.str(), tiny_queue());
    ASSERT_EQ(sut.try_send(bytes_of("1")), Status::ok);
    ASSERT_EQ(sut.try_send(bytes_of("2")), Status::ok);
    std::thread peer([&] {
      auto c = zipc::Queue::open(name.str());
      std::this_thread::sleep_for(20ms);
      std::array<std::byte, 64> buf{};
      (void)c.recv(buf, zipc::forever);
    });
    EXPECT_EQ(sut.send(bytes_of("3"), zipc::forever), Status::ok);
    peer.join();
  });
}

// ---------------------------------------------------------------- Topic

TEST(TimeoutTable, TopicReadTriesOnceAtZeroAndNegative) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto t = zipc::Topic::create(name.str(), tiny_topic());
    auto sut = t.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
    std::array<std::byte, 1024> buf{};
    EXPECT_EQ(sut.read(buf, 0ns).status, Status::empty);
    for (auto d : kNegative) EXPECT_EQ(sut.read(buf, d).status, Status::empty);
    EXPECT_EQ(sut.acquire(0ns).status(), Status::empty);
    for (auto d : kNegative) EXPECT_EQ(sut.acquire(d).status(), Status::empty);
    EXPECT_EQ(sut.read(buf, 1ms).status, Status::timeout);
  });
}

TEST(TimeoutTable, TopicPublishTriesOnceAtZeroAndNegative) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto t = zipc::Topic::create(name.str(), tiny_topic());
    auto holder = t.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});  // never reads
    auto sut = t.publisher();
    const std::array<std::byte, 1024> big{};
    while (sut.try_publish(big).status == Status::ok) {
    }
    EXPECT_EQ(sut.publish(big, 0ns).status, Status::full);
    for (auto d : kNegative) EXPECT_EQ(sut.publish(big, d).status, Status::full);
    EXPECT_EQ(sut.reserve(1024, 0ns).status(), Status::full);
    for (auto d : kNegative) EXPECT_EQ(sut.reserve(1024, d).status(), Status::full);
    EXPECT_EQ(sut.publish(big, 1ms).status, Status::timeout);
  });
}

TEST(TimeoutTable, TopicReadForeverWaitsForAMessage) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto t = zipc::Topic::create(name.str(), tiny_topic());
    auto sut = t.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
    auto pub = t.publisher();
    std::thread peer([&] {
      std::this_thread::sleep_for(20ms);
      (void)pub.publish(bytes_of("late"), zipc::forever);
    });
    std::array<std::byte, 1024> buf{};
    const zipc::ReadResult r = sut.read(buf, zipc::forever);
    peer.join();
    EXPECT_EQ(r.status, Status::ok);
  });
}

TEST(TimeoutTable, TopicPublishForeverWaitsForRoom) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto t = zipc::Topic::create(name.str(), tiny_topic());
    auto reader = t.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
    auto sut = t.publisher();
    const std::array<std::byte, 1024> big{};
    while (sut.try_publish(big).status == Status::ok) {
    }
    std::thread peer([&] {
      std::this_thread::sleep_for(20ms);
      std::array<std::byte, 1024> buf{};
      (void)reader.read(buf, zipc::forever);
    });
    EXPECT_EQ(sut.publish(big, zipc::forever).status, Status::ok);
    peer.join();
  });
}

// ---------------------------------------------------------------- EventChannel and WaitSet

TEST(TimeoutTable, ListenerWaitTriesOnceAtZeroAndNegativeAndWaitsForever) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto ch = zipc::EventChannel::create(name.str());
    auto sut = ch.listener();
    EXPECT_TRUE(sut.wait(0ns).empty());
    for (auto d : kNegative) EXPECT_TRUE(sut.wait(d).empty());
    auto n = ch.notifier();
    std::thread peer([&] {
      std::this_thread::sleep_for(20ms);
      (void)n.notify(7);
    });
    const auto ids = sut.wait(zipc::forever);
    peer.join();
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids[0], 7u);
  });
}

TEST(TimeoutTable, WaitSetWaitTriesOnceAtZeroAndNegativeAndWaitsForever) {
  isolated([] {
    zipc::test::TempName name("timeout");
    auto q = zipc::Queue::create(name.str(), tiny_queue());
    zipc::WaitSet sut;
    (void)sut.attach(q);
    EXPECT_TRUE(sut.wait(0ns).empty());
    for (auto d : kNegative) EXPECT_TRUE(sut.wait(d).empty());
    std::thread peer([&] {
      auto p = zipc::Queue::open(name.str(), zipc::Role::producer);
      std::this_thread::sleep_for(20ms);
      (void)p.send(bytes_of("x"), zipc::forever);
    });
    const auto ready = sut.wait(zipc::forever);
    peer.join();
    EXPECT_EQ(ready.size(), 1u);
  });
}

// ---------------------------------------------------------------- C

constexpr int64_t kCNegative[] = {-1, -1000000000, INT64_MIN};

TEST(TimeoutTable, CQueueCallsTryOnceAtZeroAndNegative) {
  isolated([] {
    zipc::test::TempName name("timeout");
    zipc_queue_options_t o;
    zipc_queue_options_init(&o);
    o.block_size = 64;
    o.block_count = 2;
    zipc_queue_t* q = nullptr;
    ASSERT_EQ(zipc_queue_create(name.str().c_str(), &o, &q), ZIPC_OK);
    char buf[64];
    size_t n = 0;
    zipc_read_loan_t r;
    zipc_write_loan_t w;
    EXPECT_EQ(zipc_queue_recv(q, buf, sizeof buf, &n, 0), ZIPC_EMPTY);
    EXPECT_EQ(zipc_queue_acquire(q, 0, &r), ZIPC_EMPTY);
    for (int64_t t : kCNegative) {
      EXPECT_EQ(zipc_queue_recv(q, buf, sizeof buf, &n, t), ZIPC_EMPTY);
      EXPECT_EQ(zipc_queue_acquire(q, t, &r), ZIPC_EMPTY);
    }
    EXPECT_EQ(zipc_queue_recv(q, buf, sizeof buf, &n, 1000000), ZIPC_TIMEOUT);
    ASSERT_EQ(zipc_queue_send(q, "1", 1, 0), ZIPC_OK);
    ASSERT_EQ(zipc_queue_send(q, "2", 1, -1), ZIPC_OK);
    EXPECT_EQ(zipc_queue_send(q, "3", 1, 0), ZIPC_FULL);
    EXPECT_EQ(zipc_queue_reserve(q, 0, &w), ZIPC_FULL);
    for (int64_t t : kCNegative) {
      EXPECT_EQ(zipc_queue_send(q, "3", 1, t), ZIPC_FULL);
      EXPECT_EQ(zipc_queue_reserve(q, t, &w), ZIPC_FULL);
    }
    EXPECT_EQ(zipc_queue_send(q, "3", 1, 1000000), ZIPC_TIMEOUT);
    zipc_queue_detach(q);
  });
}

TEST(TimeoutTable, CQueueRecvForeverWaitsForAMessage) {
  isolated([] {
    zipc::test::TempName name("timeout");
    zipc_queue_t* q = nullptr;
    ASSERT_EQ(zipc_queue_create(name.str().c_str(), nullptr, &q), ZIPC_OK);
    std::thread peer([&] {
      zipc_queue_t* p = nullptr;
      if (zipc_queue_open(name.str().c_str(), nullptr, &p) != ZIPC_OK) return;
      std::this_thread::sleep_for(20ms);
      (void)zipc_queue_send(p, "late", 4, ZIPC_FOREVER);
      zipc_queue_detach(p);
    });
    char buf[64];
    size_t n = 0;
    EXPECT_EQ(zipc_queue_recv(q, buf, sizeof buf, &n, ZIPC_FOREVER), ZIPC_OK);
    peer.join();
    EXPECT_EQ(n, 4u);
    zipc_queue_detach(q);
  });
}

TEST(TimeoutTable, CTopicCallsTryOnceAtZeroAndNegative) {
  isolated([] {
    zipc::test::TempName name("timeout");
    zipc_topic_options_t o;
    zipc_topic_options_init(&o);
    o.capacity_bytes = 4096;
    o.max_message_size = 1024;
    zipc_topic_t* t = nullptr;
    ASSERT_EQ(zipc_topic_create(name.str().c_str(), &o, &t), ZIPC_OK);
    zipc_subscribe_options_t so;
    zipc_subscribe_options_init(&so);
    so.from = ZIPC_FROM_OLDEST;
    zipc_subscriber_t* s = nullptr;
    ASSERT_EQ(zipc_topic_subscribe(t, &so, &s), ZIPC_OK);
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    char buf[1024] = {};
    zipc_read_loan_t r;
    zipc_write_loan_t w;
    EXPECT_EQ(zipc_subscriber_read(s, buf, sizeof buf, 0, nullptr), ZIPC_EMPTY);
    EXPECT_EQ(zipc_subscriber_acquire(s, 0, &r), ZIPC_EMPTY);
    for (int64_t d : kCNegative) {
      EXPECT_EQ(zipc_subscriber_read(s, buf, sizeof buf, d, nullptr), ZIPC_EMPTY);
      EXPECT_EQ(zipc_subscriber_acquire(s, d, &r), ZIPC_EMPTY);
    }
    EXPECT_EQ(zipc_subscriber_read(s, buf, sizeof buf, 1000000, nullptr), ZIPC_TIMEOUT);
    while (zipc_publisher_publish(p, buf, sizeof buf, 0, nullptr) == ZIPC_OK) {
    }
    EXPECT_EQ(zipc_publisher_publish(p, buf, sizeof buf, 0, nullptr), ZIPC_FULL);
    EXPECT_EQ(zipc_publisher_reserve(p, sizeof buf, 0, &w), ZIPC_FULL);
    for (int64_t d : kCNegative) {
      EXPECT_EQ(zipc_publisher_publish(p, buf, sizeof buf, d, nullptr), ZIPC_FULL);
      EXPECT_EQ(zipc_publisher_reserve(p, sizeof buf, d, &w), ZIPC_FULL);
    }
    EXPECT_EQ(zipc_publisher_publish(p, buf, sizeof buf, 1000000, nullptr), ZIPC_TIMEOUT);
    zipc_publisher_detach(p);
    zipc_subscriber_detach(s);
    zipc_topic_detach(t);
  });
}

TEST(TimeoutTable, CListenerAndWaitSetTryOnceAtZeroAndNegative) {
  isolated([] {
    zipc::test::TempName name("timeout");
    zipc_event_channel_t* ch = nullptr;
    ASSERT_EQ(zipc_event_channel_create(name.str().c_str(), nullptr, &ch), ZIPC_OK);
    zipc_listener_t* l = nullptr;
    ASSERT_EQ(zipc_event_channel_listener(ch, &l), ZIPC_OK);
    uint32_t ids[4];
    size_t n = 0;
    EXPECT_EQ(zipc_listener_wait(l, 0, ids, 4, &n), ZIPC_EMPTY);
    for (int64_t d : kCNegative) EXPECT_EQ(zipc_listener_wait(l, d, ids, 4, &n), ZIPC_EMPTY);
    EXPECT_EQ(zipc_listener_wait(l, 1000000, ids, 4, &n), ZIPC_TIMEOUT);
    zipc_waitset_t* ws = nullptr;
    ASSERT_EQ(zipc_waitset_create(&ws), ZIPC_OK);
    uint64_t id = 0;
    ASSERT_EQ(zipc_waitset_attach_listener(ws, l, &id), ZIPC_OK);
    zipc_ready_t ready[4];
    EXPECT_EQ(zipc_waitset_wait(ws, 0, ready, 4, &n), ZIPC_EMPTY);
    for (int64_t d : kCNegative) EXPECT_EQ(zipc_waitset_wait(ws, d, ready, 4, &n), ZIPC_EMPTY);
    EXPECT_EQ(zipc_waitset_wait(ws, 1000000, ready, 4, &n), ZIPC_TIMEOUT);
    zipc_notifier_t* nt = nullptr;
    ASSERT_EQ(zipc_event_channel_notifier(ch, &nt), ZIPC_OK);
    std::thread peer([&] {
      std::this_thread::sleep_for(20ms);
      (void)zipc_notifier_notify(nt, 2, nullptr);
    });
    EXPECT_EQ(zipc_waitset_wait(ws, ZIPC_FOREVER, ready, 4, &n), ZIPC_OK);
    peer.join();
    EXPECT_EQ(zipc_listener_wait(l, ZIPC_FOREVER, ids, 4, &n), ZIPC_OK);
    EXPECT_EQ(n, 1u);
    zipc_waitset_destroy(ws);
    zipc_notifier_detach(nt);
    zipc_listener_detach(l);
    zipc_event_channel_detach(ch);
  });
}

}  // namespace

}  // namespace timeout_table_test
