#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>

#include <sched.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "spin_learning.hpp"
#include "zipc/event.hpp"
#include "zipc/segment.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Deadline;
using zipc::Event;
using zipc::Status;
using zipc::WaitOptions;
using zipc::WaitStrategy;
using zipc::test::learning_options;
using zipc::test::starts_spinning;

namespace event_test {
namespace {

struct Shared {
  Event ev;
  std::atomic<std::uint32_t> value;
  std::atomic<std::uint32_t> ack;
};

// An Event and a flag in a real shared segment.
struct Fixture {
  zipc::test::TempName name{"event"};
  zipc::Segment seg = zipc::Segment::create(name.str(), {zipc::SegmentKind::user, sizeof(Shared), {}},
                                            [](std::byte* p, std::size_t n) { std::memset(p, 0, n); });
  Shared* sh = reinterpret_cast<Shared*>(seg.payload());
};

WaitOptions with(WaitStrategy s) {
  WaitOptions o;
  o.strategy = s;
  return o;
}

}  // namespace

TEST(Event, WaitReturnsAtOnceWhenPredicateHolds) {
  Event sut;
  EXPECT_EQ(sut.wait_until([] { return true; }, Deadline::after(0ns)), Status::ok);
}

TEST(Event, WaitTimesOutForEveryStrategy) {
  for (auto s : {WaitStrategy::busy_poll, WaitStrategy::adaptive, WaitStrategy::block}) {
    Event sut;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(sut.wait_until([] { return false; }, Deadline::after(20ms), with(s)), Status::timeout)
        << zipc::to_string(s);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 20ms) << zipc::to_string(s);
  }
}

TEST(Event, NotifyWithoutWaitersDoesNotTouchTheFutexWord) {
  Event sut;
  sut.notify_all();
  sut.notify_one();
  EXPECT_EQ(sut.seq.load(), 0u);  // no sleeper: no shared write, no syscall
}

TEST(Event, SleeperInAnotherProcessIsWokenByNotify) {
  for (auto s : {WaitStrategy::block, WaitStrategy::adaptive}) {
    Fixture f;
    Shared* sh = f.sh;
    auto child = zipc::test::spawn([&] {
      Status st = sh->ev.wait_until([&] { return sh->value.load(std::memory_order_acquire) == 1; },
                                    Deadline::after(30s), with(s));
      return st == Status::ok ? 0 : 1;
    });
    // Let the child reach the futex sleep, then publish and notify.
    for (int i = 0; i < 5000 && sh->ev.waiters.load() == 0; ++i) std::this_thread::sleep_for(1ms);
    EXPECT_EQ(sh->ev.waiters.load(), 1u) << zipc::to_string(s);
    sh->value.store(1, std::memory_order_release);
    sh->ev.notify_all();
    auto r = child.wait(30s);
    EXPECT_EQ(r.exit_code, 0) << zipc::to_string(s) << " " << r.output;
  }
}

TEST(Event, PingPongAcrossProcessesLosesNoWakeup) {
  // Two processes alternate 2000 times on one event word each way; a lost
  // wake-up would hang (and the wait's deadline would report it).
  Fixture f;
  Shared* sh = f.sh;
  const std::uint32_t rounds = 2000;
  auto child = zipc::test::spawn([&] {
    for (std::uint32_t i = 1; i <= rounds; ++i) {
      if (sh->ev.wait_until([&] { return sh->value.load(std::memory_order_acquire) >= i; }, Deadline::after(10s),
                            with(WaitStrategy::block)) != Status::ok) {
        return 1;
      }
      sh->ack.store(i, std::memory_order_release);
      sh->ev.notify_all();
    }
    return 0;
  });
  for (std::uint32_t i = 1; i <= rounds; ++i) {
    sh->value.store(i, std::memory_order_release);
    sh->ev.notify_all();
    ASSERT_EQ(sh->ev.wait_until([&] { return sh->ack.load(std::memory_order_acquire) >= i; }, Deadline::after(10s),
                                with(WaitStrategy::block)),
              Status::ok)
        << "round " << i;
  }
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(Event, WaitSurvivesSignalsAndKeepsItsDeadline) {
  Event sut;
  struct sigaction sa {};
  sa.sa_handler = [](int) {};
  sigaction(SIGUSR1, &sa, nullptr);
  const pthread_t self = pthread_self();
  std::thread poker([&] {
    for (int i = 0; i < 10; ++i) {
      std::this_thread::sleep_for(5ms);
      pthread_kill(self, SIGUSR1);
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(sut.wait_until([] { return false; }, Deadline::after(100ms), with(WaitStrategy::block)), Status::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 100ms);
  poker.join();
}

TEST(Deadline, NeverNeverExpiresAndZeroAlwaysHas) {
  EXPECT_FALSE(Deadline::never().expired());
  EXPECT_TRUE(Deadline::after(0ns).expired());
  EXPECT_TRUE(Deadline::after(-5s).expired());
  EXPECT_TRUE(Deadline::after(std::chrono::nanoseconds::max()).is_never());
}

namespace {
// Learning is per thread: each scenario runs in a fresh thread, so nothing
// learnt by an earlier test (or scenario) leaks in.
void in_fresh_thread(const std::function<void()>& f) {
  std::thread t(f);
  t.join();
}
// A thread that keeps one CPU busy until destroyed.
struct CpuHog {
  explicit CpuHog(int cpu)
      : t([this, cpu] {
          (void)zipc::platform::pin_to_cpu(cpu);
          pinned.store(true);
          while (!stop.load(std::memory_order_relaxed)) {
          }
        }) {
    while (!pinned.load()) std::this_thread::yield();
  }
  ~CpuHog() {
    stop.store(true);
    t.join();
  }
  std::atomic<bool> pinned{false}, stop{false};
  std::thread t;
};

// A wait whose whole spin phase failed and that came true right after the
// first yield: the peer could only run once we gave up the CPU.
void wait_that_looks_shared(const WaitOptions& opt) {
  zipc::detail::SpinState st;
  const Deadline d = Deadline::after(10s);
  // The call that ends the spin phase goes on to the first yield.
  while (!st.spin_done) ASSERT_TRUE(zipc::detail::spin_once(st, opt, d));
  ASSERT_EQ(st.yields, 1u);
  zipc::detail::spin_succeeded(st);
}
// A wait that spun, yielded and went on to sleep.
void wait_that_sleeps(const WaitOptions& opt) {
  zipc::detail::SpinState st;
  const Deadline d = Deadline::after(10s);
  while (zipc::detail::spin_once(st, opt, d)) {
  }
  zipc::detail::spin_gave_up(st);
}
}  // namespace

TEST(Event, AdaptiveWaitLearnsWhetherItSharesTheCpuWithItsPeer) {
  // The strategy learns from where waits end (docs/design/overview.md, "Waiting").
  in_fresh_thread([] {
    const WaitOptions opt = learning_options();
    // Learned from eight waits in a row whose spin failed, not from one (a
    // coincidence on two CPUs).
    for (int i = 0; i < 7; ++i) wait_that_looks_shared(opt);
    EXPECT_FALSE(zipc::detail::cpu_looks_shared());
    wait_that_looks_shared(opt);
    EXPECT_TRUE(zipc::detail::cpu_looks_shared());
    // While shared, waits skip spinning, but a periodic probe spins the whole
    // budget; a probe that comes true while spinning unlearns it.
    bool probed = false;
    for (int i = 0; i < 100 && !probed; ++i) {
      zipc::detail::SpinState st;
      if (starts_spinning(opt, &st)) {
        EXPECT_EQ(st.budget_ns, opt.spin_ns);  // the whole budget, not a token spin
        probed = true;
        zipc::detail::spin_succeeded(st);
      }
    }
    EXPECT_TRUE(probed);
    EXPECT_FALSE(zipc::detail::cpu_looks_shared());
  });
}

TEST(Event, AWaitThatComesTrueWhileSpinningBreaksARunOfFailedSpins) {
  in_fresh_thread([] {
    const WaitOptions opt = learning_options();
    for (int i = 0; i < 7; ++i) wait_that_looks_shared(opt);
    {
      zipc::detail::SpinState st;
      ASSERT_TRUE(starts_spinning(opt, &st));  // still spinning when it comes true
      zipc::detail::spin_succeeded(st);
    }
    wait_that_looks_shared(opt);
    EXPECT_FALSE(zipc::detail::cpu_looks_shared());  // 7, a success while spinning, then 1
  });
}

TEST(Event, AWaitThatGoesToSleepCountsAsAFailedSpin) {
  in_fresh_thread([] {
    const WaitOptions opt = learning_options();
    for (int i = 0; i < 7; ++i) wait_that_looks_shared(opt);
    EXPECT_FALSE(zipc::detail::cpu_looks_shared());
    wait_that_sleeps(opt);
    EXPECT_TRUE(zipc::detail::cpu_looks_shared());
  });
}

TEST(Event, FailedProbesComeTwiceAsFarApartEachTime) {
  in_fresh_thread([] {
    const WaitOptions opt = learning_options();
    const Deadline d = Deadline::after(10s);
    for (int i = 0; i < 8; ++i) wait_that_looks_shared(opt);
    ASSERT_TRUE(zipc::detail::cpu_looks_shared());
    std::vector<int> probes_at;
    for (int wait = 1; wait <= 16 + 32 + 64 && probes_at.size() < 3; ++wait) {
      zipc::detail::SpinState st;
      if (starts_spinning(opt, &st)) {
        probes_at.push_back(wait);
        // The probe fails: its spin runs out and the first yield is enough.
        while (!st.spin_done) ASSERT_TRUE(zipc::detail::spin_once(st, opt, d));
        zipc::detail::spin_succeeded(st);
      }
    }
    EXPECT_EQ(probes_at, (std::vector<int>{16, 16 + 32, 16 + 32 + 64}));
    EXPECT_TRUE(zipc::detail::cpu_looks_shared());
  });
}

namespace {
TEST(Event, AWaitThatOutlastsItsSpinOnAnotherCpuStretchesTheNextSpinBudget) {
  in_fresh_thread([] {
    WaitOptions opt = learning_options();
    opt.yields = 16;
    const Deadline d = Deadline::after(10s);
    {
      // Spins its budget, then comes true after several yields: the peer was
      // running on another CPU and took a little longer than the budget.
      zipc::detail::SpinState st;
      while (st.yields < 6) ASSERT_TRUE(zipc::detail::spin_once(st, opt, d));
      zipc::detail::spin_succeeded(st);
    }
    zipc::detail::SpinState next;
    ASSERT_TRUE(starts_spinning(opt, &next));
    EXPECT_GT(next.budget_ns, opt.spin_ns);
    EXPECT_LE(next.budget_ns, 8ull * opt.spin_ns);
    zipc::detail::spin_succeeded(next);
  });
}

constexpr std::uint32_t kLongSpinNs = 1'000'000;

// A wait that spun (spin_ns 1 ms), yielded and slept, then came true 300 us
// later, `at_end` run just before; returns the budget of the wait after it.
// *spare (if given): whether a CPU was to spare just before the learning looked.
std::uint64_t budget_after_a_slept_wait(
    const std::function<void()>& at_end = [] {}, bool* spare = nullptr) {
  WaitOptions opt = learning_options();
  opt.spin_ns = kLongSpinNs;
  wait_that_sleeps(opt);
  std::this_thread::sleep_for(300us);
  at_end();
  if (spare != nullptr) *spare = zipc::test::a_cpu_is_to_spare();
  zipc::detail::slept_wait_succeeded(opt);
  zipc::detail::SpinState next;
  EXPECT_TRUE(starts_spinning(opt, &next));
  return next.budget_ns;
}

// Waits that outlast their spin and their yields and sleep until the answer
// (a 4 MiB rpc) teach the next waits to spin through, while no thread on the
// machine waits for a CPU (spinning then costs nobody anything). A loaded
// machine may have more runnable threads than CPUs now and then: one of a
// few tries must learn, unless no CPU was to spare at any of them (a machine
// busy throughout, where the rule rightly learns nothing).
TEST(Event, AWaitThatSleptThroughALongAnswerStretchesTheNextSpinWhenACpuIsToSpare) {
  std::uint64_t budget = 0;
  bool ever_spare = false;
  for (int attempt = 0; attempt < 20 && budget <= kLongSpinNs; ++attempt) {
    bool spare = false;
    in_fresh_thread([&] { budget = budget_after_a_slept_wait([] {}, &spare); });
    ever_spare = ever_spare || spare;
    if (budget <= kLongSpinNs) std::this_thread::sleep_for(20ms);
  }
  if (budget <= kLongSpinNs && !ever_spare) GTEST_SKIP() << "no CPU was to spare at any attempt: nothing to learn";
  EXPECT_GT(budget, kLongSpinNs);       // twice the ~1.3 ms the wait took
  EXPECT_LE(budget, 8u * kLongSpinNs);  // the stretch's cap
}

// With more runnable threads than CPUs a long spin takes CPU time from the
// work it waits for: a slept wait teaches nothing then. (The threads that
// want the CPUs come just before the wait ends, so the wait itself still
// takes its usual ~1.3 ms.)
TEST(Event, AWaitThatSleptDoesNotStretchTheSpinWhileThreadsWaitForACpu) {
  const int cpus = zipc::platform::online_cpu_count();
  for (int attempt = 0; attempt < 3; ++attempt) {
    in_fresh_thread([&] {
      // More threads than CPUs, asleep until the wait is about to end.
      std::atomic<bool> go{false}, stop{false};
      std::vector<std::thread> hogs;
      for (int i = 0; i <= cpus; ++i) {
        hogs.emplace_back([&] {
          go.wait(false);
          while (!stop.load(std::memory_order_relaxed)) {
          }
        });
      }
      const std::uint64_t budget = budget_after_a_slept_wait([&] {
        go.store(true);
        go.notify_all();
        const Deadline d = Deadline::after(1s);
        while (zipc::platform::runnable_thread_count() <= cpus && !d.expired()) {
        }
        EXPECT_GT(zipc::platform::runnable_thread_count(), cpus);
      });
      stop.store(true);
      for (auto& h : hogs) h.join();
      EXPECT_EQ(budget, kLongSpinNs);
    });
  }
}

// A spin's steps of 64 iterations, each ended by a clock read; `pause`
// stands for the time the thread lost before the last one. False when the
// spin ended before them (the kernel switched the thread out meanwhile).
[[nodiscard]] bool spin_steps(zipc::detail::SpinState& st, const WaitOptions& opt, int steps,
                              std::chrono::microseconds pause) {
  const Deadline d = Deadline::after(10s);
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < 63; ++i)
      if (!zipc::detail::spin_once(st, opt, d)) return false;
    if (s == steps - 1) std::this_thread::sleep_for(pause);
    if (!zipc::detail::spin_once(st, opt, d)) return false;  // the step's clock read
  }
  return true;
}

// The spin must first run a step at full speed. On a loaded machine the
// kernel can switch it out already there (seen under ctest -j2 beside a
// build); such a try does not count, and another runs in a fresh thread
// (what a spin learns of the CPU is per thread).
TEST(Event, ASpinTheKernelDeschedulesStopsTheSpinning) {
  bool tried = false;
  for (int attempt = 0; attempt < 10 && !tried; ++attempt) {
    in_fresh_thread([&] {
      const int cpu = ::sched_getcpu();
      ASSERT_GE(cpu, 0);
      ASSERT_EQ(zipc::platform::pin_to_cpu(cpu), 0);
      WaitOptions opt = with(WaitStrategy::adaptive);
      opt.spin_ns = 1'000'000'000;  // the budget never ends this spin
      zipc::detail::SpinState st;
      if (!spin_steps(st, opt, 2, 0us) || st.spin_done) return;  // switched out already: try again
      tried = true;
      // Another thread wants this CPU: the kernel switches the spin out (an
      // involuntary switch), and the spin, back, stops spinning.
      CpuHog hog(cpu);
      const Deadline d = Deadline::after(10s);
      while (!st.spin_done && !d.expired()) ASSERT_TRUE(zipc::detail::spin_once(st, opt, d));
      EXPECT_TRUE(st.spin_done);  // on to yielding at once
      EXPECT_TRUE(zipc::detail::cpu_looks_shared());
    });
  }
  EXPECT_TRUE(tried) << "no try ran a step at full speed: every one was switched out";
}

// A gap in a spin during which the kernel did not switch the thread out is
// the host's (it took the vCPU): the spin goes on. Stood in for by a sleep,
// which is a voluntary switch. An involuntary one can still fall into the
// gap on a loaded machine, so one of a few tries must go on.
TEST(Event, AGapWithoutAnInvoluntarySwitchIsTheHostsAndTheSpinGoesOn) {
  bool went_on = false;
  for (int attempt = 0; attempt < 5 && !went_on; ++attempt) {
    in_fresh_thread([&] {
      WaitOptions opt = with(WaitStrategy::adaptive);
      opt.spin_ns = 1'000'000'000;
      zipc::detail::SpinState st;
      // Past the point where the spin notes the thread's switch count.
      const std::uint64_t t0 = zipc::platform::monotonic_ns();
      // A try in which the kernel switched the spin out anyway (a loaded
      // machine) ends early and does not count.
      bool whole = true;
      while (whole && zipc::platform::monotonic_ns() - t0 < 20'000) whole = spin_steps(st, opt, 1, 0us);
      whole = whole && spin_steps(st, opt, 1, 2ms);
      went_on = whole && !st.spin_done && !zipc::detail::cpu_looks_shared();
    });
  }
  EXPECT_TRUE(went_on);
}

TEST(Event, ASlowPredicateIsNotTakenForADescheduledSpin) {
  in_fresh_thread([] {
    WaitOptions opt = with(WaitStrategy::adaptive);
    opt.spin_ns = 1'000'000'000;
    zipc::detail::SpinState st;
    for (int s = 0; s < 4; ++s) ASSERT_TRUE(spin_steps(st, opt, 1, 2ms));  // every step as slow
    EXPECT_FALSE(st.spin_done);
    EXPECT_FALSE(zipc::detail::cpu_looks_shared());
  });
}

TEST(Event, TheRuleCanBeTurnedOff) {
  in_fresh_thread([] {
    WaitOptions opt = with(WaitStrategy::adaptive);
    opt.spin_ns = 1'000'000'000;
    opt.stop_spinning_when_preempted = false;
    zipc::detail::SpinState st;
    ASSERT_TRUE(spin_steps(st, opt, 2, 0us));
    ASSERT_TRUE(spin_steps(st, opt, 1, 2ms));
    EXPECT_FALSE(st.spin_done);
    EXPECT_FALSE(zipc::detail::cpu_looks_shared());
  });
}

TEST(Event, AWaitThatComesTrueAtTheFirstYieldDoesNotStretchTheSpinBudget) {
  in_fresh_thread([] {
    const WaitOptions opt = learning_options();
    wait_that_looks_shared(opt);  // one CPU: the peer ran once we yielded
    zipc::detail::SpinState next;
    ASSERT_TRUE(starts_spinning(opt, &next));
    EXPECT_EQ(next.budget_ns, opt.spin_ns);
    zipc::detail::spin_succeeded(next);
  });
}
// Busy polling (event.cpp, busy_poll_once).
TEST(Event, ABusyPollThatPollsInVainYieldsNowAndThen) {
  in_fresh_thread([] {
    zipc::detail::SpinState st;
    const WaitOptions opt = with(WaitStrategy::busy_poll);
    const Deadline d = Deadline::after(1s);
    while (st.yields == 0 && zipc::detail::spin_once(st, opt, d)) {
    }
    ASSERT_EQ(st.yields, 1u);                      // it yields,
    EXPECT_GE(st.last_ns - st.start_ns, 50'000u);  // but not before 50 us in vain
  });
}

// A thread spinning without ever yielding on the given CPU, until stopped.
// A fresh wait: whether it yields at its first clock read.
bool first_clock_read_yields() {
  zipc::detail::SpinState st;
  for (int i = 0; i < 256; ++i)
    EXPECT_TRUE(zipc::detail::spin_once(st, with(WaitStrategy::busy_poll), Deadline::never()));
  return st.yields > 0;
}

TEST(Event, BusyPollsThatShareACpuYieldItToEachOther) {
  in_fresh_thread([] {
    const int cpu = ::sched_getcpu();
    ASSERT_GE(cpu, 0);
    ASSERT_EQ(zipc::platform::pin_to_cpu(cpu), 0);
    EXPECT_FALSE(first_clock_read_yields());  // nothing learned yet
    {
      CpuHog hog(cpu);
      // A yield gives the CPU to the hog, which keeps it for a while: from
      // then on this thread's waits yield at their first clock read. (Not
      // every yield does: the scheduler may run us again at once when the
      // hog has had more than its share.)
      bool learned = false;
      for (int i = 0; i < 1000 && !learned; ++i) {
        zipc::detail::SpinState st;
        while (st.yields == 0)
          ASSERT_TRUE(zipc::detail::spin_once(st, with(WaitStrategy::busy_poll), Deadline::never()));
        learned = first_clock_read_yields();
      }
      EXPECT_TRUE(learned);
    }
    // The hog gone, yields come straight back and the thread polls again
    // (on a loaded machine other processes may take this CPU for a while:
    // it forgets once eight yields in a row came straight back; 5 s was
    // too short under ASan beside another ctest on the same 2 CPUs).
    bool polls_again = false;
    const Deadline give_up = Deadline::after(30s);
    while (!polls_again && !give_up.expired()) polls_again = !first_clock_read_yields();
    EXPECT_TRUE(polls_again);
  });
}
}  // namespace

}  // namespace event_test
