// Process identity and liveness from /proc. The only place that reads /proc/<pid>.
#pragma once

#include <cstdint>

namespace zipc::platform {

// Start time (field 22 of /proc/<pid>/stat) of a process, 0 if it does not
// exist or is a zombie.
std::uint64_t process_start_time(std::int32_t pid) noexcept;
std::int32_t current_pid() noexcept;
std::uint32_t current_uid() noexcept;
// Sends signal 0: true when the pid exists (even as a zombie).
bool pid_exists(std::int32_t pid) noexcept;

}  // namespace zipc::platform
