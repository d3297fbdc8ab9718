// Read-only participants: a topic opened with SegmentOptions::read_only is
// mapped PROT_READ from an O_RDONLY descriptor. Its lossy subscribers read
// everything a writer publishes without writing a byte of the topic; a write
// through the mapping faults in the reader's own process only; read
// permission on the file is enough; what needs a write is refused by name.
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstring>
#include <string>

#include "zipc/fd_passing.hpp"
#include "zipc/introspect.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace read_only_test {
namespace {

zipc::TopicOptions read_only() {
  zipc::TopicOptions o;
  o.segment.read_only = true;
  return o;
}

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string text(std::span<const std::byte> b, std::size_t n) {
  return {reinterpret_cast<const char*>(b.data()), n};
}

std::string message(int i) {
  return "message " + std::to_string(i);
}

// In a child: reads `count` messages from `from` on a read-only handle, each
// with a timeout (so the reader sleeps between them), and checks every one.
int read_in_order(const std::string& name, int first, int count, zipc::From from) {
  auto t = zipc::Topic::open(name, read_only());
  zipc::SubscribeOptions so;
  so.delivery = zipc::Delivery::lossy;
  so.from = from;
  auto sub = t.subscribe(so);
  std::array<std::byte, 64> buf{};
  for (int i = first; i < first + count; ++i) {
    auto r = sub.read(buf, 5s);
    if (!r.ok()) {
      zipc::test::report("read " + std::to_string(i) + ": " + zipc::to_string(r.status) + "\n");
      return 2;
    }
    if (text(buf, r.size) != message(i)) {
      zipc::test::report("got '" + text(buf, r.size) + "' for " + message(i) + "\n");
      return 3;
    }
  }
  return 0;
}

}  // namespace

TEST(ReadOnlyTopic, ALossySubscriberOnAReadOnlyMappingReadsEveryMessageAWriterPublishes) {
  zipc::test::TempName name("rotopic");
  auto topic = zipc::Topic::create(name.str());
  auto pub = topic.publisher();
  ASSERT_TRUE(pub.try_publish(bytes(message(0))).ok());
  ASSERT_TRUE(pub.try_publish(bytes(message(1))).ok());

  // The reader starts at the oldest (0, 1 are there) and then waits for the
  // rest, published slowly so that it sleeps in between.
  auto reader = zipc::test::spawn([&] { return read_in_order(name.str(), 0, 40, zipc::From::oldest()); });
  for (int i = 2; i < 40; ++i) {
    ASSERT_TRUE(pub.publish(bytes(message(i)), 1s).ok());
    if (i % 8 == 0) std::this_thread::sleep_for(5ms);
  }
  auto res = reader.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;
  // Nothing of the reader is in the topic: it never took a subscriber slot.
  for (const auto& p : zipc::inspect_channel(name.str()).participants) EXPECT_NE(p.role, "subscriber") << p.slot;
}

TEST(ReadOnlyTopic, AReaderThatWritesThroughItsMappingFaultsAloneAndTheOthersCarryOn) {
  zipc::test::TempName name("rofault");
  auto topic = zipc::Topic::create(name.str());
  auto pub = topic.publisher();
  auto reliable = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  ASSERT_TRUE(pub.try_publish(bytes(message(0))).ok());

  // A hostile reader: reads one message, then scribbles over the topic.
  auto hostile = zipc::test::spawn([&] {
    auto t = zipc::Topic::open(name.str(), read_only());
    auto sub = t.subscribe({zipc::From::oldest(), zipc::Delivery::lossy});
    std::array<std::byte, 64> buf{};
    if (!sub.read(buf, 1s).ok()) return 2;
    std::byte* log = t.segment().payload();
    zipc::test::default_segv_action();
    std::memset(log, 0xFF, 4096);  // faults: the mapping is PROT_READ
    return 0;
  });
  auto res = hostile.wait();
  EXPECT_EQ(res.signal, SIGSEGV) << "exit " << res.exit_code << ": " << res.output;

  // The publisher and the reliable subscriber never noticed.
  for (int i = 1; i < 100; ++i) ASSERT_TRUE(pub.publish(bytes(message(i)), 1s).ok()) << i;
  std::array<std::byte, 64> buf{};
  for (int i = 0; i < 100; ++i) {
    auto r = reliable.read(buf, 1s);
    ASSERT_TRUE(r.ok()) << i << ": " << zipc::to_string(r.status);
    EXPECT_EQ(text(buf, r.size), message(i));
  }
  auto again = zipc::test::spawn([&] { return read_in_order(name.str(), 0, 100, zipc::From::oldest()); });
  auto res2 = again.wait();
  EXPECT_EQ(res2.exit_code, 0) << res2.output;
}

TEST(ReadOnlyTopic, ALossyReaderThatFallsBehindIsToldExactlyHowManyItMissed) {
  zipc::test::TempName name("rolap");
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 64;
  auto topic = zipc::Topic::create(name.str(), o);
  auto pub = topic.publisher();
  auto ro = zipc::Topic::open(name.str(), read_only());
  auto sub = ro.subscribe({zipc::From::latest(), zipc::Delivery::lossy});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(pub.try_publish(bytes(message(i))).ok());
  std::array<std::byte, 64> buf{};
  auto r = sub.try_read(buf);
  ASSERT_EQ(r.status, zipc::Status::overrun);
  const std::uint64_t missed = r.size;
  EXPECT_GT(missed, 0u);
  EXPECT_EQ(sub.lost(), missed);
  std::uint64_t read = 0;
  while ((r = sub.try_read(buf)).ok()) {
    EXPECT_EQ(text(buf, r.size), message(static_cast<int>(missed + read)));
    ++read;
  }
  EXPECT_EQ(r.status, zipc::Status::empty);
  EXPECT_EQ(missed + read, 1000u);
}

TEST(ReadOnlyTopic, AReadOnlyReaderSeesTheTopicClosedOnceItHasReadEverything) {
  zipc::test::TempName name("roclose");
  auto topic = zipc::Topic::create(name.str());
  auto pub = topic.publisher();
  auto ro = zipc::Topic::open(name.str(), read_only());
  auto sub = ro.subscribe({zipc::From::latest(), zipc::Delivery::lossy});
  ASSERT_TRUE(pub.try_publish(bytes("last")).ok());
  topic.close();
  std::array<std::byte, 64> buf{};
  auto r = sub.read(buf, 1s);
  ASSERT_TRUE(r.ok()) << zipc::to_string(r.status);
  EXPECT_EQ(text(buf, r.size), "last");
  EXPECT_EQ(sub.read(buf, 1s).status, zipc::Status::closed);
  EXPECT_TRUE(ro.closed());
}

TEST(ReadOnlyTopic, WhatNeedsAWriteIsRefusedWithWrongRoleNamingTheTopic) {
  zipc::test::TempName name("rorefuse");
  auto topic = zipc::Topic::create(name.str());
  auto ro = zipc::Topic::open(name.str(), read_only());
  EXPECT_TRUE(ro.segment().read_only());
  auto expect_wrong_role = [&](const std::function<void()>& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << " succeeded on a read-only topic";
    } catch (const zipc::Error& e) {
      EXPECT_EQ(e.errc(), zipc::Errc::wrong_role) << what << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(name.str()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
    }
  };
  expect_wrong_role([&] { (void)ro.publisher(); }, "publisher()");
  zipc::SubscribeOptions durable;
  durable.durable_name = "keeper";
  expect_wrong_role([&] { (void)ro.subscribe(durable); }, "durable");
  auto lossy = ro.subscribe({zipc::From::latest(), zipc::Delivery::lossy});
  zipc::WaitSet ws;
  expect_wrong_role([&] { (void)ws.attach(lossy); }, "WaitSet::attach");
  // close() on a read-only handle does not close the topic (it logs why).
  ro.close();
  EXPECT_FALSE(topic.closed());
}

TEST(ReadOnlyTopic, CreatingOrOpeningAQueueReadOnlyIsRefused) {
  zipc::test::TempName name("roq");
  zipc::TopicOptions o = read_only();
  EXPECT_THROW((void)zipc::Topic::create(name.str(), o), zipc::Error);
  EXPECT_THROW((void)zipc::Topic::open_or_create(name.str(), o), zipc::Error);
  EXPECT_FALSE(zipc::Topic::remove(name.str()));  // nothing was made
  auto q = zipc::Queue::create(name.str(), zipc::QueueOptions{});
  zipc::SegmentOptions so;
  so.read_only = true;
  try {
    (void)zipc::Queue::open(name.str(), zipc::Role::consumer, {}, so);
    FAIL() << "a queue opened read-only";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::wrong_role) << e.what();
    EXPECT_NE(std::string(e.what()).find(name.str()), std::string::npos) << e.what();
  }
}

TEST(ReadOnlyTopic, AUserWithReadPermissionOnlySubscribesReadOnlyAndIsRefusedWriteAccess) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: drops privileges to the nobody user";
  const passwd* nobody = ::getpwnam("nobody");  // NOLINT(concurrency-mt-unsafe): test setup, one thread
  ASSERT_NE(nobody, nullptr);
  const uid_t uid = nobody->pw_uid;
  const gid_t gid = nobody->pw_gid;
  zipc::test::TempName name("roperm");
  zipc::TopicOptions o;
  o.segment.mode = zipc::mode::everyone_reads;  // 0644: the owner (root) writes, everyone reads
  auto topic = zipc::Topic::create(name.str(), o);
  struct stat st {};
  ASSERT_EQ(::stat(zipc::Segment::path_for(name.str()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777u, 0644u);
  auto pub = topic.publisher();
  ASSERT_TRUE(pub.try_publish(bytes(message(0))).ok());

  auto reader = zipc::test::spawn([&] {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0) return 9;
    try {
      (void)zipc::Topic::open(name.str());
      zipc::test::report("opened for writing without write permission\n");
      return 2;
    } catch (const zipc::Error& e) {
      if (e.errc() != zipc::Errc::permission_denied || std::string(e.what()).find(name.str()) == std::string::npos) {
        zipc::test::report(std::string("write open: ") + e.what() + "\n");
        return 3;
      }
    }
    return read_in_order(name.str(), 0, 20, zipc::From::oldest());
  });
  for (int i = 1; i < 20; ++i) ASSERT_TRUE(pub.publish(bytes(message(i)), 1s).ok());
  auto res = reader.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;
}

TEST(ReadOnlyTopic, AProcessHandedAReadOnlyDescriptorReadsTheTopicAndCannotMapItWritable) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  zipc::TopicOptions o;
  o.segment.memfd = true;  // no name: the descriptor is the only way in
  auto topic = zipc::Topic::create("rofd", o);
  auto pub = topic.publisher();
  ASSERT_TRUE(pub.try_publish(bytes(message(0))).ok());

  auto reader = zipc::test::spawn([&] {
    ::close(sv[0]);
    const int fd = zipc::receive_fd(sv[1], 5s);
    // The descriptor cannot give write access, whatever the receiver tries.
    if (::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) != MAP_FAILED) return 2;
    try {
      (void)zipc::Topic::open_fd(fd);
      return 3;
    } catch (const zipc::Error& e) {
      if (e.errc() != zipc::Errc::permission_denied || std::string(e.what()).find("read_only") == std::string::npos) {
        zipc::test::report(std::string("writable open_fd: ") + e.what() + "\n");
        return 4;
      }
    }
    auto t = zipc::Topic::open_fd(fd, read_only());
    ::close(fd);
    auto sub = t.subscribe({zipc::From::oldest(), zipc::Delivery::lossy});
    std::array<std::byte, 64> buf{};
    for (int i = 0; i < 10; ++i) {
      auto r = sub.read(buf, 5s);
      if (!r.ok() || text(buf, r.size) != message(i)) return 10 + i;
    }
    return 0;
  });
  ::close(sv[1]);
  const int ro = topic.segment().read_only_fd();
  zipc::send_fd(sv[0], ro);
  ::close(ro);
  for (int i = 1; i < 10; ++i) ASSERT_TRUE(pub.publish(bytes(message(i)), 1s).ok());
  auto res = reader.wait();
  ::close(sv[0]);
  EXPECT_EQ(res.exit_code, 0) << res.output;
}

}  // namespace read_only_test
