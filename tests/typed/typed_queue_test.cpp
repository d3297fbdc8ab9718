#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "typed_test_types.hpp"
#include "zipc/typed.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using typed_test::Order;
using zipc::Status;
using zipc::TypedQueue;

namespace typed_queue_test {
namespace {

TEST(TypedQueue, ALoanWrittenFieldByFieldArrivesAsWritten) {
  zipc::test::TempName name("tq-loan");
  auto q = TypedQueue<Order>::create(name.str());
  {
    auto loan = q.try_reserve();
    ASSERT_TRUE(loan) << zipc::to_string(loan.status());
    EXPECT_EQ(loan->id, 0u);  // value-initialised
    loan->id = 42;
    loan->price = 101.25;
    loan->qty = 7;
    EXPECT_EQ(loan.commit().status, Status::ok);
  }
  auto in = q.try_acquire();
  ASSERT_TRUE(in) << zipc::to_string(in.status());
  EXPECT_EQ(in.count(), 1u);
  EXPECT_EQ(in->id, 42u);
  EXPECT_EQ(in->price, 101.25);
  EXPECT_EQ(in->qty, 7u);
}

TEST(TypedQueue, EmplaceConstructsTheMessageInPlace) {
  zipc::test::TempName name("tq-emplace");
  auto q = TypedQueue<Order>::create(name.str());
  auto loan = q.try_reserve();
  ASSERT_TRUE(loan);
  Order& o = loan.emplace(Order{9, 1.5, 3});
  EXPECT_EQ(&o, loan.get());
  ASSERT_EQ(loan.commit().status, Status::ok);
  Order out{};
  ASSERT_EQ(q.try_recv(out), Status::ok);
  EXPECT_EQ(out.id, 9u);
  EXPECT_EQ(out.qty, 3u);
}

TEST(TypedQueue, CopySendAndReceiveRoundTripAValue) {
  zipc::test::TempName name("tq-copy");
  auto q = TypedQueue<Order>::create(name.str());
  ASSERT_EQ(q.try_send(Order{1, 2.0, 3}), Status::ok);
  Order out{};
  ASSERT_EQ(q.recv(out, 100ms), Status::ok);
  EXPECT_EQ(out.id, 1u);
  EXPECT_EQ(q.try_recv(out), Status::empty);
}

TEST(TypedQueue, SlicesKeepTheLengthChosenPerMessage) {
  zipc::test::TempName name("tq-slice");
  zipc::QueueOptions opt;
  opt.block_size = 1024;
  auto q = TypedQueue<Order>::create(name.str(), opt);
  for (std::size_t n : {std::size_t{3}, std::size_t{0}, std::size_t{17}}) {
    auto loan = q.reserve_slice(n, 100ms);
    ASSERT_TRUE(loan || n == 0) << zipc::to_string(loan.status());
    ASSERT_EQ(loan.count(), n);
    for (std::size_t i = 0; i < n; ++i) loan[i].id = 100 * n + i;
    ASSERT_EQ(loan.commit().status, Status::ok);
  }
  for (std::size_t n : {std::size_t{3}, std::size_t{0}, std::size_t{17}}) {
    auto in = q.acquire_slice(100ms);
    ASSERT_TRUE(in) << zipc::to_string(in.status());
    ASSERT_EQ(in.count(), n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(in.span()[i].id, 100 * n + i);
  }
}

TEST(TypedQueue, ASliceOverTheBlockIsTooLargeAndSendsNothing) {
  zipc::test::TempName name("tq-too-large");
  zipc::QueueOptions opt;
  opt.block_size = 64;
  auto q = TypedQueue<Order>::create(name.str(), opt);
  EXPECT_EQ(q.max_slice(), 64 / sizeof(Order));
  auto loan = q.reserve_slice(q.max_slice() + 1, 10ms);
  EXPECT_FALSE(loan);
  EXPECT_EQ(loan.status(), Status::too_large);
  EXPECT_EQ(q.try_acquire().status(), Status::empty);
}

TEST(TypedQueue, BlockSizeIsRaisedToHoldOneMessage) {
  zipc::test::TempName name("tq-raise");
  zipc::QueueOptions opt;
  opt.block_size = 8;
  auto q = TypedQueue<typed_test::Big>::create(name.str(), opt);
  EXPECT_GE(q.bytes().block_size(), sizeof(typed_test::Big));
  ASSERT_EQ(q.try_send(typed_test::Big{{1, 2, 3}}), Status::ok);
}

TEST(TypedQueue, AMessageThatIsNotWholeTsIsReportedCorruptNotRead) {
  zipc::test::TempName name("tq-ragged");
  auto q = TypedQueue<Order>::create(name.str());
  const std::array<std::byte, sizeof(Order) + 3> ragged{};
  ASSERT_EQ(q.bytes().try_send(ragged), Status::ok);
  auto in = q.acquire_slice(10ms);
  EXPECT_FALSE(in);
  EXPECT_EQ(in.status(), Status::corrupt);
  EXPECT_EQ(in.count(), 0u);
  EXPECT_TRUE(in.span().empty());
}

TEST(TypedQueue, TwoTsWhereOneWasExpectedAreCorruptForTheSingleValueCall) {
  zipc::test::TempName name("tq-two");
  auto q = TypedQueue<Order>::create(name.str());
  const std::array<Order, 2> two{};
  ASSERT_EQ(q.send_slice(two, 10ms), Status::ok);
  auto in = q.try_acquire();
  EXPECT_FALSE(in);
  EXPECT_EQ(in.status(), Status::corrupt);
  EXPECT_EQ(in.get(), nullptr);
}

TEST(TypedQueue, AnUncommittedLoanIsNeverDelivered) {
  zipc::test::TempName name("tq-abort");
  auto q = TypedQueue<Order>::create(name.str());
  {
    auto loan = q.try_reserve();
    ASSERT_TRUE(loan);
    loan->id = 5;
  }
  EXPECT_EQ(q.try_acquire().status(), Status::empty);
}

}  // namespace

namespace {

TEST(TypedQueue, ATypedLoanHeldByAKilledConsumerIsRedeliveredWhole) {
  zipc::test::TempName name("tq-crash");
  zipc::QueueOptions opt;
  opt.recovery_time = 20ms;
  auto q = TypedQueue<Order>::create(name.str(), opt);
  ASSERT_EQ(q.try_send(Order{11, 1.0, 2}), Status::ok);
  zipc::test::TempName signal_name("tq-crash-signal");
  auto signal = TypedQueue<int>::create(signal_name.str());
  auto holder = zipc::test::spawn([&] {
    auto mine = TypedQueue<Order>::open(name.str(), zipc::Role::consumer);
    auto in = mine.acquire(1s);
    if (!in || in->id != 11) return 1;
    auto told = TypedQueue<int>::open(signal_name.str());
    if (told.send(1, 1s) != Status::ok) return 2;
    for (;;) ::pause();  // killed while holding the loan
  });
  int holding = 0;
  ASSERT_EQ(signal.recv(holding, 10s), Status::ok);
  holder.kill(SIGKILL);
  (void)holder.wait();
  (void)q.bytes().recover();
  auto again = q.acquire(2s);
  ASSERT_TRUE(again) << zipc::to_string(again.status());
  EXPECT_EQ(again->id, 11u);
  EXPECT_EQ(again->qty, 2u);
}

TEST(TypedQueue, ATypedLoanOfAKilledProducerIsNeverDelivered) {
  zipc::test::TempName name("tq-crash-prod");
  zipc::QueueOptions opt;
  opt.recovery_time = 20ms;
  auto q = TypedQueue<Order>::create(name.str(), opt);
  auto writer = zipc::test::spawn([&] {
    auto mine = TypedQueue<Order>::open(name.str(), zipc::Role::producer);
    auto loan = mine.reserve(1s);
    if (!loan) return 1;
    loan->id = 99;
    ::_exit(0);  // dies before commit
  });
  EXPECT_EQ(writer.wait().exit_code, 0);
  (void)q.bytes().recover();
  ASSERT_EQ(q.try_send(Order{12, 0, 0}), Status::ok);
  auto next = q.acquire(2s);
  ASSERT_TRUE(next) << zipc::to_string(next.status());
  EXPECT_EQ(next->id, 12u);  // the abandoned reservation was skipped, not delivered
}

}  // namespace

}  // namespace typed_queue_test
