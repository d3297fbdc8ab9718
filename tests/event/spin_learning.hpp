// Helpers of the tests of the adaptive wait's learning (event_test.cpp,
// channel_wait_learning_test.cpp): options that script where a wait ends,
// and a look at the spin budget a thread's next wait starts with.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "platform/cpu.hpp"
#include "zipc/event.hpp"

namespace zipc::test {

// Adaptive, `spin_ns` of spinning, four yields. These scenarios script where
// waits end; a preemption of the test thread (a loaded CI machine) must not
// end a spin early (that rule has tests of its own, in event_test.cpp).
inline WaitOptions learning_options(std::uint32_t spin_ns = 2'000) {
  WaitOptions opt;
  opt.strategy = WaitStrategy::adaptive;
  opt.spin_ns = spin_ns;
  opt.yields = 4;
  opt.stop_spinning_when_preempted = false;
  return opt;
}

// Starts a wait (its first spin step) in *st: true when it spins, i.e. it is
// a probe while the CPU looks shared. The caller ends it; st->budget_ns is
// the spin budget this thread's waits start with now.
inline bool starts_spinning(const WaitOptions& opt, detail::SpinState* st) {
  EXPECT_TRUE(detail::spin_once(*st, opt, Deadline::after(std::chrono::seconds(10))));
  return st->budget_ns > 0 && !st->spin_done;
}

// What the learning from slept waits checks before it learns (event.cpp):
// the kernel counts no more runnable threads than CPUs. While it does not,
// nothing is learnt either way, so such a moment tests nothing.
inline bool a_cpu_is_to_spare() {
  const int running = platform::runnable_thread_count();
  return running > 0 && running <= platform::online_cpu_count();
}

}  // namespace zipc::test
