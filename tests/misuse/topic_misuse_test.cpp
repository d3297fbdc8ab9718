// Topic misuse is a status, never a crash (docs/guide/handles.md): publishers,
// subscribers and topic handles that are detached, moved from or default;
// loans that outlive or move with their handle; double ends; a second loan.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <utility>

#include "isolated.hpp"
#include "zipc/topic.hpp"
#include "zipc/typed_topic.hpp"

using namespace std::chrono_literals;
using zipc::Status;
using zipc::misuse::bytes_of;
using zipc::misuse::isolated;
using zipc::misuse::string_of;

namespace topic_misuse_test {
namespace {

zipc::TopicOptions small() {
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.max_subscribers = 4;
  return o;
}

zipc::SubscribeOptions oldest() {
  return {zipc::From::oldest(), zipc::Delivery::reliable};
}

struct Tick {
  std::uint64_t n;
};

// ---------------------------------------------------------------- publishers

TEST(TopicMisuse, PublishOnADefaultPublisherSaysDetached) {
  isolated([] {
    zipc::Publisher sut;
    EXPECT_EQ(sut.try_publish(bytes_of("x")).status, Status::detached);
    EXPECT_EQ(sut.publish(bytes_of("x"), zipc::forever).status, Status::detached);
    sut.flush();
  });
}

TEST(TopicMisuse, ReserveOnADetachedPublisherSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sut = t.publisher();
    sut.detach();
    EXPECT_FALSE(sut.is_attached());
    zipc::TopicWriteLoan w = sut.try_reserve(8);
    EXPECT_FALSE(w);
    EXPECT_EQ(w.status(), Status::detached);
    EXPECT_EQ(sut.reserve(8, zipc::forever).status(), Status::detached);
  });
}

TEST(TopicMisuse, PublishOnAMovedFromPublisherSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sut = t.publisher();
    zipc::Publisher other = std::move(sut);
    EXPECT_EQ(sut.try_publish(bytes_of("x")).status, Status::detached);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(other.try_publish(bytes_of("x")).status, Status::ok);
  });
}

TEST(TopicMisuse, ASecondReserveWhileALoanIsOutIsBusy) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sut = t.publisher();
    zipc::TopicWriteLoan first = sut.try_reserve(8);
    ASSERT_TRUE(first);
    zipc::TopicWriteLoan second = sut.try_reserve(8);
    EXPECT_FALSE(second);
    EXPECT_EQ(second.status(), Status::busy);
    EXPECT_EQ(first.commit(8).status, Status::ok);
    EXPECT_TRUE(sut.try_reserve(8));
  });
}

TEST(TopicMisuse, APublishWhileALoanIsOutIsBusy) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sut = t.publisher();
    zipc::TopicWriteLoan first = sut.try_reserve(8);
    ASSERT_TRUE(first);
    EXPECT_EQ(sut.try_publish(bytes_of("x")).status, Status::busy);
    EXPECT_EQ(sut.publish(bytes_of("x"), 1ms).status, Status::busy);
    first.abort();
    EXPECT_EQ(sut.try_publish(bytes_of("x")).status, Status::ok);
  });
}

TEST(TopicMisuse, AWriteLoanCommittedAfterItsPublisherIsDestroyedIsDelivered) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sub = t.subscribe(oldest());
    zipc::TopicWriteLoan loan;
    {
      auto pub = t.publisher();
      loan = pub.try_reserve(4);
      ASSERT_TRUE(loan);
    }
    std::memcpy(loan.data().data(), "late", 4);
    EXPECT_EQ(loan.commit(4).status, Status::ok);
    std::array<std::byte, 256> buf{};
    const zipc::ReadResult r = sub.try_read(buf);
    ASSERT_EQ(r.status, Status::ok);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), r.size), "late");
  });
}

TEST(TopicMisuse, APublisherGoneWithALoanOutGivesItsSlotBackWhenTheLoanEnds) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());  // single publisher
    zipc::TopicWriteLoan loan;
    {
      auto pub = t.publisher();
      loan = pub.try_reserve(4);
      ASSERT_TRUE(loan);
    }
    EXPECT_EQ(zipc::test::errc_of([&] { (void)t.publisher(); }), zipc::Errc::busy);  // the loan holds it
    loan.abort();
    EXPECT_EQ(zipc::test::errc_of([&] { (void)t.publisher(); }), zipc::Errc::ok);
  });
}

TEST(TopicMisuse, AWriteLoanAbortedAfterDetachDeliversNothing) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sub = t.subscribe(oldest());
    auto pub = t.publisher();
    zipc::TopicWriteLoan loan = pub.try_reserve(4);
    ASSERT_TRUE(loan);
    pub.detach();
    loan.abort();
    std::array<std::byte, 256> buf{};
    EXPECT_EQ(sub.try_read(buf).status, Status::empty);
  });
}

TEST(TopicMisuse, AWriteLoanFollowsItsPublisherWhenItMoves) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sub = t.subscribe(oldest());
    auto pub = t.publisher();
    zipc::TopicWriteLoan loan = pub.try_reserve(2);
    ASSERT_TRUE(loan);
    zipc::Publisher moved = std::move(pub);
    zipc::TopicWriteLoan moved_loan = std::move(loan);
    std::memcpy(moved_loan.data().data(), "mv", 2);
    EXPECT_EQ(moved_loan.commit(2).status, Status::ok);
    EXPECT_EQ(moved.try_publish(bytes_of("after")).status, Status::ok);
    std::array<std::byte, 256> buf{};
    EXPECT_EQ(sub.try_read(buf).size, 2u);
    EXPECT_EQ(sub.try_read(buf).size, 5u);
  });
}

TEST(TopicMisuse, ADoubleCommitSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto pub = t.publisher();
    zipc::TopicWriteLoan sut = pub.try_reserve(4);
    ASSERT_TRUE(sut);
    EXPECT_EQ(sut.commit(4).status, Status::ok);
    EXPECT_EQ(sut.commit(4).status, Status::detached);
    EXPECT_TRUE(sut.data().empty());
    sut.abort();
    EXPECT_EQ(t.next_sequence(), 1u);
  });
}

TEST(TopicMisuse, ACommitPastTheLoanSizeIsTooLargeAndKeepsTheLoan) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto pub = t.publisher();
    zipc::TopicWriteLoan sut = pub.try_reserve(4);
    ASSERT_TRUE(sut);
    EXPECT_EQ(sut.commit(5).status, Status::too_large);
    EXPECT_EQ(sut.commit(static_cast<std::size_t>(-1)).status, Status::too_large);
    EXPECT_EQ(sut.commit(4).status, Status::ok);
  });
}

TEST(TopicMisuse, AReserveOverTheMaximumIsTooLarge) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto pub = t.publisher();
    EXPECT_EQ(pub.try_reserve(257).status(), Status::too_large);
    EXPECT_EQ(pub.try_reserve(static_cast<std::size_t>(-1)).status(), Status::too_large);
  });
}

TEST(TopicMisuse, DefaultTopicLoansAreHarmless) {
  isolated([] {
    zipc::TopicWriteLoan w;
    EXPECT_EQ(w.commit(0).status, Status::detached);
    w.abort();
    zipc::TopicReadLoan r;
    r.release();
    EXPECT_TRUE(r.data().empty());
  });
}

// ---------------------------------------------------------------- subscribers

TEST(TopicMisuse, ReadOnADefaultSubscriberSaysDetached) {
  isolated([] {
    zipc::Subscriber sut;
    std::array<std::byte, 16> buf{};
    EXPECT_EQ(sut.try_read(buf).status, Status::detached);
    EXPECT_EQ(sut.read(buf, zipc::forever).status, Status::detached);
  });
}

TEST(TopicMisuse, AcquireOnADetachedSubscriberSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sut = t.subscribe(oldest());
    sut.detach();
    EXPECT_EQ(sut.try_acquire().status(), Status::detached);
    EXPECT_EQ(sut.acquire(zipc::forever).status(), Status::detached);
    EXPECT_FALSE(sut.held_back_for());
  });
}

TEST(TopicMisuse, ReadOnAMovedFromSubscriberSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sut = t.subscribe(oldest());
    zipc::Subscriber other(std::move(sut));
    std::array<std::byte, 16> buf{};
    EXPECT_EQ(sut.read(buf, 1ms).status, Status::detached);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(other.try_read(buf).status, Status::empty);
  });
}

TEST(TopicMisuse, AReadLoanOutlivesItsSubscriberAndStaysReadable) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto pub = t.publisher();
    zipc::TopicReadLoan loan;
    {
      auto sub = t.subscribe(oldest());
      ASSERT_EQ(pub.try_publish(bytes_of("kept")).status, Status::ok);
      loan = sub.try_acquire();
      ASSERT_TRUE(loan);
    }
    EXPECT_EQ(string_of(loan.data()), "kept");
    loan.release();
    EXPECT_TRUE(loan.data().empty());
  });
}

TEST(TopicMisuse, AReadLoanOutlivesItsSubscriberAndItsTopic) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc::TopicReadLoan loan;
    {
      auto t = zipc::Topic::create(name.str(), small());
      auto sub = t.subscribe(oldest());
      auto pub = t.publisher();
      ASSERT_EQ(pub.try_publish(bytes_of("last")).status, Status::ok);
      loan = sub.try_acquire();
      ASSERT_TRUE(loan);
    }
    EXPECT_EQ(string_of(loan.data()), "last");
    loan.release();
  });
}

TEST(TopicMisuse, ASubscriberGoneWithALoanOutHoldsItsSlotUntilTheLoanEnds) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto o = small();
    o.max_subscribers = 1;
    auto t = zipc::Topic::create(name.str(), o);
    auto pub = t.publisher();
    ASSERT_EQ(pub.try_publish(bytes_of("m")).status, Status::ok);
    zipc::TopicReadLoan loan;
    {
      auto sub = t.subscribe(oldest());
      loan = sub.try_acquire();
      ASSERT_TRUE(loan);
    }
    EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(oldest()); }), zipc::Errc::busy);
    loan.release();
    EXPECT_EQ(zipc::test::errc_of([&] { (void)t.subscribe(oldest()); }), zipc::Errc::ok);
  });
}

TEST(TopicMisuse, AReadLoanFollowsItsSubscriberWhenItMoves) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sub = t.subscribe(oldest());
    auto pub = t.publisher();
    ASSERT_EQ(pub.try_publish(bytes_of("one")).status, Status::ok);
    ASSERT_EQ(pub.try_publish(bytes_of("two")).status, Status::ok);
    zipc::TopicReadLoan loan = sub.try_acquire();
    ASSERT_TRUE(loan);
    zipc::Subscriber moved = std::move(sub);
    EXPECT_EQ(string_of(loan.data()), "one");
    loan.release();
    zipc::TopicReadLoan next = moved.try_acquire();
    ASSERT_TRUE(next);
    EXPECT_EQ(string_of(next.data()), "two");
  });
}

TEST(TopicMisuse, AReadLoanEndedByTheNextReadIsEmptyAndItsReleaseIsANoOp) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sub = t.subscribe(oldest());
    auto pub = t.publisher();
    ASSERT_EQ(pub.try_publish(bytes_of("one")).status, Status::ok);
    ASSERT_EQ(pub.try_publish(bytes_of("two")).status, Status::ok);
    zipc::TopicReadLoan first = sub.try_acquire();
    ASSERT_TRUE(first);
    zipc::TopicReadLoan second = sub.try_acquire();  // ends `first`
    ASSERT_TRUE(second);
    EXPECT_FALSE(first);
    EXPECT_TRUE(first.data().empty());
    first.release();
    EXPECT_EQ(string_of(second.data()), "two");
  });
}

TEST(TopicMisuse, ADoubleReleaseIsANoOp) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sub = t.subscribe(oldest());
    auto pub = t.publisher();
    ASSERT_EQ(pub.try_publish(bytes_of("a")).status, Status::ok);
    ASSERT_EQ(pub.try_publish(bytes_of("b")).status, Status::ok);
    zipc::TopicReadLoan sut = sub.try_acquire();
    ASSERT_TRUE(sut);
    sut.release();
    sut.release();
    zipc::TopicReadLoan next = sub.try_acquire();
    ASSERT_TRUE(next);
    EXPECT_EQ(string_of(next.data()), "b");
  });
}

TEST(TopicMisuse, AReadLoanOutlivesTheRemoveOfItsTopic) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sub = t.subscribe(oldest());
    auto pub = t.publisher();
    ASSERT_EQ(pub.try_publish(bytes_of("gone")).status, Status::ok);
    zipc::TopicReadLoan loan = sub.try_acquire();
    ASSERT_TRUE(loan);
    EXPECT_TRUE(zipc::Topic::remove(name.str()));
    t.detach();
    EXPECT_EQ(string_of(loan.data()), "gone");
  });
}

TEST(TopicMisuse, AWriteLoanOutAtCloseEndsCleanly) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sub = t.subscribe(oldest());
    auto pub = t.publisher();
    zipc::TopicWriteLoan loan = pub.try_reserve(4);
    ASSERT_TRUE(loan);
    t.close();
    const Status st = loan.commit(4).status;
    EXPECT_TRUE(st == Status::ok || st == Status::closed) << zipc::to_string(st);
    EXPECT_EQ(pub.try_publish(bytes_of("x")).status, Status::closed);
  });
}

TEST(TopicMisuse, AcquireOnALossySubscriberIsNotSupported) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::Topic::create(name.str(), small());
    auto sut = t.subscribe({zipc::From::oldest(), zipc::Delivery::lossy});
    EXPECT_EQ(sut.try_acquire().status(), Status::not_supported);
  });
}

// ---------------------------------------------------------------- topic handles

TEST(TopicMisuse, PublisherOfADefaultTopicIsAnInvalidArgument) {
  isolated([] {
    zipc::Topic sut;
    EXPECT_EQ(zipc::test::errc_of([&] { (void)sut.publisher(); }), zipc::Errc::invalid_argument);
  });
}

TEST(TopicMisuse, SubscribeOnADetachedTopicIsAnInvalidArgument) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Topic::create(name.str(), small());
    sut.detach();
    EXPECT_EQ(zipc::test::errc_of([&] { (void)sut.subscribe(); }), zipc::Errc::invalid_argument);
  });
}

TEST(TopicMisuse, AccessorsOfAMovedFromTopicAreHarmless) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Topic::create(name.str(), small());
    zipc::Topic other = std::move(sut);
    // NOLINTBEGIN(bugprone-use-after-move): the case
    sut.close();
    EXPECT_TRUE(sut.closed());
    EXPECT_EQ(sut.capacity_bytes(), 0u);
    EXPECT_EQ(sut.max_message_size(), 0u);
    EXPECT_EQ(sut.max_subscribers(), 0u);
    EXPECT_EQ(sut.next_sequence(), 0u);
    EXPECT_EQ(sut.oldest_sequence(), 0u);
    EXPECT_EQ(sut.abandoned(), 0u);
    EXPECT_TRUE(sut.segment().name().empty());
    sut.sync();
    // NOLINTEND(bugprone-use-after-move)
    EXPECT_FALSE(other.closed());
  });
}

TEST(TopicMisuse, HandlesOutliveTheirTopicHandle) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc::Publisher pub;
    zipc::Subscriber sub;
    {
      auto t = zipc::Topic::create(name.str(), small());
      pub = t.publisher();
      sub = t.subscribe(oldest());
    }
    EXPECT_EQ(pub.try_publish(bytes_of("x")).status, Status::ok);
    std::array<std::byte, 16> buf{};
    EXPECT_EQ(sub.try_read(buf).status, Status::ok);
  });
}

// ---------------------------------------------------------------- typed wrappers

TEST(TopicMisuse, TypedCallsOnDefaultHandlesSayDetached) {
  isolated([] {
    zipc::TypedPublisher<Tick> pub;
    EXPECT_EQ(pub.try_publish(Tick{1}).status, Status::detached);
    EXPECT_EQ(pub.try_reserve().status(), Status::detached);
    zipc::TypedSubscriber<Tick> sub;
    Tick t{};
    EXPECT_EQ(sub.try_read(t).status, Status::detached);
    EXPECT_EQ(sub.try_acquire().status(), Status::detached);
  });
}

TEST(TopicMisuse, ATypedReadViewOutlivesItsSubscriber) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto t = zipc::TypedTopic<Tick>::create(name.str(), small());
    auto pub = t.publisher();
    zipc::TypedSubscriber<Tick>::View view;
    {
      auto sub = t.subscribe(oldest());
      ASSERT_EQ(pub.try_publish(Tick{42}).status, Status::ok);
      view = sub.try_acquire();
      ASSERT_TRUE(view);
    }
    EXPECT_EQ(view->n, 42u);
  });
}

}  // namespace

}  // namespace topic_misuse_test
