#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <thread>
#include <tuple>
#include <vector>

#include "queue_test_util.hpp"
#include "zipc/queue.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::Queue;
using zipc::QueueOptions;
using zipc::Role;
using zipc::Status;
using zipc::test::bytes_of;
using zipc::test::queue_options;
using zipc::test::string_of;

namespace queue_unit_test {
namespace {

// Every queue mode (both rings, both single-side variants) times every wait strategy.
using ModeAndWait = std::tuple<zipc::test::QueueMode, zipc::WaitStrategy>;

class QueueModes : public ::testing::TestWithParam<ModeAndWait> {
 protected:
  QueueOptions opts(std::size_t capacity = 8, std::size_t block = 64) const {
    QueueOptions o = queue_options(std::get<0>(GetParam()), capacity, block);
    o.wait.strategy = std::get<1>(GetParam());
    return o;
  }
  // In single modes the producer and the consumer are separate handles.
  Queue consumer_of(const zipc::test::TempName& name) const {
    return Queue::open(name.str(), Role::consumer, opts().wait);
  }
};

std::string recv_string(Queue& q, std::chrono::nanoseconds timeout = 0ns) {
  std::array<std::byte, 256> buf{};
  auto r = q.recv(buf, timeout);
  if (!r.ok()) return std::string("<") + zipc::to_string(r.status) + ">";
  return string_of(std::span(buf).first(r.size));
}

}  // namespace

TEST_P(QueueModes, CopiedMessageArrivesWithItsBytes) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  auto rx = consumer_of(name);
  EXPECT_EQ(sut.try_send(bytes_of("hello")), Status::ok);
  EXPECT_EQ(recv_string(rx), "hello");
}

TEST_P(QueueModes, WrapsAroundManyTimesKeepingOrder) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(4, 16), Role::producer);
  auto rx = consumer_of(name);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(sut.try_send(bytes_of(std::to_string(i))), Status::ok) << i;
    if (i % 3 == 2) {
      for (int j = i - 2; j <= i; ++j) ASSERT_EQ(recv_string(rx), std::to_string(j));
    }
  }
}

TEST_P(QueueModes, FullQueueRefusesTrySendAndEmptyQueueRefusesTryRecv) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(4), Role::producer);
  auto rx = consumer_of(name);
  EXPECT_EQ(recv_string(rx), "<empty>");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(sut.try_send(bytes_of("x")), Status::ok);
  EXPECT_EQ(sut.try_send(bytes_of("x")), Status::full);
  EXPECT_EQ(recv_string(rx), "x");
  EXPECT_EQ(sut.try_send(bytes_of("y")), Status::ok);
}

TEST_P(QueueModes, ProducerSeesRoomAsSoonAsOneMessageIsReleased) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(256), Role::producer);
  auto rx = consumer_of(name);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(sut.try_send(bytes_of("x")), Status::ok);
  EXPECT_EQ(sut.try_send(bytes_of("x")), Status::full);
  EXPECT_EQ(recv_string(rx), "x");  // the consumer publishes head in batches; the room is visible anyway
  EXPECT_EQ(sut.try_send(bytes_of("y")), Status::ok);
}

TEST_P(QueueModes, BlockingCallsTimeOut) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(2), Role::producer);
  auto rx = consumer_of(name);
  std::array<std::byte, 64> buf{};
  EXPECT_EQ(rx.recv(buf, 5ms).status, Status::timeout);
  EXPECT_EQ(sut.send(bytes_of("a"), 5ms), Status::ok);
  EXPECT_EQ(sut.send(bytes_of("b"), 5ms), Status::ok);
  EXPECT_EQ(sut.send(bytes_of("c"), 5ms), Status::timeout);
  EXPECT_EQ(rx.stats().full_waits, 1u);
  EXPECT_EQ(rx.stats().empty_waits, 1u);
}

TEST_P(QueueModes, BlockedReceiverWakesWhenAMessageArrives) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  auto rx = consumer_of(name);
  std::thread t([&] {
    std::this_thread::sleep_for(20ms);
    (void)sut.send(bytes_of("late"), 1s);
  });
  EXPECT_EQ(recv_string(rx, 10s), "late");
  t.join();
}

TEST_P(QueueModes, MessageLargerThanABlockIsTooLargeAndNeverTruncated) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(4, 16), Role::producer);
  auto rx = consumer_of(name);
  EXPECT_EQ(sut.try_send(bytes_of(std::string(17, 'x'))), Status::too_large);
  EXPECT_EQ(sut.try_send(bytes_of(std::string(16, 'y'))), Status::ok);
  std::array<std::byte, 8> small{};
  auto r = rx.try_recv(small);
  EXPECT_EQ(r.status, Status::too_large);
  EXPECT_EQ(r.size, 16u);
  EXPECT_EQ(recv_string(rx), std::string(16, 'y'));  // still there, whole
}

TEST_P(QueueModes, ZeroLengthMessagesAreDelivered) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  auto rx = consumer_of(name);
  EXPECT_EQ(sut.try_send({}), Status::ok);
  EXPECT_EQ(sut.try_send(bytes_of("z")), Status::ok);
  std::array<std::byte, 8> buf{};
  auto r = rx.try_recv(buf);
  EXPECT_EQ(r.status, Status::ok);
  EXPECT_EQ(r.size, 0u);
  EXPECT_EQ(recv_string(rx), "z");
}

TEST_P(QueueModes, CloseWakesWaitersAndReceiversDrainBeforeClosed) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  auto rx = consumer_of(name);
  EXPECT_EQ(sut.try_send(bytes_of("left")), Status::ok);
  sut.close();
  EXPECT_TRUE(rx.closed());
  EXPECT_EQ(sut.try_send(bytes_of("more")), Status::closed);
  EXPECT_EQ(recv_string(rx), "left");
  EXPECT_EQ(recv_string(rx, 10s), "<closed>");
}

TEST_P(QueueModes, CloseWakesASleepingReceiver) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  auto rx = consumer_of(name);
  std::thread t([&] {
    std::this_thread::sleep_for(20ms);
    sut.close();
  });
  EXPECT_EQ(recv_string(rx, 60s), "<closed>");
  t.join();
}

TEST_P(QueueModes, ReservationMadeBeforeCloseAndCommittedAfterIsDelivered) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  auto rx = consumer_of(name);
  auto loan = sut.reserve(0s);
  ASSERT_TRUE(loan);
  sut.close();
  EXPECT_EQ(sut.try_send(bytes_of("too late")), Status::closed);
  EXPECT_EQ(recv_string(rx), "<empty>");  // not yet closed: a reservation is in flight
  std::memcpy(loan.data().data(), "late", 4);
  ASSERT_EQ(loan.commit(4).status, Status::ok);
  EXPECT_EQ(recv_string(rx), "late");
  EXPECT_EQ(recv_string(rx), "<closed>");
}

TEST_P(QueueModes, QueueWriteLoanDestroyedWithoutCommitIsNeverDelivered) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  auto rx = consumer_of(name);
  {
    auto a = sut.try_reserve();
    ASSERT_TRUE(a);
    std::memcpy(a.data().data(), "garbage", 7);
    auto b = sut.try_reserve();
    ASSERT_TRUE(b);
    std::memcpy(b.data().data(), "kept", 4);
    EXPECT_EQ(b.commit(4).status, Status::ok);
  }  // a aborts here
  EXPECT_EQ(recv_string(rx), "kept");
  EXPECT_EQ(recv_string(rx), "<empty>");
  auto c = sut.try_reserve();
  ASSERT_TRUE(c);
  EXPECT_EQ(c.commit(c.size() + 1).status, Status::too_large);
  EXPECT_EQ(c.commit(0).status, Status::ok);
  EXPECT_EQ(recv_string(rx), "");
}

TEST_P(QueueModes, QueueReadLoanReturnsItsBlockWhenDestroyed) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(2), Role::producer);
  auto rx = consumer_of(name);
  EXPECT_EQ(sut.try_send(bytes_of("1")), Status::ok);
  EXPECT_EQ(sut.try_send(bytes_of("2")), Status::ok);
  {
    auto loan = rx.try_acquire();
    ASSERT_TRUE(loan);
    EXPECT_EQ(string_of(loan.data()), "1");
    EXPECT_EQ(sut.try_send(bytes_of("3")), Status::full);  // still held
  }
  EXPECT_EQ(sut.try_send(bytes_of("3")), Status::ok);
  EXPECT_EQ(recv_string(rx), "2");
  EXPECT_EQ(recv_string(rx), "3");
}

TEST_P(QueueModes, LoansReleasedOutOfOrderKeepEveryMessageOnce) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(4), Role::producer);
  auto rx = consumer_of(name);
  for (const char* m : {"a", "b", "c"}) EXPECT_EQ(sut.try_send(bytes_of(m)), Status::ok);
  auto a = rx.try_acquire();
  auto b = rx.try_acquire();
  ASSERT_TRUE(a && b);
  b.release();
  EXPECT_EQ(recv_string(rx), "c");
  a.release();
  EXPECT_EQ(recv_string(rx), "<empty>");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(sut.try_send(bytes_of("x")), Status::ok) << i;
}

TEST_P(QueueModes, BatchCallsMoveManyMessagesAtOnce) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(16), Role::producer);
  auto rx = consumer_of(name);
  std::vector<std::string> text;
  for (int i = 0; i < 20; ++i) text.push_back(std::to_string(i * 7 + 1000));
  std::vector<std::span<const std::byte>> msgs;
  for (auto& t : text) msgs.push_back(bytes_of(t));
  Status st = Status::ok;
  EXPECT_EQ(sut.send_batch(msgs, 0ns, &st), 16u);  // room for 16
  EXPECT_EQ(st, Status::full);
  std::vector<std::string> got;
  EXPECT_EQ(rx.recv_batch(100, 0ns, [&](std::span<const std::byte> m) { got.push_back(string_of(m)); }), 16u);
  ASSERT_EQ(got.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], text[i]);

  std::array<zipc::QueueWriteLoan, 5> w;
  EXPECT_EQ(sut.reserve_batch(w, 0ns), 5u);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i].data()[0] = static_cast<std::byte>('A' + i);
    EXPECT_EQ(w[i].commit(1).status, Status::ok);
  }
  std::array<zipc::QueueReadLoan, 8> r;
  EXPECT_EQ(rx.acquire_batch(r, 1s), 5u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(string_of(r[i].data()), std::string(1, static_cast<char>('A' + i)));
}

TEST_P(QueueModes, StatsCountWhatEveryHandleDid) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  {
    auto rx = consumer_of(name);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(sut.try_send(bytes_of("s")), Status::ok);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(recv_string(rx), "s");
  }  // the consumer's counts survive its handle
  auto st = sut.stats();
  EXPECT_EQ(st.sent, 5u);
  EXPECT_EQ(st.received, 3u);
  EXPECT_EQ(st.redelivered, 0u);
  EXPECT_EQ(st.abandoned, 0u);
}

TEST_P(QueueModes, OpenerSeesTheCreatorsGeometry) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(32, 128), Role::producer);
  auto other = consumer_of(name);
  EXPECT_EQ(other.block_count(), 32u);
  EXPECT_EQ(other.block_size(), 128u);
  EXPECT_EQ(other.producers(), std::get<0>(GetParam()).producers);
  EXPECT_EQ(other.consumers(), std::get<0>(GetParam()).consumers);
}

TEST_P(QueueModes, SmallestAndLargestGeometriesWork) {
  for (auto [cap, block] : {std::pair<std::size_t, std::size_t>{2, 8}, {2, 16u << 20}}) {
    zipc::test::TempName name("q");
    auto sut = Queue::create(name.str(), opts(cap, block), Role::producer);
    auto rx = consumer_of(name);
    std::vector<std::byte> big(block, std::byte{7});
    EXPECT_EQ(sut.try_send(big), Status::ok);
    std::vector<std::byte> out(block);
    auto r = rx.try_recv(out);
    EXPECT_EQ(r.status, Status::ok);
    EXPECT_EQ(r.size, block);
    EXPECT_EQ(out, big);
  }
}

TEST_P(QueueModes, DeadProducersReservationIsAbandonedNotDelivered) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::consumer);
  auto child = zipc::test::spawn([&]() -> int {
    auto q = Queue::open(name.str(), Role::producer);
    auto loan = q.try_reserve();
    std::memcpy(loan.data().data(), "garbage", 7);
    ::_exit(loan ? 0 : 1);  // dies holding the reservation
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  auto tx = Queue::open(name.str(), Role::producer);  // a new producer takes over
  EXPECT_EQ(tx.try_send(bytes_of("fresh")), Status::ok);
  EXPECT_EQ(recv_string(sut, 10s), "fresh");
  EXPECT_EQ(sut.stats().abandoned, 1u);
}

TEST_P(QueueModes, MessageOfAConsumerThatDiedHoldingItIsRedelivered) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), opts(), Role::producer);
  EXPECT_EQ(sut.try_send(bytes_of("precious")), Status::ok);
  auto child = zipc::test::spawn([&]() -> int {
    auto q = Queue::open(name.str(), Role::consumer);
    auto loan = q.try_acquire();
    ::_exit(loan && string_of(loan.data()) == "precious" ? 0 : 1);  // dies holding it
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  auto rx = consumer_of(name);
  EXPECT_EQ(recv_string(rx, 10s), "precious");
  EXPECT_EQ(recv_string(rx), "<empty>");
  EXPECT_EQ(sut.stats().redelivered, 1u);
}

INSTANTIATE_TEST_SUITE_P(Queue, QueueModes,
                         ::testing::Combine(::testing::ValuesIn(zipc::test::kAllModes),
                                            ::testing::Values(zipc::WaitStrategy::busy_poll,
                                                              zipc::WaitStrategy::adaptive, zipc::WaitStrategy::block)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).label) + "_" +
                                  zipc::to_string(std::get<1>(info.param));
                         });

TEST(Queue, LargestCapacityWorks) {  // 2^24 blocks (1 GiB of cells), once: it is slow under sanitizers
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), queue_options(zipc::test::kMpmc, 1u << 24, 8));
  EXPECT_EQ(sut.try_send(bytes_of("12345678")), Status::ok);
  EXPECT_EQ(recv_string(sut), "12345678");
}

TEST(Queue, SecondProducerOfASingleProducerQueueGetsAClearError) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), queue_options(zipc::test::kSpsc), Role::producer);
  try {
    Queue::open(name.str(), Role::producer);
    FAIL() << "second producer attached";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::busy);
    EXPECT_NE(std::string(e.what()).find("single-producer"), std::string::npos) << e.what();
  }
  auto c1 = Queue::open(name.str(), Role::consumer);
  EXPECT_THROW(Queue::open(name.str(), Role::consumer), zipc::Error);
  sut = Queue();  // detach: the role is free again
  EXPECT_NO_THROW(Queue::open(name.str(), Role::producer));
}

TEST(Queue, ProducerRoleOfADeadProcessCanBeTakenOver) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), queue_options(zipc::test::kSpsc), Role::consumer);
  auto child = zipc::test::spawn([&]() -> int {
    auto q = Queue::open(name.str(), Role::producer);
    (void)q.try_send(bytes_of("before"));
    ::_exit(0);
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  auto tx = Queue::open(name.str(), Role::producer);
  EXPECT_EQ(tx.try_send(bytes_of("after")), Status::ok);
  EXPECT_EQ(recv_string(sut), "before");
  EXPECT_EQ(recv_string(sut), "after");
}

TEST(Queue, OptionsOutOfRangeAreRejected) {
  zipc::test::TempName name("q");
  auto bad = [&](const QueueOptions& o) {
    try {
      Queue::create(name.str(), o);
    } catch (const zipc::Error& e) {
      return e.errc();
    }
    return Errc::ok;
  };
  for (std::size_t cap : {0ul, 1ul, 3ul, 1000ul, (1ul << 24) + 1, 1ul << 25}) {
    QueueOptions o;
    o.block_count = cap;
    EXPECT_EQ(bad(o), Errc::invalid_argument) << cap;
  }
  for (std::size_t block : {0ul, 4ul, 12ul, (16ul << 20) + 8}) {
    QueueOptions o;
    o.block_size = block;
    EXPECT_EQ(bad(o), Errc::invalid_argument) << block;
  }
  QueueOptions o;
  o.max_participants = 1;
  EXPECT_EQ(bad(o), Errc::invalid_argument);
}

TEST(Queue, ParticipantTableFullGivesBusy) {
  zipc::test::TempName name("q");
  QueueOptions o = queue_options(zipc::test::kMpmc);
  o.max_participants = 3;
  auto sut = Queue::create(name.str(), o);
  auto a = Queue::open(name.str());
  auto b = Queue::open(name.str());
  try {
    Queue::open(name.str());
    FAIL() << "fourth handle attached";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::busy);
  }
  a = Queue();
  EXPECT_NO_THROW(Queue::open(name.str()));
}

TEST(Queue, OpeningAnotherKindOfSegmentFails) {
  zipc::test::TempName name("q");
  zipc::SegmentSpec spec;
  spec.kind = zipc::SegmentKind::user;
  spec.payload_size = 4096;
  auto seg = zipc::Segment::create(name.str(), spec, nullptr);
  try {
    Queue::open(name.str());
    FAIL();
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::wrong_kind);
  }
}

TEST(Queue, OpenOrCreateByManyProcessesYieldsOneQueue) {
  zipc::test::TempName name("q");
  std::vector<zipc::test::Child> kids;
  for (int i = 0; i < 4; ++i) {
    kids.push_back(zipc::test::spawn([&]() -> int {
      auto q = Queue::open_or_create(name.str(), queue_options(zipc::test::kMpmc, 64));
      return q.send(bytes_of("hi"), 5s) == Status::ok ? 0 : 1;
    }));
  }
  for (auto& k : kids) EXPECT_EQ(k.wait().exit_code, 0);
  auto sut = Queue::open(name.str());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(recv_string(sut), "hi");
  EXPECT_EQ(recv_string(sut), "<empty>");
}

TEST(Queue, RecordsOfDeadProcessesAreReusedWhenTheTableIsFull) {
  for (const auto& mode : {zipc::test::kSpsc, zipc::test::kMpmc}) {
    zipc::test::TempName name("q");
    QueueOptions o = queue_options(mode);
    o.max_participants = 3;
    auto sut = Queue::create(name.str(), o, Role::producer);
    auto rx = Queue::open(name.str(), Role::consumer);
    auto child = zipc::test::spawn([&]() -> int {
      auto q = Queue::open(name.str(), Role::none);
      ::_exit(0);  // dies without detaching
    });
    ASSERT_EQ(child.wait().exit_code, 0);
    EXPECT_NO_THROW(Queue::open(name.str(), Role::none)) << mode.label;
  }
}

TEST(Queue, FileBackedQueueWorksAcrossHandles) {
  zipc::test::TempName name("q", /*file_backed=*/true);
  QueueOptions o = queue_options(zipc::test::kMpmc);
  o.segment = name.options();
  auto sut = Queue::create(name.str(), o);
  EXPECT_EQ(sut.segment().path(), name.path());
  auto other = Queue::open(name.str(), Role::both, {}, name.options());
  EXPECT_EQ(sut.try_send(bytes_of("on disk")), Status::ok);
  EXPECT_EQ(recv_string(other), "on disk");
}

}  // namespace queue_unit_test
