// Internal: what the topic subscriber's files share.
#pragma once

#include "zipc/error.hpp"
#include "zipc/topic.hpp"

namespace zipc::detail {

// A result carrying only a status (nothing read).
inline ReadResult rr(Status st) noexcept {
  ReadResult r;
  r.status = st;
  return r;
}

}  // namespace zipc::detail
