// Named event channels: notifiers and listeners in separate processes, ids
// coalesced per take, every attached listener reached, bad ids and options
// refused by name, a killed listener's slot taken over, killed notifiers
// never blocking anyone, and listeners in a WaitSet (both modes).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "zipc/event_channel.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace event_channel_test {
namespace {

std::vector<std::uint32_t> ids(std::span<const std::uint32_t> s) {
  return {s.begin(), s.end()};
}

// Parent and child agree on "ready" through a pipe.
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe(fd) != 0) throw std::runtime_error("pipe");
  }
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void signal() const {
    const char c = 1;
    if (::write(fd[1], &c, 1) != 1) throw std::runtime_error("pipe write");
  }
  bool await() const {
    char c = 0;
    return ::read(fd[0], &c, 1) == 1;
  }
};

}  // namespace

TEST(EventChannel, AListenerInAnotherProcessWakesWithTheNotifiedIdsEachOnceInOrder) {
  zipc::test::TempName name("evc");
  auto channel = zipc::EventChannel::create(name.str());
  Pipe ready;
  Pipe sent;  // the parent's last notify is done: the listener may detach
  auto child = zipc::test::spawn([&] {
    auto c = zipc::EventChannel::open(name.str());
    auto l = c.listener();
    ready.signal();
    std::set<std::uint32_t> seen;
    while (seen.size() < 3) {
      auto got = l.wait(5s);
      if (got.empty()) return 2;  // timed out
      for (std::uint32_t id : got) seen.insert(id);
    }
    if (seen != std::set<std::uint32_t>{3, 64, 255}) return 3;
    // Attached until the parent's notifies are all sent, so each reaches it.
    if (!sent.await()) return 5;
    return l.received() >= 3 ? 0 : 4;
  });
  ASSERT_TRUE(ready.await());
  auto n = channel.notifier();
  for (std::uint32_t id : {255u, 3u, 64u, 3u, 3u}) {
    ASSERT_EQ(n.notify(id), zipc::Status::ok);
    EXPECT_EQ(n.last_reach(), 1u);
  }
  sent.signal();
  auto res = child.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;
  EXPECT_EQ(channel.notifications(), 5u);
}

TEST(EventChannel, NotificationsOfOneIdCoalesceUntilTaken) {
  zipc::test::TempName name("evco");
  auto channel = zipc::EventChannel::create(name.str());
  auto l = channel.listener();
  auto n = channel.notifier();
  EXPECT_TRUE(l.try_wait().empty());
  for (int i = 0; i < 10; ++i) ASSERT_EQ(n.notify(7), zipc::Status::ok);
  ASSERT_EQ(n.notify(0), zipc::Status::ok);
  EXPECT_EQ(ids(l.try_wait()), (std::vector<std::uint32_t>{0, 7}));
  EXPECT_TRUE(l.try_wait().empty());
  EXPECT_TRUE(l.wait(10ms).empty());
  EXPECT_EQ(l.received(), 2u);
}

TEST(EventChannel, EveryAttachedListenerIsReachedAndALateOneSeesOnlyLaterNotifications) {
  zipc::test::TempName name("evall");
  zipc::EventChannelOptions o;
  o.max_listeners = 3;
  auto channel = zipc::EventChannel::create(name.str(), o);
  auto a = channel.listener();
  auto b = channel.listener();
  auto n = channel.notifier();
  ASSERT_EQ(n.notify(1), zipc::Status::ok);
  EXPECT_EQ(n.last_reach(), 2u);
  auto late = channel.listener();
  ASSERT_EQ(n.notify(2), zipc::Status::ok);
  EXPECT_EQ(n.last_reach(), 3u);
  EXPECT_EQ(ids(a.try_wait()), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(ids(b.try_wait()), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(ids(late.try_wait()), (std::vector<std::uint32_t>{2}));
  try {
    (void)channel.listener();
    FAIL() << "a fourth listener on three slots";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::busy) << e.what();
    EXPECT_NE(std::string(e.what()).find(name.str()), std::string::npos) << e.what();
  }
  b.detach();
  auto again = channel.listener();  // the freed slot
  EXPECT_TRUE(again.try_wait().empty()) << "a new listener inherits nothing";
}

TEST(EventChannel, BadIdsAndOptionsAreRefusedByName) {
  zipc::test::TempName name("evbad");
  zipc::EventChannelOptions o;
  o.max_event_id = 9;
  auto channel = zipc::EventChannel::create(name.str(), o);
  auto l = channel.listener();
  auto n = channel.notifier();
  EXPECT_EQ(n.notify(10), zipc::Status::too_large);
  EXPECT_EQ(n.notify(9), zipc::Status::ok);
  EXPECT_EQ(ids(l.try_wait()), (std::vector<std::uint32_t>{9}));
  EXPECT_EQ(zipc::Notifier{}.notify(1), zipc::Status::detached);

  auto expect_error = [&](zipc::Errc code, const std::function<void()>& f, const std::string& word) {
    try {
      f();
      ADD_FAILURE() << "no error, expected " << zipc::to_string(code);
    } catch (const zipc::Error& e) {
      EXPECT_EQ(e.errc(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  zipc::EventChannelOptions big;
  big.max_event_id = 1u << 20;
  expect_error(
      zipc::Errc::invalid_argument, [&] { (void)zipc::EventChannel::create("evbad2", big); }, "max_event_id");
  zipc::EventChannelOptions none;
  none.max_listeners = 0;
  expect_error(
      zipc::Errc::invalid_argument, [&] { (void)zipc::EventChannel::create("evbad3", none); }, "max_listeners");
  expect_error(
      zipc::Errc::not_found, [&] { (void)zipc::EventChannel::open("evc.absent.x"); }, "evc.absent.x");
  expect_error(
      zipc::Errc::options_mismatch, [&] { (void)zipc::EventChannel::open_or_create(name.str()); }, "max_event_id");
  zipc::EventChannelOptions accept;
  accept.accept_existing = true;
  bool created = true;
  auto same = zipc::EventChannel::open_or_create(name.str(), accept, &created);
  EXPECT_FALSE(created);
  EXPECT_EQ(same.max_event_id(), 9u);
  zipc::EventChannelOptions ro;
  ro.segment.read_only = true;
  expect_error(
      zipc::Errc::wrong_role, [&] { (void)zipc::EventChannel::open(name.str(), ro); }, "read-only");
}

TEST(EventChannel, AKilledListenersSlotIsTakenOverAndAKilledNotifierBlocksNobody) {
  zipc::test::TempName name("evkill");
  zipc::EventChannelOptions o;
  o.max_listeners = 1;
  auto channel = zipc::EventChannel::create(name.str(), o);
  Pipe ready;
  auto holder = zipc::test::spawn([&] {
    auto c = zipc::EventChannel::open(name.str());
    auto l = c.listener();
    ready.signal();
    std::this_thread::sleep_for(60s);
    return 0;
  });
  ASSERT_TRUE(ready.await());
  EXPECT_THROW((void)channel.listener(), zipc::Error);  // its owner lives
  holder.kill(SIGKILL);
  (void)holder.wait();
  auto l = channel.listener();  // taken over from the dead one

  // Notifiers killed at random points of their notify loop: the survivor's
  // notifications keep arriving, each within the wait.
  auto n = channel.notifier();
  const int rounds = static_cast<int>(20 * zipc::test::stress_scale());
  for (int round = 0; round < rounds; ++round) {
    auto spammer = zipc::test::spawn([&] {
      auto c = zipc::EventChannel::open(name.str());
      auto mine = c.notifier();
      for (;;) {
        if (mine.notify(1) != zipc::Status::ok) return 2;
      }
    });
    zipc::test::kill_after_random_delay(spammer, 100us, 5ms);
    (void)spammer.wait();
    ASSERT_EQ(n.notify(2), zipc::Status::ok);
    bool got2 = false;
    for (int i = 0; i < 10 && !got2; ++i) {
      for (std::uint32_t id : l.wait(1s)) got2 = got2 || id == 2;
    }
    ASSERT_TRUE(got2) << "round " << round;
  }
}

class EventChannelWaitSet : public ::testing::TestWithParam<bool> {};

TEST_P(EventChannelWaitSet, AListenerIsReportedWhenAnotherProcessNotifies) {
  zipc::test::TempName name("evws");
  auto channel = zipc::EventChannel::create(name.str());
  auto l = channel.listener();
  zipc::WaitSetOptions wo;
  wo.force_fallback = GetParam();
  zipc::WaitSet ws(wo);
  const auto id = ws.attach(l);
  EXPECT_TRUE(ws.wait(10ms).empty());
  auto child = zipc::test::spawn([&] {
    std::this_thread::sleep_for(20ms);
    auto c = zipc::EventChannel::open(name.str());
    return c.notifier().notify(42) == zipc::Status::ok ? 0 : 2;
  });
  auto r = ws.wait(10s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(r[0].kind, zipc::ReadyKind::listener);
  EXPECT_EQ(ids(l.try_wait()), (std::vector<std::uint32_t>{42}));
  EXPECT_TRUE(ws.wait(10ms).empty()) << "taken: no longer ready";
  EXPECT_EQ(child.wait().exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, EventChannelWaitSet, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Fallback" : "IoUring"; });

}  // namespace event_channel_test
