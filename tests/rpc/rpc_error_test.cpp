// The Rpc error path: a handler fails with a code and a message, the caller
// gets Status::remote_error with both; pipelined calls keep their own
// outcomes; a hostile server's error fields are bounds-checked.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "layout/rpc_layout.hpp"
#include "rpc/rpc_shared.hpp"
#include "zipc/rpc.hpp"
#include "zipc/typed.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::RpcClient;
using zipc::RpcOptions;
using zipc::RpcRequest;
using zipc::RpcServer;
using zipc::Status;
namespace layout = zipc::layout;

namespace {

class Serving {
 public:
  Serving(const std::string& name, const RpcOptions& opt, const RpcServer::Handler& h, unsigned threads = 1)
      : server_(RpcServer::create(name, opt)), thread_([this, h, threads] { server_.serve(h, threads); }) {}
  ~Serving() {
    server_.stop();
    thread_.join();
  }

 private:
  RpcServer server_;
  std::thread thread_;
};

std::span<const std::byte> bytes(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string text(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// "ok:<request>" for a request starting with 'o', else fails with code 40 + the request's size.
void ok_or_fail(RpcRequest& req) {
  const std::string in = text(req.data());
  if (!in.empty() && in[0] == 'o') {
    const std::string out = "ok:" + in;
    (void)req.reply(bytes(out));
  } else {
    (void)req.fail(40 + static_cast<std::uint32_t>(in.size()), "refused " + in, "Refusal");
  }
}

}  // namespace

TEST(RpcError, AHandlerThatFailsGivesTheCallerItsCodeTypeAndMessage) {
  zipc::test::TempName name("rpcerr");
  Serving s(name.str(), {}, ok_or_fail);
  auto client = RpcClient::connect(name.str(), 2s);
  auto sut = client.call(bytes("xyz"), 5s);
  EXPECT_EQ(sut.status(), Status::remote_error);
  EXPECT_FALSE(sut.ok());
  EXPECT_EQ(sut.error_code(), 43u);
  EXPECT_EQ(sut.error_type(), "Refusal");
  EXPECT_EQ(sut.error_message(), "refused xyz");
  EXPECT_TRUE(sut.data().empty());
  EXPECT_EQ(sut.size(), 0u);
  EXPECT_STREQ(zipc::to_string(sut.status()), "remote_error");
}

TEST(RpcError, AResponseThatSucceedsHasNoErrorCodeOrText) {
  zipc::test::TempName name("rpcerr");
  Serving s(name.str(), {}, ok_or_fail);
  auto client = RpcClient::connect(name.str(), 2s);
  auto sut = client.call(bytes("ok"), 5s);
  ASSERT_TRUE(sut.ok());
  EXPECT_EQ(text(sut.data()), "ok:ok");
  EXPECT_EQ(sut.error_code(), 0u);
  EXPECT_TRUE(sut.error_type().empty());
  EXPECT_TRUE(sut.error_message().empty());
}

TEST(RpcError, AnRpcErrorThrownUnderServeBecomesTheCallersRemoteError) {
  zipc::test::TempName name("rpcerr");
  Serving s(name.str(), {}, [](RpcRequest&) { throw zipc::RpcError(404, "no such key"); });
  auto client = RpcClient::connect(name.str(), 2s);
  auto sut = client.call(bytes("k"), 5s);
  EXPECT_EQ(sut.status(), Status::remote_error);
  EXPECT_EQ(sut.error_code(), 404u);
  EXPECT_EQ(sut.error_type(), "");
  EXPECT_EQ(sut.error_message(), "no such key");
}

TEST(RpcError, AnyOtherExceptionUnderServeIsSentWithItsTypeNameAndHandlerFailedCode) {
  zipc::test::TempName name("rpcerr");
  Serving s(name.str(), {}, [](RpcRequest&) { throw std::out_of_range("index 7 past 3"); });
  auto client = RpcClient::connect(name.str(), 2s);
  auto sut = client.call(bytes("k"), 5s);
  EXPECT_EQ(sut.status(), Status::remote_error);
  EXPECT_EQ(sut.error_code(), zipc::kRpcHandlerFailed);
  EXPECT_EQ(sut.error_type(), "std::out_of_range");
  EXPECT_EQ(sut.error_message(), "index 7 past 3");
}

TEST(RpcError, AHandlerThatRepliedAndThenThrowsKeepsItsReply) {
  zipc::test::TempName name("rpcerr");
  Serving s(name.str(), {}, [](RpcRequest& req) {
    (void)req.reply(bytes("done"));
    throw std::runtime_error("late");
  });
  auto client = RpcClient::connect(name.str(), 2s);
  auto sut = client.call(bytes("k"), 5s);
  ASSERT_TRUE(sut.ok()) << zipc::to_string(sut.status());
  EXPECT_EQ(text(sut.data()), "done");
}

TEST(RpcError, FailAfterAReplyReturnsClosedAndChangesNothing) {
  zipc::test::TempName name("rpcerr");
  Status second = Status::ok;  // written by the handler, read once its thread is joined
  {
    Serving s(name.str(), {}, [&second](RpcRequest& req) {
      (void)req.reply(bytes("first"));
      second = req.fail(9, "too late");
    });
    auto client = RpcClient::connect(name.str(), 2s);
    auto sut = client.call(bytes("k"), 5s);
    ASSERT_TRUE(sut.ok());
    EXPECT_EQ(text(sut.data()), "first");
  }
  EXPECT_EQ(second, Status::closed);
}

TEST(RpcError, FailDropsAnOpenReplyLoanAndItsBlock) {
  zipc::test::TempName name("rpcerr");
  RpcOptions opt;
  opt.large_blocks = 1;  // one block: leaked by the dropped loan, the next large call would fail
  Serving s(name.str(), opt, [](RpcRequest& req) {
    if (req.size() == 1) {
      Status st = Status::ok;
      (void)req.reserve_reply(10000, &st);
      (void)req.fail(5, "changed my mind");
    } else {
      (void)req.reply(req.data());
    }
  });
  auto client = RpcClient::connect(name.str(), 2s);
  EXPECT_EQ(client.call(bytes("k"), 5s).error_code(), 5u);
  const std::string big(10000, 'b');
  auto sut = client.call(bytes(big), 5s);
  ASSERT_TRUE(sut.ok()) << zipc::to_string(sut.status());
  EXPECT_EQ(sut.size(), big.size());
}

TEST(RpcError, AMessageLongerThanTheInlineAreaTravelsWholeInABlock) {
  zipc::test::TempName name("rpcerr");
  const std::string message(20000, 'm');
  Serving s(name.str(), {}, [&message](RpcRequest& req) { (void)req.fail(3, message, "Big"); });
  auto client = RpcClient::connect(name.str(), 2s);
  auto sut = client.call(bytes("k"), 5s);
  EXPECT_EQ(sut.status(), Status::remote_error);
  EXPECT_EQ(sut.error_type(), "Big");
  EXPECT_EQ(sut.error_message(), message);
}

TEST(RpcError, TheTextIsCutToTheMaximumResponseSize) {
  zipc::test::TempName name("rpcerr");
  RpcOptions opt;
  opt.max_response_size = 16;
  Serving s(name.str(), opt, [](RpcRequest& req) { (void)req.fail(3, "0123456789abcdefghij", "Type"); });
  auto client = RpcClient::connect(name.str(), 2s);
  auto sut = client.call(bytes("k"), 5s);
  EXPECT_EQ(sut.status(), Status::remote_error);
  EXPECT_EQ(sut.error_type(), "Type");
  EXPECT_EQ(sut.error_message(), "0123456789ab");
}

TEST(RpcError, ATypeNameIsCutToItsBound) {
  zipc::test::TempName name("rpcerr");
  const std::string type(1000, 't');
  Serving s(name.str(), {}, [&type](RpcRequest& req) { (void)req.fail(3, "m", type); });
  auto client = RpcClient::connect(name.str(), 2s);
  auto sut = client.call(bytes("k"), 5s);
  EXPECT_EQ(sut.error_type().size(), zipc::kRpcMaxErrorType);
  EXPECT_EQ(sut.error_message(), "m");
}

TEST(RpcError, PipelinedCallsKeepTheirOrderAndEachItsOwnOutcome) {
  zipc::test::TempName name("rpcerr");
  Serving s(name.str(), {}, ok_or_fail, 4);
  auto client = RpcClient::connect(name.str(), 2s);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> sent;
    std::vector<zipc::RpcTicket> tickets;
    for (std::uint32_t i = 0; i < client.inflight_limit(); ++i) {
      sent.push_back(i % 3 == 0 ? std::string(i + 1, 'x') : "o" + std::to_string(i));
      tickets.push_back(client.call_async(bytes(sent.back())));
      ASSERT_TRUE(tickets.back().ok());
    }
    for (std::size_t i = 0; i < tickets.size(); ++i) {
      auto sut = tickets[i].wait(5s);
      if (sent[i][0] == 'o') {
        ASSERT_TRUE(sut.ok()) << i << " " << zipc::to_string(sut.status());
        EXPECT_EQ(text(sut.data()), "ok:" + sent[i]);
      } else {
        ASSERT_EQ(sut.status(), Status::remote_error) << i;
        EXPECT_EQ(sut.error_code(), 40 + sent[i].size());
        EXPECT_EQ(sut.error_message(), "refused " + sent[i]);
      }
    }
  }
}

TEST(RpcError, AnErrorHeldByTheCallerKeepsItsSlotUntilReleased) {
  zipc::test::TempName name("rpcerr");
  RpcOptions opt;
  opt.inflight_per_client = 1;
  Serving s(name.str(), opt, ok_or_fail);
  auto client = RpcClient::connect(name.str(), 2s);
  auto held = client.call(bytes("x"), 5s);
  ASSERT_EQ(held.status(), Status::remote_error);
  EXPECT_EQ(client.call_async(bytes("o")).status(), Status::full);
  held.release();
  EXPECT_TRUE(client.call(bytes("o"), 5s).ok());
}

TEST(RpcError, APulledRequestCanFailToo) {
  zipc::test::TempName name("rpcerr");
  auto server = RpcServer::create(name.str());
  auto client = RpcClient::connect(name.str(), 2s);
  auto ticket = client.call_async(bytes("k"));
  auto req = server.next(5s);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req.fail(77, "pulled and failed"), Status::ok);
  auto sut = ticket.wait(5s);
  EXPECT_EQ(sut.status(), Status::remote_error);
  EXPECT_EQ(sut.error_code(), 77u);
  EXPECT_EQ(sut.error_message(), "pulled and failed");
}

namespace rpc_error_test {
struct Key {
  std::uint32_t id;
};
struct Value {
  std::uint64_t v;
};
}  // namespace rpc_error_test
using rpc_error_test::Key;
using rpc_error_test::Value;

TEST(RpcError, ATypedHandlerThatThrowsGivesTheTypedCallerARemoteError) {
  zipc::test::TempName name("rpcerr");
  auto server = zipc::TypedRpcServer<Key, Value>::create(name.str());
  std::thread serving([&] {
    server.serve([](zipc::TypedRpcRequest<Key, Value>& req) {
      if (req.get()->id == 0) throw zipc::RpcError(11, "id 0 is reserved");
      if (req.get()->id == 1) {
        (void)req.fail(12, "id 1 is retired");
        return;
      }
      (void)req.reply(Value{req.get()->id * 10u});
    });
  });
  auto client = zipc::TypedRpcClient<Key, Value>::connect(name.str(), 2s);
  auto a = client.call(Key{0}, 5s);
  EXPECT_EQ(a.status(), Status::remote_error);
  EXPECT_EQ(a.raw().error_code(), 11u);
  EXPECT_EQ(a.raw().error_message(), "id 0 is reserved");
  auto b = client.call(Key{1}, 5s);
  EXPECT_EQ(b.raw().error_code(), 12u);
  auto c = client.call(Key{2}, 5s);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->v, 20u);
  server.stop();
  serving.join();
}

// A hostile server: the error fields it writes are checked against the
// response's length and the geometry; the call fails corrupt, never reads past.
TEST(RpcError, GarbageErrorLengthsFromAHostileServerAreCorruptNotReadPast) {
  zipc::test::TempName name("rpcerr");
  auto server = RpcServer::create(name.str());  // not serving: the "server" below is hostile
  zipc::Segment seg = zipc::Segment::open(name.str(), zipc::SegmentKind::rpc);
  layout::RpcGeometry g{};
  ASSERT_TRUE(zipc::detail::rpc_geometry_from_params(seg.params(), seg.payload_size(), &g));
  zipc::detail::RpcView view(seg.payload(), g);
  auto client = RpcClient::connect(name.str(), 2s);
  struct Case {
    std::uint64_t len;
    std::uint32_t type_len;
    std::uint32_t block;
  };
  const Case cases[] = {
      {10, 11, layout::kNoBlock},                 // a type longer than the whole text
      {10, 0xffffffffu, layout::kNoBlock},        // a huge type length
      {g.max_response + 1, 0, layout::kNoBlock},  // a text over max_response
      {~std::uint64_t{0}, 0, layout::kNoBlock},   // a length that would wrap
      {g.resp_inline + 1, 0, 0xfffffff0u},        // over inline, a block out of range
  };
  for (const Case& k : cases) {
    auto ticket = client.call_async(bytes("k"));
    ASSERT_TRUE(ticket.ok());
    layout::RpcSlot* s = nullptr;
    for (std::uint64_t i = 0; i < g.slots_per_client && s == nullptr; ++i) {
      if (view.slot(i)->state.load() == layout::kSlotRequest) s = view.slot(i);
    }
    ASSERT_NE(s, nullptr);
    s->result.store(layout::kResultError);
    s->resp_len.store(k.len);
    s->resp_block.store(k.block);
    s->error_code.store(1);
    s->error_type_len.store(k.type_len);
    s->reply_call_id.store(s->call_id.load());
    s->state.store(layout::kSlotResponse, std::memory_order_release);
    view.record(0)->response_event.notify_all();
    auto sut = ticket.wait(5s);
    EXPECT_EQ(sut.status(), Status::corrupt) << "len " << k.len << " type_len " << k.type_len;
    EXPECT_TRUE(sut.error_message().empty());
  }
  // A well-formed error through the same hostile path is read.
  auto ticket = client.call_async(bytes("k"));
  std::uint64_t idx = g.slots_per_client;
  for (std::uint64_t i = 0; i < g.slots_per_client; ++i) {
    if (view.slot(i)->state.load() == layout::kSlotRequest) idx = i;
  }
  ASSERT_LT(idx, g.slots_per_client);
  layout::RpcSlot* s = view.slot(idx);
  std::memcpy(view.response_inline(idx), "TyMsg", 5);
  s->result.store(layout::kResultError);
  s->resp_len.store(5);
  s->resp_block.store(layout::kNoBlock);
  s->error_code.store(8);
  s->error_type_len.store(2);
  s->reply_call_id.store(s->call_id.load());
  s->state.store(layout::kSlotResponse, std::memory_order_release);
  view.record(0)->response_event.notify_all();
  auto sut = ticket.wait(5s);
  EXPECT_EQ(sut.status(), Status::remote_error);
  EXPECT_EQ(sut.error_type(), "Ty");
  EXPECT_EQ(sut.error_message(), "Msg");
}
