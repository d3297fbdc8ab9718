#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>
#include <thread>

#include "typed_test_types.hpp"
#include "zipc/typed.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using typed_test::Order;
using typed_test::Quote;
using zipc::Errc;
using zipc::Status;

namespace typed_topic_rpc_test {
namespace {

TEST(TypedTopic, EverySubscriberSeesTheClaimedMessageInPlace) {
  zipc::test::TempName name("tt-basic");
  auto topic = zipc::TypedTopic<Quote>::create(name.str());
  auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  auto pub = topic.publisher();
  {
    auto loan = pub.try_reserve();
    ASSERT_TRUE(loan) << zipc::to_string(loan.status());
    loan->bid = 1.25;
    loan->ask = 1.5;
    ASSERT_TRUE(loan.commit().ok());
  }
  ASSERT_TRUE(pub.try_publish(Quote{2.0, 2.5}).ok());
  auto v = sub.acquire(100ms);
  ASSERT_TRUE(v) << zipc::to_string(v.status());
  EXPECT_EQ(v->bid, 1.25);
  EXPECT_EQ(v.raw().sequence(), 0u);
  Quote q{};
  ASSERT_TRUE(sub.read(q, 100ms).ok());
  EXPECT_EQ(q.ask, 2.5);
}

TEST(TypedTopic, SlicesOfDifferentLengthsArriveWhole) {
  zipc::test::TempName name("tt-slice");
  auto topic = zipc::TypedTopic<Quote>::create(name.str());
  auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  auto pub = topic.publisher();
  for (std::size_t n = 1; n <= 4; ++n) {
    auto loan = pub.reserve_slice(n, 100ms);
    ASSERT_TRUE(loan);
    for (std::size_t i = 0; i < n; ++i) loan[i].bid = static_cast<double>(n * 10 + i);
    ASSERT_TRUE(loan.commit().ok());
  }
  for (std::size_t n = 1; n <= 4; ++n) {
    auto v = sub.acquire_slice(100ms);
    ASSERT_TRUE(v);
    ASSERT_EQ(v.count(), n);
    EXPECT_EQ(v[n - 1].bid, static_cast<double>(n * 10 + n - 1));
  }
}

TEST(TypedTopic, OpeningWithAnotherTypeFailsNamingBoth) {
  zipc::test::TempName name("tt-mismatch");
  auto topic = zipc::TypedTopic<Quote>::create(name.str());
  try {
    (void)zipc::TypedTopic<Order>::open(name.str());
    ADD_FAILURE() << "opened a Quote topic as Order";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::type_mismatch);
    EXPECT_NE(std::string(e.what()).find("Quote' (16 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Order' (24 bytes"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)zipc::Topic::open(name.str()));  // the byte API still opens it
}

TEST(TypedRpc, AServerInAnotherProcessAnswersTypedRequests) {
  zipc::test::TempName name("tr-basic");
  auto server = zipc::TypedRpcServer<Order, Quote>::create(name.str());
  // Forked before the serving thread starts (zipc::test::spawn says why);
  // its calls wait for the server to answer.
  auto client = zipc::test::spawn([&] {
    auto c = zipc::TypedRpcClient<Order, Quote>::connect(name.str(), 1s);
    auto resp = c.call(Order{1, 100.0, 2}, 1s);
    if (!resp || resp->bid != 99.0 || resp->ask != 101.0) return 1;
    auto loan = c.reserve(3);
    if (!loan) return 2;
    for (std::size_t i = 0; i < 3; ++i) loan.span()[i].id = 10 + i;
    auto many = c.call(std::move(loan), 1s, /*single=*/false);
    if (!many || many.count() != 3 || many[2].bid != 12.0) return 3;
    return 0;
  });
  std::thread t([&] {
    server.serve([](zipc::TypedRpcRequest<Order, Quote>& r) {
      if (const Order* o = r.get()) {
        (void)r.reply(Quote{o->price - 1, o->price + 1});
      } else {  // a slice: answer one Quote per Order, in place
        Status s = Status::ok;
        std::span<Quote> out = r.reserve_reply(r.count(), &s);
        for (std::size_t i = 0; i < out.size(); ++i) out[i].bid = static_cast<double>(r.span()[i].id);
        (void)r.commit(out.size());
      }
    });
  });
  EXPECT_EQ(client.wait().exit_code, 0);
  server.stop();
  t.join();
}

TEST(TypedRpc, AClientOfOtherTypesIsRefusedAtConnect) {
  zipc::test::TempName name("tr-mismatch");
  auto server = zipc::TypedRpcServer<Order, Quote>::create(name.str());
  try {
    (void)zipc::TypedRpcClient<Order, Order>::connect(name.str(), 1s);
    ADD_FAILURE() << "connected with the wrong response type";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::type_mismatch);
    EXPECT_NE(std::string(e.what()).find("typed_test::Order (24 B) -> typed_test::Quote (16 B)"), std::string::npos)
        << e.what();
  }
}

}  // namespace

namespace {

TEST(TypedRpc, AReconnectToAServerOfOtherTypesIsReportedCorrupt) {
  zipc::test::TempName name("tr-reconnect");
  std::optional<zipc::TypedRpcServer<Order, Quote>> first(zipc::TypedRpcServer<Order, Quote>::create(name.str()));
  std::thread t1([&] { first->serve([](zipc::TypedRpcRequest<Order, Quote>& r) { (void)r.reply(Quote{1, 2}); }); });
  auto client = zipc::TypedRpcClient<Order, Quote>::connect(name.str(), 1s);
  ASSERT_TRUE(client.call(Order{1, 2, 3}, 1s));
  first->stop();
  t1.join();
  first.reset();  // removes the name

  auto second = zipc::TypedRpcServer<Quote, Quote>::create(name.str());
  std::thread t2([&] { second.serve([](zipc::TypedRpcRequest<Quote, Quote>& r) { (void)r.reply(Quote{3, 4}); }); });
  auto r = client.call(Order{1, 2, 3}, 2s);
  EXPECT_EQ(r.status(), Status::corrupt);
  EXPECT_EQ(r.get(), nullptr);
  second.stop();
  t2.join();
}

}  // namespace

}  // namespace typed_topic_rpc_test
