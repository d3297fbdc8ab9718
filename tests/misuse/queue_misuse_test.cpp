// Queue misuse is a status, never a crash (docs/guide/handles.md): calls on
// detached, moved-from and default handles; loans used after their handle
// went, after release, after close and remove; double ends; oversized commits.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "isolated.hpp"
#include "zipc/queue.hpp"
#include "zipc/typed_queue.hpp"

using namespace std::chrono_literals;
using zipc::Status;
using zipc::misuse::bytes_of;
using zipc::misuse::isolated;
using zipc::misuse::string_of;

namespace queue_misuse_test {
namespace {

zipc::QueueOptions small() {
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 8;
  return o;
}

struct Point {
  double x;
  double y;
};

// ---------------------------------------------------------------- handles

TEST(QueueMisuse, SendOnADefaultHandleSaysDetached) {
  isolated([] {
    zipc::Queue sut;
    EXPECT_EQ(sut.try_send(bytes_of("x")), Status::detached);
    EXPECT_EQ(sut.send(bytes_of("x"), 1ms), Status::detached);
  });
}

TEST(QueueMisuse, RecvOnADefaultHandleSaysDetached) {
  isolated([] {
    zipc::Queue sut;
    std::array<std::byte, 64> buf{};
    EXPECT_EQ(sut.try_recv(buf).status, Status::detached);
    EXPECT_EQ(sut.recv(buf, zipc::forever).status, Status::detached);
  });
}

TEST(QueueMisuse, SendAfterDetachSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Queue::create(name.str(), small());
    sut.detach();
    EXPECT_FALSE(sut.is_attached());
    EXPECT_EQ(sut.send(bytes_of("x"), zipc::forever), Status::detached);
  });
}

TEST(QueueMisuse, RecvOnAMovedFromHandleSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Queue::create(name.str(), small());
    zipc::Queue other = std::move(sut);
    std::array<std::byte, 64> buf{};
    EXPECT_EQ(sut.recv(buf, 1ms).status, Status::detached);  // NOLINT(bugprone-use-after-move): the case
    EXPECT_EQ(other.try_send(bytes_of("x")), Status::ok);
  });
}

TEST(QueueMisuse, ReserveOnAMovedFromHandleGivesNoLoanSayingDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Queue::create(name.str(), small());
    zipc::Queue other(std::move(sut));
    zipc::QueueWriteLoan w = sut.reserve(zipc::forever);  // NOLINT(bugprone-use-after-move): the case
    EXPECT_FALSE(w);
    EXPECT_EQ(w.status(), Status::detached);
    EXPECT_TRUE(w.data().empty());
    EXPECT_EQ(w.commit(0).status, Status::detached);
  });
}

TEST(QueueMisuse, SizedReserveOnADetachedHandleSaysDetached) {
  isolated([] {
    zipc::Queue sut;
    EXPECT_EQ(sut.reserve(4096, 1ms).status(), Status::detached);
    EXPECT_EQ(sut.try_reserve(16).status(), Status::detached);
  });
}

TEST(QueueMisuse, AcquireOnADetachedHandleSaysDetached) {
  isolated([] {
    zipc::Queue sut;
    zipc::QueueReadLoan r = sut.acquire(zipc::forever);
    EXPECT_FALSE(r);
    EXPECT_EQ(r.status(), Status::detached);
    EXPECT_TRUE(r.data().empty());
    r.release();
  });
}

TEST(QueueMisuse, BatchesOnADetachedHandleDoNothingAndSayDetached) {
  isolated([] {
    zipc::Queue sut;
    Status st = Status::ok;
    const std::array<std::span<const std::byte>, 2> msgs{bytes_of("a"), bytes_of("b")};
    EXPECT_EQ(sut.send_batch(msgs, 1ms, &st), 0u);
    EXPECT_EQ(st, Status::detached);
    st = Status::ok;
    EXPECT_EQ(sut.recv_batch(
                  4, 1ms, [](std::span<const std::byte>) noexcept {}, &st),
              0u);
    EXPECT_EQ(st, Status::detached);
    std::array<zipc::QueueWriteLoan, 2> w;
    st = Status::ok;
    EXPECT_EQ(sut.reserve_batch(w, 1ms, &st), 0u);
    EXPECT_EQ(st, Status::detached);
    std::array<zipc::QueueReadLoan, 2> r;
    st = Status::ok;
    EXPECT_EQ(sut.acquire_batch(r, 1ms, &st), 0u);
    EXPECT_EQ(st, Status::detached);
  });
}

TEST(QueueMisuse, ControlCallsOnADetachedHandleAreHarmless) {
  isolated([] {
    zipc::Queue sut;
    sut.close();
    EXPECT_TRUE(sut.closed());
    EXPECT_EQ(sut.stats().sent, 0u);
    EXPECT_EQ(sut.recover(), 0u);
    EXPECT_EQ(sut.block_size(), 0u);
    EXPECT_EQ(sut.block_count(), 0u);
    EXPECT_EQ(sut.oversize_bytes(), 0u);
    EXPECT_EQ(sut.size_approx(), 0u);
    EXPECT_TRUE(sut.segment().name().empty());
    sut.detach();  // twice is fine
    sut.detach();
  });
}

TEST(QueueMisuse, AHandleMovedOntoItselfStaysUsable) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Queue::create(name.str(), small());
    zipc::Queue& same = sut;
    sut = std::move(same);
    EXPECT_EQ(sut.try_send(bytes_of("x")), Status::ok);
  });
}

// ---------------------------------------------------------------- loans and their handle

TEST(QueueMisuse, AReadLoanOutlivesItsQueueAndStaysReadable) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc::QueueReadLoan loan;
    {
      auto q = zipc::Queue::create(name.str(), small());
      ASSERT_EQ(q.try_send(bytes_of("kept")), Status::ok);
      loan = q.try_acquire();
      ASSERT_TRUE(loan);
    }  // the handle is gone; the loan keeps its mapping
    EXPECT_EQ(string_of(loan.data()), "kept");
    loan.release();
    EXPECT_TRUE(loan.data().empty());
  });
}

TEST(QueueMisuse, AReadLoanReleasedAfterDetachReturnsItsBlock) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    ASSERT_EQ(q.try_send(bytes_of("once")), Status::ok);
    zipc::QueueReadLoan loan = q.try_acquire();
    ASSERT_TRUE(loan);
    q.detach();
    loan.release();
    auto again = zipc::Queue::open(name.str());
    std::array<std::byte, 64> buf{};
    EXPECT_EQ(again.try_recv(buf).status, Status::empty);  // consumed once, not redelivered
    EXPECT_EQ(again.stats().received, 1u);
  });
}

TEST(QueueMisuse, AWriteLoanCommittedAfterItsQueueIsDestroyedIsDelivered) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto reader = zipc::Queue::create(name.str(), small());
    zipc::QueueWriteLoan loan;
    {
      auto q = zipc::Queue::open(name.str());
      loan = q.try_reserve();
      ASSERT_TRUE(loan);
    }
    std::memcpy(loan.data().data(), "late", 4);
    EXPECT_EQ(loan.commit(4).status, Status::ok);
    std::array<std::byte, 64> buf{};
    const zipc::IoResult r = reader.try_recv(buf);
    ASSERT_EQ(r.status, Status::ok);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), r.size), "late");
  });
}

TEST(QueueMisuse, AWriteLoanAbortedAfterDetachDeliversNothing) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto reader = zipc::Queue::create(name.str(), small());
    auto q = zipc::Queue::open(name.str());
    zipc::QueueWriteLoan loan = q.try_reserve();
    ASSERT_TRUE(loan);
    q.detach();
    loan.abort();
    std::array<std::byte, 64> buf{};
    EXPECT_EQ(reader.try_recv(buf).status, Status::empty);
    EXPECT_EQ(reader.try_send(bytes_of("next")), Status::ok);
    EXPECT_EQ(reader.try_recv(buf).status, Status::ok);
  });
}

TEST(QueueMisuse, AHandleAssignedOverWithLoansOutKeepsThemWorking) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    ASSERT_EQ(q.try_send(bytes_of("m")), Status::ok);
    zipc::QueueReadLoan r = q.try_acquire();
    ASSERT_TRUE(r);
    q = zipc::Queue();
    EXPECT_EQ(string_of(r.data()), "m");
    r.release();
  });
}

TEST(QueueMisuse, BatchLoansOutliveTheirQueueAndAllCommit) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto reader = zipc::Queue::create(name.str(), small());
    std::array<zipc::QueueWriteLoan, 3> loans;
    {
      auto q = zipc::Queue::open(name.str());
      ASSERT_EQ(q.reserve_batch(loans, 0ms), 3u);
    }
    for (auto& l : loans) EXPECT_EQ(l.commit(0).status, Status::ok);
    EXPECT_EQ(reader.recv_batch(8, 0ms, [](std::span<const std::byte>) noexcept {}), 3u);
  });
}

TEST(QueueMisuse, AReadLoanOutlivesTheRemoveOfItsQueue) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    ASSERT_EQ(q.try_send(bytes_of("gone")), Status::ok);
    zipc::QueueReadLoan r = q.try_acquire();
    ASSERT_TRUE(r);
    EXPECT_TRUE(zipc::Queue::remove(name.str()));
    q.detach();
    EXPECT_EQ(string_of(r.data()), "gone");
  });
}

TEST(QueueMisuse, AWriteLoanReservedBeforeCloseStillCommitsAndIsDrained) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    zipc::QueueWriteLoan w = q.try_reserve();
    ASSERT_TRUE(w);
    q.close();
    EXPECT_EQ(w.commit(0).status, Status::ok);
    std::array<std::byte, 64> buf{};
    EXPECT_EQ(q.try_recv(buf).status, Status::ok);
    EXPECT_EQ(q.try_recv(buf).status, Status::closed);
    EXPECT_EQ(q.try_send(bytes_of("x")), Status::closed);
  });
}

// ---------------------------------------------------------------- ending loans twice or wrongly

TEST(QueueMisuse, ADoubleReleaseIsANoOp) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    ASSERT_EQ(q.try_send(bytes_of("a")), Status::ok);
    ASSERT_EQ(q.try_send(bytes_of("b")), Status::ok);
    zipc::QueueReadLoan sut = q.try_acquire();
    ASSERT_TRUE(sut);
    sut.release();
    sut.release();
    EXPECT_FALSE(sut);
    zipc::QueueReadLoan next = q.try_acquire();
    ASSERT_TRUE(next);
    EXPECT_EQ(string_of(next.data()), "b");
  });
}

TEST(QueueMisuse, ADoubleCommitSaysDetachedAndSendsOnce) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    zipc::QueueWriteLoan sut = q.try_reserve();
    ASSERT_TRUE(sut);
    EXPECT_EQ(sut.commit(1).status, Status::ok);
    EXPECT_EQ(sut.commit(1).status, Status::detached);
    EXPECT_EQ(q.size_approx(), 1u);
  });
}

TEST(QueueMisuse, ACommitAfterAbortSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    zipc::QueueWriteLoan sut = q.try_reserve();
    ASSERT_TRUE(sut);
    sut.abort();
    sut.abort();
    EXPECT_EQ(sut.commit(1).status, Status::detached);
    std::array<std::byte, 64> buf{};
    EXPECT_EQ(q.try_recv(buf).status, Status::empty);
  });
}

TEST(QueueMisuse, ACommitPastTheLoanSizeIsTooLargeAndKeepsTheLoan) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    zipc::QueueWriteLoan sut = q.try_reserve();
    ASSERT_TRUE(sut);
    EXPECT_EQ(sut.commit(sut.size() + 1).status, Status::too_large);
    EXPECT_EQ(sut.commit(static_cast<std::size_t>(-1)).status, Status::too_large);
    EXPECT_TRUE(sut);
    EXPECT_EQ(sut.commit(sut.size()).status, Status::ok);
  });
}

TEST(QueueMisuse, ALoanIsEmptyOnceItEnded) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    zipc::QueueWriteLoan w = q.try_reserve();
    ASSERT_TRUE(w);
    EXPECT_EQ(w.commit(2).status, Status::ok);
    EXPECT_TRUE(w.data().empty());
    EXPECT_EQ(w.size(), 0u);
    zipc::QueueReadLoan r = q.try_acquire();
    ASSERT_TRUE(r);
    r.release();
    EXPECT_TRUE(r.data().empty());
    EXPECT_EQ(r.size(), 0u);
  });
}

TEST(QueueMisuse, AMovedFromLoanHoldsNothing) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto q = zipc::Queue::create(name.str(), small());
    zipc::QueueWriteLoan w = q.try_reserve();
    zipc::QueueWriteLoan other = std::move(w);
    EXPECT_FALSE(w);  // NOLINT(bugprone-use-after-move): the case
    EXPECT_EQ(w.commit(0).status, Status::detached);
    w.abort();
    EXPECT_EQ(other.commit(0).status, Status::ok);
  });
}

TEST(QueueMisuse, DefaultLoansAreHarmless) {
  isolated([] {
    zipc::QueueWriteLoan w;
    EXPECT_EQ(w.commit(0).status, Status::detached);
    w.abort();
    zipc::QueueReadLoan r;
    r.release();
    EXPECT_TRUE(r.data().empty());
  });
}

TEST(QueueMisuse, ACommitOfAFailedReserveSaysWhyItFailed) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto o = small();
    o.block_count = 2;
    auto q = zipc::Queue::create(name.str(), o);
    ASSERT_EQ(q.try_send(bytes_of("1")), Status::ok);
    ASSERT_EQ(q.try_send(bytes_of("2")), Status::ok);
    zipc::QueueWriteLoan sut = q.try_reserve();
    EXPECT_FALSE(sut);
    EXPECT_EQ(sut.status(), Status::full);
    EXPECT_EQ(sut.commit(0).status, Status::full);
  });
}

TEST(QueueMisuse, ASendOnAConsumerOnlyHandleIsWrongRole) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto owner = zipc::Queue::create(name.str(), small());
    auto sut = zipc::Queue::open(name.str(), zipc::Role::consumer);
    EXPECT_EQ(sut.try_send(bytes_of("x")), Status::wrong_role);
    EXPECT_EQ(sut.try_reserve().status(), Status::wrong_role);
  });
}

// ---------------------------------------------------------------- threads

TEST(QueueMisuse, ASecondThreadInsideAHandleIsRefusedInDebugBuilds) {
#ifdef NDEBUG
  GTEST_SKIP() << "the check exists in debug builds only (docs/guide/handles.md, Threads)";
#else
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Queue::create(name.str(), small());
    std::thread waiter([&] {
      std::array<std::byte, 64> buf{};
      EXPECT_EQ(sut.recv(buf, zipc::forever).status, Status::ok);
    });
    while (sut.stats().empty_waits == 0) std::this_thread::yield();  // the waiter is inside
    EXPECT_EQ(sut.try_send(bytes_of("x")), Status::busy);
    auto other = zipc::Queue::open(name.str());
    EXPECT_EQ(other.send(bytes_of("y"), zipc::forever), Status::ok);
    waiter.join();
    EXPECT_EQ(sut.try_send(bytes_of("z")), Status::ok);  // one thread again
  });
#endif
}

// ---------------------------------------------------------------- typed wrappers

TEST(QueueMisuse, TypedCallsOnADefaultQueueSayDetached) {
  isolated([] {
    zipc::TypedQueue<Point> sut;
    EXPECT_FALSE(sut.is_open());
    EXPECT_EQ(sut.try_send(Point{1, 2}), Status::detached);
    Point p{};
    EXPECT_EQ(sut.recv(p, 1ms), Status::detached);
    EXPECT_EQ(sut.try_reserve().status(), Status::detached);
    EXPECT_EQ(sut.try_acquire().status(), Status::detached);
    sut.close();
  });
}

TEST(QueueMisuse, ATypedReadLoanOutlivesItsQueue) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc::TypedQueue<Point>::ReadLoan loan;
    {
      auto q = zipc::TypedQueue<Point>::create(name.str(), small());
      ASSERT_EQ(q.try_send(Point{3, 4}), Status::ok);
      loan = q.try_acquire();
      ASSERT_TRUE(loan);
    }
    EXPECT_EQ(loan->x, 3.0);
    EXPECT_EQ(loan->y, 4.0);
  });
}

TEST(QueueMisuse, ATypedWriteLoanCommittedAfterItsQueueWentIsDelivered) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto reader = zipc::TypedQueue<Point>::create(name.str(), small());
    zipc::TypedQueue<Point>::WriteLoan loan;
    {
      auto q = zipc::TypedQueue<Point>::open(name.str());
      loan = q.try_reserve();
      ASSERT_TRUE(loan);
    }
    loan->x = 5;
    EXPECT_EQ(loan.commit().status, Status::ok);
    Point p{};
    EXPECT_EQ(reader.try_recv(p), Status::ok);
    EXPECT_EQ(p.x, 5.0);
  });
}

}  // namespace

}  // namespace queue_misuse_test
