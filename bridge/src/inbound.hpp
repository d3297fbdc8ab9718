// Pieces of the inbound side shared by its core (inbound.cpp) and JetStream
// (inbound_js.cpp) paths.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "internal.hpp"

namespace zipc::bridge_detail {

// The header values of a NATS message as they arrived (views into it).
RawHeaders read_raw(natsMsg* msg);

// Reads and checks one received message (wire.hpp's check_message, then its
// Zipc-Auth when the mapping authenticates): Reject::none and *h filled, or
// why it must not be delivered (nothing counted).
Reject read_message(MappingRuntime& m, natsMsg* msg, bool batches, Headers* h);

// The checked headers of a message, without authentication (has_seq false
// when they do not pass).
Headers read_headers(natsMsg* msg);

enum class Verdict { deliver, duplicate, loop };

// Sequence accounting per (origin, channel): a gap beyond what the sender
// skipped on purpose is counted lost exactly, an old sequence is a duplicate;
// a jump beyond the mapping's seq_window (ahead, or behind with a newer
// Zipc-Time) starts a new epoch of the origin (counted, reported).
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
