// Publishing one bridge message to NATS: the message with its Zipc-* headers,
// the core publish with its back-pressure, and the outbound position file.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "internal.hpp"
#include "link.hpp"

namespace zipc::bridge_detail {

std::string u64s(std::uint64_t v);

// The NATS message for a local message (or a batch of `count` frames); null
// when the client has no memory for it.
natsMsg* make_msg(const MappingRuntime& m, std::uint64_t seq, std::uint64_t ns, const void* data, std::size_t n,
                  std::uint64_t skip = 0, std::uint64_t count = 0);

// What publish_core did with a message.
enum class Sent : std::uint8_t {
  sent,     // buffered by the client (or written)
  dropped,  // overflow=drop: counted in lost
  held,     // not taken: stopping, or under `once` the client refused it; send it again later
};

// Core: one publish; under overflow=block retried until it is buffered
// (`once`: tried once, for a caller's thread that must not wait).
Sent publish_core(MappingRuntime& m, Link& link, const std::atomic<bool>& stop, std::uint64_t seq, std::uint64_t ns,
                  const void* data, std::size_t n, std::uint64_t skip, std::uint64_t count, bool once);

// Outbound: the next local sequence to send, kept for a restart.
void save_position(MappingRuntime& m, std::uint64_t next);

}  // namespace zipc::bridge_detail
