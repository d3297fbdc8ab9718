// fail.hpp - the one way setup code builds a zipc::Error.
#pragma once

#include <string>
#include <string_view>

#include "zipc/error.hpp"

namespace zipc {

// Throws Error(e, "<kind> '<name>': <to_string(e)> (<why>)"), e.g.
// "segment 'orders': not found (no /dev/shm/zipc.orders)".
[[noreturn]] void fail(Errc e, std::string_view kind, std::string_view name, const std::string& why);

}  // namespace zipc
