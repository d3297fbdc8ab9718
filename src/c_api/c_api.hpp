// c_api/c_api.hpp - what the C ABI's files share: handles, the loan state
// kept in callers' structs, status mapping, the error buffer and the guard
// that keeps C++ exceptions from crossing into C.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/segment.hpp"
#include "zipc/zipc.h"

namespace zipc {
class Queue;
class Subscriber;
class RpcServer;
class RpcClient;
class Listener;
}  // namespace zipc

namespace zipc::c_api {

// ---- errors ----

// Leaves message for zipc_last_error() and returns status.
zipc_status_t fail(zipc_status_t status, std::string_view message) noexcept;
// ZIPC_INVALID_ARGUMENT with "<function>: <what>".
zipc_status_t invalid(const char* function, const char* what) noexcept;

inline zipc_status_t from(Errc e) noexcept {
  return static_cast<zipc_status_t>(static_cast<int>(e));
}
zipc_status_t from(Status s) noexcept;

// Runs body (which returns a zipc_status_t); a zipc::Error becomes its Errc
// and message, any other exception ZIPC_OUT_OF_MEMORY or ZIPC_SYSTEM.
template <class Body>
zipc_status_t guard(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    return fail(from(e.errc()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(ZIPC_OUT_OF_MEMORY, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(ZIPC_SYSTEM, std::string(function) + ": " + e.what());
  } catch (...) {
    return fail(ZIPC_SYSTEM, std::string(function) + ": unknown exception");
  }
}

// ---- conversions ----

// docs/guide/timeouts.md: ZIPC_FOREVER (INT64_MAX, which is zipc::forever) waits
// without a deadline (so does any timeout past ~146 years); 0 and negative
// values try once, as an expired deadline does.
inline std::chrono::nanoseconds timeout(std::int64_t ns) noexcept {
  return std::chrono::nanoseconds(ns < 0 ? 0 : ns);
}
// True when a call with this timeout only tries once (the try_* form).
inline bool try_once(std::int64_t ns) noexcept {
  return ns <= 0;
}
inline zipc_wait_options_t default_wait() noexcept {
  zipc_wait_options_t w;
  zipc_wait_options_init(&w);
  return w;
}
WaitOptions to_cpp(const zipc_wait_options_t& w);
SegmentOptions to_cpp(const zipc_segment_options_t& s);
// The identity a C caller declared (NULL: none); invalid_argument when its name is not NUL-terminated.
std::optional<TypeIdentity> to_cpp(const zipc_type_identity_t* t);
// Copies a recorded identity to *out (ZIPC_OK), or ZIPC_NOT_FOUND naming `what` when none is recorded.
zipc_status_t identity_out(const std::optional<TypeIdentity>& held, std::string_view what, zipc_type_identity_t* out);
bool valid_name(const char* function, const char* name, zipc_status_t* status) noexcept;
// An options struct given by the caller is usable when its struct_size covers
// the first version of the struct (fields added later read as defaults).
template <class T>
bool options_ok(const char* function, const T* options, std::size_t v1_size, zipc_status_t* status) noexcept {
  if (options == nullptr || options->struct_size >= v1_size) return true;
  *status = invalid(function, "options not initialized (call the matching *_options_init first)");
  return false;
}

// The caller's options over the defaults init gives: only the struct_size
// bytes the caller's header knew are read (a program built against an older,
// shorter struct keeps working; the newer fields keep their defaults).
template <class T, class Init>
T read_options(const T* options, Init init) noexcept {
  T out;
  init(&out);
  if (options != nullptr) {
    const std::size_t n = options->struct_size < sizeof(T) ? options->struct_size : sizeof(T);
    std::memcpy(static_cast<void*>(&out), options, n);
    out.struct_size = sizeof(T);
  }
  return out;
}

// ---- loans kept in callers' structs ----

// Gives back the record a subscriber's read loan shows (topic.cpp).
void release_topic_loan(zipc_subscriber* subscriber) noexcept;
// Ends a publisher's write loan (topic.cpp): commits *commit_n bytes, or
// aborts when commit_n is NULL. ZIPC_TOO_LARGE keeps the loan.
zipc_status_t end_topic_write_loan(zipc_publisher* publisher, const std::size_t* commit_n,
                                   std::uint64_t* sequence) noexcept;
// The C++ endpoints behind the C handles (for the WaitSet).
Queue& queue_of(zipc_queue* queue) noexcept;
Subscriber& subscriber_of(zipc_subscriber* subscriber) noexcept;
RpcServer& rpc_server_of(zipc_rpc_server* server) noexcept;
RpcClient& rpc_client_of(zipc_rpc_client* client) noexcept;
Listener& listener_of(zipc_listener* listener) noexcept;

// Tags in private_[0]: a live loan's kind. Odd values so that a zeroed or
// ended struct never passes for a live one.
enum class LoanKind : std::uint64_t {
  none = 0,
  queue_write = 0x7a69706301,
  topic_write = 0x7a69706303,
  rpc_request_loan = 0x7a69706305,
  rpc_reply = 0x7a69706307,
  queue_read = 0x7a69706309,
  topic_read = 0x7a6970630b,
  rpc_response = 0x7a6970630d,
  rpc_request = 0x7a6970630f,
  rpc_ticket = 0x7a69706311,
};

// private_[0] holds the kind, the rest an object of type T (or a pointer).
template <class T, std::size_t N>
T* slot(std::uint64_t (&priv)[N]) noexcept {
  // NOLINTNEXTLINE(bugprone-sizeof-expression): T may be a pointer (a loan that points at its request)
  static_assert(sizeof(T) <= (N - 1) * sizeof(std::uint64_t),
                "c_api: the object does not fit the struct's private area");
  static_assert(alignof(T) <= alignof(std::uint64_t),
                "c_api: the object needs more alignment than the private area has");
  return std::launder(reinterpret_cast<T*>(&priv[1]));
}
template <class T, std::size_t N>
const T* slot(const std::uint64_t (&priv)[N]) noexcept {
  return std::launder(reinterpret_cast<const T*>(&priv[1]));
}
template <std::size_t N>
LoanKind kind_of(const std::uint64_t (&priv)[N]) noexcept {
  return static_cast<LoanKind>(priv[0]);
}
template <class T, std::size_t N, class... Args>
T* emplace(std::uint64_t (&priv)[N], LoanKind kind, Args&&... args) {
  T* p = ::new (static_cast<void*>(&priv[1])) T(std::forward<Args>(args)...);
  static_cast<void>(slot<T>(priv));  // the size checks
  priv[0] = static_cast<std::uint64_t>(kind);
  return p;
}
template <class T, std::size_t N>
void destroy(std::uint64_t (&priv)[N]) noexcept {
  slot<T>(priv)->~T();
  priv[0] = static_cast<std::uint64_t>(LoanKind::none);
}

inline void clear(zipc_write_loan_t* loan) noexcept {
  std::memset(loan, 0, sizeof *loan);
}
inline void clear(zipc_read_loan_t* loan) noexcept {
  std::memset(loan, 0, sizeof *loan);
}

}  // namespace zipc::c_api
