// The loan vocabulary, the same in every channel: write loans (reserve ->
// data/size -> commit(n) -> CommitResult, abort) and read loans (acquire ->
// data/size/sequence -> release).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Status;

namespace loan_test {
namespace {

std::span<const std::byte> bytes_of(const char* s) {
  return std::as_bytes(std::span(s, std::strlen(s)));
}
std::string string_of(std::span<const std::byte> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

zipc::TopicOptions small_topic() {
  zipc::TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.max_subscribers = 4;
  return o;
}

TEST(Loans, QueueCommitReturnsTheSequenceTheReadLoanCarries) {
  zipc::test::TempName name("api");
  zipc::QueueOptions o;
  o.block_count = 8;
  o.block_size = 64;
  auto q = zipc::Queue::create(name.str(), o);
  for (std::uint64_t expected = 0; expected < 3; ++expected) {
    zipc::QueueWriteLoan w = q.try_reserve();
    ASSERT_TRUE(w);
    EXPECT_EQ(w.size(), 64u);
    EXPECT_EQ(w.data().size(), 64u);
    std::memcpy(w.data().data(), "abc", 3);
    const zipc::CommitResult c = w.commit(3);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.sequence, expected);
    zipc::QueueReadLoan r = q.try_acquire();
    ASSERT_TRUE(r);
    EXPECT_EQ(r.sequence(), expected);
    EXPECT_EQ(string_of(r.data()), "abc");
  }
}

TEST(Loans, QueueCommitOverTheLoanSizeIsTooLargeAndKeepsTheLoan) {
  zipc::test::TempName name("api");
  zipc::QueueOptions o;
  o.block_count = 8;
  o.block_size = 64;
  auto q = zipc::Queue::create(name.str(), o);
  zipc::QueueWriteLoan w = q.try_reserve();
  ASSERT_TRUE(w);
  EXPECT_EQ(w.commit(65).status, Status::too_large);
  ASSERT_TRUE(w);
  EXPECT_TRUE(w.commit(64).ok());
  EXPECT_FALSE(w);
}

TEST(Loans, TopicWriteLoanCommitsAPrefixAndReportsItsSequence) {
  zipc::test::TempName name("api");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  auto pub = topic.publisher();
  ASSERT_TRUE(pub.try_publish(bytes_of("first")).ok());
  zipc::TopicWriteLoan w = pub.try_reserve(100);
  ASSERT_TRUE(w);
  EXPECT_EQ(w.size(), 100u);
  std::memcpy(w.data().data(), "second", 6);
  EXPECT_EQ(w.commit(101).status, Status::too_large);  // over the reservation: the loan stays
  ASSERT_TRUE(w);
  const zipc::CommitResult c = w.commit(6);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.sequence, 1u);
  std::array<std::byte, 256> buf{};
  ASSERT_TRUE(sub.try_read(buf).ok());
  zipc::TopicReadLoan r = sub.try_acquire();
  ASSERT_TRUE(r);
  EXPECT_EQ(r.sequence(), 1u);
  EXPECT_EQ(string_of(r.data()), "second");
  EXPECT_NE(r.publish_ns(), 0u);
}

TEST(Loans, TopicReadLoanHoldsThePublisherBackUntilReleased) {
  zipc::test::TempName name("api");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  auto pub = topic.publisher();
  const std::string fill(200, 'x');
  while (pub.try_publish(bytes_of(fill.c_str())).ok()) {
  }
  zipc::TopicReadLoan r = sub.try_acquire();
  ASSERT_TRUE(r);
  EXPECT_EQ(r.sequence(), 0u);
  EXPECT_EQ(pub.try_publish(bytes_of(fill.c_str())).status, Status::full);  // the loan holds record 0
  r.release();
  EXPECT_FALSE(r);
  EXPECT_TRUE(pub.try_publish(bytes_of(fill.c_str())).ok());
}

TEST(Loans, ReleasingAnOlderTopicReadLoanLeavesTheNewerOneHeld) {
  zipc::test::TempName name("api");
  auto topic = zipc::Topic::create(name.str(), small_topic());
  auto sub = topic.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
  auto pub = topic.publisher();
  const std::string fill(200, 'y');
  ASSERT_TRUE(pub.try_publish(bytes_of("a")).ok());
  ASSERT_TRUE(pub.try_publish(bytes_of("b")).ok());
  zipc::TopicReadLoan first = sub.try_acquire();
  zipc::TopicReadLoan second = sub.try_acquire();  // releases what `first` showed
  ASSERT_TRUE(second);
  EXPECT_EQ(second.sequence(), 1u);
  first.release();  // stale: must not give back `second`'s record
  while (pub.try_publish(bytes_of(fill.c_str())).ok()) {
  }
  EXPECT_EQ(string_of(second.data()), "b");  // still held: not overwritten
}

TEST(Loans, RpcWriteLoanSendsTheCommittedLengthAndAbortGivesTheSlotBack) {
  zipc::test::TempName name("api");
  zipc::RpcOptions opt;
  opt.inflight_per_client = 1;
  auto server = zipc::RpcServer::create(name.str(), opt);
  std::thread t([&] { server.serve([](zipc::RpcRequest& req) { (void)req.reply(req.data()); }, 1); });
  auto client = zipc::RpcClient::connect(name.str(), 2s);
  {
    zipc::RpcWriteLoan l = client.reserve(10);
    ASSERT_TRUE(l);
    EXPECT_EQ(l.size(), 10u);
    l.abort();
    EXPECT_FALSE(l);
  }
  zipc::RpcWriteLoan l = client.reserve(10);  // the only slot is free again
  ASSERT_TRUE(l) << zipc::to_string(l.status());
  EXPECT_EQ(client.reserve(1).status(), Status::full);
  std::memcpy(l.data().data(), "hello", 5);
  EXPECT_EQ(l.commit(11).status, Status::too_large);
  EXPECT_TRUE(l.commit(5).ok());
  zipc::RpcResponse r = client.call(std::move(l), 5s);
  ASSERT_TRUE(r.ok()) << zipc::to_string(r.status());
  EXPECT_EQ(string_of(r.data()), "hello");
  r.release();
  server.stop();
  t.join();
}

}  // namespace

}  // namespace loan_test
