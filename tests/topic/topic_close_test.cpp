// Topic::close(): later publishes get closed, subscribers drain every
// committed message and then get closed, blocked callers wake, across processes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "topic_support.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using topic_test::Board;
using zipc::Delivery;
using zipc::From;
using zipc::Status;
using zipc::Topic;
using zipc::TopicOptions;

namespace topic_close_test {
namespace {

std::array<std::byte, 8> payload(std::uint64_t n) {
  std::array<std::byte, 8> b{};
  std::memcpy(b.data(), &n, sizeof n);
  return b;
}

TopicOptions options(zipc::Multiplicity publishers = zipc::Multiplicity::single) {
  TopicOptions o;
  o.capacity_bytes = 1 << 16;
  o.max_message_size = 256;
  o.publishers = publishers;
  o.recovery_time = 200ms;
  return o;
}

}  // namespace

TEST(TopicClose, CloseFromAnotherProcessFailsLaterPublishesAndSubscribersDrainThenSeeClosed) {
  zipc::test::TempName name("tclose");
  Topic t = Topic::create(name.str(), options());
  zipc::Subscriber reliable = t.subscribe({From::oldest(), Delivery::reliable});
  zipc::Subscriber lossy = t.subscribe({From::oldest(), Delivery::lossy});
  zipc::Publisher pub = t.publisher();
  for (std::uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(pub.try_publish(payload(i)).ok());
  EXPECT_FALSE(t.closed());
  auto closer = zipc::test::spawn([&]() {
    Topic tt = Topic::open(name.str());
    tt.close();
    return tt.closed() ? 0 : 1;
  });
  ASSERT_EQ(closer.wait().exit_code, 0);
  EXPECT_TRUE(t.closed());
  EXPECT_EQ(pub.try_publish(payload(99)).status, Status::closed);
  EXPECT_EQ(pub.publish(payload(99), 10ms).status, Status::closed);
  EXPECT_EQ(pub.try_reserve(8).status(), Status::closed);
  EXPECT_FALSE(pub.try_reserve(8));
  std::array<std::byte, 256> buf{};
  for (zipc::Subscriber* sub : {&reliable, &lossy}) {
    for (std::uint64_t i = 0; i < 10; ++i) {
      const zipc::ReadResult r = sub->read(buf, 1s);
      ASSERT_EQ(r.status, Status::ok) << "message " << i;
      EXPECT_EQ(r.sequence, i);
    }
    EXPECT_EQ(sub->try_read(buf).status, Status::closed);
    EXPECT_EQ(sub->read(buf, 10ms).status, Status::closed);
  }
  EXPECT_EQ(reliable.try_acquire().status(), Status::closed);
  // A late joiner drains too; the flag is in the segment, seen by a new handle.
  Topic again = Topic::open(name.str());
  EXPECT_TRUE(again.closed());
  zipc::Subscriber late = again.subscribe({From::oldest(), Delivery::reliable});
  std::uint64_t got = 0;
  while (late.try_read(buf).ok()) ++got;
  EXPECT_EQ(got, 10u);
  EXPECT_EQ(late.try_read(buf).status, Status::closed);
}

TEST(TopicClose, CloseWakesABlockedReaderAndABlockedPublisherInOtherProcesses) {
  zipc::test::TempName name("tclose");
  TopicOptions o = options();
  o.capacity_bytes = 4096;
  Topic t = Topic::create(name.str(), o);
  zipc::test::TempName gate("tclose.gate");
  Board board(gate.str());
  zipc::Subscriber stuck = t.subscribe({From::oldest(), Delivery::reliable});  // never reads: the ring fills
  auto reader = zipc::test::spawn([&]() {
    Topic tt = Topic::open(name.str());
    zipc::Subscriber sub = tt.subscribe({From::latest(), Delivery::lossy});
    board.at(0).fetch_add(1);
    std::array<std::byte, 256> buf{};
    for (;;) {
      const zipc::ReadResult r = sub.read(buf, 30s);
      if (r.status == Status::closed) return 0;
      if (r.status != Status::ok && r.status != Status::overrun) return 2;
    }
  });
  auto publisher = zipc::test::spawn([&]() {
    Topic tt = Topic::open(name.str());
    zipc::Publisher pub = tt.publisher();
    std::uint64_t n = 0;
    while (pub.try_publish(payload(n)).ok()) ++n;
    board.at(1).fetch_add(1);
    const zipc::CommitResult r = pub.publish(payload(n), 30s);  // blocked by `stuck` until close()
    return r.status == Status::closed ? 0 : 3;
  });
  ASSERT_TRUE(board.wait_for(0, 1));
  ASSERT_TRUE(board.wait_for(1, 1));
  std::this_thread::sleep_for(50ms);  // let both block (not needed for correctness)
  t.close();
  EXPECT_EQ(reader.wait(20s).exit_code, 0);
  EXPECT_EQ(publisher.wait(20s).exit_code, 0);
}

// Publishers racing with close(): every publish that returned ok is read,
// none after closed, nothing else (the claim-then-check Dekker pair).
TEST(TopicClose, EveryPublishAcknowledgedBeforeCloseIsDeliveredWhenPublishersRaceWithIt) {
  for (const auto mode : {zipc::Multiplicity::single, zipc::Multiplicity::multi}) {
    zipc::test::TempName name("tclose");
    Topic t = Topic::create(name.str(), options(mode));
    zipc::test::TempName gate("tclose.gate");
    Board board(gate.str());
    zipc::Subscriber sub = t.subscribe({From::oldest(), Delivery::reliable});
    const int publishers = mode == zipc::Multiplicity::multi ? 3 : 1;
    std::vector<zipc::test::Child> kids;
    for (int p = 0; p < publishers; ++p) {
      kids.push_back(zipc::test::spawn([&, p]() {
        Topic tt = Topic::open(name.str());
        zipc::Publisher pub = tt.publisher();
        board.at(0).fetch_add(1);
        std::uint64_t ok = 0;
        for (std::uint64_t n = 0;; ++n) {
          const zipc::CommitResult r = pub.publish(payload((static_cast<std::uint64_t>(p) << 32) | n), 10s);
          if (r.status == Status::closed) break;
          if (!r.ok()) return 2;
          ++ok;
        }
        board.at(1 + p).store(ok);
        return 0;
      }));
    }
    ASSERT_TRUE(board.wait_for(0, static_cast<std::uint64_t>(publishers)));
    std::array<std::byte, 256> buf{};
    std::uint64_t got = 0;
    for (; got < 2000; ++got) ASSERT_EQ(sub.read(buf, 10s).status, Status::ok);
    t.close();
    for (;;) {
      const zipc::ReadResult r = sub.read(buf, 10s);
      if (r.status == Status::closed) break;
      ASSERT_EQ(r.status, Status::ok);
      ++got;
    }
    std::uint64_t acknowledged = 0;
    for (int p = 0; p < publishers; ++p) {
      ASSERT_EQ(kids[static_cast<std::size_t>(p)].wait(20s).exit_code, 0);
      acknowledged += board.at(1 + p).load();
    }
    EXPECT_EQ(got, acknowledged) << "publishers " << publishers;
  }
}

}  // namespace topic_close_test
