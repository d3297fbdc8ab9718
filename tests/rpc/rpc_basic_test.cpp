// Single-process behaviour of Rpc: server threads and a client in one process.
#include <gtest/gtest.h>
#include <sys/stat.h>

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

namespace rpc_basic_test {
namespace {

// A server serving on its own threads for the scope of a test.
class Serving {
 public:
  Serving(const std::string& name, const RpcOptions& opt, const RpcServer::Handler& h, unsigned threads = 1)
      : server_(RpcServer::create(name, opt)), thread_([this, h, threads] { server_.serve(h, threads); }) {}
  ~Serving() {
    server_.stop();
    thread_.join();
  }
  RpcServer& server() { return server_; }

 private:
  RpcServer server_;
  std::thread thread_;
};

void echo(RpcRequest& req) {
  (void)req.reply(req.data());
}

std::vector<std::byte> filled(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + seed) & 0xff);
  return v;
}

bool same(const zipc::RpcResponse& r, const std::vector<std::byte>& v) {
  return r.ok() && r.size() == v.size() && (v.empty() || std::memcmp(r.data().data(), v.data(), v.size()) == 0);
}

}  // namespace

TEST(Rpc, EchoReturnsTheSameBytesForEverySizeFromZeroToTheMaximum) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_request_size = opt.max_response_size = 1 << 20;
  Serving s(name.str(), opt, echo);
  auto sut = RpcClient::connect(name.str(), 2s);
  for (std::size_t n : {0ul, 1ul, 127ul, 4096ul, 4097ul, 65536ul, 300000ul, 1ul << 20}) {
    auto req = filled(n, static_cast<unsigned>(n));
    auto r = sut.call({req.data(), req.size()}, 5s);
    EXPECT_TRUE(same(r, req)) << "size " << n << " status " << zipc::to_string(r.status());
  }
}

TEST(Rpc, SixtyFourMebibytePayloadsTravelThroughTheBlockPool) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_request_size = opt.max_response_size = 64 << 20;
  opt.max_clients = 2;
  opt.inflight_per_client = 1;
  Serving s(name.str(), opt, echo);
  auto sut = RpcClient::connect(name.str(), 2s);
  auto req = filled(64 << 20, 5);
  auto r = sut.call({req.data(), req.size()}, 30s);
  EXPECT_TRUE(same(r, req)) << zipc::to_string(r.status());
}

TEST(Rpc, RequestOverTheMaximumFailsWithTooLargeAndNothingIsSent) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_request_size = 1000;
  std::atomic<int> served{0};
  Serving s(name.str(), opt, [&](RpcRequest& req) {
    served.fetch_add(1);
    echo(req);
  });
  auto sut = RpcClient::connect(name.str(), 2s);
  std::vector<std::byte> big(1001);
  EXPECT_EQ(sut.call({big.data(), big.size()}, 1s).status(), Status::too_large);
  EXPECT_EQ(sut.call_async({big.data(), big.size()}).status(), Status::too_large);
  EXPECT_EQ(sut.reserve(1001).status(), Status::too_large);
  std::vector<std::byte> fits(1000);
  EXPECT_TRUE(sut.call({fits.data(), fits.size()}, 1s).ok());
  EXPECT_EQ(served.load(), 1);
}

TEST(Rpc, ResponseOverTheMaximumReachesTheCallerAsTooLarge) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_response_size = 100;
  Serving s(name.str(), opt, [](RpcRequest& req) {
    std::vector<std::byte> big(101);
    EXPECT_EQ(req.reply({big.data(), big.size()}), Status::too_large);
  });
  auto sut = RpcClient::connect(name.str(), 2s);
  EXPECT_EQ(sut.call(std::span<const std::byte>{}, 1s).status(), Status::too_large);
}

TEST(Rpc, HandlerThatDoesNotReplyGivesAnEmptyResponse) {
  zipc::test::TempName name("rpc");
  Serving s(name.str(), {}, [](RpcRequest&) {});
  auto sut = RpcClient::connect(name.str(), 2s);
  std::vector<std::byte> req(10);
  auto r = sut.call({req.data(), req.size()}, 1s);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.size(), 0u);
}

TEST(Rpc, CallTimesOutWhenTheHandlerIsSlowAndTheSlotIsReusedAfterwards) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.inflight_per_client = 1;
  std::atomic<bool> slow{true};
  Serving s(name.str(), opt, [&](RpcRequest& req) {
    if (slow.load()) std::this_thread::sleep_for(200ms);
    echo(req);
  });
  auto sut = RpcClient::connect(name.str(), 2s);
  auto req = filled(8, 1);
  EXPECT_EQ(sut.call({req.data(), req.size()}, 20ms).status(), Status::timeout);
  slow.store(false);
  // The only slot is still being served: the next call waits for it to come back.
  auto r = sut.call({req.data(), req.size()}, 5s);
  EXPECT_TRUE(same(r, req)) << zipc::to_string(r.status());
}

TEST(Rpc, TicketWaitTimesOutAndCanBeWaitedOnAgain) {
  zipc::test::TempName name("rpc");
  std::atomic<bool> go{false};
  Serving s(name.str(), {}, [&](RpcRequest& req) {
    while (!go.load()) std::this_thread::sleep_for(1ms);
    echo(req);
  });
  auto sut = RpcClient::connect(name.str(), 2s);
  auto req = filled(16, 2);
  auto t = sut.call_async({req.data(), req.size()});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.wait(10ms).status(), Status::timeout);
  go.store(true);
  EXPECT_TRUE(same(t.wait(5s), req));
}

TEST(Rpc, PipelinedCallsEachGetTheirOwnResponseAndTheLimitIsReportedAsFull) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.inflight_per_client = 4;
  Serving s(name.str(), opt, echo, 2);
  auto sut = RpcClient::connect(name.str(), 2s);
  ASSERT_EQ(sut.inflight_limit(), 4u);
  std::vector<std::vector<std::byte>> reqs;
  std::vector<zipc::RpcTicket> tickets;
  for (unsigned i = 0; i < 4; ++i) {
    reqs.push_back(filled(100 + i * 5000, i));
    tickets.push_back(sut.call_async({reqs.back().data(), reqs.back().size()}));
    ASSERT_TRUE(tickets.back().ok());
  }
  EXPECT_EQ(sut.call_async({reqs[0].data(), reqs[0].size()}).status(), Status::full);
  for (int i = 3; i >= 0; --i) {
    EXPECT_TRUE(same(tickets[static_cast<std::size_t>(i)].wait(5s), reqs[static_cast<std::size_t>(i)])) << i;
  }
}

TEST(Rpc, DroppedTicketsGiveTheirSlotsBack) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.inflight_per_client = 2;
  Serving s(name.str(), opt, echo);
  auto sut = RpcClient::connect(name.str(), 2s);
  auto req = filled(9000, 3);  // a block each way
  for (int i = 0; i < 50; ++i) {
    auto t1 = sut.call_async({req.data(), req.size()});
    auto t2 = sut.call_async({req.data(), req.size()});
    EXPECT_TRUE(t1.ok() || t1.status() == Status::full);
  }
  auto r = sut.call({req.data(), req.size()}, 5s);
  EXPECT_TRUE(same(r, req)) << zipc::to_string(r.status());
}

TEST(Rpc, LoansCarryRequestsAndRepliesWithoutCopies) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_request_size = opt.max_response_size = 1 << 20;
  Serving s(name.str(), opt, [](RpcRequest& req) {
    zipc::Status st;
    auto out = req.reserve_reply(req.size() + 1, &st);
    ASSERT_EQ(st, Status::ok);
    std::memcpy(out.data(), req.data().data(), req.size());
    out[req.size()] = std::byte{0x5a};
    EXPECT_EQ(req.commit(out.size()).status, Status::ok);
  });
  auto sut = RpcClient::connect(name.str(), 2s);
  for (std::size_t n : {0ul, 10ul, 5000ul, 500000ul}) {
    auto loan = sut.reserve(n);
    ASSERT_TRUE(loan);
    for (std::size_t i = 0; i < n; ++i) loan.data()[i] = static_cast<std::byte>(i);
    auto r = sut.call(std::move(loan), 5s);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r.size(), n + 1);
    bool right = r.data()[n] == std::byte{0x5a};
    for (std::size_t i = 0; i < n; ++i) right = right && r.data()[i] == static_cast<std::byte>(i);
    EXPECT_TRUE(right) << n;
  }
}

TEST(Rpc, ReplyInPlaceOverwritesTheRequestBlockAndReachesTheCaller) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_request_size = opt.max_response_size = 1 << 20;
  opt.large_blocks = 2;
  Serving s(name.str(), opt, [](RpcRequest& req) {
    const std::byte first = req.size() > 0 ? req.data()[0] : std::byte{0};
    zipc::Status st;
    auto out = req.reserve_reply_in_place(req.size(), &st);
    ASSERT_EQ(st, Status::ok);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>(static_cast<unsigned>(first) + 1);
    EXPECT_EQ(req.commit(out.size()).status, Status::ok);
  });
  auto sut = RpcClient::connect(name.str(), 2s);
  for (std::size_t n : {0ul, 100ul, 70000ul, 1ul << 20}) {
    for (int round = 0; round < 3; ++round) {  // blocks come back every time: two are enough
      auto req = filled(n, 40);
      auto r = sut.call({req.data(), req.size()}, 5s);
      ASSERT_TRUE(r.ok()) << n << " " << zipc::to_string(r.status());
      ASSERT_EQ(r.size(), n);
      bool right = true;
      for (std::size_t i = 0; i < n; ++i) right = right && r.data()[i] == static_cast<std::byte>(41);
      EXPECT_TRUE(right) << n;
    }
  }
}

TEST(Rpc, CommittedLoanSendsOnlyItsPrefix) {
  zipc::test::TempName name("rpc");
  Serving s(name.str(), {}, echo);
  auto sut = RpcClient::connect(name.str(), 2s);
  auto loan = sut.reserve(20000);
  ASSERT_TRUE(loan);
  std::memcpy(loan.data().data(), "abc", 3);
  EXPECT_EQ(loan.commit(20001).status, Status::too_large);  // over the reservation: nothing changes
  ASSERT_TRUE(loan.commit(3).ok());
  auto r = sut.call(std::move(loan), 5s);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(std::memcmp(r.data().data(), "abc", 3), 0);
}

TEST(Rpc, PullLoopServesRequestsWithNext) {
  zipc::test::TempName name("rpc");
  auto server = RpcServer::create(name.str(), {});
  auto sut = RpcClient::connect(name.str(), 2s);
  EXPECT_EQ(server.next(1ms).status(), Status::timeout);
  auto req = filled(33, 4);
  auto t = sut.call_async({req.data(), req.size()});
  auto r = server.next(5s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.size(), 33u);
  EXPECT_EQ(r.reply(r.data()), Status::ok);
  EXPECT_TRUE(same(t.wait(5s), req));
  server.stop();
  EXPECT_EQ(server.next(1s).status(), Status::closed);
}

TEST(Rpc, ManyClientThreadsAgainstFourServerThreadsAllMatch) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_request_size = opt.max_response_size = 20000;
  opt.inline_size = 512;
  Serving s(
      name.str(), opt, [](RpcRequest& req) { rpc_test::checksum_handler(req, 10000); }, 4);
  const int calls = rpc_test::scaled(400);
  std::atomic<int> bad{0};
  std::vector<std::thread> clients;
  for (std::uint32_t c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      auto sut = RpcClient::connect(name.str(), 2s);
      std::vector<zipc::RpcTicket> tickets(3);
      std::vector<std::uint64_t> sums(3);
      for (int i = 0; i < calls; ++i) {
        const std::size_t k = static_cast<std::size_t>(i) % 3;
        if (i >= 3) {
          const auto seq = static_cast<std::uint64_t>(i - 3);
          if (!rpc_test::response_matches(tickets[k].wait(10s), c, seq, sums[k])) bad.fetch_add(1);
        }
        auto req = rpc_test::make_request(c, static_cast<std::uint64_t>(i), static_cast<std::size_t>(i * 37) % 15000);
        std::memcpy(&sums[k], req.data() + 16, 8);
        tickets[k] = sut.call_async(rpc_test::bytes(req));
        if (!tickets[k].ok()) bad.fetch_add(1);
      }
      for (int i = calls - 3; i < calls; ++i) {
        if (i < 0) continue;
        const std::size_t k = static_cast<std::size_t>(i) % 3;
        if (!rpc_test::response_matches(tickets[k].wait(10s), c, static_cast<std::uint64_t>(i), sums[k])) {
          bad.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(Rpc, ClosedServerFailsPendingCallsWithClosedAndRemovesItsName) {
  zipc::test::TempName name("rpc");
  auto server = std::make_unique<RpcServer>(RpcServer::create(name.str(), {}));
  auto sut = RpcClient::connect(name.str(), 2s);
  std::vector<std::byte> req(4);
  auto t = sut.call_async({req.data(), req.size()});
  server.reset();
  EXPECT_EQ(t.wait(5s).status(), Status::closed);
  EXPECT_EQ(sut.call({req.data(), req.size()}, 1s).status(), Status::closed);
  EXPECT_THROW(zipc::Segment::open(name.str(), zipc::SegmentKind::rpc), zipc::Error);
}

TEST(Rpc, SecondServerUnderALiveNameFailsWithAlreadyExists) {
  zipc::test::TempName name("rpc");
  auto server = RpcServer::create(name.str(), {});
  try {
    auto second = RpcServer::create(name.str(), {});
    FAIL() << "second server created";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::already_exists);
  }
}

TEST(Rpc, ConnectToAMissingServerFailsWithNotFoundAfterItsTimeout) {
  zipc::test::TempName name("rpc");
  try {
    auto c = RpcClient::connect(name.str(), 20ms);
    FAIL() << "connected to nothing";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::not_found);
  }
}

TEST(Rpc, ClientsBeyondMaxClientsAreRefusedWithBusyAndAdmittedAfterOneLeaves) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_clients = 2;
  Serving s(name.str(), opt, echo);
  auto a = std::make_unique<RpcClient>(RpcClient::connect(name.str(), 1s));
  auto b = RpcClient::connect(name.str(), 1s);
  try {
    auto c = RpcClient::connect(name.str(), 20ms);
    FAIL() << "third client admitted";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::busy);
  }
  a.reset();
  auto c = RpcClient::connect(name.str(), 1s);
  EXPECT_TRUE(c.call(std::span<const std::byte>{}, 1s).ok());
}

TEST(Rpc, InvalidOptionsAreRefusedWithInvalidArgument) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.max_clients = 0;
  try {
    auto s = RpcServer::create(name.str(), opt);
    FAIL() << "created";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::invalid_argument);
  }
}

class RpcWaits : public testing::TestWithParam<zipc::WaitStrategy> {};

TEST_P(RpcWaits, EveryWaitStrategyServesSmallAndLargeCalls) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.wait.strategy = GetParam();
  opt.max_request_size = opt.max_response_size = 100000;
  Serving s(name.str(), opt, echo, 2);
  auto sut = RpcClient::connect(name.str(), 2s);
  for (int i = 0; i < rpc_test::scaled(200); ++i) {
    auto req = filled(static_cast<std::size_t>(i * 997) % 100000, static_cast<unsigned>(i));
    auto r = sut.call({req.data(), req.size()}, 10s);
    ASSERT_TRUE(same(r, req)) << i << " " << zipc::to_string(r.status());
  }
}

INSTANTIATE_TEST_SUITE_P(Strategies, RpcWaits,
                         testing::Values(zipc::WaitStrategy::busy_poll, zipc::WaitStrategy::adaptive,
                                         zipc::WaitStrategy::block),
                         [](const testing::TestParamInfo<zipc::WaitStrategy>& info) {
                           return std::string(zipc::to_string(info.param));
                         });

TEST(Rpc, PermissionsOptionSetsTheSegmentMode) {
  zipc::test::TempName name("rpc");
  RpcOptions opt;
  opt.segment.mode = zipc::mode::group;
  auto sut = RpcServer::create(name.str(), opt);
  struct stat st {};
  ASSERT_EQ(::stat(zipc::Segment::path_for(name.str()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

}  // namespace rpc_basic_test
