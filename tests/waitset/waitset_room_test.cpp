// zipc::WaitSet::attach_room: a queue producer waiting for room, beside
// receivers, in the io_uring mode and the polling fallback, and with the
// consumer in another process (alive, or killed holding a block).
#include <gtest/gtest.h>
#include <signal.h>

#include <array>
#include <cstring>
#include <thread>

#include "zipc/queue.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::ReadyKind;
using zipc::WaitSet;

namespace waitset_room_test {
namespace {

zipc::QueueOptions tiny_queue() {
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 4;
  o.recovery_time = 100ms;
  return o;
}

std::span<const std::byte> bytes(const char* s) {
  return std::as_bytes(std::span(s, std::strlen(s)));
}

void fill(zipc::Queue& q) {
  while (q.try_send(bytes("x")) == zipc::Status::ok) {
  }
}

class WaitSetRoom : public ::testing::TestWithParam<bool> {
 protected:
  zipc::WaitSetOptions options() const {
    zipc::WaitSetOptions o;
    o.force_fallback = GetParam();
    return o;
  }
};

TEST_P(WaitSetRoom, AFullQueueIsReportedOnceAConsumerFreesABlockAndStaysReadyUntilFullAgain) {
  zipc::test::TempName name("ws.room");
  auto producer = zipc::Queue::create(name.str(), tiny_queue(), zipc::Role::producer);
  auto consumer = zipc::Queue::open(name.str(), zipc::Role::consumer);
  fill(producer);
  WaitSet ws(options());
  const auto id = ws.attach_room(producer);
  EXPECT_TRUE(ws.wait(20ms).empty()) << "a full queue has no room";
  std::array<std::byte, 64> buf{};
  ASSERT_TRUE(consumer.try_recv(buf).ok());
  auto r = ws.wait(5s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(r[0].kind, ReadyKind::queue_room);
  r = ws.wait(0ns);
  EXPECT_EQ(r.size(), 1u) << "level-triggered: room stays reported until used";
  ASSERT_EQ(producer.try_send(bytes("y")), zipc::Status::ok);
  EXPECT_TRUE(ws.wait(0ns).empty());
}

TEST_P(WaitSetRoom, AProducerAndAConsumerOfOtherQueuesWaitSideBySide) {
  zipc::test::TempName out_name("ws.out"), in_name("ws.in");
  auto out = zipc::Queue::create(out_name.str(), tiny_queue(), zipc::Role::producer);
  auto out_reader = zipc::Queue::open(out_name.str(), zipc::Role::consumer);
  auto in = zipc::Queue::create(in_name.str(), tiny_queue(), zipc::Role::consumer);
  auto in_writer = zipc::Queue::open(in_name.str(), zipc::Role::producer);
  fill(out);
  WaitSet ws(options());
  const auto room = ws.attach_room(out);
  const auto data = ws.attach(in);
  ASSERT_EQ(in_writer.try_send(bytes("m")), zipc::Status::ok);
  auto r = ws.wait(5s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, data);
  std::array<std::byte, 64> buf{};
  ASSERT_TRUE(in.try_recv(buf).ok());
  ASSERT_TRUE(out_reader.try_recv(buf).ok());
  r = ws.wait(5s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, room);
}

INSTANTIATE_TEST_SUITE_P(Modes, WaitSetRoom, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Fallback" : "IoUring"; });

TEST(WaitSetRoomRoles, AConsumerOnlyHandleIsRejectedNamingTheQueue) {
  zipc::test::TempName name("ws.room.role");
  auto q = zipc::Queue::create(name.str(), tiny_queue(), zipc::Role::consumer);
  WaitSet ws;
  try {
    (void)ws.attach_room(q);
    FAIL() << "attach_room accepted a consumer-only handle";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find(name.str()), std::string::npos) << e.what();
  }
}

TEST(WaitSetRoomProcess, AConsumerInAnotherProcessMakesRoomForAWaitingProducer) {
  zipc::test::TempName name("ws.room.proc");
  auto producer = zipc::Queue::create(name.str(), tiny_queue(), zipc::Role::producer);
  fill(producer);
  WaitSet ws;
  const auto id = ws.attach_room(producer);
  ASSERT_TRUE(ws.wait(0ns).empty());
  auto child = zipc::test::spawn([&] {
    auto c = zipc::Queue::open(name.str(), zipc::Role::consumer);
    std::this_thread::sleep_for(50ms);
    std::array<std::byte, 64> buf{};
    return c.recv(buf, 5s).ok() ? 0 : 1;
  });
  const auto r = ws.wait(10s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(producer.try_send(bytes("again")), zipc::Status::ok);
  EXPECT_EQ(child.wait().exit_code, 0);
}

// A consumer SIGKILLed while it holds a taken block of a full many/many
// queue: the producer's WaitSet runs the stall-clock recovery, the block is
// redelivered and the room behind it comes back (no hang).
TEST(WaitSetRoomProcess, AConsumerKilledHoldingABlockDoesNotHangAWaitingProducer) {
  zipc::test::TempName name("ws.room.kill");
  auto producer = zipc::Queue::create(name.str(), tiny_queue(), zipc::Role::producer);
  auto survivor = zipc::Queue::open(name.str(), zipc::Role::consumer);
  fill(producer);
  auto child = zipc::test::spawn([&] {
    auto c = zipc::Queue::open(name.str(), zipc::Role::consumer);
    zipc::QueueReadLoan held = c.acquire(5s);
    if (!held) return 1;
    ::raise(SIGKILL);  // dies holding the block
    return 2;
  });
  (void)child.wait();
  WaitSet ws;
  const auto id = ws.attach_room(producer);
  // The survivor reads what is committed; the dead consumer's block is
  // redelivered to it once the recovery time has passed.
  std::array<std::byte, 64> buf{};
  int got = 0;
  for (int i = 0; i < 200 && got < 4; ++i)
    if (survivor.recv(buf, 20ms).ok()) ++got;
  EXPECT_EQ(got, 4) << "the dead consumer's block was not redelivered";
  const auto r = ws.wait(5s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(producer.try_send(bytes("after")), zipc::Status::ok);
}

}  // namespace

}  // namespace waitset_room_test
