// An existing epoll loop that serves a TCP socket and a zipc topic side by
// side: the WaitSet's readiness_fd goes into epoll beside the sockets, and
// when it is readable the loop calls ws.wait(0) and drains what is ready.
// Run with no argument: it forks a publisher (ticks on the topic) and a TCP
// client (lines on a socket); it exits 0 only when every tick and every byte
// arrived. On kernels without io_uring futex waits (forced with --fallback)
// the readiness fd is the fallback's: readable every fallback nap (1 ms), when
// wait(0) polls every channel. Should even that fd be missing (-1), the
// sockets are attached to the WaitSet instead (WaitSet::attach_fd).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "zipc/zipc.hpp"

using namespace std::chrono_literals;

namespace {

constexpr int kTicks = 200;
constexpr int kLines = 50;
const std::string kLine = "hello over tcp\n";

int publish_ticks(const std::string& name) {
  auto topic = zipc::Topic::open(name);
  auto pub = topic.publisher();
  for (int i = 0; i < kTicks; ++i) {
    const std::string tick = "tick " + std::to_string(i);
    if (!pub.publish(std::as_bytes(std::span(tick)), 1s).ok()) return 1;
    if (i % 20 == 0) std::this_thread::sleep_for(2ms);  // bursts: the loop sleeps in between
  }
  return 0;
}

int send_lines(std::uint16_t port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (s < 0 || ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return 2;
  for (int i = 0; i < kLines; ++i) {
    if (::write(s, kLine.data(), kLine.size()) != static_cast<ssize_t>(kLine.size())) return 3;
    if (i % 10 == 0) std::this_thread::sleep_for(1ms);
  }
  ::close(s);
  return 0;
}

pid_t fork_run(int (*body)(const std::string&), const std::string& arg) {
  const pid_t pid = ::fork();
  if (pid == 0) _exit(body(arg));
  return pid;
}

bool child_ok(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  zipc::WaitSetOptions wo;
  wo.force_fallback = argc > 1 && std::string(argv[1]) == "--fallback";  // the path of kernels before 6.7
  const std::string name = "example-epoll-" + std::to_string(::getpid());
  auto topic = zipc::Topic::create(name);
  auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  zipc::WaitSet ws(wo);
  const std::uint64_t sub_id = ws.attach(sub);

  // A TCP listener on an ephemeral loopback port.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener, 4) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("listen");
    return 1;
  }
  const std::uint16_t port = ntohs(a.sin_port);

  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  auto watch = [&](int fd) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    return ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) == 0;
  };
  const bool pollable = ws.readiness_fd() >= 0;
  if (pollable) {
    watch(ws.readiness_fd());
    watch(listener);
  } else {
    (void)ws.attach_fd(listener, POLLIN);  // the fallback: the WaitSet polls the sockets itself
  }

  const pid_t publisher = fork_run(publish_ticks, name);
  const pid_t client = ::fork();
  if (client == 0) _exit(send_lines(port));

  int ticks = 0;
  std::size_t bytes = 0;
  int conn = -1;
  std::uint64_t conn_id = 0;
  bool peer_closed = false;
  auto drain_topic = [&] {
    std::array<std::byte, 256> buf{};
    while (sub.try_read(buf).ok()) ++ticks;
  };
  auto read_socket = [&] {
    std::array<char, 4096> buf{};
    const ssize_t n = ::read(conn, buf.data(), buf.size());
    if (n > 0) bytes += static_cast<std::size_t>(n);
    if (n == 0) peer_closed = true;
  };
  auto accept_one = [&] {
    conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return;
    if (pollable) {
      watch(conn);
    } else {
      conn_id = ws.attach_fd(conn, POLLIN);
    }
  };

  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while ((ticks < kTicks || !peer_closed) && std::chrono::steady_clock::now() < give_up) {
    if (pollable) {
      std::array<epoll_event, 8> events{};
      const int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 1000);
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == listener) accept_one();
        if (fd == conn) read_socket();
        if (fd == ws.readiness_fd()) {
          for (const zipc::Ready& r : ws.wait(0ns))
            if (r.id == sub_id) drain_topic();
        }
      }
    } else {
      for (const zipc::Ready& r : ws.wait(1s)) {
        if (r.id == sub_id) drain_topic();
        if (r.kind == zipc::ReadyKind::fd && conn < 0) accept_one();
        if (conn_id != 0 && r.id == conn_id) read_socket();
      }
    }
    if (peer_closed && conn >= 0) {
      if (conn_id != 0) (void)ws.detach(conn_id);
      ::close(conn);
      conn = -1;
    }
  }
  const bool children = child_ok(publisher) && child_ok(client);
  ::close(ep);
  ::close(listener);
  zipc::Topic::remove(name);
  std::printf("%s loop: %d ticks from the topic, %zu bytes from TCP\n", pollable ? "epoll" : "WaitSet", ticks, bytes);
  return children && ticks == kTicks && bytes == kLines * kLine.size() ? 0 : 1;
}
