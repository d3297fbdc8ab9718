// Outbound: a local topic (reliable subscriber) or queue (consumer) -> NATS;
// core in core_outbound.cpp, JetStream in js_outbound.cpp.
#include <chrono>

#include "core_outbound.hpp"
#include "internal.hpp"
#include "link.hpp"

namespace zipc::bridge_detail {

void run_outbound(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  using namespace std::chrono_literals;
  if (m.cfg.mode == BridgeMode::jetstream) return run_outbound_jetstream(m, link, stop);
  CoreOutbound out(m, link, stop, /*caller=*/false);
  while (!stop.load(std::memory_order_relaxed)) out.pump(50ms);
  out.finish();
}

}  // namespace zipc::bridge_detail
