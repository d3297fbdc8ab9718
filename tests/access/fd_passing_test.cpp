// Channels without /dev/shm: created on a memfd and handed over a Unix socket
// (SCM_RIGHTS), opened with open_fd, including by a process whose /dev/shm is
// an empty tmpfs in its own mount name space.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "zipc/fd_passing.hpp"
#include "zipc/heap.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace fd_passing_test {
namespace {

struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) != 0) throw std::runtime_error("socketpair");
  }
  ~SocketPair() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;
};

int entries_in(const char* dir) {
  DIR* d = ::opendir(dir);
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = ::readdir(d)) {  // NOLINT(concurrency-mt-unsafe): one stream, one thread
    const std::string s = e->d_name;
    if (s != "." && s != "..") ++n;
  }
  ::closedir(d);
  return n;
}

std::string message(int i) {
  return "news " + std::to_string(i);
}

constexpr int kMessages = 10;

}  // namespace

TEST(FdPassing, AChildWithAnEmptyDevShmReadsATopicReceivedOverAUnixSocket) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: unshare(CLONE_NEWNS) and a tmpfs mount over /dev/shm";
  SocketPair sp;
  // The child starts before the topic exists, so it cannot inherit the memfd.
  auto child = zipc::test::spawn([&] {
    ::close(sp.fd[0]);
    if (::unshare(CLONE_NEWNS) != 0) return 10;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 11;
    if (::mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=64k") != 0) return 12;
    if (entries_in("/dev/shm") != 0) return 13;
    const int fd = zipc::receive_fd(sp.fd[1], 10s);
    auto topic = zipc::Topic::open_fd(fd);
    ::close(fd);
    zipc::SubscribeOptions so;
    so.from = zipc::From::oldest();
    auto sub = topic.subscribe(so);
    std::array<std::byte, 64> buf{};
    for (int i = 0; i < kMessages; ++i) {
      auto r = sub.read(buf, 5s);
      if (!r.ok()) return 20;
      if (std::string(reinterpret_cast<const char*>(buf.data()), r.size) != message(i)) return 21;
    }
    if (entries_in("/dev/shm") != 0) return 14;  // nothing was made there
    zipc::test::report("read " + std::to_string(kMessages) + "\n");
    return 0;
  });
  ::close(sp.fd[1]);
  sp.fd[1] = -1;

  zipc::TopicOptions o;
  o.capacity_bytes = 1 << 16;
  o.max_message_size = 256;
  o.segment.memfd = true;
  auto topic = zipc::Topic::create("fd-topic", o);
  EXPECT_GE(topic.segment().fd(), 0);
  EXPECT_FALSE(zipc::Topic::remove("fd-topic", o.segment));  // no name anywhere
  auto pub = topic.publisher();
  for (int i = 0; i < kMessages; ++i) {
    const std::string m = message(i);
    ASSERT_TRUE(pub.try_publish(std::as_bytes(std::span(m.data(), m.size()))).ok());
  }
  zipc::send_fd(sp.fd[0], topic.segment().fd());
  auto res = child.wait(30s);
  EXPECT_EQ(res.exit_code, 0) << res.output;
}

TEST(FdPassing, AQueueOnAMemfdCarriesMessagesBothWays) {
  SocketPair sp;
  auto child = zipc::test::spawn([&] {
    const int fd = zipc::receive_fd(sp.fd[1], 10s);
    auto q = zipc::Queue::open_fd(fd);
    ::close(fd);
    std::array<std::byte, 64> buf{};
    auto r = q.recv(buf, 5s);
    if (!r.ok() || std::string(reinterpret_cast<const char*>(buf.data()), r.size) != "ping") return 2;
    const std::string pong = "pong";
    return q.send(std::as_bytes(std::span(pong.data(), pong.size())), 5s) == zipc::Status::ok ? 0 : 3;
  });
  zipc::QueueOptions o;
  o.block_count = 8;
  o.block_size = 64;
  o.segment.memfd = true;
  auto q = zipc::Queue::create("fd-queue", o);
  const std::string ping = "ping";
  ASSERT_EQ(q.try_send(std::as_bytes(std::span(ping.data(), ping.size()))), zipc::Status::ok);
  zipc::send_fd(sp.fd[0], q.segment().fd());
  ASSERT_EQ(child.wait(30s).exit_code, 0);
  std::array<std::byte, 64> buf{};
  auto r = q.try_recv(buf);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), r.size), "pong");
}

TEST(FdPassing, ADescriptorThatIsNotAChannelIsRefusedWithAnError) {
  const int fd = ::memfd_create("not-zipc", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8192), 0);
  EXPECT_THROW((void)zipc::Topic::open_fd(fd), zipc::Error);
  EXPECT_THROW((void)zipc::Queue::open_fd(-1), zipc::Error);
  ::close(fd);
  // A topic's descriptor is not a queue.
  zipc::TopicOptions o;
  o.segment.memfd = true;
  auto t = zipc::Topic::create("fd-kind", o);
  try {
    (void)zipc::Queue::open_fd(t.segment().fd());
    ADD_FAILURE() << "a topic opened as a queue";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::wrong_kind) << e.what();
  }
}

TEST(FdPassing, ReceiveTimesOutAndReportsAClosedPeer) {
  SocketPair sp;
  try {
    (void)zipc::receive_fd(sp.fd[1], 10ms);
    ADD_FAILURE() << "received from an idle socket";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::timeout) << e.what();
  }
  ::close(sp.fd[0]);
  sp.fd[0] = -1;
  try {
    (void)zipc::receive_fd(sp.fd[1], 1s);
    ADD_FAILURE() << "received from a closed socket";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::closed) << e.what();
  }
}

TEST(FdPassing, AHeapOnAMemfdIsSharedThroughItsDescriptor) {
  SocketPair sp;
  auto child = zipc::test::spawn([&] {
    const int fd = zipc::receive_fd(sp.fd[1], 10s);
    auto heap = zipc::Heap::open_fd(fd);
    ::close(fd);
    int* counter = heap.find_or_construct<int>("counter", 0);
    if (counter == nullptr || *counter != 41) return 2;
    ++*counter;
    return 0;
  });
  zipc::HeapOptions o;
  o.segment.memfd = true;
  auto heap = zipc::Heap::create("fd-heap", 1 << 16, o);
  int* counter = heap.find_or_construct<int>("counter", 41);
  ASSERT_NE(counter, nullptr);
  zipc::send_fd(sp.fd[0], heap.segment().fd());
  ASSERT_EQ(child.wait(30s).exit_code, 0);
  EXPECT_EQ(*counter, 42);
}

TEST(FdPassing, AReceiverCannotTruncateAMemfdChannelUnderItsPeers) {
  zipc::TopicOptions o;
  o.segment.memfd = true;
  auto t = zipc::Topic::create("fd-sealed", o);
  const int fd = t.segment().fd();
  EXPECT_NE(::ftruncate(fd, 0), 0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(::ftruncate(fd, 1 << 30), 0);
  EXPECT_EQ(zipc::Topic::open_fd(fd).capacity_bytes(), t.capacity_bytes());
}

}  // namespace fd_passing_test
