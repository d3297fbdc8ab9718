// Heap, EventChannel and WaitSet misuse is a status or an exception, never a
// crash (docs/guide/handles.md): detached, moved-from and default handles.
#include <gtest/gtest.h>

#include <chrono>
#include <utility>

#include "isolated.hpp"
#include "zipc/event_channel.hpp"
#include "zipc/heap.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc/waitset.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::HeapStatus;
using zipc::Status;
using zipc::misuse::isolated;
using zipc::test::errc_of;

namespace other_misuse_test {
namespace {

// ---------------------------------------------------------------- Heap

TEST(HeapMisuse, AllocateOnADefaultHeapSaysDetached) {
  isolated([] {
    zipc::Heap sut;
    const zipc::Allocation a = sut.try_allocate(64);
    EXPECT_EQ(a.ptr, nullptr);
    EXPECT_EQ(a.status, HeapStatus::detached);
    EXPECT_EQ(sut.allocate(64), nullptr);
  });
}

TEST(HeapMisuse, DeallocateOnADetachedHeapSaysDetached) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Heap::create(name.str(), 1 << 16);
    void* p = sut.allocate(64);
    ASSERT_NE(p, nullptr);
    sut.detach();
    EXPECT_EQ(sut.deallocate(p), HeapStatus::detached);
    EXPECT_EQ(sut.deallocate(nullptr), HeapStatus::ok);
  });
}

TEST(HeapMisuse, StatsAndCheckOfAMovedFromHeapAreHarmless) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Heap::create(name.str(), 1 << 16);
    zipc::Heap other = std::move(sut);
    // NOLINTBEGIN(bugprone-use-after-move): the case
    EXPECT_FALSE(sut.is_attached());
    EXPECT_EQ(sut.stats().allocated_blocks, 0u);
    EXPECT_FALSE(sut.check().ok);
    EXPECT_EQ(sut.at<int>(0), nullptr);
    EXPECT_EQ(sut.offset_of(&other), zipc::Heap::kNoOffset);
    // NOLINTEND(bugprone-use-after-move)
    EXPECT_TRUE(other.check().ok);
  });
}

TEST(HeapMisuse, NamedObjectsOnADetachedHeapAreAnInvalidArgument) {
  isolated([] {
    zipc::Heap sut;
    EXPECT_EQ(errc_of([&] { (void)sut.construct<int>("n", 1); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.find<int>("n"); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.destroy<int>("n"); }), Errc::invalid_argument);
  });
}

TEST(HeapMisuse, AForeignPointerIsRefused) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Heap::create(name.str(), 1 << 16);
    int local = 0;
    EXPECT_EQ(sut.deallocate(&local), HeapStatus::foreign_pointer);
  });
}

TEST(HeapMisuse, ADoubleFreeIsRefused) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::Heap::create(name.str(), 1 << 16);
    void* p = sut.allocate(64);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(sut.deallocate(p), HeapStatus::ok);
    const HeapStatus again = sut.deallocate(p);
    EXPECT_NE(again, HeapStatus::ok) << zipc::to_string(again);
    EXPECT_TRUE(sut.check().ok);
  });
}

// ---------------------------------------------------------------- EventChannel

TEST(EventMisuse, NotifyOnADefaultNotifierSaysDetached) {
  isolated([] {
    zipc::Notifier sut;
    EXPECT_EQ(sut.notify(1), Status::detached);
  });
}

TEST(EventMisuse, WaitOnADefaultListenerIsAnInvalidArgument) {
  isolated([] {
    zipc::Listener sut;
    EXPECT_EQ(errc_of([&] { (void)sut.wait(zipc::forever); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.try_wait(); }), Errc::invalid_argument);
    EXPECT_EQ(sut.received(), 0u);
  });
}

TEST(EventMisuse, WaitOnADetachedListenerIsAnInvalidArgument) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto ch = zipc::EventChannel::create(name.str());
    auto sut = ch.listener();
    sut.detach();
    sut.detach();
    EXPECT_EQ(errc_of([&] { (void)sut.wait(1ms); }), Errc::invalid_argument);
  });
}

TEST(EventMisuse, AMovedFromChannelRefusesNewEndpoints) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto sut = zipc::EventChannel::create(name.str());
    zipc::EventChannel other = std::move(sut);
    // NOLINTBEGIN(bugprone-use-after-move): the case
    EXPECT_EQ(errc_of([&] { (void)sut.listener(); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.notifier(); }), Errc::invalid_argument);
    EXPECT_EQ(sut.max_event_id(), 0u);
    EXPECT_EQ(sut.max_listeners(), 0u);
    EXPECT_EQ(sut.notifications(), 0u);
    EXPECT_TRUE(sut.segment().name().empty());
    // NOLINTEND(bugprone-use-after-move)
    EXPECT_EQ(errc_of([&] { (void)other.listener(); }), Errc::ok);
  });
}

TEST(EventMisuse, EndpointsOutliveTheirChannelHandle) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc::Listener l;
    zipc::Notifier n;
    {
      auto ch = zipc::EventChannel::create(name.str());
      l = ch.listener();
      n = ch.notifier();
    }
    EXPECT_EQ(n.notify(3), Status::ok);
    const auto ids = l.try_wait();
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids[0], 3u);
  });
}

TEST(EventMisuse, AnIdPastTheMaximumIsTooLarge) {
  isolated([] {
    zipc::test::TempName name("misuse");
    auto ch = zipc::EventChannel::create(name.str());
    auto sut = ch.notifier();
    EXPECT_EQ(sut.notify(ch.max_event_id() + 1), Status::too_large);
    EXPECT_EQ(sut.notify(~0u), Status::too_large);
  });
}

// ---------------------------------------------------------------- WaitSet

TEST(WaitSetMisuse, WaitOnAMovedFromWaitSetIsAnInvalidArgument) {
  isolated([] {
    zipc::WaitSet sut;
    zipc::WaitSet other = std::move(sut);
    EXPECT_EQ(errc_of([&] { (void)sut.wait(zipc::forever); }), Errc::invalid_argument);  // NOLINT
    EXPECT_TRUE(other.wait(0ms).empty());
  });
}

TEST(WaitSetMisuse, NoexceptCallsOnAMovedFromWaitSetAreHarmless) {
  isolated([] {
    zipc::WaitSet sut;
    zipc::WaitSet other(std::move(sut));
    // NOLINTBEGIN(bugprone-use-after-move): the case
    sut.stop();
    EXPECT_EQ(sut.size(), 0u);
    EXPECT_EQ(sut.readiness_fd(), -1);
    EXPECT_FALSE(sut.uses_io_uring());
    EXPECT_EQ(errc_of([&] { (void)sut.detach(1); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.attach_interval(1ms); }), Errc::invalid_argument);
    // NOLINTEND(bugprone-use-after-move)
  });
}

TEST(WaitSetMisuse, AttachingADetachedQueueIsAnInvalidArgument) {
  isolated([] {
    zipc::WaitSet sut;
    zipc::Queue q;
    EXPECT_EQ(errc_of([&] { (void)sut.attach(q); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.attach_room(q); }), Errc::invalid_argument);
    EXPECT_EQ(sut.size(), 0u);
  });
}

TEST(WaitSetMisuse, AttachingADetachedSubscriberIsAnInvalidArgument) {
  isolated([] {
    zipc::WaitSet sut;
    zipc::Subscriber s;
    EXPECT_EQ(errc_of([&] { (void)sut.attach(s); }), Errc::invalid_argument);
  });
}

TEST(WaitSetMisuse, AttachingADetachedListenerIsAnInvalidArgument) {
  isolated([] {
    zipc::WaitSet sut;
    zipc::Listener l;
    EXPECT_EQ(errc_of([&] { (void)sut.attach(l); }), Errc::invalid_argument);
  });
}

TEST(WaitSetMisuse, DetachingAnUnknownIdIsFalse) {
  isolated([] {
    zipc::WaitSet sut;
    EXPECT_FALSE(sut.detach(0));
    EXPECT_FALSE(sut.detach(~0ull));
    const std::uint64_t id = sut.attach_interval(1s);
    EXPECT_TRUE(sut.detach(id));
    EXPECT_FALSE(sut.detach(id));
  });
}

TEST(WaitSetMisuse, BadTimersAndFdsAreAnInvalidArgument) {
  isolated([] {
    zipc::WaitSet sut;
    EXPECT_EQ(errc_of([&] { (void)sut.attach_interval(0ms); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.attach_interval(-1ms); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.attach_deadline(zipc::Deadline::never()); }), Errc::invalid_argument);
    EXPECT_EQ(errc_of([&] { (void)sut.attach_fd(-1, 1); }), Errc::invalid_argument);
  });
}

}  // namespace

}  // namespace other_misuse_test
