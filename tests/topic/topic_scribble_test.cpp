// Hostile memory: a peer scribbling the topic's shared state may make calls
// fail, never read or write outside the mapping, crash or hang (run under ASan).
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "layout/topic_layout.hpp"
#include "topic_support.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Delivery;
using zipc::From;
using zipc::Topic;
using zipc::TopicOptions;

namespace topic_scribble_test {
namespace {

// One round: scribble a few words, then exercise every call once.
int scribble_rounds(const std::string& name, zipc::Multiplicity kind, std::uint64_t seed, int rounds) {
  TopicOptions o;
  o.capacity_bytes = 8192;
  o.max_message_size = 300;
  o.max_subscribers = 8;
  o.publishers = kind;
  o.recovery_time = 1ms;
  auto topic = Topic::create(name, o);
  std::mt19937_64 rng(seed);
  auto* payload = topic.segment().payload();
  const std::size_t control_bytes = zipc::layout::ring_table_offset(o.max_subscribers);
  const std::size_t ring_bytes = topic.capacity_bytes();
  std::array<std::byte, 300> buf{};
  std::uint64_t calls = 0;
  for (int round = 0; round < rounds; ++round) {
    auto pub = [&]() -> zipc::Publisher {
      try {
        return topic.publisher();
      } catch (const zipc::Error&) {
        return {};
      }
    }();
    std::vector<zipc::Subscriber> subs;
    for (const auto& so : {zipc::SubscribeOptions{From::oldest(), Delivery::reliable},
                           zipc::SubscribeOptions{From::latest(), Delivery::lossy},
                           zipc::SubscribeOptions{From::sequence(rng() % 64), Delivery::reliable}}) {
      try {
        subs.push_back(topic.subscribe(so));
      } catch (const zipc::Error&) {
      }
    }
    for (int step = 0; step < 40; ++step) {
      // Scribble: mostly the hot words (positions, lengths), sometimes anywhere.
      const int what = static_cast<int>(rng() % 4);
      std::uint64_t value = rng();
      if (rng() % 2) value %= 4 * ring_bytes;  // plausible-looking positions
      if (what == 0) {
        const std::size_t off = 128 + 8 * (rng() % 6);  // PublisherLine words
        std::memcpy(payload + off, &value, 8);
      } else if (what == 1) {
        const std::size_t off = (rng() % (control_bytes / 8)) * 8;
        if (off >= 128) std::memcpy(payload + off, &value, 8);  // leave the config: opening validates it
      } else {
        const std::size_t off = (rng() % (ring_bytes / 8)) * 8;
        std::memcpy(payload + control_bytes + off, &value, 8);
      }
      if (pub.is_attached()) {
        (void)pub.try_publish(std::span(buf).first(rng() % 301));
        (void)pub.publish(std::span(buf).first(rng() % 301), 1ms);
        auto loan = pub.try_reserve(rng() % 301);
        if (loan && rng() % 2) (void)loan.commit(loan.size());
        calls += 3;
      }
      for (auto& s : subs) {
        (void)s.try_read(buf);
        (void)s.read(buf, 1ms);
        if (s.delivery() == Delivery::reliable) (void)s.try_acquire();
        calls += 3;
      }
      (void)topic.oldest_sequence();
      (void)topic.next_sequence();
    }
  }
  return calls > 0 ? 0 : 1;
}

}  // namespace

TEST(TopicScribble, ScribbledSharedStateYieldsErrorsNeverCrashesOrHangs) {
  const int rounds = static_cast<int>(topic_test::scaled(100));
  for (const auto kind : {zipc::Multiplicity::single, zipc::Multiplicity::multi}) {
    zipc::test::TempName name("tscr");
    const std::uint64_t seed = zipc::test::test_seed() + static_cast<std::uint64_t>(kind);
    // In a child: a hang ends as a timeout, a crash as a signal; both fail the test.
    auto child = zipc::test::spawn([&] { return scribble_rounds(name.str(), kind, seed, rounds); });
    const auto r = child.wait(120s);
    EXPECT_FALSE(r.timed_out) << "hung; seed " << seed;
    EXPECT_EQ(r.signal, 0) << "crashed; seed " << seed << r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
}

}  // namespace topic_scribble_test
