#include "zipc/error.hpp"

#include "core/fail.hpp"

#include <cerrno>
#include <cstddef>
#include <iterator>

#include "platform/file.hpp"  // error_text

namespace zipc {
namespace {

class Category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "zipc"; }
  std::string message(int v) const override { return to_string(static_cast<Errc>(v)); }
};

}  // namespace

const std::error_category& error_category() noexcept {
  static const Category category;
  return category;
}

namespace {

// The one table of error codes: each Errc's enumerator spelling (errc_name: what the C ABI's
// zipc_status_str and Python's exception kinds say) and its description (to_string: what
// Error::what() says). Indexed by the Errc value, which is stable.
struct ErrcText {
  const char* name;
  const char* description;
};
constexpr ErrcText kErrcText[] = {
    {"ok", "ok"},
    {"not_found", "not found"},
    {"already_exists", "already exists"},
    {"permission_denied", "permission denied"},
    {"wrong_kind", "wrong kind"},
    {"version_mismatch", "layout version mismatch"},
    {"truncated", "truncated"},
    {"bad_magic", "bad magic"},
    {"corrupt_header", "corrupt header"},
    {"init_timeout", "still initializing after the timeout"},
    {"creator_died", "creator died during initialization"},
    {"invalid_name", "invalid name"},
    {"invalid_argument", "invalid argument"},
    {"too_large", "too large"},
    {"corrupt", "corrupt shared state"},
    {"peer_dead", "peer dead"},
    {"not_retained", "not retained"},
    {"address_unavailable", "address unavailable"},
    {"out_of_memory", "out of memory"},
    {"busy", "busy"},
    {"closed", "closed"},
    {"timeout", "timeout"},
    {"system", "system error"},
    {"options_mismatch", "options mismatch"},
    {"type_mismatch", "type mismatch"},
    {"wrong_role", "wrong role"},
};
static_assert(std::size(kErrcText) == static_cast<std::size_t>(Errc::wrong_role) + 1,
              "kErrcText has one entry per Errc, in value order");

const ErrcText* find(Errc e) noexcept {
  const auto i = static_cast<std::size_t>(e);
  return i < std::size(kErrcText) ? &kErrcText[i] : nullptr;
}

}  // namespace

namespace {
std::string with_code(Errc code, const std::string& message) {
  const char* text = to_string(code);
  if (message.find(text) != std::string::npos) return message;
  return message.empty() ? std::string(text) : message + ": " + text;
}
}  // namespace

Error::Error(Errc code, const std::string& message)
    : std::system_error(make_error_code(code)), what_(with_code(code, message)) {}

const char* errc_name(Errc e) noexcept {
  const ErrcText* t = find(e);
  return t != nullptr ? t->name : nullptr;
}

void fail(Errc e, std::string_view kind, std::string_view name, const std::string& why) {
  throw Error(e, std::string(kind) + " '" + std::string(name) + "': " + to_string(e) + " (" + why + ")");
}

const char* to_string(Errc e) noexcept {
  const ErrcText* t = find(e);
  return t != nullptr ? t->description : "unknown zipc error";
}

const char* to_string(Status s) noexcept {
  switch (s) {
    case Status::ok: return "ok";
    case Status::full: return "full";
    case Status::empty: return "empty";
    case Status::timeout: return "timeout";
    case Status::closed: return "closed";
    case Status::too_large: return "too_large";
    case Status::corrupt: return "corrupt";
    case Status::overrun: return "overrun";
    case Status::peer_dead: return "peer_dead";
    case Status::not_retained: return "not_retained";
    case Status::busy: return "busy";
    case Status::wrong_role: return "wrong_role";
    case Status::not_supported: return "not_supported";
    case Status::detached: return "detached";
    case Status::remote_error: return "remote_error";
  }
  return "unknown";
}

Errc errc_from_errno(int err) noexcept {
  switch (err) {
    case ENOENT: return Errc::not_found;
    case EACCES:
    case EPERM: return Errc::permission_denied;
    case EEXIST: return Errc::already_exists;
    case ENOSPC:
    case ENOMEM: return Errc::out_of_memory;
    case ENAMETOOLONG: return Errc::invalid_name;
    case ELOOP: return Errc::permission_denied;  // O_NOFOLLOW refused a symlink
    default: return Errc::system;
  }
}

void fail_errno(int neg_errno, std::string_view kind, std::string_view name, const std::string& what) {
  const int err = -neg_errno;
  fail(errc_from_errno(err), kind, name, what + ": " + platform::error_text(err));
}

}  // namespace zipc
