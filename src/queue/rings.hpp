// The one dispatch from a queue to its ring type: each public call of
// zipc::Queue (and each loan call) looks at QueueImpl::ring once, at its top,
// and runs an instance of its body compiled for that ring.
#pragma once

#include "queue/lamport_ring.hpp"
#include "queue/queue_impl.hpp"
#include "queue/vyukov_ring.hpp"

namespace zipc::detail {

// Calls f(LamportRing{}) or f(VyukovRing{}) as q's ring says.
template <class F>
inline decltype(auto) on_ring(const QueueImpl& q, F&& f) {
  if (q.ring == RingKind::lamport) return f(LamportRing{});
  return f(VyukovRing{});
}

}  // namespace zipc::detail
