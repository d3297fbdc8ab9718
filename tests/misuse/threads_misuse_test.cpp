// A handle used from two threads at once (docs/guide/handles.md, "Threads"):
// debug builds refuse the second thread's call, one case per channel kind
// (the Queue's case is in queue_misuse_test.cpp). A thread is held inside a
// blocking call of the handle under test; the main thread's calls on the
// same handle are refused until it is out. Release builds compile the check
// away, so there every case is skipped.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

#include "isolated.hpp"
#include "sync/use_check.hpp"
#include "zipc/event_channel.hpp"
#include "zipc/rpc.hpp"
#include "zipc/topic.hpp"
#include "zipc/typed_topic.hpp"
#include "zipc/waitset.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::Status;
using zipc::misuse::bytes_of;
using zipc::misuse::isolated;

namespace threads_misuse_test {
namespace {

#ifdef NDEBUG
constexpr bool kChecked = false;
#else
constexpr bool kChecked = true;
#endif
constexpr const char* kWhySkipped = "the check exists in debug builds only (docs/guide/handles.md, Threads)";

// Asks `probe` until the other thread is inside the handle: the first answer
// that is not `idle` (what the call says while nobody else is inside). A
// handle that never refuses keeps answering `idle`: the watchdog ends the case.
template <class Probe>
Status first_answer_besides(Status idle, Probe probe) {
  for (;;) {
    const Status st = probe();
    if (st != idle) return st;
    std::this_thread::yield();
  }
}

// The status a throwing call's zipc::Error stands for (busy, or corrupt for any other error).
template <class Call>
Status status_of_throwing(Call call) {
  try {
    call();
    return Status::ok;
  } catch (const zipc::Error& e) {
    return e.errc() == Errc::busy ? Status::busy : Status::corrupt;
  }
}

zipc::TopicOptions small_topic() {
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.max_subscribers = 4;
  return o;
}

TEST(ThreadsMisuse, APublisherRefusesASecondThreadWhileOneWaitsForRoom) {
  if (!kChecked) GTEST_SKIP() << kWhySkipped;
  isolated([] {
    zipc::test::TempName name("threads");
    auto topic = zipc::Topic::create(name.str(), small_topic());
    auto reader = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
    auto sut = topic.publisher();
    while (sut.try_publish(bytes_of("fill")).ok()) {
    }
    std::thread inside([&] {  // waits for room (the reader reads nothing yet)
      zipc::CommitResult r;
      do r = sut.publish(bytes_of("waiter"), zipc::forever);
      while (r.status == Status::busy);  // the main thread's probe was inside first
      EXPECT_EQ(r.status, Status::ok);
    });
    EXPECT_EQ(first_answer_besides(Status::full, [&] { return sut.try_publish(bytes_of("x")).status; }), Status::busy);
    EXPECT_EQ(sut.try_reserve(8).status(), Status::busy);
    EXPECT_EQ(sut.publish(bytes_of("x"), 1ms).status, Status::busy);
    std::array<std::byte, 256> buf{};
    while (reader.try_read(buf).ok()) {  // room: the waiter publishes and leaves
    }
    inside.join();
    EXPECT_EQ(sut.try_publish(bytes_of("one thread again")).status, Status::ok);
  });
}

TEST(ThreadsMisuse, ASubscriberRefusesASecondThreadWhileOneWaitsForAMessage) {
  if (!kChecked) GTEST_SKIP() << kWhySkipped;
  isolated([] {
    zipc::test::TempName name("threads");
    auto topic = zipc::Topic::create(name.str(), small_topic());
    auto sut = topic.subscribe();
    auto pub = topic.publisher();
    std::thread inside([&] {
      std::array<std::byte, 256> buf{};
      zipc::ReadResult r;
      do r = sut.read(buf, zipc::forever);
      while (r.status == Status::busy);
      EXPECT_EQ(r.status, Status::ok);
    });
    std::array<std::byte, 256> buf{};
    EXPECT_EQ(first_answer_besides(Status::empty, [&] { return sut.try_read(buf).status; }), Status::busy);
    EXPECT_EQ(sut.try_acquire().status(), Status::busy);
    EXPECT_EQ(sut.acquire(1ms).status(), Status::busy);
    ASSERT_TRUE(pub.try_publish(bytes_of("m")).ok());
    inside.join();
    EXPECT_EQ(sut.try_read(buf).status, Status::empty);  // one thread again (the waiter took "m")
  });
}

TEST(ThreadsMisuse, ATypedSubscriberRefusesASecondThreadAsItsByteSubscriberDoes) {
  if (!kChecked) GTEST_SKIP() << kWhySkipped;
  isolated([] {
    zipc::test::TempName name("threads");
    auto topic = zipc::TypedTopic<std::uint64_t>::create(name.str(), small_topic());
    auto sut = topic.subscribe();
    auto pub = topic.publisher();
    std::thread inside([&] {
      std::uint64_t v = 0;
      zipc::ReadResult r;
      do r = sut.read(v, zipc::forever);
      while (r.status == Status::busy);
      EXPECT_EQ(r.status, Status::ok);
      EXPECT_EQ(v, 42u);
    });
    std::uint64_t v = 0;
    EXPECT_EQ(first_answer_besides(Status::empty, [&] { return sut.try_read(v).status; }), Status::busy);
    ASSERT_TRUE(pub.try_publish(42).ok());
    inside.join();
    EXPECT_EQ(sut.try_read(v).status, Status::empty);
  });
}

TEST(ThreadsMisuse, AListenerRefusesASecondThreadWhileOneWaitsWithErrcBusy) {
  if (!kChecked) GTEST_SKIP() << kWhySkipped;
  isolated([] {
    zipc::test::TempName name("threads");
    auto channel = zipc::EventChannel::create(name.str());
    auto sut = channel.listener();
    auto notifier = channel.notifier();
    std::thread inside([&] {
      for (;;) {
        try {
          const auto ids = sut.wait(zipc::forever);
          ASSERT_EQ(ids.size(), 1u);
          EXPECT_EQ(ids[0], 7u);
          return;
        } catch (const zipc::Error& e) {
          ASSERT_EQ(e.errc(), Errc::busy) << e.what();  // the main thread's probe was inside first
        }
      }
    });
    const auto probe = [&] { return status_of_throwing([&] { (void)sut.try_wait(); }); };
    EXPECT_EQ(first_answer_besides(Status::ok, probe), Status::busy);
    EXPECT_EQ(status_of_throwing([&] { (void)sut.wait(1ms); }), Status::busy);
    ASSERT_EQ(notifier.notify(7), Status::ok);
    inside.join();
    EXPECT_TRUE(sut.try_wait().empty());  // one thread again
  });
}

TEST(ThreadsMisuse, ANotifierRefusesASecondThreadInsideIt) {
#ifdef NDEBUG
  GTEST_SKIP() << kWhySkipped;
#else
  isolated([] {
    zipc::test::TempName name("threads");
    auto channel = zipc::EventChannel::create(name.str());
    auto sut = channel.notifier();
    std::atomic<bool> inside{false};
    std::atomic<bool> leave{false};
    // notify never blocks: this thread enters the notifier's check directly,
    // as a notify in progress would, and stays until told.
    std::thread holder([&] {
      zipc::detail::UseCheck::Scope in(static_cast<const void*>(&sut));
      EXPECT_TRUE(in);
      inside.store(true);
      while (!leave.load()) std::this_thread::yield();
    });
    while (!inside.load()) std::this_thread::yield();
    EXPECT_EQ(sut.notify(1), Status::busy);
    leave.store(true);
    holder.join();
    EXPECT_EQ(sut.notify(1), Status::ok);  // one thread again
  });
#endif
}

TEST(ThreadsMisuse, AnRpcClientRefusesASecondThreadWhileOneWaitsForItsResponse) {
  if (!kChecked) GTEST_SKIP() << kWhySkipped;
  isolated([] {
    zipc::test::TempName name("threads");
    auto server = zipc::RpcServer::create(name.str());
    auto sut = zipc::RpcClient::connect(name.str());
    // The probe: a request too large for the service gets no loan (a loan
    // dropped here would end on this thread while the other is inside).
    const std::size_t too_large = sut.max_request_size() + 1;
    std::thread inside([&] {  // its call waits: the server answers only later
      zipc::RpcResponse r;
      do r = sut.call(bytes_of("q"), zipc::forever);
      while (r.status() == Status::busy);
      EXPECT_EQ(r.status(), Status::ok);
    });
    EXPECT_EQ(first_answer_besides(Status::too_large, [&] { return sut.reserve(too_large).status(); }), Status::busy);
    EXPECT_EQ(sut.call(bytes_of("x"), 1ms).status(), Status::busy);
    EXPECT_EQ(sut.call_async(bytes_of("x")).status(), Status::busy);
    zipc::RpcRequest req = server.next(zipc::forever);
    ASSERT_EQ(req.status(), Status::ok);
    EXPECT_EQ(req.reply(bytes_of("a")), Status::ok);
    inside.join();
    EXPECT_EQ(sut.reserve(8).status(), Status::ok);  // one thread again
  });
}

TEST(ThreadsMisuse, AWaitSetRefusesASecondThreadWhileOneWaitsButTakesStop) {
  if (!kChecked) GTEST_SKIP() << kWhySkipped;
  isolated([] {
    zipc::WaitSet sut;
    std::thread inside([&] {  // nothing attached: waits until stop()
      for (;;) {
        try {
          EXPECT_TRUE(sut.wait(zipc::forever).empty());
          return;
        } catch (const zipc::Error& e) {
          ASSERT_EQ(e.errc(), Errc::busy) << e.what();
        }
      }
    });
    const auto probe = [&] { return status_of_throwing([&] { (void)sut.wait(0ns); }); };
    EXPECT_EQ(first_answer_besides(Status::ok, probe), Status::busy);
    EXPECT_EQ(status_of_throwing([&] { (void)sut.attach_interval(1s); }), Status::busy);
    EXPECT_EQ(status_of_throwing([&] { (void)sut.detach(1); }), Status::busy);
    sut.stop();  // documented as callable from any thread: never refused
    inside.join();
    EXPECT_NE(sut.attach_interval(1s), 0u);  // one thread again
  });
}

}  // namespace

}  // namespace threads_misuse_test
