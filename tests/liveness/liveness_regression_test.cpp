// Regression tests for issue [liveness]: recovery must not depend on how
// survivors slice their waits. Each test reproduces one observation with the
// public API, forked processes and SIGKILL. Bounds are liveness bounds (many
// times the expected time), never timing assertions.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>
#include <thread>

#include "liveness_support.hpp"
#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

namespace zipc {
namespace liveness_regression_test {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::SharedFlags;

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

QueueOptions many_many(std::chrono::milliseconds recovery) {
  QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  o.recovery_time = recovery;
  return o;
}

// A child that opens the queue, reserves one block, says so, and waits to be killed.
test::Child producer_holding_reservation(const std::string& name, SharedFlags& flags) {
  return test::spawn([&]() {
    Queue q = Queue::open(name, Role::producer);
    QueueWriteLoan loan = q.reserve(1s);
    if (!loan) return 2;
    flags[0].store(1);
    for (;;) pause();
  });
}

// Observation 1: a dead producer's reservation with a message behind it; a
// consumer that only polls (try_recv) gets the message, and close() drains.
TEST(LivenessRegression, PollingConsumerGetsTheMessageBehindADeadProducersReservationAndCloseDrains) {
  test::TempName name("lv.poll");
  Queue q = Queue::create(name.str(), many_many(100ms));
  SharedFlags flags(4);
  ASSERT_TRUE(flags.ok());
  test::Child child = producer_holding_reservation(name.str(), flags);
  ASSERT_TRUE(eventually([&] { return flags[0].load() == 1; }, 10s));
  ASSERT_EQ(q.try_send(bytes("behind")), Status::ok);
  child.kill(SIGKILL);
  (void)child.wait();
  std::array<std::byte, 64> buf{};
  IoResult r;
  EXPECT_TRUE(eventually(
      [&] {
        r = q.try_recv(buf);
        return r.status == Status::ok;
      },
      5s))
      << "try_recv never got the message behind the dead reservation (abandoned=" << q.stats().abandoned << ")";
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), r.size), "behind");
  EXPECT_EQ(q.stats().abandoned, 1u);
}

TEST(LivenessRegression, ConsumerLoopingOnShortWaitsDrainsToClosedBehindADeadReservation) {
  test::TempName name("lv.close");
  Queue q = Queue::create(name.str(), many_many(100ms));
  SharedFlags flags(4);
  ASSERT_TRUE(flags.ok());
  test::Child child = producer_holding_reservation(name.str(), flags);
  ASSERT_TRUE(eventually([&] { return flags[0].load() == 1; }, 10s));
  ASSERT_EQ(q.try_send(bytes("one")), Status::ok);
  ASSERT_EQ(q.try_send(bytes("two")), Status::ok);
  child.kill(SIGKILL);
  (void)child.wait();
  q.close();
  std::array<std::byte, 64> buf{};
  int got = 0;
  Status last = Status::timeout;
  const auto t0 = std::chrono::steady_clock::now();
  while (test::ms_since(t0) < 5000) {
    const IoResult r = q.recv(buf, 30ms);  // shorter than the recovery time
    if (r.status == Status::ok) ++got;
    last = r.status;
    if (last == Status::closed) break;
  }
  EXPECT_EQ(got, 2);
  EXPECT_EQ(last, Status::closed) << "recv(30 ms) kept returning " << to_string(last) << " after close()";
}

// Observation 3: the survivor whose wait saw the stall first is killed; a
// survivor polling with 10 ms waits still recovers (the clock is shared).
TEST(LivenessRegression, StallSeenByAKilledSurvivorIsRecoveredByAnotherPollingOne) {
  test::TempName name("lv.shared");
  Queue q = Queue::create(name.str(), many_many(1000ms));
  SharedFlags flags(4);
  ASSERT_TRUE(flags.ok());
  test::Child producer = producer_holding_reservation(name.str(), flags);
  ASSERT_TRUE(eventually([&] { return flags[0].load() == 1; }, 10s));
  ASSERT_EQ(q.try_send(bytes("x")), Status::ok);
  std::array<std::byte, 64> buf{};
  ASSERT_EQ(q.try_recv(buf).status, Status::empty);  // the stall clock starts here (the producer lives)
  producer.kill(SIGKILL);
  (void)producer.wait();
  // A consumer that waits long (it sees the stall first), killed mid-wait.
  test::Child waiter = test::spawn([&]() {
    Queue c = Queue::open(name.str(), Role::consumer);
    std::array<std::byte, 64> b{};
    flags[1].store(1);
    (void)c.recv(b, 10s);
    return 0;
  });
  ASSERT_TRUE(eventually([&] { return flags[1].load() == 1; }, 10s));
  std::this_thread::sleep_for(20ms);
  waiter.kill(SIGKILL);
  (void)waiter.wait();
  const bool got = eventually([&] { return q.recv(buf, 10ms).status == Status::ok; }, 5s);
  EXPECT_TRUE(got) << "recv(10 ms) never recovered the reservation";
}

// Found by the single/single torture: a producer that replaces one which
// filled the ring by the consumer's `done` (the consumer publishes head in
// batches) saw the head more than a ring behind and reported corrupt.
TEST(LivenessRegression, SingleProducerReplacingOneThatFilledTheRingByTheConsumersDoneSeesFullNotCorrupt) {
  test::TempName name("lv.spsc");
  QueueOptions o = many_many(100ms);
  o.block_count = 64;
  o.producers = Multiplicity::single;
  o.consumers = Multiplicity::single;
  Queue consumer = Queue::create(name.str(), o, Role::consumer);
  std::array<std::byte, 64> buf{};
  {
    Queue first = Queue::open(name.str(), Role::producer);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(first.try_send(bytes("m")), Status::ok);
    for (int i = 0; i < 5; ++i) ASSERT_EQ(consumer.try_recv(buf).status, Status::ok);  // head not yet published
    for (int i = 0; i < 5; ++i) ASSERT_EQ(first.try_send(bytes("n")), Status::ok);     // room seen through done
  }
  Queue second = Queue::open(name.str(), Role::producer);
  EXPECT_EQ(second.try_send(bytes("o")), Status::full);
  int got = 0;
  while (consumer.try_recv(buf).status == Status::ok) ++got;
  EXPECT_EQ(got, 64);
  EXPECT_EQ(second.try_send(bytes("o")), Status::ok);
}

// Observation 2: ten publishers die one after another holding claims; one
// recovery turns all ten into holes (not one per recovery time).
TEST(LivenessRegression, TenDeadPublisherClaimsBecomeHolesInOnePass) {
  test::TempName name("lv.topic");
  TopicOptions o;
  o.capacity_bytes = 1 << 16;
  o.max_message_size = 256;
  o.publishers = Multiplicity::multi;
  o.recovery_time = 1000ms;
  Topic t = Topic::create(name.str(), o);
  Subscriber sub = t.subscribe();
  Publisher live = t.publisher();  // attached before the deaths: it finds them at publish, not at attach
  constexpr int kDead = 10;
  SharedFlags flags(kDead + 1);
  ASSERT_TRUE(flags.ok());
  std::vector<test::Child> kids;
  for (int i = 0; i < kDead; ++i) {
    kids.push_back(test::spawn([&, i]() {
      Topic tt = Topic::open(name.str(), o);
      Publisher p = tt.publisher();
      TopicWriteLoan l = p.reserve(64, 1s);
      if (!l) return 2;
      flags[static_cast<std::size_t>(i)].store(1);
      for (;;) pause();
    }));
    ASSERT_TRUE(eventually([&] { return flags[static_cast<std::size_t>(i)].load() == 1; }, 10s));
  }
  for (auto& k : kids) {
    k.kill(SIGKILL);
    (void)k.wait();
  }
  const auto t0 = std::chrono::steady_clock::now();
  const CommitResult pr = live.publish(bytes("live"), 100ms);
  const double publish_ms = test::ms_since(t0);
  EXPECT_TRUE(pr.ok()) << to_string(pr.status);
  EXPECT_EQ(t.abandoned(), static_cast<std::uint64_t>(kDead));
  // One recovery time (1 s) plus margin; one hole per recovery time took 10 s.
  EXPECT_LT(publish_ms, 5000.0) << "the holes were made one per recovery time";
  std::array<std::byte, 256> buf{};
  const ReadResult rr = sub.read(buf, 5s);
  EXPECT_EQ(rr.status, Status::ok);
  std::printf("[ info ] publish behind %d dead claims returned after %.0f ms (recovery_time 1000 ms)\n", kDead,
              publish_ms);
}

// Observation 5: a dead server whose segment header was damaged no longer
// blocks the name: a new server proves it dead and takes over.
void damage_header(const std::string& name) {
  const std::string path = Segment::path_for(name);
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << path;
  std::array<unsigned char, 48> junk{};
  junk.fill(0xA5);
  ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), 8), static_cast<ssize_t>(junk.size()));
  ::close(fd);
}

TEST(LivenessRegression, NewRpcServerTakesOverTheNameOfADeadServerWithADamagedHeader) {
  test::TempName name("lv.rpc");
  SharedFlags flags(2);
  ASSERT_TRUE(flags.ok());
  test::Child server = test::spawn([&]() -> int {
    RpcServer s = RpcServer::create(name.str());
    flags[0].store(1);
    for (;;) pause();
  });
  ASSERT_TRUE(eventually([&] { return flags[0].load() == 1; }, 10s));
  damage_header(name.str());
  server.kill(SIGKILL);
  (void)server.wait();
  try {
    RpcServer s = RpcServer::create(name.str());
    SUCCEED();
  } catch (const Error& e) {
    ADD_FAILURE() << "create failed: " << e.what();
  }
}

TEST(LivenessRegression, RpcServerNeverRemovesASegmentOfAnotherKindUnderItsName) {
  test::TempName name("lv.rpc3");
  Queue q = Queue::create(name.str(), many_many(100ms));
  EXPECT_THROW((void)RpcServer::create(name.str()), Error);
  EXPECT_NO_THROW((void)Queue::open(name.str(), Role::consumer));  // still there
}

TEST(LivenessRegression, DamagedHeaderOfALiveServerGivesAClearErrorNamingTheCure) {
  test::TempName name("lv.rpc2");
  RpcServer live = RpcServer::create(name.str());
  damage_header(name.str());
  try {
    RpcServer s = RpcServer::create(name.str());
    ADD_FAILURE() << "a second server took the name of a live one";
  } catch (const Error& e) {
    EXPECT_EQ(e.errc(), Errc::already_exists);
    EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("zipc rm"), std::string::npos) << e.what();
  }
}

}  // namespace

}  // namespace liveness_regression_test
}  // namespace zipc
