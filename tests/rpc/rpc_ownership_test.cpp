// Who may free what: blocks of abandoned calls, and segments of replaced
// servers: a block of a call the client gave up on is freed by exactly one side,
// and a new server never frees the segment of the server it replaced.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "rpc_test_util.hpp"
#include "zipc/rpc.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::RpcClient;
using zipc::RpcOptions;
using zipc::RpcRequest;
using zipc::RpcServer;
using zipc::Status;

namespace rpc_ownership_test {
namespace {

std::vector<std::byte> filled(std::size_t n, std::uint8_t value) {
  return std::vector<std::byte>(n, std::byte{value});
}

bool all_equal(std::span<const std::byte> data, std::uint8_t value) {
  return std::all_of(data.begin(), data.end(), [value](std::byte b) { return b == std::byte{value}; });
}

}  // namespace

// Finding 11: slot 1's ticket is dropped while served (its request block B
// is given back by the server's answer); slot 0 then takes B for a new call
// that is also dropped while served. The disconnecting client must not free
// B on slot 1's behalf while the server still works on slot 0's request.
TEST(RpcOwnership, DisconnectingClientDoesNotFreeABlockTheServerGaveBackAndLentAgain) {
  zipc::test::TempName name("rpcown");
  RpcOptions opt;
  opt.max_clients = 2;
  opt.inflight_per_client = 2;
  opt.max_request_size = opt.max_response_size = 64 << 10;
  opt.inline_size = 256;
  opt.large_blocks = 2;  // both clients' block scans start at block 0
  auto server = RpcServer::create(name.str(), opt);
  constexpr std::size_t kLarge = 32 << 10;
  const auto small = filled(8, 's');
  const auto first_large = filled(kLarge, 0xA1);
  const auto second_large = filled(kLarge, 0xA2);

  RpcRequest in_service;
  {
    auto client = RpcClient::connect(name.str(), 1s);
    auto t0 = client.call_async(rpc_test::bytes(small));        // slot 0, inline
    auto t1 = client.call_async(rpc_test::bytes(first_large));  // slot 1, block B
    ASSERT_TRUE(t0.ok() && t1.ok());
    RpcRequest r0 = server.next(1s);
    RpcRequest r1 = server.next(1s);
    ASSERT_TRUE(r0.ok() && r1.ok());
    ASSERT_EQ(r1.size(), kLarge);
    t1 = zipc::RpcTicket();                                   // dropped while served: slot 1 is abandoned
    ASSERT_EQ(r1.reply(rpc_test::bytes(small)), Status::ok);  // the server gives B back
    ASSERT_EQ(r0.reply(rpc_test::bytes(small)), Status::ok);
    ASSERT_TRUE(t0.wait(1s).ok());  // slot 0 is free again

    auto t2 = client.call_async(rpc_test::bytes(second_large));  // slot 0 takes B again
    ASSERT_TRUE(t2.ok());
    in_service = server.next(1s);
    ASSERT_TRUE(in_service.ok());
    ASSERT_EQ(in_service.size(), kLarge);
    t2 = zipc::RpcTicket();  // dropped while served
  }                          // the client disconnects while the server still holds slot 0's request in B

  // Another client takes a block and fills it: it must not get B.
  auto other = RpcClient::connect(name.str(), 1s);
  auto loan = other.reserve(kLarge);
  ASSERT_TRUE(loan) << zipc::to_string(loan.status());
  std::memset(loan.data().data(), 0xEE, kLarge);
  EXPECT_TRUE(all_equal(in_service.data(), 0xA2)) << "a request being served was overwritten by another client";

  // Answering in place must not write into the other client's request either.
  zipc::Status st = Status::closed;
  auto out = in_service.reserve_reply_in_place(kLarge, &st);
  ASSERT_EQ(st, Status::ok);
  std::memset(out.data(), 0x55, out.size());
  EXPECT_TRUE(all_equal(loan.data(), 0xEE)) << "a reply landed in another client's request";
  EXPECT_EQ(in_service.commit(out.size()).status, Status::ok);
}

// Finding 12, the close side: a server whose name was taken over (its file
// unlinked, a successor created at the name, as a racing replacer left it)
// removes only its own file when it closes.
TEST(RpcOwnership, ClosingServerLeavesASuccessorsSegmentAtItsNameAlone) {
  zipc::test::TempName name("rpcown");
  auto first = RpcServer::create(name.str(), {});
  ASSERT_TRUE(zipc::Segment::remove(name.str()));  // the name is taken from the first server
  auto successor = RpcServer::create(name.str(), {});
  const std::uint64_t successor_created = zipc::Segment::inspect(name.str()).created_ns;
  first.close();
  zipc::SegmentInfo now;
  ASSERT_NO_THROW(now = zipc::Segment::inspect(name.str())) << "the first server removed its successor's segment";
  EXPECT_EQ(now.created_ns, successor_created);
  successor.close();
  EXPECT_THROW((void)zipc::Segment::inspect(name.str()), zipc::Error) << "a server left its own segment behind";
}

namespace {

// Shared between the racers of one test (a user segment).
struct RaceBoard {
  std::atomic<std::uint32_t> go;
  std::atomic<std::uint32_t> tried;      // racers past their create()
  std::atomic<std::uint32_t> winners;    // create() returned a server
  std::atomic<std::uint32_t> misplaced;  // winners whose segment is not at the name
  std::atomic<std::uint32_t> errors;     // create() failed other than already_exists
};

template <class Pred>
bool spin_until(Pred pred) {
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

// Finding 12, the create side: several servers start at once over a dead
// server's segment. Exactly one wins, and the winner's segment is the one the
// name holds (none removes another's fresh segment after judging the old one).
TEST(RpcOwnership, ServersRacingToReplaceADeadOneLeaveExactlyOneWinnerAtTheName) {
  zipc::test::TempName name("rpcown");
  zipc::test::TempName board_name("rpcownb");
  zipc::SegmentSpec spec{zipc::SegmentKind::user, sizeof(RaceBoard), {}};
  auto board_seg =
      zipc::Segment::create(board_name.str(), spec, [](std::byte* p, std::size_t n) { std::memset(p, 0, n); });
  auto* board = reinterpret_cast<RaceBoard*>(board_seg.payload());
  RpcOptions opt;
  opt.max_clients = 1;
  opt.inflight_per_client = 1;
  opt.max_request_size = opt.max_response_size = opt.inline_size = 64;  // small: fast to create
  constexpr std::uint32_t kRacers = 4;
  // A winner exits without closing: its segment is the next round's dead server.
  auto leave_dead_server = [&] {
    (void)new RpcServer(RpcServer::create(name.str(), opt));
    return 0;
  };
  ASSERT_EQ(zipc::test::spawn(leave_dead_server).wait().exit_code, 0);
  const int rounds = rpc_test::scaled(100);
  for (int round = 0; round < rounds; ++round) {
    board->go.store(0);
    board->tried.store(0);
    board->winners.store(0);
    board->misplaced.store(0);
    board->errors.store(0);
    std::vector<zipc::test::Child> racers;
    for (std::uint32_t i = 0; i < kRacers; ++i) {
      racers.push_back(zipc::test::spawn([&] {
        if (!spin_until([&] { return board->go.load() != 0; })) return 2;
        RpcServer* won = nullptr;
        try {
          won = new RpcServer(RpcServer::create(name.str(), opt));
          board->winners.fetch_add(1);
        } catch (const zipc::Error& e) {
          if (e.errc() != zipc::Errc::already_exists) {
            board->errors.fetch_add(1);
            zipc::test::report(e.what());
          }
        }
        board->tried.fetch_add(1);
        if (won == nullptr) return 0;
        if (!spin_until([&] { return board->tried.load() == kRacers; })) return 3;
        try {
          if (!(zipc::Segment::inspect(name.str()).creator == zipc::ProcessId::current()))
            board->misplaced.fetch_add(1);
        } catch (const zipc::Error&) {
          board->misplaced.fetch_add(1);
        }
        return 0;  // exits without closing: the next round replaces it
      }));
    }
    board->go.store(1);
    for (auto& r : racers) {
      auto res = r.wait(30s);
      ASSERT_TRUE(res.exited && res.exit_code == 0) << res.output;
    }
    ASSERT_EQ(board->errors.load(), 0u) << "round " << round;
    ASSERT_EQ(board->misplaced.load(), 0u) << "round " << round << ": a winner's segment was removed by another";
    ASSERT_EQ(board->winners.load(), 1u) << "round " << round;
  }
}

}  // namespace rpc_ownership_test
