#include "zipc/process.hpp"

#include <atomic>

#include "platform/process.hpp"

namespace zipc {
namespace {

// Cached identity of this process; re-read when getpid() changes (after fork).
struct Cache {
  std::atomic<std::int32_t> pid{0};          // relaxed: a stale read only causes a re-read
  std::atomic<std::uint64_t> start_time{0};  // relaxed: written before pid's release store
};
Cache g_cache;

constexpr int kPidBits = 22;
constexpr std::uint64_t kPidMask = (std::uint64_t{1} << kPidBits) - 1;
constexpr std::uint64_t kStartMask = (std::uint64_t{1} << (64 - kPidBits)) - 1;

}  // namespace

ProcessId ProcessId::current() noexcept {
  const std::int32_t pid = platform::current_pid();
  // acquire: pairs with the release store below, so start_time matches pid.
  if (g_cache.pid.load(std::memory_order_acquire) == pid) {
    return {pid, g_cache.start_time.load(std::memory_order_relaxed)};
  }
  const std::uint64_t start = platform::process_start_time(pid);
  g_cache.start_time.store(start, std::memory_order_relaxed);
  g_cache.pid.store(pid, std::memory_order_release);  // release: publishes start_time
  return {pid, start};
}

bool is_alive(const ProcessId& id) noexcept {
  if (id.pid <= 0) return false;
  const std::uint64_t now = platform::process_start_time(id.pid);
  if (now == 0) return false;
  return id.start_time == 0 || now == id.start_time;
}

std::uint64_t pack(const ProcessId& id) noexcept {
  if (id.pid <= 0) return 0;
  return (static_cast<std::uint64_t>(id.pid) & kPidMask) | ((id.start_time & kStartMask) << kPidBits);
}

ProcessId unpack(std::uint64_t word) noexcept {
  return {static_cast<std::int32_t>(word & kPidMask), word >> kPidBits};
}

bool is_alive_packed(std::uint64_t word) noexcept {
  const ProcessId id = unpack(word);
  if (id.pid <= 0) return false;
  const std::uint64_t now = platform::process_start_time(id.pid);
  if (now == 0) return false;
  return (now & kStartMask) == id.start_time;
}

}  // namespace zipc
