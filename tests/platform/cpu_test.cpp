// platform/cpu: pinning, and the counts the adaptive wait reads.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

#include "platform/cpu.hpp"

namespace cpu_test {
namespace {

TEST(Cpu, PinningToACpuOutsideTheSetIsRefusedByName) {
  std::thread([] {
    EXPECT_EQ(zipc::platform::pin_to_cpu(-1), -EINVAL);
    EXPECT_EQ(zipc::platform::pin_to_cpu(CPU_SETSIZE), -EINVAL);
    const int cpu = ::sched_getcpu();
    ASSERT_GE(cpu, 0);
    EXPECT_EQ(zipc::platform::pin_to_cpu(cpu), 0);
    EXPECT_EQ(zipc::platform::allowed_cpu_count(), 1);
  }).join();
}

TEST(Cpu, TheRunnableCountSeesThreadsThatSpin) {
  ASSERT_GE(zipc::platform::runnable_thread_count(), 1) << "this thread runs";
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  const int n = zipc::platform::online_cpu_count() + 1;
  for (int i = 0; i < n; ++i)
    spinners.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  int seen = 0;
  for (int i = 0; i < 100 && seen <= n; ++i) seen = std::max(seen, zipc::platform::runnable_thread_count());
  stop.store(true);
  for (auto& t : spinners) t.join();
  EXPECT_GT(seen, n) << "the spinners and this thread";
  EXPECT_GE(zipc::platform::involuntary_switches(), 0);
}

}  // namespace

}  // namespace cpu_test
