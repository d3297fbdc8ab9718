/// \file
/// zipc/process.hpp - process identity that survives pid reuse.
///
/// \code
///   zipc::ProcessId me = zipc::ProcessId::current();
///   std::uint64_t word = zipc::pack(me);          // what a slot in shared memory records
///   if (!zipc::is_alive_packed(word)) { /* recover what it held */ }
/// \endcode
///
/// A pid alone is not an identity: the kernel reuses pids, and a pid means
/// nothing in another PID namespace (a container). ProcessId pairs the pid with
/// a liveness token: a random 41-bit number whose byte this process holds an
/// open-file-description lock on in /dev/shm/.zipc-liveness (see docs/design/overview.md,
/// "Liveness"). The kernel drops that lock when the process dies, so any process
/// sharing /dev/shm can tell whether the holder is alive, whatever its PID
/// namespace. When the liveness file cannot be used, the token is replaced by
/// the process's start time (clock ticks since boot, /proc/\<pid\>/stat field 22)
/// and liveness falls back to /proc, which only works inside one PID namespace.
/// Either way a new process that happens to get the same pid is never taken
/// for the old one.
#pragma once

#include <cstdint>

namespace zipc {

/// Set in ProcessId::start_time when it holds a liveness token (kernel start
/// times in ticks stay far below 2^41).
inline constexpr std::uint64_t kLivenessTokenTag = std::uint64_t{1} << 41;

/// Identifies a process for liveness checks: its pid plus a liveness token (or start time), so a reused pid is never
/// taken for the process that had it.
struct ProcessId {
  std::int32_t pid = 0;  ///< in the PID namespace of the process itself
  /// kLivenessTokenTag | liveness token, or the kernel start time in clock ticks (the
  /// /proc fallback); 0 = unknown (is_alive() then only asks whether pid exists).
  std::uint64_t start_time = 0;

  static ProcessId current() noexcept;  ///< this process (refreshed after fork)
  /// pid is set (a real process id).
  [[nodiscard]] bool valid() const noexcept { return pid > 0; }
  /// start_time holds a liveness token (not a start time from /proc).
  [[nodiscard]] bool has_token() const noexcept { return (start_time & kLivenessTokenTag) != 0; }
  friend bool operator==(const ProcessId&, const ProcessId&) = default;
};

/// True when the process is running (zombies count as dead). For pid 0 or an
/// invalid id: false. With a token this works across PID namespaces; when the
/// liveness file cannot be opened by the caller a token counts as alive (never
/// recover a peer that may be alive).
[[nodiscard]] bool is_alive(const ProcessId& id) noexcept;

/// Packs a ProcessId into one 64-bit word for lock-free records in shared
/// memory: 22 bits of pid (Linux pid_max <= 2^22) and 42 low bits of start_time
/// (the token with its tag, or the start time).
/// 0 means "nobody".
[[nodiscard]] std::uint64_t pack(const ProcessId& id) noexcept;
/// The inverse of pack (the bits pack kept).
[[nodiscard]] ProcessId unpack(std::uint64_t word) noexcept;
/// Liveness of a packed id, comparing only the bits that were packed.
[[nodiscard]] bool is_alive_packed(std::uint64_t word) noexcept;

}  // namespace zipc
