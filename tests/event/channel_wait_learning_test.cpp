// The adaptive wait's learning from slept waits (docs/design.md, "Waiting")
// is Event::wait_until's (the rpc's waits) and not the channels': a queue
// consumer or topic subscriber that slept until the next message must not
// teach the thread's next waits to spin longer. A paced stream (messages
// 200 us apart) would otherwise teach every reader to spin through the gaps
// between messages; on two vCPUs that took the CPU from the threads the
// readers wait for, and cost the NATS bridge's pipeline 10% of its 4 KiB
// throughput and ~20 us of added p50 (docs/bench.md, "Waits that learn from
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
using zipc::test::learning_options;
using zipc::test::starts_spinning;

namespace {

// A queue's first wait slice ends at its stall filter's grace (1 ms,
// recovery_wait.hpp), and each slice spins anew: spin and answer stay well
// inside it, as a 50 us spin and a message 200-400 us later do.
constexpr std::uint32_t kSpinNs = 100'000;

// Runs `wait_once` (a blocking receive that the peer answers ~400 us later,
// after the spin and the yields, so the wait sleeps) in a fresh thread (the
// learning is per thread) and returns the budget of that thread's next
// wait. Every one of a few rounds must leave the budget as it was (one round
// could miss a learning that happens only while a CPU is to spare).
void expect_no_learning(const std::function<bool()>& wait_once, const std::function<void()>& answer) {
  for (int round = 0; round < 5; ++round) {
    std::uint64_t budget = 0;
    std::thread peer([&] {
      std::this_thread::sleep_for(400us);
      answer();
    });
    std::thread waiter([&] {
      EXPECT_TRUE(wait_once());
      zipc::detail::SpinState next;
      (void)starts_spinning(learning_options(kSpinNs), &next);
      budget = next.budget_ns;
    });
    waiter.join();
    peer.join();
    EXPECT_EQ(budget, kSpinNs) << "round " << round;
  }
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
  auto consumer = zipc::Queue::open(name.str(), zipc::Role::consumer, learning_options(kSpinNs));
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
  ro.wait = learning_options(kSpinNs);
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
