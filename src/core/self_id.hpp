// Internal: the calling process's packed identity, cached for hot lock paths.
#pragma once

#include <cstdint>

namespace zipc::detail {

// zipc::pack(ProcessId::current()), cached and refreshed after fork, so hot
// lock paths need no syscall.
std::uint64_t cached_packed_self() noexcept;

}  // namespace zipc::detail
