// c_api/common.cpp - statuses, the thread-local error message, versions and
// the shared options of the C ABI.
#include <string>

#include "c_api/c_api.hpp"
#include "zipc/version.hpp"

namespace {
// The message of the last failing call on this thread (zipc_last_error). A
// plain array, not a std::string: it has no destructor, so calls made from
// atexit handlers or late thread-exit code still find it alive. Longer
// messages are cut (with "...").
constexpr std::size_t kMessageCapacity = 1024;
thread_local char t_last_error[kMessageCapacity];
}  // namespace

namespace zipc::c_api {

zipc_status_t fail(zipc_status_t status, std::string_view message) noexcept {
  std::size_t n = message.size();
  if (n >= kMessageCapacity) {
    n = kMessageCapacity - 4;
    std::memcpy(t_last_error + n, "...", 4);
  } else {
    t_last_error[n] = '\0';
  }
  std::memcpy(t_last_error, message.data(), n);
  return status;
}

zipc_status_t invalid(const char* function, const char* what) noexcept {
  try {
    return fail(ZIPC_INVALID_ARGUMENT, std::string(function) + ": " + what);
  } catch (...) {
    return fail(ZIPC_INVALID_ARGUMENT, "invalid argument");
  }
}

zipc_status_t from(Status s) noexcept {
  switch (s) {
    case Status::ok: return ZIPC_OK;
    case Status::full: return ZIPC_FULL;
    case Status::empty: return ZIPC_EMPTY;
    case Status::timeout: return ZIPC_TIMEOUT;
    case Status::closed: return ZIPC_CLOSED;
    case Status::too_large: return ZIPC_TOO_LARGE;
    case Status::corrupt: return ZIPC_CORRUPT;
    case Status::overrun: return ZIPC_OVERRUN;
    case Status::peer_dead: return ZIPC_PEER_DEAD;
    case Status::not_retained: return ZIPC_NOT_RETAINED;
    case Status::busy: return ZIPC_BUSY;
    case Status::wrong_role: return ZIPC_WRONG_ROLE;
    case Status::not_supported: return ZIPC_NOT_SUPPORTED;
    case Status::detached: return ZIPC_DETACHED;
    case Status::remote_error: return ZIPC_REMOTE_ERROR;
  }
  return ZIPC_CORRUPT;
}

WaitOptions to_cpp(const zipc_wait_options_t& w) {
  if (w.strategy > ZIPC_WAIT_BLOCK) {
    throw Error(Errc::invalid_argument, "wait options: strategy " + std::to_string(w.strategy) + " is not 0, 1 or 2");
  }
  WaitOptions out;
  out.strategy = static_cast<WaitStrategy>(w.strategy);
  out.spin_ns = w.spin_ns;
  out.yields = w.yields;
  return out;
}

SegmentOptions to_cpp(const zipc_segment_options_t& s) {
  if (s.huge_pages > ZIPC_HUGE_PAGES_REQUIRE) {
    throw Error(Errc::invalid_argument,
                "segment options: huge_pages " + std::to_string(s.huge_pages) + " is not 0, 1 or 2");
  }
  SegmentOptions out;
  if (s.path != nullptr) out.path = s.path;
  out.mode = s.mode;
  out.prefault = s.prefault;
  out.huge_pages = static_cast<HugePages>(s.huge_pages);
  out.lock_memory = s.lock_memory;
  out.open_timeout = std::chrono::milliseconds(s.open_timeout_ms);
  return out;
}

bool valid_name(const char* function, const char* name, zipc_status_t* status) noexcept {
  if (name != nullptr) return true;
  *status = invalid(function, "name is NULL");
  return false;
}

}  // namespace zipc::c_api

using namespace zipc::c_api;

extern "C" {

// The enumerator's name without ZIPC_ (what a program may match on).
const char* zipc_status_str(zipc_status_t status) {
  switch (status) {
    case ZIPC_FULL: return "full";
    case ZIPC_EMPTY: return "empty";
    case ZIPC_OVERRUN: return "overrun";
    case ZIPC_NOT_SUPPORTED: return "not_supported";
    case ZIPC_DETACHED: return "detached";
    case ZIPC_REMOTE_ERROR: return "remote_error";
    case ZIPC_DOUBLE_FREE: return "double_free";
    case ZIPC_FOREIGN_POINTER: return "foreign_pointer";
    case ZIPC_CORRUPT_BLOCK: return "corrupt_block";
    default: break;
  }
  // ZIPC_OK .. ZIPC_WRONG_ROLE are the zipc::Errc values.
  const char* name = zipc::errc_name(static_cast<zipc::Errc>(status));
  return name != nullptr ? name : "unknown";
}

const char* zipc_last_error(void) {
  return t_last_error;
}

void zipc_clear_error(void) {
  t_last_error[0] = '\0';
}

uint32_t zipc_abi_version(void) {
  return ZIPC_ABI_VERSION;
}

const char* zipc_version_string(void) {
  return ZIPC_VERSION_STRING;
}

zipc_status_t zipc_wait_options_init(zipc_wait_options_t* options) {
  if (options == nullptr) return invalid("zipc_wait_options_init", "options is NULL");
  const zipc::WaitOptions d;
  options->strategy = static_cast<uint32_t>(d.strategy);
  options->spin_ns = d.spin_ns;
  options->yields = d.yields;
  return ZIPC_OK;
}

zipc_status_t zipc_segment_options_init(zipc_segment_options_t* options) {
  if (options == nullptr) return invalid("zipc_segment_options_init", "options is NULL");
  const zipc::SegmentOptions d;
  std::memset(options, 0, sizeof *options);
  options->path = nullptr;
  options->mode = d.mode;
  options->huge_pages = static_cast<uint32_t>(d.huge_pages);
  options->prefault = d.prefault;
  options->lock_memory = d.lock_memory;
  options->open_timeout_ms = static_cast<uint64_t>(d.open_timeout.count());
  return ZIPC_OK;
}

}  // extern "C"
