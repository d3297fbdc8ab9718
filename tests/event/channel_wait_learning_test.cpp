// The adaptive wait's learning from slept waits (docs/design.md, "Waiting")
// in the channels' own wait loops: a queue consumer or a topic subscriber
// whose wait outlasts its spin and its yields and sleeps until the answer
// comes (a multi-megabyte message) teaches the thread's next waits to spin
// through, where a CPU is to spare, as Event::wait_until does for the rpc.
// (A read-only topic reader does not learn: publishers cannot know it
// sleeps, so its sleeps end at its 1 ms poll slices, which says nothing
// about how long the answer took.)
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <thread>

#include "zipc/event.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Deadline;
using zipc::WaitOptions;
using zipc::WaitStrategy;

namespace {

// A queue's first wait slice ends at its stall filter's grace (1 ms,
// recovery_wait.hpp), and each slice spins anew: spin and answer stay well
// inside it, as a 50 us spin and a ~200 us 4 MiB answer do.
constexpr std::uint32_t kSpinNs = 100'000;

// Spins 100 us, yields a few times, then sleeps. Preemption of the
// test thread (a loaded machine) must not end the spin early: its rule has
// tests of its own (event_test.cpp).
WaitOptions learning_options() {
  WaitOptions o;
  o.strategy = WaitStrategy::adaptive;
  o.spin_ns = kSpinNs;
  o.yields = 4;
  o.stop_spinning_when_preempted = false;
  return o;
}

// The spin budget the calling thread's next adaptive wait starts with.
std::uint64_t next_budget(const WaitOptions& o) {
  zipc::detail::SpinState st;
  EXPECT_TRUE(zipc::detail::spin_once(st, o, Deadline::after(10s)));
  return st.budget_ns;
}

// Runs `wait_once` (a blocking receive that the peer answers ~400 us later,
// after the spin and the yields, so the wait sleeps) in a fresh thread (the
// learning is per thread) and returns the budget of that thread's next wait.
// A loaded machine may have more runnable threads than CPUs at the moment
// the wait ends, and then nothing is learnt (rightly): one of a few tries
// must learn.
std::uint64_t budget_after_slept_wait(const std::function<bool()>& wait_once, const std::function<void()>& answer) {
  std::uint64_t budget = 0;
  for (int attempt = 0; attempt < 20 && budget <= kSpinNs; ++attempt) {
    std::thread peer([&] {
      std::this_thread::sleep_for(400us);
      answer();
    });
    std::thread waiter([&] {
      const bool got = wait_once();
      EXPECT_TRUE(got);
      budget = next_budget(learning_options());
    });
    waiter.join();
    peer.join();
    if (budget <= kSpinNs) std::this_thread::sleep_for(20ms);
  }
  return budget;
}

}  // namespace

TEST(ChannelWaitLearning, AQueueConsumerThatSleptThroughALongAnswerSpinsLongerNextTime) {
  zipc::test::TempName name("waitlearn-q");
  zipc::QueueOptions qo;
  qo.block_size = 64;
  qo.block_count = 8;
  qo.producers = zipc::Multiplicity::single;
  qo.consumers = zipc::Multiplicity::single;
  auto producer = zipc::Queue::create(name.str(), qo, zipc::Role::producer);
  auto consumer = zipc::Queue::open(name.str(), zipc::Role::consumer, learning_options());
  const std::array<std::byte, 8> msg{};
  const std::uint64_t budget = budget_after_slept_wait(
      [&] {
        std::array<std::byte, 64> buf{};
        return consumer.recv(buf, 10s).status == zipc::Status::ok;
      },
      [&] { EXPECT_EQ(producer.send(msg, 1s), zipc::Status::ok); });
  EXPECT_GT(budget, kSpinNs);         // twice the ~400 us the wait took, at most the cap
  EXPECT_LE(budget, 8ull * kSpinNs);  // the stretch's cap
}

TEST(ChannelWaitLearning, ATopicSubscriberThatSleptThroughALongAnswerSpinsLongerNextTime) {
  zipc::test::TempName name("waitlearn-t");
  zipc::TopicOptions to;
  to.capacity_bytes = 1 << 16;
  to.max_message_size = 1024;
  auto writer = zipc::Topic::create(name.str(), to);
  auto pub = writer.publisher();
  zipc::TopicOptions ro = to;
  ro.wait = learning_options();
  auto reader_topic = zipc::Topic::open(name.str(), ro);
  auto sub = reader_topic.subscribe({zipc::From::latest(), zipc::Delivery::reliable});
  const std::array<std::byte, 8> msg{};
  const std::uint64_t budget = budget_after_slept_wait(
      [&] {
        std::array<std::byte, 64> buf{};
        return sub.read(buf, 10s).status == zipc::Status::ok;
      },
      [&] { EXPECT_TRUE(pub.publish(msg, 1s).ok()); });
  EXPECT_GT(budget, kSpinNs);
  EXPECT_LE(budget, 8ull * kSpinNs);
}
