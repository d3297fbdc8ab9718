// The adaptive wait's learning from slept waits (docs/design/overview.md, "Waiting")
// is Event::wait_until's (the rpc's waits) and not the channels': a queue
// consumer or topic subscriber that slept until the next message must not
// teach the thread's next waits to spin longer. A paced stream (messages
// 200 us apart) would otherwise teach every reader to spin through the gaps
// between messages; on two vCPUs that took the CPU from the threads the
// readers wait for, and cost the NATS bridge's pipeline 10% of its 4 KiB
// throughput and ~20 us of added p50 (docs/design/bench.md, "Waits that learn from
// sleeping: the rpc's, not the channels'").
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <thread>

#include "spin_learning.hpp"
#include "zipc/event.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::test::a_cpu_is_to_spare;
using zipc::test::learning_options;
using zipc::test::starts_spinning;

namespace channel_wait_learning_test {
namespace {

// A queue's first wait slice ends at its stall filter's grace (1 ms,
// recovery_wait.hpp), and each slice spins anew: spin and answer stay well
// inside it, as a 50 us spin and a message 200-400 us later do.
constexpr std::uint32_t kSpinNs = 100'000;

// Spins kSpinNs, then sleeps: no yields, so the wait that the answer ends
// has slept (a wait that came true after four yields is another rule's,
// event_test.cpp; under load the answer came while yielding and that rule
// stretched the budget).
zipc::WaitOptions paced_reader_options() {
  zipc::WaitOptions o = learning_options(kSpinNs);
  o.yields = 0;
  return o;
}

// Runs `wait_once` (a blocking receive that the peer answers ~400 us later,
// after the spin, so the wait sleeps) in a fresh thread (the learning is per
// thread) and checks the budget of that thread's next wait: unchanged, in
// every round in which a CPU was to spare when the wait ended (five of them,
// out of at most 60 rounds).
void expect_no_learning(const std::function<bool()>& wait_once, const std::function<void()>& answer) {
  int informative = 0;
  for (int round = 0; round < 60 && informative < 5; ++round) {
    std::uint64_t budget = 0;
    bool spare = false;
    std::thread peer([&] {
      std::this_thread::sleep_for(400us);
      answer();
    });
    std::thread waiter([&] {
      EXPECT_TRUE(wait_once());
      spare = a_cpu_is_to_spare();
      zipc::detail::SpinState next;
      (void)starts_spinning(paced_reader_options(), &next);
      budget = next.budget_ns;
    });
    waiter.join();
    peer.join();
    if (!spare) {
      std::this_thread::sleep_for(20ms);
      continue;
    }
    ++informative;
    EXPECT_EQ(budget, kSpinNs) << "round " << round;
  }
  if (informative == 0) GTEST_SKIP() << "no CPU was to spare as any wait ended (a loaded machine): nothing to learn";
}

}  // namespace

TEST(ChannelWaitLearning, AQueueConsumerThatSleptUntilTheNextMessageDoesNotLearnToSpinLonger) {
  zipc::test::TempName name("waitlearn-q");
  zipc::QueueOptions qo;
  qo.block_size = 64;
  qo.block_count = 8;
  qo.producers = zipc::Multiplicity::single;
  qo.consumers = zipc::Multiplicity::single;
  auto producer = zipc::Queue::create(name.str(), qo, zipc::Role::producer);
  auto consumer = zipc::Queue::open(name.str(), zipc::Role::consumer, paced_reader_options());
  const std::array<std::byte, 8> msg{};
  expect_no_learning(
      [&] {
        std::array<std::byte, 64> buf{};
        return consumer.recv(buf, 10s).status == zipc::Status::ok;
      },
      [&] { EXPECT_EQ(producer.send(msg, 1s), zipc::Status::ok); });
}

TEST(ChannelWaitLearning, ATopicSubscriberThatSleptUntilTheNextMessageDoesNotLearnToSpinLonger) {
  zipc::test::TempName name("waitlearn-t");
  zipc::TopicOptions to;
  to.capacity_bytes = 1 << 16;
  to.max_message_size = 1024;
  auto writer = zipc::Topic::create(name.str(), to);
  auto pub = writer.publisher();
  zipc::TopicOptions ro = to;
  ro.wait = paced_reader_options();
  auto reader_topic = zipc::Topic::open(name.str(), ro);
  auto sub = reader_topic.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
  const std::array<std::byte, 8> msg{};
  expect_no_learning(
      [&] {
        std::array<std::byte, 64> buf{};
        return sub.read(buf, 10s).status == zipc::Status::ok;
      },
      [&] { EXPECT_TRUE(pub.publish(msg, 1s).ok()); });
}

}  // namespace channel_wait_learning_test
