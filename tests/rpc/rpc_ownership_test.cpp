// Who may free what: blocks of abandoned calls, and segments of replaced
// servers (regressions of review findings 11 and 12).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
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
  auto loan = other.loan(kLarge);
  ASSERT_TRUE(loan.ok()) << zipc::to_string(loan.status());
  std::memset(loan.data().data(), 0xEE, kLarge);
  EXPECT_TRUE(all_equal(in_service.data(), 0xA2)) << "a request being served was overwritten by another client";

  // Answering in place must not write into the other client's request either.
  zipc::Status st = Status::closed;
  auto out = in_service.reply_in_place(kLarge, &st);
  ASSERT_EQ(st, Status::ok);
  std::memset(out.data(), 0x55, out.size());
  EXPECT_TRUE(all_equal(loan.data(), 0xEE)) << "a reply landed in another client's request";
  EXPECT_EQ(in_service.commit(out.size()), Status::ok);
}
