// Pieces of the inbound side shared by its core (inbound.cpp) and JetStream
// (inbound_js.cpp) paths.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "internal.hpp"

namespace zipc::bridge_detail {

// The bridge headers of one NATS message (views into the message).
struct Headers {
  std::string_view origin, channel;
  std::uint64_t seq = 0, ns = 0, skip = 0, count = 0;
  bool has_seq = false;
};

Headers read_headers(natsMsg* msg);

// The key of m.expected for a message: origin and channel.
std::string origin_key(const Headers& h);

enum class Verdict { deliver, duplicate, loop };

// Sequence accounting per (origin, channel): a gap beyond what the sender
// skipped on purpose is counted lost exactly, an old sequence is a duplicate.
// Caller holds local_mu.
Verdict judge(MappingRuntime& m, const Headers& h);

// One core NATS message (a single message or a bridge batch): judged,
// delivered locally, counted, then destroyed; true. Driven by the caller
// (m.caller) a message that finds the local channel full under
// overflow=block is held instead (m.held_*; false): call again with
// m.held_msg to go on from where it stopped. Takes local_mu.
bool deliver_core_msg(MappingRuntime& m, natsMsg* msg);

// Stopping with a message held: what it still had to deliver is counted
// lost, and it is destroyed.
void drop_held(MappingRuntime& m);

// Publishes one message locally. False when dropped (overflow=drop, counted)
// or the bridge is stopping. Caller holds local_mu.
bool deliver(MappingRuntime& m, const Headers& h, const char* data, std::size_t n);

}  // namespace zipc::bridge_detail
