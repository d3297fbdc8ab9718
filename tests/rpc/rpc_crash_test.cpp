// Crashes on both sides: SIGKILLed servers and clients.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "layout/rpc_layout.hpp"
#include "rpc/rpc_shared.hpp"
#include "rpc_test_util.hpp"
#include "zipc/rpc.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::RpcClient;
using zipc::RpcOptions;
using zipc::RpcRequest;
using zipc::RpcServer;
using zipc::Status;

namespace rpc_crash_test {
namespace {

void echo(RpcRequest& req) {
  (void)req.reply(req.data());
}

// A server child whose handler never answers requests starting with 'H'.
zipc::test::Child spawn_server(const std::string& name, const RpcOptions& opt = {}) {
  return zipc::test::spawn([name, opt] {
    return rpc_test::run_server(name, opt, 2, [](RpcRequest& req) {
      if (req.size() > 0 && req.data()[0] == std::byte{'H'}) {
        for (;;) std::this_thread::sleep_for(1s);
      }
      echo(req);
    });
  });
}

RpcClient connect_when_ready(const std::string& name) {
  return RpcClient::connect(name, 10s);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST(RpcCrash, KilledServerFailsPendingAndNewCallsWithPeerDeadLongBeforeTheirTimeout) {
  zipc::test::TempName name("rpccrash");
  auto server = spawn_server(name.str());
  auto sut = connect_when_ready(name.str());
  const char ok[] = "ok";
  ASSERT_TRUE(sut.call(std::as_bytes(std::span(ok)), 10s).ok());
  const char hang[] = "H";
  auto pending = sut.call_async(std::as_bytes(std::span(hang)));
  ASSERT_TRUE(pending.ok());
  std::this_thread::sleep_for(20ms);  // let the handler take it
  server.kill(SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  constexpr auto kLongTimeout = 120s;
  EXPECT_EQ(pending.wait(kLongTimeout).status(), Status::peer_dead);
  const double waited = seconds_since(t0);
  EXPECT_LT(waited, 60.0) << "peer_dead came at the timeout, not from liveness checks";
  RecordProperty("peer_dead_after_s", std::to_string(waited));
  std::printf("pending call saw peer_dead after %.3f s\n", waited);
  EXPECT_EQ(sut.call(std::as_bytes(std::span(ok)), kLongTimeout).status(), Status::peer_dead);
}

TEST(RpcCrash, ServerKilledBeforeTheCallIsNoticedByTheCall) {
  zipc::test::TempName name("rpccrash");
  auto server = spawn_server(name.str());
  auto sut = connect_when_ready(name.str());
  const char ok[] = "ok";
  ASSERT_TRUE(sut.call(std::as_bytes(std::span(ok)), 10s).ok());
  server.kill(SIGKILL);
  (void)server.wait(10s);
  EXPECT_EQ(sut.call(std::as_bytes(std::span(ok)), 120s).status(), Status::peer_dead);
}

TEST(RpcCrash, RestartedServerIsReachedTransparentlyByTheNextCall) {
  zipc::test::TempName name("rpccrash");
  auto first = spawn_server(name.str());
  auto sut = connect_when_ready(name.str());
  const char ok[] = "ok";
  ASSERT_TRUE(sut.call(std::as_bytes(std::span(ok)), 10s).ok());
  first.kill(SIGKILL);
  (void)first.wait(10s);
  // While nobody serves the name, calls fail at once with peer_dead.
  EXPECT_EQ(sut.call(std::as_bytes(std::span(ok)), 120s).status(), Status::peer_dead);
  // A new server replaces the dead one's segment.
  auto second = spawn_server(name.str());
  zipc::RpcResponse r;
  for (int i = 0; i < 1000; ++i) {
    r = sut.call(std::as_bytes(std::span(ok)), 10s);
    if (r.ok()) break;
    EXPECT_EQ(r.status(), Status::peer_dead);
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(r.ok()) << zipc::to_string(r.status());
  EXPECT_EQ(std::memcmp(r.data().data(), ok, sizeof ok), 0);
  EXPECT_EQ(sut.reconnects(), 1u);
  second.kill(SIGTERM);
  auto s = second.wait(30s);
  EXPECT_TRUE(s.exited && s.exit_code == 0) << s.output;
}

TEST(RpcCrash, KilledClientsAreReapedAndTheirSlotsAndBlocksServeTheNextClient) {
  zipc::test::TempName name("rpccrash");
  RpcOptions opt;
  opt.max_clients = 1;  // the next client gets in only after recovery
  opt.inflight_per_client = 2;
  opt.max_request_size = opt.max_response_size = 1 << 20;
  opt.large_blocks = 2;  // one large call (request + response block) needs both
  opt.recovery_time = 20ms;
  const int rounds = rpc_test::scaled(20);
  auto server = zipc::test::spawn([&] {
    return rpc_test::run_server(name.str(), opt, 2, [](RpcRequest& req) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      echo(req);
    });
  });
  for (int round = 0; round < rounds; ++round) {
    auto victim = zipc::test::spawn([&] {
      auto c = RpcClient::connect(name.str(), 10s);
      std::vector<std::byte> big(300000, std::byte{7});
      zipc::test::report("connected");
      for (;;) {
        auto t1 = c.call_async({big.data(), big.size()});
        auto t2 = c.call_async({big.data(), 10});
        (void)t1.wait(1s);
        (void)t2.wait(1s);
      }
      return 0;
    });
    zipc::test::kill_after_random_delay(victim, 1ms, 30ms);
    (void)victim.wait(10s);
    auto sut = RpcClient::connect(name.str(), 10s);
    std::vector<std::byte> big(1 << 20, std::byte{9});
    auto r = sut.call({big.data(), big.size()}, 10s);
    ASSERT_TRUE(r.ok()) << "round " << round << ": " << zipc::to_string(r.status());
    EXPECT_EQ(r.size(), big.size());
  }
  server.kill(SIGTERM);
  auto s = server.wait(30s);
  EXPECT_TRUE(s.exited && s.exit_code == 0) << s.output;
}

TEST(RpcCrash, ServerKeepsServingOthersWhileClientsDieAtRandom) {
  zipc::test::TempName name("rpccrash");
  RpcOptions opt;
  opt.max_clients = 8;
  opt.max_request_size = opt.max_response_size = 64 << 10;
  opt.inline_size = 512;
  opt.recovery_time = 20ms;
  auto server = zipc::test::spawn([&] {
    return rpc_test::run_server(name.str(), opt, 2, [](RpcRequest& r) { rpc_test::checksum_handler(r, 8000); });
  });
  const int calls = rpc_test::scaled(2000);
  auto steady = zipc::test::spawn([&] {
    auto c = RpcClient::connect(name.str(), 10s);
    for (int i = 0; i < calls; ++i) {
      auto req = rpc_test::make_request(99, static_cast<std::uint64_t>(i), static_cast<std::size_t>(i * 13) % 3000);
      std::uint64_t sum;
      std::memcpy(&sum, req.data() + 16, 8);
      if (!rpc_test::response_matches(c.call(rpc_test::bytes(req), 30s), 99, static_cast<std::uint64_t>(i), sum)) {
        zipc::test::report("mismatch at " + std::to_string(i));
        return 1;
      }
    }
    return 0;
  });
  for (int round = 0; round < rpc_test::scaled(15); ++round) {
    std::vector<zipc::test::Child> victims;
    for (std::uint32_t v = 0; v < 4; ++v) {
      victims.push_back(zipc::test::spawn([&, v] {
        auto c = RpcClient::connect(name.str(), 10s);
        for (std::uint64_t i = 0;; ++i) {
          auto req = rpc_test::make_request(v, i, (i * 101) % 20000);
          auto t1 = c.call_async(rpc_test::bytes(req));
          auto t2 = c.call_async(rpc_test::bytes(req));
          (void)t1.wait(1s);
        }
        return 0;
      }));
    }
    for (auto& v : victims) zipc::test::kill_after_random_delay(v, 1ms, 10ms);
    for (auto& v : victims) (void)v.wait(10s);
  }
  auto r = steady.wait(300s);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.output;
  server.kill(SIGTERM);
  auto s = server.wait(30s);
  EXPECT_TRUE(s.exited && s.exit_code == 0) << s.output;
}

TEST(RpcCrash, DeadClientsPendingRequestsAreDroppedUnservedAndItsRecordFreed) {
  zipc::test::TempName name("rpccrash");
  RpcOptions opt;
  opt.recovery_time = 10ms;
  auto sut = RpcServer::create(name.str(), opt);
  auto client = zipc::test::spawn([&] {
    auto c = RpcClient::connect(name.str(), 10s);
    const char req[] = "never served";
    auto t1 = c.call_async(std::as_bytes(std::span(req)));
    auto t2 = c.call_async(std::as_bytes(std::span(req)));
    auto t3 = c.call_async(std::as_bytes(std::span(req)));
    if (!t1.ok() || !t2.ok() || !t3.ok()) return 1;
    for (;;) std::this_thread::sleep_for(1s);
    return 0;
  });
  // Wait until the three requests are published, then kill their sender.
  zipc::Segment peek = zipc::Segment::open(name.str(), zipc::SegmentKind::rpc);
  zipc::layout::RpcGeometry g;
  ASSERT_TRUE(zipc::detail::rpc_geometry_from_params(peek.params(), peek.payload_size(), &g));
  zipc::detail::RpcView view(peek.payload(), g);
  int published = 0;
  for (int i = 0; i < 10000 && published < 3; ++i) {
    published = 0;
    for (std::uint64_t s = 0; s < view.slot_count(); ++s) {
      published += view.slot(s)->state.load() == zipc::layout::kSlotRequest ? 1 : 0;
    }
    if (published < 3) std::this_thread::sleep_for(1ms);
  }
  ASSERT_EQ(published, 3);
  EXPECT_EQ(sut.connected_clients(), 1u);
  client.kill(SIGKILL);
  (void)client.wait(10s);
  // The first next() recovers the dead client before it looks for work.
  EXPECT_EQ(sut.next(50ms).status(), Status::timeout);
  EXPECT_EQ(sut.reaped_clients(), 1u);
  EXPECT_EQ(sut.connected_clients(), 0u);
}

TEST(RpcCrash, DeadServersSegmentIsKeptWhenReplaceStaleIsOff) {
  zipc::test::TempName name("rpccrash");
  auto first = spawn_server(name.str());
  (void)connect_when_ready(name.str());
  first.kill(SIGKILL);
  (void)first.wait(10s);
  RpcOptions opt;
  opt.replace_stale = false;
  try {
    auto sut = RpcServer::create(name.str(), opt);
    FAIL() << "replaced a stale segment with replace_stale off";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::already_exists);
  }
  auto sut = RpcServer::create(name.str(), {});  // the default replaces it
  EXPECT_EQ(sut.connected_clients(), 0u);
}

}  // namespace rpc_crash_test
