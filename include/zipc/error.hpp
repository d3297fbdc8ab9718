/// \file
/// zipc/error.hpp - errors and statuses.
///
/// \code
///   try {
///     auto seg = zipc::Segment::open("orders", zipc::SegmentKind::queue);
///   } catch (const zipc::Error& e) {
///     if (e.errc() == zipc::Errc::not_found) { /* create it */ }
///     std::puts(e.what());  // "segment 'orders': not found (no /dev/shm/zipc.orders)"
///   }
/// \endcode
///
/// Setup calls (create, open, map, validate) throw zipc::Error. Hot paths are
/// noexcept and return a zipc::Status instead.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace zipc {

/// Why a setup call failed. Values are stable (they cross the C API).
enum class Errc : int {
  ok = 0,                    ///< success (never thrown; what error_code(Errc::ok) means)
  not_found = 1,             ///< no segment of that name
  already_exists = 2,        ///< create() found one
  permission_denied = 3,     ///< mode/uid forbids access
  wrong_kind = 4,            ///< a queue opened as a topic, ...
  version_mismatch = 5,      ///< layout version differs from this library's
  truncated = 6,             ///< the file is shorter than its header says
  bad_magic = 7,             ///< not a zipc segment
  corrupt_header = 8,        ///< checksum or a field is out of range
  init_timeout = 9,          ///< creator still initializing after the timeout
  creator_died = 10,         ///< creator died before finishing initialization
  invalid_name = 11,         ///< empty, '/', too long, bad characters
  invalid_argument = 12,     ///< an option out of range
  too_large = 13,            ///< a message over the configured maximum
  corrupt = 14,              ///< shared state failed validation
  peer_dead = 15,            ///< the other side died
  not_retained = 16,         ///< asked for a sequence older than the log holds
  address_unavailable = 17,  ///< a fixed-address mapping could not be placed
  out_of_memory = 18,        ///< a heap or ring has no room
  busy = 19,                 ///< all participant slots in use
  closed = 20,               ///< the channel was closed
  timeout = 21,              ///< a bounded wait expired
  system = 22,               ///< an unexpected OS error (errno in the message)
  options_mismatch = 23,     ///< open_or_create: options disagree with the existing segment
  type_mismatch = 24,        ///< a typed channel opened with another message type
  wrong_role = 25,           ///< a handle asked for something its role does not allow
};

/// The std::error_category of Errc values (name "zipc"; messages from to_string(Errc)).
const std::error_category& error_category() noexcept;
/// Lets an Errc convert to std::error_code (found by argument-dependent lookup).
inline std::error_code make_error_code(Errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}
/// A description for messages ("not found"); "unknown zipc error" for a value that is no Errc.
const char* to_string(Errc e) noexcept;
/// The enumerator's spelling ("not_found"): what the C ABI (zipc_status_str) and Python's
/// exception kinds say. nullptr for a value that is no Errc.
const char* errc_name(Errc e) noexcept;

/// A failed setup call: an Errc plus a message that names the object and the cause.
class Error : public std::system_error {
 public:
  /// An error of this code; what() gives message (with the code's description appended when message does not say it).
  Error(Errc code, const std::string& message);
  /// The code, as an Errc.
  [[nodiscard]] Errc errc() const noexcept { return static_cast<Errc>(code().value()); }
  /// The message, ending with the code's description only when the message
  /// does not say it already (system_error's own what() always appends it:
  /// "not found (...): not found").
  [[nodiscard]] const char* what() const noexcept override { return what_.what(); }

 private:
  std::runtime_error what_;  // copies share the text without throwing
};

/// Result of a hot-path call. Never thrown.
enum class Status : std::uint8_t {
  ok = 0,        ///< success
  full,          ///< try_* found no room
  empty,         ///< try_* found nothing to read
  timeout,       ///< a bounded wait expired
  closed,        ///< the channel is closed (and, for readers, drained)
  too_large,     ///< the message exceeds the configured maximum; nothing was sent
  corrupt,       ///< shared state failed validation; the call did nothing harmful
  overrun,       ///< a lossy reader was lapped; see lost()
  peer_dead,     ///< the other side died
  not_retained,  ///< the requested position is no longer held
  busy,  ///< no free participant slot; a Publisher's one loan is out; debug builds: another thread is inside the handle
  wrong_role,     ///< API misuse: the handle lacks the role (send on a consumer-only queue handle, ...)
  not_supported,  ///< API misuse: this mode does not offer the call (acquire on a lossy subscriber, ...)
  detached,       ///< API misuse: the handle is detached, moved from or default-constructed (docs/guide/handles.md)
  remote_error,   ///< an Rpc handler failed: the response carries its code and message
};

/// The enumerator's spelling ("ok", "full", ...); "unknown" for a value that is no Status.
const char* to_string(Status s) noexcept;

/// What every write loan's commit (and Topic publish) returns: ok with the
/// message's sequence (Topic: its dense sequence number; Queue: its position
/// in the ring), or why nothing was published.
struct [[nodiscard]] CommitResult {
  Status status = Status::ok;  ///< ok, or why nothing was published
  std::uint64_t sequence = 0;  ///< when ok
  /// status == Status::ok.
  [[nodiscard]] bool ok() const noexcept { return status == Status::ok; }
};

}  // namespace zipc

/// \cond STD_SPECIALIZATIONS
// Errc converts to std::error_code (zipc::make_error_code).
template <>
struct std::is_error_code_enum<zipc::Errc> : std::true_type {};
/// \endcond
