// Read-only reliable subscribers: the reader maps the topic PROT_READ and
// keeps its position in a seat file of its own; a publisher adopts the seat
// into a subscriber slot and holds the log back for it. Nothing the reader
// writes can touch the log or another subscriber.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>

#include "zipc/fd_passing.hpp"
#include "zipc/introspect.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace read_only_reliable_test {
namespace {

zipc::TopicOptions small_topic() {
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;  // a few dozen messages: the publisher laps a slow reader quickly
  o.max_message_size = 256;
  o.recovery_time = 100ms;
  return o;
}

zipc::TopicOptions read_only() {
  zipc::TopicOptions o = small_topic();
  o.segment.read_only = true;
  return o;
}

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string message(int i) {
  return "message " + std::to_string(i) + std::string(40, '.');
}

// In a child: a read-only reliable subscriber that reads `count` messages in
// order, slowly (the publisher must wait for it), and checks every one.
int read_all_slowly(const std::string& name, int count, bool report_held) {
  auto t = zipc::Topic::open(name, read_only());
  auto sub = t.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
  if (sub.delivery() != zipc::Delivery::reliable) return 2;
  std::array<std::byte, 256> buf{};
  for (int i = 0; i < count; ++i) {
    auto r = sub.read(buf, 10s);
    while (r.ok() && i == 0 && r.size == 6) r = sub.read(buf, 10s);  // the filler before adoption
    if (!r.ok()) {
      zipc::test::report("read " + std::to_string(i) + ": " + zipc::to_string(r.status) + ", lost " +
                         std::to_string(sub.lost()) + "\n");
      return 3;
    }
    const std::string got(reinterpret_cast<const char*>(buf.data()), r.size);
    if (got != message(i)) {
      zipc::test::report("got '" + got + "' for " + message(i) + "\n");
      return 4;
    }
    if (i % 16 == 0) ::usleep(500);  // slower than the publisher
  }
  if (report_held) zipc::test::report(sub.held_back_for() ? "held\n" : "not held\n");
  return sub.lost() == 0 ? 0 : 5;
}

// A publisher adopts seats while it publishes (every 1,024 messages, and
// whenever it makes room): publish filler until the reader's slot shows.
bool publish_until_adopted(zipc::Publisher& pub, const std::string& name, pid_t reader) {
  for (int i = 0; i < 5000; ++i) {
    (void)pub.try_publish(bytes("filler"));
    if (i % 8 == 0) {
      for (const auto& p : zipc::inspect_channel(name).participants) {
        if (p.role == "subscriber" && p.process.pid == reader) return true;
      }
      ::usleep(1000);
    }
  }
  return false;
}

// A topic name whose topic and reader seats are removed when the scope ends,
// whether the test passed or not (TempName alone would leave the seats).
class TopicName : public zipc::test::TempName {
 public:
  using TempName::TempName;
  TopicName(const TopicName&) = delete;
  TopicName& operator=(const TopicName&) = delete;
  ~TopicName() {
    try {
      (void)zipc::Topic::remove(str());
    } catch (...) {
    }
  }
};

}  // namespace

TEST(ReadOnlyReliable, AReaderInAnotherProcessGetsEveryMessageOfAFasterPublisherInOrder) {
  TopicName name("rorel");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  auto pub = topic.publisher();
  constexpr int kCount = 2000;  // ~40 laps of the ring
  auto reader = zipc::test::spawn([&] { return read_all_slowly(name.str(), kCount, true); });
  ASSERT_TRUE(publish_until_adopted(pub, name.str(), reader.pid()));
  for (int i = 0; i < kCount; ++i) {
    const auto r = pub.publish(bytes(message(i)), 10s);
    ASSERT_TRUE(r.ok()) << i << ": " << zipc::to_string(r.status);
  }
  auto res = reader.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;
  EXPECT_NE(res.output.find("held"), std::string::npos) << res.output;
  EXPECT_EQ(res.output.find("not held"), std::string::npos) << res.output;
}

TEST(ReadOnlyReliable, AKilledReaderStopsHoldingThePublisherBackAndItsSeatIsReused) {
  TopicName name("rorelkill");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  auto pub = topic.publisher();
  auto stuck = zipc::test::spawn([&] {
    auto t = zipc::Topic::open(name.str(), read_only());
    auto sub = t.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
    ::pause();  // never reads
    return 0;
  });
  ASSERT_TRUE(publish_until_adopted(pub, name.str(), stuck.pid()));
  // The ring fills: the publisher waits for the reader that does not read.
  int sent = 0;
  while (pub.try_publish(bytes(message(sent))).ok()) ++sent;
  EXPECT_EQ(pub.try_publish(bytes(message(sent))).status, zipc::Status::full);
  stuck.kill(SIGKILL);
  (void)stuck.wait();
  // Within the liveness period the dead reader's slot is freed.
  const auto r = pub.publish(bytes(message(sent)), 5s);
  EXPECT_TRUE(r.ok()) << zipc::to_string(r.status);
  // The next reader takes the dead reader's seat (seat 0 again) and is held.
  auto next = zipc::test::spawn([&] {
    auto t = zipc::Topic::open(name.str(), read_only());
    auto sub = t.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
    if (::access((t.segment().path() + ".ro0").c_str(), F_OK) != 0) return 2;
    if (::access((t.segment().path() + ".ro1").c_str(), F_OK) == 0) return 3;
    // zipc stat / gc see who sits in the seat now (its creator is dead).
    const zipc::ChannelReport seat = zipc::inspect_channel(name.str() + ".ro0");
    if (seat.segment.creator_alive || seat.alive_count() != 1 || seat.participants[0].process.pid != ::getpid())
      return 4;
    return 0;
  });
  std::thread keep_publishing([&] {
    for (int i = 0; i < 200; ++i) (void)pub.publish(bytes(message(i)), 100ms);
  });
  auto res = next.wait();
  keep_publishing.join();
  EXPECT_EQ(res.exit_code, 0) << res.output;
}

TEST(ReadOnlyReliable, AReaderThatLeavesReleasesThePublisherAndRemovesItsSeat) {
  TopicName name("rorelleave");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  auto pub = topic.publisher();
  const std::string seat = topic.segment().path() + ".ro0";
  auto reader = zipc::test::spawn([&] {
    auto t = zipc::Topic::open(name.str(), read_only());
    {
      auto sub = t.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
      if (::access(seat.c_str(), F_OK) != 0) return 2;
      ::usleep(20'000);
    }
    return ::access(seat.c_str(), F_OK) != 0 ? 0 : 3;  // the seat went with the subscriber
  });
  auto res = reader.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;
  // Nothing holds the publisher back: it laps the ring freely.
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(pub.try_publish(bytes(message(i))).ok()) << i;
}

// A hostile reader scribbles over its own seat (a position past the cursor,
// then an unaligned one, then a truncated file): the publisher neither stalls
// nor crashes, and a reliable subscriber with write access reads every message.
TEST(ReadOnlyReliable, AReaderLyingInItsSeatHarmsNeitherThePublisherNorOtherSubscribers) {
  TopicName name("rorellie");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  auto pub = topic.publisher();
  const std::string seat = topic.segment().path() + ".ro0";
  auto liar = zipc::test::spawn([&] {
    auto t = zipc::Topic::open(name.str(), read_only());
    auto sub = t.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
    const int fd = ::open(seat.c_str(), O_RDWR);
    if (fd < 0) return 2;
    const std::uint64_t lies[] = {~0ull - 7, 12345};
    for (std::uint64_t lie : lies) {
      if (::pwrite(fd, &lie, sizeof lie, 4096 + 24) != sizeof lie) return 3;
      ::usleep(30'000);
    }
    if (::ftruncate(fd, 100) != 0) return 4;
    ::pause();
    return 0;
  });
  ASSERT_TRUE(publish_until_adopted(pub, name.str(), liar.pid()));
  auto honest = topic.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
  std::array<std::byte, 256> buf{};
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(pub.publish(bytes(message(i)), 5s).ok()) << i;
    const auto r = honest.read(buf, 5s);
    ASSERT_TRUE(r.ok()) << i << ": " << zipc::to_string(r.status);
    ASSERT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), r.size), message(i));
  }
  liar.kill(SIGKILL);
  (void)liar.wait();
}

TEST(ReadOnlyReliable, ATopicOpenedFromADescriptorRefusesAReliableReadOnlySubscriberByName) {
  zipc::TopicOptions o = small_topic();
  o.segment.memfd = true;
  auto topic = zipc::Topic::create("rorelmemfd", o);
  const int ro = topic.segment().read_only_fd();
  zipc::TopicOptions ro_options = read_only();
  auto reader = zipc::Topic::open_fd(ro, ro_options);
  ::close(ro);
  try {
    (void)reader.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
    ADD_FAILURE() << "a reliable read-only subscriber on a topic without a path was accepted";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::wrong_role) << e.what();
    EXPECT_NE(std::string(e.what()).find("Delivery::lossy"), std::string::npos) << e.what();
  }
  auto lossy = reader.subscribe({zipc::From::latest(), zipc::Delivery::lossy});
  EXPECT_TRUE(lossy.is_attached());
}

// The nobody user may only read a 0644 topic made by root: its reliable
// subscriber's seat is its own file (0644), which root's publisher reads.
TEST(ReadOnlyReliable, AUserWithReadPermissionOnlyIsAReliableSubscriberOfRootsPublisher) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: drops privileges to the nobody user";
  const passwd* nobody = ::getpwnam("nobody");  // NOLINT(concurrency-mt-unsafe): test setup, one thread
  ASSERT_NE(nobody, nullptr);
  const uid_t uid = nobody->pw_uid;
  const gid_t gid = nobody->pw_gid;
  TopicName name("rorelperm");
  zipc::TopicOptions o = small_topic();
  o.segment.mode = zipc::mode::everyone_reads;
  auto topic = zipc::Topic::create(name.str(), o);
  auto pub = topic.publisher();
  constexpr int kCount = 500;
  auto reader = zipc::test::spawn([&] {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0) return 9;
    return read_all_slowly(name.str(), kCount, true);
  });
  ASSERT_TRUE(publish_until_adopted(pub, name.str(), reader.pid()));
  for (int i = 0; i < kCount; ++i) ASSERT_TRUE(pub.publish(bytes(message(i)), 10s).ok()) << i;
  auto res = reader.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;
  EXPECT_EQ(res.output.find("not held"), std::string::npos) << res.output;
  struct stat st {};
  EXPECT_NE(::stat((topic.segment().path() + ".ro0").c_str(), &st), 0) << "the seat left with its reader";
}

// Handles move and are assigned over (the assignment gives up what the target
// held): no seat is given up twice, and the one overwritten goes.
TEST(ReadOnlyReliable, PublishersAndSeatedSubscribersMoveAndAreAssignedOverSafely) {
  TopicName name("rorelmove");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  const std::string seat = topic.segment().path() + ".ro";
  zipc::Publisher pub = topic.publisher();
  zipc::Publisher moved;
  moved = std::move(pub);
  pub = std::move(moved);
  auto ro = zipc::Topic::open(name.str(), read_only());
  zipc::Subscriber first = ro.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
  zipc::Subscriber second = ro.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
  EXPECT_EQ(::access((seat + "0").c_str(), F_OK), 0);
  EXPECT_EQ(::access((seat + "1").c_str(), F_OK), 0);
  second = std::move(first);  // gives up seat 1, keeps seat 0
  EXPECT_EQ(::access((seat + "0").c_str(), F_OK), 0);
  EXPECT_NE(::access((seat + "1").c_str(), F_OK), 0);
  std::array<std::byte, 256> buf{};
  // This process is the reader: read the filler as the publisher adopts the seat.
  bool adopted = false;
  for (int i = 0; i < 5000 && !adopted; ++i) {
    (void)pub.try_publish(bytes("filler"));
    while (second.try_read(buf).ok()) {
    }
    adopted = second.held_back_for();
  }
  ASSERT_TRUE(adopted);
  ASSERT_TRUE(pub.publish(bytes(message(1)), 1s).ok());
  for (int i = 0; i < 10000; ++i) {
    const auto r = second.read(buf, 1s);
    ASSERT_TRUE(r.ok()) << zipc::to_string(r.status);
    if (std::string(reinterpret_cast<const char*>(buf.data()), r.size) == message(1)) break;
  }
  EXPECT_TRUE(second.held_back_for());
  second = zipc::Subscriber();
  EXPECT_NE(::access((seat + "0").c_str(), F_OK), 0);
}

}  // namespace read_only_reliable_test
