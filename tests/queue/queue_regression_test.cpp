// Regressions from the review of the queue (findings 2, 6, 8, 10, 14): each
// reproduces its scenario deterministically where it can, by writing the
// segment's state through src/layout/queue_layout.hpp or by letting a child
// process die at a chosen point.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <barrier>
#include <cstring>
#include <new>
#include <thread>

#include "layout/queue_layout.hpp"
#include "queue_test_util.hpp"
#include "zipc/queue.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Queue;
using zipc::QueueOptions;
using zipc::Role;
using zipc::Status;
using zipc::test::bytes_of;
using zipc::test::queue_options;
using zipc::test::string_of;
namespace L = zipc::layout;

namespace queue_regression_test {
namespace {

L::QueueControl& control_of(const Queue& q) {
  return *reinterpret_cast<L::QueueControl*>(q.segment().payload());
}
L::ParticipantRecord& record_of(const Queue& q, std::size_t i) {
  return reinterpret_cast<L::ParticipantRecord*>(q.segment().payload() + sizeof(L::QueueControl))[i];
}

std::string recv_string(Queue& q, std::chrono::nanoseconds timeout = 0ns) {
  std::array<std::byte, 256> buf{};
  auto r = q.recv(buf, timeout);
  if (!r.ok()) return std::string("<") + zipc::to_string(r.status) + ">";
  return string_of(std::span(buf).first(r.size));
}

}  // namespace

// Finding 2: the dead producer published blocks 5..9 (seq words) but never
// stored tail = 10; the consumer took them and published head = 10.
TEST(QueueRegression, ProducerKilledBetweenPublishingBlocksAndStoringTailCanBeReplaced) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), queue_options(zipc::test::kSpsc, 16), Role::consumer);
  auto child = zipc::test::spawn([&]() -> int {
    auto q = Queue::open(name.str(), Role::producer);
    for (int i = 0; i < 10; ++i)
      if (q.try_send(bytes_of(std::to_string(i))) != Status::ok) return 1;
    control_of(q).tail.store(5);  // as if killed before the tail store of blocks 5..9
    ::_exit(0);                   // dies without detaching
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(recv_string(sut), std::to_string(i));
  EXPECT_EQ(recv_string(sut), "<empty>");  // publishes head = 10
  ASSERT_EQ(control_of(sut).head.load(), 10u);
  ASSERT_EQ(control_of(sut).tail.load(), 5u);

  auto tx = Queue::open(name.str(), Role::producer);
  EXPECT_EQ(tx.try_send(bytes_of("after")), Status::ok);
  EXPECT_EQ(recv_string(sut), "after");
  EXPECT_EQ(tx.try_send(bytes_of("and more")), Status::ok);
  EXPECT_EQ(recv_string(sut), "and more");
}

// A single producer marks a committed block in its cell (LamportRing::commit)
// and publish() passes marked blocks in order. One that died holding blocks 0
// and 1, block 1 committed (marked) but unpublished behind the uncommitted 0,
// leaves that mark where its successor reserves position 1 again: the
// successor must not publish position 1 before it commits it itself.
TEST(QueueRegression, ACommitADeadSingleProducerNeverPublishedIsNotTakenForItsSuccessors) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), queue_options(zipc::test::kSpsc, 16), Role::consumer);
  auto child = zipc::test::spawn([&]() -> int {
    auto q = Queue::open(name.str(), Role::producer);
    std::array<zipc::QueueWriteLoan, 2> loans;
    if (q.reserve_batch(loans, 0ns) != 2) return 1;
    std::memcpy(loans[1].data().data(), "dead", 4);
    if (!loans[1].commit(4).ok()) return 2;  // out of order: nothing is published
    ::_exit(0);                              // dies holding both, without detaching
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  EXPECT_EQ(recv_string(sut), "<empty>");

  auto tx = Queue::open(name.str(), Role::producer);  // takes over from the dead one
  std::array<zipc::QueueWriteLoan, 2> loans;
  ASSERT_EQ(tx.reserve_batch(loans, 0ns), 2u);
  std::memcpy(loans[0].data().data(), "first", 5);
  const zipc::CommitResult c0 = loans[0].commit(5);
  ASSERT_TRUE(c0.ok());
  EXPECT_EQ(c0.sequence, 0u);  // the successor starts where nothing was published
  EXPECT_EQ(recv_string(sut), "first");
  EXPECT_EQ(recv_string(sut), "<empty>");  // position 1 is reserved, not committed
  std::memcpy(loans[1].data().data(), "second", 6);
  ASSERT_TRUE(loans[1].commit(6).ok());
  EXPECT_EQ(recv_string(sut), "second");
  EXPECT_EQ(recv_string(sut), "<empty>");
}

// A producer handle destroyed while a loan it lent is still out stays
// attached until that loan ends (docs/guide/handles.md): the block committed
// behind the loan waits for it, no successor producer takes the role in the
// meantime, and once the loan is aborted the committed block is delivered
// and the role is free.
TEST(QueueRegression, ACommitHeldBackByALoanOutlivingItsHandleWaitsForThatLoan) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), queue_options(zipc::test::kSpsc, 16), Role::consumer);
  zipc::QueueWriteLoan kept;
  {
    auto q = Queue::open(name.str(), Role::producer);
    std::array<zipc::QueueWriteLoan, 2> loans;
    ASSERT_EQ(q.reserve_batch(loans, 0ns), 2u);
    kept = std::move(loans[0]);
    std::memcpy(loans[1].data().data(), "held", 4);
    ASSERT_TRUE(loans[1].commit(4).ok());  // behind the kept one: not published
  }                                        // q is gone; `kept` keeps its record
  EXPECT_EQ(recv_string(sut), "<empty>");
  EXPECT_EQ(zipc::test::errc_of([&] { (void)Queue::open(name.str(), Role::producer); }), zipc::Errc::busy);
  kept.abort();
  EXPECT_EQ(recv_string(sut), "held");
  EXPECT_EQ(recv_string(sut), "<empty>");
  auto tx = Queue::open(name.str(), Role::producer);
  ASSERT_EQ(tx.try_send(std::as_bytes(std::span("next", 4))), zipc::Status::ok);
  EXPECT_EQ(recv_string(sut), "next");
}

// Finding 6: a producer (consumer) whose CAS on tail (head) lost to another
// and which then found the ring full (empty) left its claim on the winner's
// position; were the winner killed before its owner stores, recovery would
// attribute the position to the loser, alive, and never free it. Between
// calls no handle may hold a claim. (Races are not deterministic: many rounds
// of two threads each filling, then draining, the same ring.)
TEST(QueueRegression, ParticipantsThatLoseARaceLeaveNoClaimBehind) {
  zipc::test::TempName name("q");
  QueueOptions o = queue_options(zipc::test::kMpmc, 16, 8);
  o.max_participants = 5;
  auto sut = Queue::create(name.str(), o, Role::none);
  std::array<Queue, 2> tx{Queue::open(name.str(), Role::producer), Queue::open(name.str(), Role::producer)};
  std::array<Queue, 2> rx{Queue::open(name.str(), Role::consumer), Queue::open(name.str(), Role::consumer)};
  const int rounds =
      std::max(200, static_cast<int>(4000 * zipc::test::stress_scale() / zipc::test::sanitizer_divisor()));
  std::atomic<int> stale{0};
  std::barrier sync(3);
  auto check = [&] {
    for (std::size_t i = 0; i < o.max_participants; ++i)
      if (record_of(sut, i).claim.load() != 0) stale.fetch_add(1);
  };
  auto body = [&](int who) {
    const std::byte one[8]{};
    std::array<std::byte, 8> buf{};
    for (int r = 0; r < rounds; ++r) {
      sync.arrive_and_wait();
      while (tx[static_cast<std::size_t>(who)].try_send(one) == Status::ok) {
      }
      sync.arrive_and_wait();
      sync.arrive_and_wait();  // main checked the claims
      while (rx[static_cast<std::size_t>(who)].try_recv(buf).ok()) {
      }
      sync.arrive_and_wait();
      sync.arrive_and_wait();  // main checked the claims
    }
  };
  std::thread a(body, 0), b(body, 1);
  for (int r = 0; r < rounds; ++r) {
    sync.arrive_and_wait();
    sync.arrive_and_wait();  // both found the ring full
    check();
    sync.arrive_and_wait();
    sync.arrive_and_wait();  // both found it empty
    check();
    sync.arrive_and_wait();
  }
  a.join();
  b.join();
  EXPECT_EQ(stale.load(), 0) << "claims left behind by idle handles";
}

// Finding 8: the orphan hint can reach 0 while an orphan exists (a consumer's
// clear racing a take and a mark, or a recoverer killed between its mark and
// its count). A stalled consumer's recovery must count the orphan again.
TEST(QueueRegression, OrphanWhoseHintWasLostIsStillRedelivered) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), queue_options(zipc::test::kMpmc), Role::producer);
  ASSERT_EQ(sut.try_send(bytes_of("held by the dead")), Status::ok);
  auto child = zipc::test::spawn([&]() -> int {
    auto q = Queue::open(name.str(), Role::consumer);
    auto loan = q.acquire(5s);
    if (!loan) return 1;
    ::_exit(0);  // dies holding it
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  ASSERT_EQ(sut.recover(), 1u);  // marked orphan, counted in the hint
  auto& hint = control_of(sut).orphans;
  ASSERT_EQ(hint.load() & L::kOrphanCount, 1u);
  hint.store(hint.load() & ~L::kOrphanCount);  // the count lost

  auto rx = Queue::open(name.str(), Role::consumer);
  EXPECT_EQ(recv_string(rx, 5s), "held by the dead");
  EXPECT_EQ(sut.stats().redelivered, 1u);
}

// Finding 10 (the live case is QueueModes.ReservationMadeBeforeCloseAndCommittedAfterIsDelivered):
// a reservation whose producer died never arrives, so it does not hold the drain.
TEST(QueueRegression, ReservationOfAProducerThatDiedDoesNotKeepAClosedQueueFromDraining) {
  zipc::test::TempName name("q");
  auto sut = Queue::create(name.str(), queue_options(zipc::test::kSpsc), Role::consumer);
  auto child = zipc::test::spawn([&]() -> int {
    auto q = Queue::open(name.str(), Role::producer);
    if (q.try_send(bytes_of("sent")) != Status::ok) return 1;
    auto loan = q.reserve(0s);
    if (!loan) return 2;
    q.close();
    ::_exit(0);  // dies holding the reservation
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  EXPECT_EQ(recv_string(sut), "sent");
  EXPECT_EQ(recv_string(sut, 5s), "<closed>");
}

// Finding 14: with a full participant table, recovery keeps the record of a
// dead single producer (consumer) for the take-over, which ran only after
// the newcomer had a record: it could never attach.
TEST(QueueRegression, DeadSingleSideIsReplacedEvenWhenTheParticipantTableIsFull) {
  for (const Role dead_role : {Role::producer, Role::consumer}) {
    const Role live_role = dead_role == Role::producer ? Role::consumer : Role::producer;
    SCOPED_TRACE(dead_role == Role::producer ? "dead producer" : "dead consumer");
    zipc::test::TempName name("q");
    QueueOptions o = queue_options(zipc::test::kSpsc);
    o.max_participants = 2;
    auto sut = Queue::create(name.str(), o, live_role);
    auto child = zipc::test::spawn([&]() -> int {
      auto q = Queue::open(name.str(), dead_role);
      if (dead_role == Role::producer && q.try_send(bytes_of("before")) != Status::ok) return 1;
      ::_exit(0);  // dies without detaching
    });
    ASSERT_EQ(child.wait().exit_code, 0);
    Queue successor;
    ASSERT_NO_THROW(successor = Queue::open(name.str(), dead_role));
    Queue& tx = dead_role == Role::producer ? successor : sut;
    Queue& rx = dead_role == Role::producer ? sut : successor;
    EXPECT_EQ(tx.try_send(bytes_of("after")), Status::ok);
    if (dead_role == Role::producer) {
      EXPECT_EQ(recv_string(rx), "before");
    }
    EXPECT_EQ(recv_string(rx), "after");
  }
}

// A peer scribbles a committed message's size to more than a block. A copy
// receive with a normal buffer must drop it as corrupt and move on, not
// report too_large for ever (which left the message in place, blocking
// every message behind it).
TEST(QueueRegression, SizeScribbledBeyondTheBlockIsDroppedAsCorruptNotReportedTooLarge) {
  for (const auto& mode : {zipc::test::kSpsc, zipc::test::kMpmc}) {
    SCOPED_TRACE(mode.label);
    zipc::test::TempName name("q");
    auto sut = Queue::create(name.str(), queue_options(mode, 16, 64), Role::none);
    auto tx = Queue::open(name.str(), Role::producer);
    auto rx = Queue::open(name.str(), Role::consumer);
    ASSERT_EQ(tx.try_send(bytes_of("first")), Status::ok);
    ASSERT_EQ(tx.try_send(bytes_of("second")), Status::ok);
    const auto& ctl = control_of(sut);
    auto* cell0 = reinterpret_cast<L::CellHeader*>(sut.segment().payload() + ctl.cells_offset);
    const std::uint32_t flags = cell0->size.load() & ~L::kSizeMask;  // SPSC bookkeeping bits stay
    cell0->size.store(flags | 0x00ffff00u);                          // > 64-byte block, < kSizeMask
    std::array<std::byte, 16> small{};
    const auto r = rx.recv(small, 0ns);
    EXPECT_EQ(r.status, Status::corrupt);
    EXPECT_EQ(recv_string(rx), "second");
  }
}

}  // namespace queue_regression_test
