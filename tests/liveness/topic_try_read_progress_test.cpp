// Issue [liveness], "Progress": subscribers that only poll (try_read, or
// 10 ms reads) get past the uncommitted claim of a topic's only publisher,
// SIGKILLed, within about recovery_time of its death, through the shared
// stall clock (src/core/recovery_wait.hpp); reliable and lossy, single and multi
// publisher topics. The bound asserted is a liveness bound (ten times the
// recovery time); the figure is printed. Each kind of poller runs alone, so
// none rides on another's recovery.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "liveness_support.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

namespace zipc {
namespace topic_try_read_progress_test {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::SharedFlags;

constexpr auto kRecovery = 300ms;

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

struct Poller {
  Delivery delivery;
  bool try_only;  // try_read only; else read(10 ms)
  const char* label;
};

double run_alone(Multiplicity publishers, const Poller& poller);

const std::array<Poller, 4> kPollers{{{Delivery::reliable, true, "reliable try_read"},
                                      {Delivery::reliable, false, "reliable read(10ms)"},
                                      {Delivery::lossy, true, "lossy try_read"},
                                      {Delivery::lossy, false, "lossy read(10ms)"}}};

void run(Multiplicity publishers) {
  double worst = 0;
  for (const Poller& p : kPollers) worst = std::max(worst, run_alone(publishers, p));
  EXPECT_LT(worst, 10.0 * static_cast<double>(kRecovery.count())) << "liveness bound";
}

double run_alone(Multiplicity publishers, const Poller& poller) {
  test::TempName name("lv.tryread");
  TopicOptions o;
  o.capacity_bytes = 1 << 16;
  o.max_message_size = 256;
  o.publishers = publishers;
  o.recovery_time = kRecovery;
  Topic t = Topic::create(name.str(), o);
  const std::array<Poller, 1> pollers{poller};
  // [0..3]: when each poller passed the hole (steady ns); [4]: ready count; [5]: claim held.
  SharedFlags flags(8);
  EXPECT_TRUE(flags.ok());
  if (!flags.ok()) return 1e9;
  std::vector<test::Child> subs;
  for (std::size_t i = 0; i < pollers.size(); ++i) {
    subs.push_back(test::spawn([&, i]() {
      Topic tt = Topic::open(name.str(), o);
      Subscriber sub = tt.subscribe({From::latest(), pollers[i].delivery});
      flags[4].fetch_add(1);
      std::array<std::byte, 256> buf{};
      const std::uint64_t give_up = now_ns() + 10'000'000'000ull;
      while (sub.abandoned() == 0) {
        if (now_ns() > give_up) return 2;
        const ReadResult r = pollers[i].try_only ? sub.try_read(buf) : sub.read(buf, 10ms);
        if (r.status != Status::empty && r.status != Status::timeout) return 3;
        if (pollers[i].try_only) std::this_thread::sleep_for(1ms);  // a poller that also sleeps
      }
      flags[i].store(now_ns());
      return 0;
    }));
  }
  EXPECT_TRUE(eventually([&] { return flags[4].load() == pollers.size(); }, 20s));
  auto holder = test::spawn([&]() {
    Topic tt = Topic::open(name.str(), o);
    Publisher p = tt.publisher();
    TopicWriteLoan l = p.reserve(64, 1s);
    if (!l) return 2;
    flags[5].store(1);
    for (;;) pause();
  });
  EXPECT_TRUE(eventually([&] { return flags[5].load() == 1; }, 20s));
  std::this_thread::sleep_for(kRecovery);  // the pollers' stall clock runs while the holder lives
  const std::uint64_t death = now_ns();
  holder.kill(SIGKILL);
  (void)holder.wait();
  double worst = 0;
  for (std::size_t i = 0; i < pollers.size(); ++i) {
    const test::ChildResult r = subs[i].wait(40s);
    EXPECT_EQ(r.exit_code, 0) << pollers[i].label << " never got past the dead claim " << r.output;
    if (r.exit_code != 0) return 1e9;
    const double ms = static_cast<double>(flags[i].load() - death) / 1e6;
    worst = std::max(worst, ms);
    std::printf("[ info ] %s topic, %s: past the dead claim %.0f ms after the kill (recovery_time %lld ms)\n",
                publishers == Multiplicity::multi ? "multi" : "single", pollers[i].label, ms,
                static_cast<long long>(kRecovery.count()));
  }
  EXPECT_EQ(t.abandoned(), 1u);
  return worst;
}

TEST(TopicTryReadProgress, PollingSubscribersGetPastTheDeadClaimOfASinglePublisher) {
  run(Multiplicity::single);
}

TEST(TopicTryReadProgress, PollingSubscribersGetPastTheDeadClaimOfTheOnlyMultiPublisher) {
  run(Multiplicity::multi);
}

}  // namespace

}  // namespace topic_try_read_progress_test
}  // namespace zipc
