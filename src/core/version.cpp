// zipc::version(): the version this library was built as.
#include "zipc/version.hpp"

namespace zipc {

const char* version() noexcept {
  return ZIPC_VERSION_STRING;
}

}  // namespace zipc
