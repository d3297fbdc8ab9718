// zipc bench: the Rpc ping-pong.
#pragma once

#include <cstdint>
#include <string>

#include "common.hpp"

namespace zipc_tool {

// Median round trip in ns of n echo calls of 8 bytes to a server in a forked
// process; fails (exits) when a call fails or an answer is wrong.
double rpc_ping_pong(const std::string& base, std::uint64_t n);

}  // namespace zipc_tool
