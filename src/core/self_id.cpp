// The cached packed identity of the calling process (core/self_id.hpp).
#include "core/self_id.hpp"

#include <pthread.h>

#include <atomic>

#include "zipc/process.hpp"

namespace zipc::detail {

namespace {

std::atomic<std::uint64_t> g_self{0};

void forget_self() noexcept {
  g_self.store(0, std::memory_order_relaxed);
}  // relaxed: child is single-threaded here

}  // namespace

std::uint64_t cached_packed_self() noexcept {
  // relaxed: the value is a pure function of the process; a stale 0 only
  // costs a recomputation.
  std::uint64_t v = g_self.load(std::memory_order_relaxed);
  if (v != 0) return v;
  static const bool registered = [] {
    ::pthread_atfork(nullptr, nullptr, &forget_self);
    return true;
  }();
  (void)registered;
  v = zipc::pack(zipc::ProcessId::current());
  g_self.store(v, std::memory_order_relaxed);  // relaxed: see above
  return v;
}

}  // namespace zipc::detail
