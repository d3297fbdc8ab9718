// The counters zipc top turns into rates: a queue's payload bytes (both
// rings, kept when a handle detaches) and an Rpc's calls, errors, request
// bytes and calls in flight, from each client's own record.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <zipc/zipc.hpp>

#include "zipc_test.hpp"

namespace rate_counters_test {
namespace {

using namespace std::chrono_literals;
using zipc::test::TempName;

std::span<const std::byte> bytes_of(const char* s) {
  return {reinterpret_cast<const std::byte*>(s), std::strlen(s)};
}

std::uint64_t counter(const zipc::ChannelReport& r, std::string_view key) {
  const std::uint64_t* v = zipc::find_field(r.counters, key);
  EXPECT_NE(v, nullptr) << key;
  return v != nullptr ? *v : ~0ull;
}

void expect_queue_bytes(zipc::Multiplicity producers) {
  TempName name("rate-queue");
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  o.producers = producers;
  {
    zipc::Queue producer = zipc::Queue::create(name.str(), o, zipc::Role::producer);
    for (int i = 0; i < 5; ++i) ASSERT_EQ(producer.try_send(bytes_of("abc")), zipc::Status::ok);  // 15 bytes
    const zipc::ChannelReport r = zipc::inspect_channel(name.str());
    ASSERT_TRUE(r.readable) << r.problem;
    EXPECT_TRUE(r.bytes_known);
    EXPECT_EQ(r.messages, 5u);
    EXPECT_EQ(r.bytes, 15u);
    EXPECT_EQ(counter(r, "sent_bytes"), 15u);
    zipc::Queue more = zipc::Queue::open(
        name.str(), producers == zipc::Multiplicity::multi ? zipc::Role::producer : zipc::Role::consumer);
    if (producers == zipc::Multiplicity::multi) {
      ASSERT_EQ(more.try_send(bytes_of("0123456789")), zipc::Status::ok);
      EXPECT_EQ(zipc::inspect_channel(name.str()).bytes, 25u);
    }
  }
  // Every handle detached: their bytes are kept in the segment.
  zipc::Queue again = zipc::Queue::open(name.str(), zipc::Role::consumer);
  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  EXPECT_EQ(r.bytes, producers == zipc::Multiplicity::multi ? 25u : 15u);
}

TEST(RateCounters, ASingleProducerQueueCountsThePayloadBytesItSent) {
  expect_queue_bytes(zipc::Multiplicity::single);
}

TEST(RateCounters, AManyProducerQueueCountsEachProducersBytesAndKeepsThemAfterDetach) {
  expect_queue_bytes(zipc::Multiplicity::multi);
}

TEST(RateCounters, AnRpcCountsCallsErrorsRequestBytesAndCallsInFlight) {
  TempName name("rate-rpc");
  zipc::RpcOptions o;
  o.max_response_size = 8;
  zipc::RpcServer server = zipc::RpcServer::create(name.str(), o);
  std::thread t([&] { server.serve([](zipc::RpcRequest& req) { (void)req.reply(req.data()); }, 1); });
  {
    zipc::RpcClient client = zipc::RpcClient::connect(name.str(), 1s);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.call(bytes_of("hi"), 5s).ok());
    // An echo over max_response (8 bytes) fails the call: an error.
    EXPECT_EQ(client.call(bytes_of("longer than eight"), 5s).status(), zipc::Status::too_large);
    const zipc::ChannelReport r = zipc::inspect_channel(name.str());
    ASSERT_TRUE(r.readable) << r.problem;
    EXPECT_EQ(r.messages, 4u);
    EXPECT_EQ(r.errors, 1u);
    EXPECT_EQ(r.bytes, 3u * 2 + 17);
    EXPECT_EQ(counter(r, "calls"), 4u);
    EXPECT_EQ(counter(r, "errors"), 1u);
    EXPECT_EQ(r.in_flight, 0u);
  }
  // The client left: its record is free, its counts stay in the sum.
  zipc::RpcClient next = zipc::RpcClient::connect(name.str(), 1s);
  ASSERT_TRUE(next.call(bytes_of("x"), 5s).ok());
  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  EXPECT_EQ(r.messages, 5u);
  EXPECT_EQ(r.errors, 1u);
  server.stop();
  t.join();
}

TEST(RateCounters, AnRpcCallNotYetAnsweredIsInFlight) {
  TempName name("rate-inflight");
  zipc::RpcServer server = zipc::RpcServer::create(name.str());
  zipc::RpcClient client = zipc::RpcClient::connect(name.str(), 1s);
  zipc::RpcTicket a = client.call_async(bytes_of("a"));
  zipc::RpcTicket b = client.call_async(bytes_of("b"));
  ASSERT_EQ(a.status(), zipc::Status::ok);
  ASSERT_EQ(b.status(), zipc::Status::ok);
  EXPECT_EQ(zipc::inspect_channel(name.str()).in_flight, 2u);
  for (int i = 0; i < 2; ++i) {
    zipc::RpcRequest req = server.next(5s);
    ASSERT_TRUE(req.ok());
    ASSERT_EQ(req.reply(req.data()), zipc::Status::ok);
  }
  EXPECT_TRUE(a.wait(5s).ok());
  EXPECT_TRUE(b.wait(5s).ok());
  EXPECT_EQ(zipc::inspect_channel(name.str()).in_flight, 0u);
  EXPECT_EQ(zipc::inspect_channel(name.str()).messages, 2u);
}

}  // namespace

}  // namespace rate_counters_test
