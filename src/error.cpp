#include "zipc/error.hpp"

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

const char* to_string(Errc e) noexcept {
  switch (e) {
    case Errc::ok: return "ok";
    case Errc::not_found: return "not found";
    case Errc::already_exists: return "already exists";
    case Errc::permission_denied: return "permission denied";
    case Errc::wrong_kind: return "wrong kind";
    case Errc::version_mismatch: return "layout version mismatch";
    case Errc::truncated: return "truncated";
    case Errc::bad_magic: return "bad magic";
    case Errc::corrupt_header: return "corrupt header";
    case Errc::init_timeout: return "still initializing after the timeout";
    case Errc::creator_died: return "creator died during initialization";
    case Errc::invalid_name: return "invalid name";
    case Errc::invalid_argument: return "invalid argument";
    case Errc::too_large: return "too large";
    case Errc::corrupt: return "corrupt shared state";
    case Errc::peer_dead: return "peer dead";
    case Errc::not_retained: return "not retained";
    case Errc::address_unavailable: return "address unavailable";
    case Errc::out_of_memory: return "out of memory";
    case Errc::busy: return "busy";
    case Errc::closed: return "closed";
    case Errc::timeout: return "timeout";
    case Errc::system: return "system error";
    case Errc::type_mismatch: return "type mismatch";
  }
  return "unknown zipc error";
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
  }
  return "unknown";
}

}  // namespace zipc
