// Many client processes against a server process: every response reaches
// the call that asked for it, pipelined or not, 1- and 4-thread servers.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "rpc_test_util.hpp"
#include "zipc/rpc.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::RpcClient;
using zipc::RpcOptions;

namespace rpc_multiprocess_test {
namespace {

struct Shape {
  int clients;
  unsigned threads;
  int pipeline;  // calls in flight per client (1 = not pipelined)
};

std::string shape_name(const testing::TestParamInfo<Shape>& info) {
  return std::to_string(info.param.clients) + "Clients" + std::to_string(info.param.threads) + "Threads" +
         (info.param.pipeline > 1 ? "Pipelined" : "OneAtATime");
}

// One client process: `calls` calls with `pipeline` in flight; returns the
// number of responses that did not match their call.
int run_client(const std::string& name, std::uint32_t id, int calls, int pipeline, std::size_t max_payload) {
  auto sut = RpcClient::connect(name, 10s);
  const auto k_max = static_cast<std::size_t>(pipeline);
  std::vector<zipc::RpcTicket> tickets(k_max);
  std::vector<std::uint64_t> sums(k_max);
  std::vector<std::uint64_t> seqs(k_max);
  int bad = 0;
  auto settle = [&](std::size_t k) {
    auto r = tickets[k].wait(30s);
    if (!rpc_test::response_matches(r, id, seqs[k], sums[k])) {
      ++bad;
      zipc::test::report("seq " + std::to_string(seqs[k]) + ": " + zipc::to_string(r.status()) + ", " +
                         std::to_string(r.size()) + " bytes");
    }
  };
  for (int i = 0; i < calls; ++i) {
    const std::size_t k = static_cast<std::size_t>(i) % k_max;
    if (i >= pipeline) settle(k);
    const auto seq = static_cast<std::uint64_t>(i);
    // Sizes sweep inline and block-sized payloads.
    const std::size_t payload = (seq * 7919 + id * 104729) % (max_payload + 1);
    auto req = rpc_test::make_request(id, seq, payload);
    std::memcpy(&sums[k], req.data() + 16, 8);
    seqs[k] = seq;
    tickets[k] = sut.call_async(rpc_test::bytes(req));
    if (!tickets[k].ok()) {
      ++bad;
      zipc::test::report(std::string("call_async: ") + zipc::to_string(tickets[k].status()));
    }
  }
  for (int i = std::max(0, calls - pipeline); i < calls; ++i) settle(static_cast<std::size_t>(i) % k_max);
  if (bad != 0) zipc::test::report("client " + std::to_string(id) + ": " + std::to_string(bad) + " mismatches");
  return bad == 0 ? 0 : 1;
}

class RpcProcesses : public testing::TestWithParam<Shape> {};

}  // namespace

TEST_P(RpcProcesses, EveryResponseMatchesItsCallsChecksum) {
  const Shape shape = GetParam();
  zipc::test::TempName name("rpcmp");
  RpcOptions opt;
  opt.max_clients = 16;
  opt.inflight_per_client = 4;
  opt.max_request_size = opt.max_response_size = 96 << 10;
  opt.inline_size = 1024;
  const std::size_t max_payload = 64 << 10;
  auto server = zipc::test::spawn([&] {
    return rpc_test::run_server(name.str(), opt, shape.threads,
                                [](zipc::RpcRequest& r) { rpc_test::checksum_handler(r, 20000); });
  });
  const int calls = rpc_test::scaled(shape.clients >= 16 ? 150 : 400);
  std::vector<zipc::test::Child> clients;
  for (int c = 0; c < shape.clients; ++c) {
    clients.push_back(zipc::test::spawn(
        [&, c] { return run_client(name.str(), static_cast<std::uint32_t>(c), calls, shape.pipeline, max_payload); }));
  }
  for (auto& c : clients) {
    auto r = c.wait(std::chrono::seconds(300));
    EXPECT_TRUE(r.exited && r.exit_code == 0) << r.output << " signal " << r.signal;
  }
  server.kill(SIGTERM);
  auto s = server.wait(30s);
  EXPECT_TRUE(s.exited && s.exit_code == 0) << s.output;
}

INSTANTIATE_TEST_SUITE_P(Matrix, RpcProcesses,
                         testing::Values(Shape{1, 1, 1}, Shape{1, 1, 4}, Shape{1, 4, 1}, Shape{1, 4, 4}, Shape{4, 1, 1},
                                         Shape{4, 1, 4}, Shape{4, 4, 1}, Shape{4, 4, 4}, Shape{16, 1, 1},
                                         Shape{16, 1, 4}, Shape{16, 4, 1}, Shape{16, 4, 4}),
                         shape_name);

}  // namespace rpc_multiprocess_test
