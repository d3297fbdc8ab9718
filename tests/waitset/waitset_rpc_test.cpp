// zipc::WaitSet with Rpc endpoints: a server pulled with next(0) when ready,
// a client whose calls in flight are answered, both beside a queue in one
// thread, a client whose server dies, and a server stopped.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>

#include <array>
#include <cstring>
#include <string>
#include <thread>

#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::ReadyKind;
using zipc::WaitSet;

namespace waitset_rpc_test {
namespace {

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}
std::string text(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

zipc::RpcOptions small_rpc() {
  zipc::RpcOptions o;
  o.max_clients = 4;
  o.inflight_per_client = 4;
  o.recovery_time = 100ms;
  return o;
}

// A server in another process that never answers (killed by the test);
// returns once it serves.
zipc::test::Child silent_server(const std::string& name) {
  int ready_pipe[2];
  if (::pipe(ready_pipe) != 0) throw std::runtime_error("pipe");
  auto proc = zipc::test::spawn([&] {
    auto server = zipc::RpcServer::create(name, small_rpc());
    char c = 1;
    if (::write(ready_pipe[1], &c, 1) != 1) return 1;
    std::this_thread::sleep_for(60s);  // never answers
    return 0;
  });
  char c = 0;
  const bool up = ::read(ready_pipe[0], &c, 1) == 1;
  ::close(ready_pipe[0]);
  ::close(ready_pipe[1]);
  if (!up) throw std::runtime_error("the silent server did not start");
  return proc;
}

class WaitSetRpc : public ::testing::TestWithParam<bool> {
 protected:
  zipc::WaitSetOptions options() const {
    zipc::WaitSetOptions o;
    o.force_fallback = GetParam();
    return o;
  }
};

TEST_P(WaitSetRpc, AServerIsReportedWhileARequestWaitsAndPullsItWithNext) {
  zipc::test::TempName name("ws.rpc.s");
  auto server = zipc::RpcServer::create(name.str(), small_rpc());
  auto client = zipc::RpcClient::connect(name.str());
  WaitSet ws(options());
  const auto id = ws.attach(server);
  EXPECT_TRUE(ws.wait(20ms).empty());
  auto ticket = client.call_async(bytes("ping"));
  ASSERT_TRUE(ticket.ok());
  auto r = ws.wait(5s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(r[0].kind, ReadyKind::rpc_server);
  EXPECT_EQ(ws.wait(0ns).size(), 1u) << "level-triggered: ready until claimed";
  auto req = server.next(0ns);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(text(req.data()), "ping");
  EXPECT_TRUE(ws.wait(0ns).empty()) << "claimed: nothing waits any more";
  ASSERT_EQ(req.reply(bytes("pong")), zipc::Status::ok);
  auto resp = ticket.wait(5s);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(text(resp.data()), "pong");
}

TEST_P(WaitSetRpc, AClientIsReportedWhenACallInFlightIsAnswered) {
  zipc::test::TempName name("ws.rpc.c");
  auto server = zipc::RpcServer::create(name.str(), small_rpc());
  auto client = zipc::RpcClient::connect(name.str());
  WaitSet ws(options());
  const auto id = ws.attach(client);
  EXPECT_TRUE(ws.wait(0ns).empty()) << "no call in flight";
  auto ticket = client.call_async(bytes("q"));
  ASSERT_TRUE(ticket.ok());
  EXPECT_TRUE(ws.wait(20ms).empty()) << "not answered yet";
  std::thread answer([&] {
    std::this_thread::sleep_for(30ms);
    auto req = server.next(5s);
    if (req.ok()) (void)req.reply(bytes("a"));
  });
  auto r = ws.wait(5s);
  answer.join();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(r[0].kind, ReadyKind::rpc_client);
  EXPECT_TRUE(ticket.ready());
  auto resp = ticket.wait(0ns);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(text(resp.data()), "a");
  resp.release();
  EXPECT_TRUE(ws.wait(0ns).empty());
}

INSTANTIATE_TEST_SUITE_P(Modes, WaitSetRpc, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Fallback" : "IoUring"; });

// One thread serves an Rpc server and drains a queue, from one WaitSet.
TEST(WaitSetRpcMixed, OneThreadServesAnRpcServerAndAQueueFedByAnotherProcess) {
  zipc::test::TempName rpc_name("ws.rpc.mix"), q_name("ws.rpc.q");
  auto server = zipc::RpcServer::create(rpc_name.str(), small_rpc());
  zipc::QueueOptions qo;
  qo.block_size = 64;
  qo.block_count = 64;
  auto q = zipc::Queue::create(q_name.str(), qo, zipc::Role::consumer);
  constexpr int kCalls = 50, kJobs = 50;
  auto child = zipc::test::spawn([&] {
    auto c = zipc::RpcClient::connect(rpc_name.str(), 5s);
    auto p = zipc::Queue::open(q_name.str(), zipc::Role::producer);
    for (int i = 0; i < kCalls; ++i) {
      if (p.send(bytes("job"), 5s) != zipc::Status::ok) return 1;
      auto r = c.call(bytes(std::to_string(i)), 5s);
      if (!r.ok() || text(r.data()) != "re:" + std::to_string(i)) return 2;
    }
    return 0;
  });
  WaitSet ws;
  const auto sid = ws.attach(server);
  const auto qid = ws.attach(q);
  int calls = 0, jobs = 0;
  std::array<std::byte, 64> buf{};
  const auto end = std::chrono::steady_clock::now() + 30s;
  while ((calls < kCalls || jobs < kJobs) && std::chrono::steady_clock::now() < end) {
    for (const zipc::Ready& r : ws.wait(1s)) {
      if (r.id == sid) {
        for (auto req = server.next(0ns); req.ok(); req = server.next(0ns)) {
          ASSERT_EQ(req.reply(bytes("re:" + text(req.data()))), zipc::Status::ok);
          ++calls;
        }
      } else if (r.id == qid) {
        while (q.try_recv(buf).ok()) ++jobs;
      }
    }
  }
  EXPECT_EQ(calls, kCalls);
  EXPECT_EQ(jobs, kJobs);
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(WaitSetRpcCrash, AClientWhoseServerIsKilledIsReportedAndItsCallFailsPeerDead) {
  zipc::test::TempName name("ws.rpc.kill");
  auto server_proc = silent_server(name.str());
  auto client = zipc::RpcClient::connect(name.str(), 5s);
  WaitSet ws;
  const auto id = ws.attach(client);
  auto ticket = client.call_async(bytes("hello?"));
  ASSERT_TRUE(ticket.ok());
  EXPECT_TRUE(ws.wait(20ms).empty());
  ::kill(server_proc.pid(), SIGKILL);
  (void)server_proc.wait();
  auto r = ws.wait(10s);
  ASSERT_EQ(r.size(), 1u) << "the dead server was never noticed";
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(ticket.wait(0ns).status(), zipc::Status::peer_dead);
  zipc::RpcServer::create(name.str(), small_rpc()).close();  // takes the dead name over, then removes it
}

// An event loop never blocks in wait(): it polls readiness_fd and calls
// wait(0). A server's death wakes nobody, so readiness_fd must still turn
// readable for the maintenance that notices it (WaitSetOptions::maintenance_interval).
TEST(WaitSetRpcCrash, AnEventLoopPollingReadinessFdLearnsOfAKilledServerWithoutABlockingWait) {
  WaitSet ws;
  if (ws.readiness_fd() < 0) GTEST_SKIP() << "no io_uring here: readiness_fd is -1 (fallback mode)";
  zipc::test::TempName name("ws.rpc.loop");
  auto server_proc = silent_server(name.str());
  auto client = zipc::RpcClient::connect(name.str(), 5s);
  const auto id = ws.attach(client);
  auto ticket = client.call_async(bytes("hello?"));
  ASSERT_TRUE(ticket.ok());
  EXPECT_TRUE(ws.wait(0ns).empty());
  ::kill(server_proc.pid(), SIGKILL);
  (void)server_proc.wait();
  bool reported = false;
  for (int turn = 0; turn < 1000 && !reported; ++turn) {
    pollfd p{ws.readiness_fd(), POLLIN, 0};
    if (::poll(&p, 1, 10'000) != 1) break;  // the fd stayed silent for 10 s: the death went unnoticed
    for (const zipc::Ready& r : ws.wait(0ns)) reported = reported || r.id == id;
  }
  ASSERT_TRUE(reported) << "readiness_fd never woke the loop for the dead server";
  EXPECT_EQ(ticket.wait(0ns).status(), zipc::Status::peer_dead);
  zipc::RpcServer::create(name.str(), small_rpc()).close();  // takes the dead name over, then removes it
}

TEST(WaitSetRpcStop, AStoppedServerIsReportedAndNextSaysClosed) {
  zipc::test::TempName name("ws.rpc.stop");
  auto server = zipc::RpcServer::create(name.str(), small_rpc());
  WaitSet ws;
  const auto id = ws.attach(server);
  std::thread stopper([&] {
    std::this_thread::sleep_for(30ms);
    server.stop();
  });
  auto r = ws.wait(10s);
  stopper.join();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, id);
  EXPECT_EQ(server.next(0ns).status(), zipc::Status::closed);
}

}  // namespace

}  // namespace waitset_rpc_test
