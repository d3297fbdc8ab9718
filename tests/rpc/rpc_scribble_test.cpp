// Hostile memory: whatever a peer writes into the segment, we return errors,
// never read or write outside the mapping, crash or hang (run under ASan).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "layout/rpc_layout.hpp"
#include "rpc/rpc_shared.hpp"
#include "rpc_test_util.hpp"
#include "zipc/process.hpp"
#include "zipc/rpc.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::RpcClient;
using zipc::RpcOptions;
using zipc::RpcRequest;
using zipc::RpcServer;
using zipc::Status;
namespace layout = zipc::layout;

namespace rpc_scribble_test {
namespace {

// A second mapping of the service's segment, as a hostile process would have.
struct Hostile {
  explicit Hostile(const std::string& name) : segment(zipc::Segment::open(name, zipc::SegmentKind::rpc)) {
    EXPECT_TRUE(zipc::detail::rpc_geometry_from_params(segment.params(), segment.payload_size(), &geometry));
    view = zipc::detail::RpcView(segment.payload(), geometry);
  }
  zipc::Segment segment;
  layout::RpcGeometry geometry{};
  zipc::detail::RpcView view;
};

void echo(RpcRequest& req) {
  (void)req.reply(req.data());
}

// Posts the request forged in slot s, wakes the server and waits (up to 5 s)
// for it to answer.
void post_and_await_answer(Hostile& h, layout::RpcSlot* s) {
  s->state.store(layout::kSlotRequest, std::memory_order_release);
  h.view.control()->server_event.notify_all();
  for (int i = 0; i < 5000 && s->state.load(std::memory_order_acquire) != layout::kSlotResponse; ++i) {
    std::this_thread::sleep_for(1ms);
  }
}

}  // namespace

TEST(RpcScribble, ForgedRequestWithAHugeLengthIsAnsweredCorruptAndServingGoesOn) {
  zipc::test::TempName name("rpcscr");
  RpcOptions opt;
  opt.max_clients = 2;
  auto server = RpcServer::create(name.str(), opt);
  std::thread serving([&] { server.serve(echo, 1); });
  Hostile h(name.str());
  // Pose as client 1 with a request whose length and block are out of range.
  h.view.record(1)->owner.store(zipc::pack(zipc::ProcessId::current()));
  layout::RpcSlot* s = h.view.slot(1 * h.geometry.slots_per_client);
  s->call_id.store(77);
  s->req_len.store(std::uint64_t{1} << 40);
  s->req_block.store(0xfffffff0u);
  post_and_await_answer(h, s);
  ASSERT_EQ(s->state.load(), layout::kSlotResponse);
  EXPECT_EQ(s->result.load(), layout::kResultCorrupt);
  EXPECT_EQ(s->reply_call_id.load(), 77u);
  // A block index in range but a length over the block is refused too.
  s->req_len.store(h.geometry.max_request + 1);
  s->req_block.store(0);
  post_and_await_answer(h, s);
  EXPECT_EQ(s->result.load(), layout::kResultCorrupt);
  // A length that fits and a block in range, but not one this client holds
  // (another client's data, or a free block): refused, never served.
  h.view.block_owner(0)->store(0 + 1);  // held by client 0, not by us (client 1)
  s->req_len.store(h.geometry.req_inline + 1);
  s->req_block.store(0);
  post_and_await_answer(h, s);
  EXPECT_EQ(s->result.load(), layout::kResultCorrupt);
  h.view.block_owner(0)->store(0);
  h.view.record(1)->owner.store(0);
  auto sut = RpcClient::connect(name.str(), 1s);
  const char hi[] = "hi";
  EXPECT_TRUE(sut.call(std::as_bytes(std::span(hi)), 5s).ok());
  server.stop();
  serving.join();
}

TEST(RpcScribble, ForgedResponseFieldsReachTheCallerAsCorrupt) {
  zipc::test::TempName name("rpcscr");
  auto server = RpcServer::create(name.str(), {});
  auto sut = RpcClient::connect(name.str(), 1s);
  Hostile h(name.str());
  const char hi[] = "hi";
  struct Forgery {
    std::uint64_t len;
    std::uint32_t block;
    bool right_id;
  };
  for (Forgery f : {Forgery{std::uint64_t{1} << 50, 3, true}, Forgery{100000, 0xfffffffeu, true},
                    Forgery{5000, 0xfffffffeu, true}, Forgery{10, layout::kNoBlock, false}}) {
    auto t = sut.call_async(std::as_bytes(std::span(hi)));
    ASSERT_TRUE(t.ok());
    auto req = server.next(5s);
    ASSERT_TRUE(req.ok());
    layout::RpcSlot* s = h.view.slot(req.client() * h.geometry.slots_per_client);
    for (std::uint64_t k = 0; k < h.geometry.slots_per_client; ++k) {
      auto* cand = h.view.slot(req.client() * h.geometry.slots_per_client + k);
      if (cand->state.load() == layout::kSlotClaimed) s = cand;
    }
    s->resp_len.store(f.len);
    s->resp_block.store(f.block);
    s->reply_call_id.store(f.right_id ? s->call_id.load() : 12345);
    s->result.store(layout::kResultOk);
    s->state.store(layout::kSlotResponse, std::memory_order_release);
    EXPECT_EQ(t.wait(5s).status(), Status::corrupt) << f.len;
    // The real reply lands in a slot the client already gave up: harmless.
    (void)req.reply(std::as_bytes(std::span(hi)));
  }
}

TEST(RpcScribble, RandomScribblingNeverCrashesOrHangsServerOrClients) {
  zipc::test::TempName name("rpcscr");
  RpcOptions opt;
  opt.max_clients = 4;
  opt.inflight_per_client = 4;
  opt.max_request_size = opt.max_response_size = 32 << 10;
  opt.inline_size = 256;
  opt.large_blocks = 6;
  opt.recovery_time = 10ms;
  auto server = zipc::test::spawn([&] { return rpc_test::run_server(name.str(), opt, 2, echo); });
  const int calls = rpc_test::scaled(3000);
  std::vector<zipc::test::Child> clients;
  for (std::uint32_t c = 0; c < 3; ++c) {
    clients.push_back(zipc::test::spawn([&, c] {
      try {
        auto sut = RpcClient::connect(name.str(), 10s);
        int ok = 0;
        for (int i = 0; i < calls; ++i) {
          std::vector<std::byte> req((static_cast<std::size_t>(i) * 977 + c) % (20 << 10), std::byte{1});
          if (i % 3 == 0) {
            auto t1 = sut.call_async({req.data(), req.size()});
            auto t2 = sut.call_async({req.data(), req.size() / 2});
            ok += t2.wait(50ms).ok() ? 1 : 0;
          } else {
            auto r = sut.call({req.data(), req.size()}, 50ms);
            if (r.ok()) {
              // Read every byte we were given: ASan checks each one is in bounds.
              std::uint64_t sum = 0;
              for (std::byte b : r.data()) sum += static_cast<std::uint8_t>(b);
              ok += sum == 1 ? 2 : 1;  // uses every byte read
            }
          }
        }
        zipc::test::report("client ok calls: " + std::to_string(ok));
      } catch (const zipc::Error& e) {
        zipc::test::report(std::string("client stopped cleanly: ") + e.what());
      }
      return 0;
    }));
  }
  // Scribble while they run: random words at random offsets of the payload,
  // biased towards the control, records and slots.
  {
    std::this_thread::sleep_for(20ms);
    std::unique_ptr<Hostile> h;
    for (int i = 0; i < 1000 && !h; ++i) {
      try {
        h = std::make_unique<Hostile>(name.str());
      } catch (const zipc::Error&) {
        std::this_thread::sleep_for(5ms);
      }
    }
    ASSERT_TRUE(h);
    std::mt19937_64 rng(zipc::test::test_seed());
    const std::uint64_t meta = h->geometry.blocks_offset;
    const std::uint64_t nasty[] = {0,
                                   1,
                                   2,
                                   3,
                                   4,
                                   0xffffffffull,
                                   0xffffffffffffffffull,
                                   std::uint64_t{1} << 40,
                                   h->geometry.max_request,
                                   h->geometry.max_request + 1,
                                   h->geometry.block_count,
                                   h->geometry.block_count - 1};
    const int rounds = rpc_test::scaled(4000);
    for (int i = 0; i < rounds; ++i) {
      const std::uint64_t off = (rng() % 8 == 0 ? rng() % (h->segment.payload_size() - 8) : rng() % meta) & ~7ull;
      const std::uint64_t v = rng() % 2 == 0 ? nasty[rng() % std::size(nasty)] : rng();
      std::memcpy(h->segment.payload() + off, &v, sizeof v);
      if (i % 16 == 0) std::this_thread::sleep_for(100us);
    }
  }
  // A scribbled channel may make every later call wait out its 50 ms: a
  // client's worst case is then about calls x 50 ms (150 s at the default
  // scale), which a loaded machine stretches. A hang still ends the wait.
  const auto client_bound = std::chrono::milliseconds(static_cast<std::int64_t>(calls) * 80) + 60s;
  for (auto& c : clients) {
    auto r = c.wait(client_bound);
    EXPECT_TRUE(r.exited && r.exit_code == 0) << "signal " << r.signal << " timed out " << r.timed_out << "\n"
                                              << r.output;
  }
  server.kill(SIGTERM);
  auto s = server.wait(60s);
  EXPECT_TRUE(s.exited && s.exit_code == 0) << "signal " << s.signal << " timed out " << s.timed_out << "\n"
                                            << s.output;
}

}  // namespace rpc_scribble_test
