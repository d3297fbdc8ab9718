// zipc/process.hpp - process identity that survives pid reuse.
//
//   zipc::ProcessId me = zipc::ProcessId::current();
//   std::uint64_t word = zipc::pack(me);          // what a slot in shared memory records
//   if (!zipc::is_alive_packed(word)) { /* recover what it held */ }
//
// A pid alone is not an identity: the kernel reuses pids. ProcessId pairs the
// pid with the process's start time (clock ticks since boot, /proc/<pid>/stat
// field 22), so a new process that happens to get the same pid is never taken
// for the old one.
#pragma once

#include <cstdint>

namespace zipc {

struct ProcessId {
  std::int32_t pid = 0;
  std::uint64_t start_time = 0;  // kernel start time in clock ticks; 0 = unknown

  static ProcessId current() noexcept;  // this process (refreshed after fork)
  [[nodiscard]] bool valid() const noexcept { return pid > 0; }
  friend bool operator==(const ProcessId&, const ProcessId&) = default;
};

// True when the process is running (zombies count as dead). For pid 0 or an
// invalid id: false.
[[nodiscard]] bool is_alive(const ProcessId& id) noexcept;

// Packs a ProcessId into one 64-bit word for lock-free records in shared
// memory: 22 bits of pid (Linux pid_max <= 2^22) and 42 low bits of start time.
// 0 means "nobody".
[[nodiscard]] std::uint64_t pack(const ProcessId& id) noexcept;
[[nodiscard]] ProcessId unpack(std::uint64_t word) noexcept;
// Liveness of a packed id, comparing only the bits that were packed.
[[nodiscard]] bool is_alive_packed(std::uint64_t word) noexcept;

}  // namespace zipc
