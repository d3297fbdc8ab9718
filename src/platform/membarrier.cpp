#include "membarrier.hpp"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace zipc::platform {
namespace {

// 0 unknown, 1 registered in this process, 2 unsupported.
std::atomic<int> g_state{0};
std::atomic<bool> g_atfork_installed{false};

long membarrier(int cmd) noexcept {
  return ::syscall(__NR_membarrier, cmd, 0, 0);
}

// Registration belongs to the address space: a forked child registers again
// at once, because it may keep using handles it inherited (their fast paths
// never call membarrier_ready), and a peer's barrier must reach it too.
void register_in_child() noexcept {
  if (g_state.load(std::memory_order_relaxed) != 1) return;  // relaxed: single-threaded after fork
  const bool ok = membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
  g_state.store(ok ? 1 : 0, std::memory_order_relaxed);  // relaxed: as above; 0 = ask again on next use
}

}  // namespace

bool membarrier_ready() noexcept {
  const int s = g_state.load(std::memory_order_relaxed);  // relaxed: a per-process cache of a syscall result
  if (s != 0) return s == 1;
  if (!g_atfork_installed.exchange(true, std::memory_order_relaxed)) {  // relaxed: idempotent set-up
    ::pthread_atfork(nullptr, nullptr, register_in_child);
  }
  const long q = membarrier(MEMBARRIER_CMD_QUERY);
  const bool ok =
      q >= 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0 && membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
  g_state.store(ok ? 1 : 2, std::memory_order_relaxed);  // relaxed: as above
  return ok;
}

void membarrier_global() noexcept {
  (void)membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
}

}  // namespace zipc::platform
