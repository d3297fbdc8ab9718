// Rpc without /dev/shm: a server on a memfd, its descriptor handed over a
// Unix socket (SCM_RIGHTS), a client that connects through it, including one
// whose /dev/shm is an empty tmpfs in its own mount name space.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "zipc/fd_passing.hpp"
#include "zipc/rpc.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace rpc_fd_test {
namespace {

struct Sockets {
  int fd[2] = {-1, -1};
  Sockets() {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) != 0) throw std::runtime_error("socketpair");
  }
  ~Sockets() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  Sockets(const Sockets&) = delete;
  Sockets& operator=(const Sockets&) = delete;
};

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string text(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

zipc::RpcServer memfd_server(const std::string& name) {
  zipc::RpcOptions o;
  o.segment.memfd = true;
  return zipc::RpcServer::create(name, o);
}

// Answers "pong:" + request until stopped.
struct Serving {
  zipc::RpcServer& server;
  std::thread thread;
  explicit Serving(zipc::RpcServer& s) : server(s) {
    thread = std::thread(
        [this] { server.serve([](zipc::RpcRequest& req) { (void)req.reply(bytes("pong:" + text(req.data()))); }); });
  }
  ~Serving() {
    server.stop();
    thread.join();
  }
  Serving(const Serving&) = delete;
  Serving& operator=(const Serving&) = delete;
};

}  // namespace

TEST(RpcFd, AServerOnAMemfdHasNoNameAndGivesItsDescriptor) {
  const std::string name = zipc::test::unique_name("rpc-memfd");
  auto server = memfd_server(name);
  EXPECT_GE(server.fd(), 0);
  struct stat st {};
  EXPECT_NE(::stat(("/dev/shm/" + name).c_str(), &st), 0) << "a memfd server left a name in /dev/shm";
  try {
    (void)zipc::RpcClient::connect(name, 50ms);
    ADD_FAILURE() << "found by name";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::not_found) << e.what();
  }
  zipc::RpcOptions named;
  auto by_name = zipc::RpcServer::create(zipc::test::unique_name("rpc-named"), named);
  EXPECT_EQ(by_name.fd(), -1) << "a named server has no descriptor to hand out";
}

TEST(RpcFd, AChildWithAnEmptyDevShmCallsAServerReceivedOverAUnixSocket) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: unshare(CLONE_NEWNS) and a tmpfs mount over /dev/shm";
  Sockets sp;
  auto child = zipc::test::spawn([&] {
    ::close(sp.fd[0]);
    if (::unshare(CLONE_NEWNS) != 0) return 10;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 11;
    if (::mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=64k") != 0) return 12;
    const int fd = zipc::receive_fd(sp.fd[1], 10s);
    auto client = zipc::RpcClient::connect_fd(fd, 5s);
    ::close(fd);  // the client keeps its own mapping
    for (int i = 0; i < 100; ++i) {
      auto r = client.call(bytes("ping " + std::to_string(i)), 5s);
      if (!r.ok()) return 20;
      if (text(r.data()) != "pong:ping " + std::to_string(i)) return 21;
    }
    zipc::test::report("100 calls\n");
    return 0;
  });
  ::close(sp.fd[1]);
  sp.fd[1] = -1;
  auto server = memfd_server(zipc::test::unique_name("rpc-fd"));
  Serving serving(server);
  zipc::send_fd(sp.fd[0], server.fd());
  auto res = child.wait(30s);
  EXPECT_EQ(res.exit_code, 0) << res.output;
}

TEST(RpcFd, AClientByDescriptorSeesItsServerCloseAndDoesNotLookForAnother) {
  auto server = memfd_server(zipc::test::unique_name("rpc-fd-close"));
  auto client = zipc::RpcClient::connect_fd(server.fd(), 1s);
  {
    Serving serving(server);
    auto r = client.call(bytes("a"), 5s);
    ASSERT_TRUE(r.ok()) << zipc::to_string(r.status());
    EXPECT_EQ(text(r.data()), "pong:a");
  }
  server.close();
  auto r = client.call(bytes("b"), 1s);
  EXPECT_EQ(r.status(), zipc::Status::closed) << zipc::to_string(r.status());
  EXPECT_EQ(client.reconnects(), 0u);
}

TEST(RpcFd, ADescriptorThatIsNotAnRpcSegmentIsRefused) {
  try {
    (void)zipc::RpcClient::connect_fd(-1);
    ADD_FAILURE() << "connected through -1";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::invalid_argument) << e.what();
  }
  const int fd = ::memfd_create("not-zipc", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 8192), 0);
  EXPECT_THROW((void)zipc::RpcClient::connect_fd(fd, 50ms), zipc::Error);
  ::close(fd);
}

}  // namespace rpc_fd_test
