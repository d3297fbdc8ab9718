// fail.hpp - the one way setup code builds a zipc::Error.
#pragma once

#include <string>
#include <string_view>

#include "zipc/error.hpp"

namespace zipc {

// Throws Error(e, "<kind> '<name>': <to_string(e)> (<why>)"), e.g.
// "segment 'orders': not found (no /dev/shm/zipc.orders)".
[[noreturn]] void fail(Errc e, std::string_view kind, std::string_view name, const std::string& why);

// The Errc of a failed system call's errno (ENOENT -> not_found, EACCES/EPERM
// -> permission_denied, ...; system for the rest).
Errc errc_from_errno(int err) noexcept;

// fail() for a system call that returned -errno: the code from
// errc_from_errno, the why "<what>: <strerror>".
[[noreturn]] void fail_errno(int neg_errno, std::string_view kind, std::string_view name, const std::string& what);

}  // namespace zipc
