// Misused Rpc handles: every call on a default-constructed, moved-from or
// detached RpcClient / RpcServer returns a status (detached, as for every channel) (or throws at setup),
// never crashes. Each case runs in a forked child: a crash fails the test
// with its signal instead of taking the test program down.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <utility>

#include "zipc/rpc.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::RpcClient;
using zipc::RpcRequest;
using zipc::RpcServer;
using zipc::Status;

namespace rpc_misuse_test {
namespace {

// Runs body in a forked child; the child's exit code 0 means every check held.
void in_child(const std::function<int()>& body) {
  auto child = zipc::test::spawn(body);
  const zipc::test::ChildResult r = child.wait(30s);
  EXPECT_FALSE(r.timed_out) << "hung";
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << "\n" << r.output;
  EXPECT_TRUE(r.exited && r.exit_code == 0) << "exit " << r.exit_code << "\n" << r.output;
}

std::span<const std::byte> bytes(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// Every client call on sut says detached (or an empty value), nothing crashes.
int every_client_call_is_detached(RpcClient& sut) {
  int bad = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      zipc::test::report(std::string("failed: ") + what + "\n");
      ++bad;
    }
  };
  check(sut.call(bytes("x"), 10ms).status() == Status::detached, "call");
  check(sut.call_async(bytes("x")).status() == Status::detached, "call_async");
  auto loan = sut.reserve(4);
  check(!loan && loan.status() == Status::detached, "reserve");
  check(sut.call(std::move(loan), 10ms).status() == Status::detached, "call(loan)");
  check(sut.call_async(zipc::RpcWriteLoan()).status() == Status::detached, "call_async(loan)");
  auto t = sut.call_async(bytes("x"));
  check(t.wait(10ms).status() == Status::detached && !t.ready(), "ticket wait");
  sut.set_wait({});
  check(sut.max_request_size() == 0 && sut.max_response_size() == 0 && sut.inflight_limit() == 0, "sizes");
  check(sut.reconnects() == 0, "reconnects");
  check(!sut.is_attached(), "is_attached");
  sut.detach();  // again: a no-op
  return bad;
}

// expect: what next() says (detached: the server holds nothing; closed: after
// close()); serve() throws invalid_argument or closed to match.
int every_server_call_is_safe(RpcServer& sut, Status expect = Status::detached) {
  int bad = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      zipc::test::report(std::string("failed: ") + what + "\n");
      ++bad;
    }
  };
  check(sut.next(10ms).status() == expect, "next");
  const Errc serve_errc = expect == Status::closed ? Errc::closed : Errc::invalid_argument;
  check(zipc::test::errc_of([&] { sut.serve([](RpcRequest&) {}, 1); }) == serve_errc, "serve throws");
  check(sut.connected_clients() == 0 && sut.reaped_clients() == 0, "counters");
  check(sut.fd() == -1, "fd");
  (void)sut.name();
  sut.stop();
  sut.close();
  return bad;
}

void echo(RpcRequest& req) {
  (void)req.reply(req.data());
}

}  // namespace

TEST(RpcMisuse, EveryCallOnADefaultConstructedClientSaysDetached) {
  in_child([] {
    RpcClient sut;
    return every_client_call_is_detached(sut);
  });
}

TEST(RpcMisuse, EveryCallOnAMovedFromClientSaysDetached) {
  zipc::test::TempName name("rpcmis");
  in_child([&] {
    auto server = RpcServer::create(name.str());
    RpcClient sut = RpcClient::connect(name.str(), 1s);
    RpcClient other = std::move(sut);
    return every_client_call_is_detached(sut);  // NOLINT(bugprone-use-after-move): the misuse under test
  });
}

TEST(RpcMisuse, EveryCallOnADetachedClientSaysDetachedAndDoesNotReconnect) {
  zipc::test::TempName name("rpcmis");
  in_child([&] {
    auto server = RpcServer::create(name.str());
    RpcClient sut = RpcClient::connect(name.str(), 1s);
    if (!sut.is_attached()) return 2;
    sut.detach();
    if (server.connected_clients() != 0) return 3;  // the record went back
    return every_client_call_is_detached(sut);
  });
}

TEST(RpcMisuse, ATicketAndAResponseOutliveTheirClientsDetach) {
  zipc::test::TempName name("rpcmis");
  in_child([&] {
    auto server = RpcServer::create(name.str());
    std::thread serving([&] { server.serve(echo, 1); });
    RpcClient sut = RpcClient::connect(name.str(), 1s);
    auto t = sut.call_async(bytes("abc"));
    auto held = sut.call(bytes("def"), 5s);
    sut.detach();
    auto r = t.wait(5s);
    const bool ok = r.ok() && r.size() == 3 && held.ok() && held.size() == 3;
    r.release();
    held.release();
    server.stop();
    serving.join();
    return ok ? 0 : 1;
  });
}

TEST(RpcMisuse, EveryCallOnADefaultConstructedServerIsSafe) {
  in_child([] {
    RpcServer sut;
    return every_server_call_is_safe(sut);
  });
}

TEST(RpcMisuse, EveryCallOnAMovedFromServerIsSafe) {
  zipc::test::TempName name("rpcmis");
  in_child([&] {
    RpcServer sut = RpcServer::create(name.str());
    RpcServer other = std::move(sut);
    return every_server_call_is_safe(sut);  // NOLINT(bugprone-use-after-move): the misuse under test
  });
}

TEST(RpcMisuse, ServeOnAClosedServerThrowsClosed) {
  zipc::test::TempName name("rpcmis");
  in_child([&] {
    RpcServer sut = RpcServer::create(name.str());
    sut.close();
    return every_server_call_is_safe(sut, Status::closed);
  });
}

TEST(RpcMisuse, ServeRejectsZeroAndAbsurdThreadCountsNamingTheBound) {
  zipc::test::TempName name("rpcmis");
  in_child([&] {
    RpcServer sut = RpcServer::create(name.str());
    int bad = 0;
    for (unsigned n : {0u, zipc::kRpcMaxServeThreads + 1, 1000000u, ~0u}) {
      std::string what;
      if (zipc::test::errc_of([&] { sut.serve(echo, n); }, &what) != Errc::invalid_argument) ++bad;
      if (what.find("1.." + std::to_string(zipc::kRpcMaxServeThreads)) == std::string::npos) {
        zipc::test::report("no bound in: " + what + "\n");
        ++bad;
      }
    }
    return bad;
  });
}

TEST(RpcMisuse, ARequestUsedAfterItWasAnsweredSaysClosed) {
  zipc::test::TempName name("rpcmis");
  in_child([&] {
    auto server = RpcServer::create(name.str());
    auto client = RpcClient::connect(name.str(), 1s);
    auto t = client.call_async(bytes("x"));
    RpcRequest req = server.next(5s);
    if (!req.ok()) return 2;
    if (req.reply(bytes("a")) != Status::ok) return 3;
    int bad = 0;
    Status st = Status::ok;
    bad += req.reply(bytes("b")) != Status::closed;
    bad += !req.reserve_reply(4, &st).empty() || st != Status::closed;
    bad += req.commit(1).status != Status::closed;
    bad += req.fail(1, "x") != Status::closed;
    RpcRequest moved = std::move(req);
    bad += req.reply(bytes("c")) != Status::closed;  // NOLINT(bugprone-use-after-move): the misuse under test
    RpcRequest empty;
    bad += empty.fail(1, "x") != Status::closed;
    bad += empty.reply(bytes("c")) != Status::closed;
    auto r = t.wait(5s);
    bad += !r.ok() || r.size() != 1;
    return bad;
  });
}

}  // namespace rpc_misuse_test
