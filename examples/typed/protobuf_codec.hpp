// A Protobuf message serialized straight into a queue write loan.
//
// Protobuf has no in-place reading: the reader parses the loan's bytes into
// a message object (one copy, on the reading side); the writer serializes
// into the block with no intermediate buffer.
#pragma once

#include <cstdint>
#include <span>

#include "snapshot.hpp"
#include "snapshot.pb.h"
#include "zipc/queue.hpp"

namespace zipc_example {

// Serializes message `id` into a loan of q; false when it does not fit or q has no room.
inline bool pb_send(zipc::Queue& q, pb::Snapshot& scratch, std::uint64_t id, std::chrono::nanoseconds timeout) {
  scratch.set_id(id);
  scratch.set_ts(id * 1000);
  scratch.set_symbol(kSymbol);
  auto* levels = scratch.mutable_levels();
  levels->Resize(static_cast<int>(kLevels), 0.0);
  for (std::size_t i = 0; i < kLevels; ++i) levels->Set(static_cast<int>(i), level_value(id, i));
  const std::size_t size = scratch.ByteSizeLong();
  zipc::QueueWriteLoan loan = q.reserve(timeout);
  if (!loan || size > loan.size()) return false;
  if (!scratch.SerializeToArray(loan.data().data(), static_cast<int>(size))) return false;
  return loan.commit(size).ok();
}

inline bool pb_read(std::span<const std::byte> msg, pb::Snapshot& scratch, std::uint64_t id, double* sum) {
  if (!scratch.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) return false;
  if (scratch.id() != id || scratch.symbol() != kSymbol) return false;
  return check_levels(id, std::span<const double>(scratch.levels().data(), scratch.levels().size()), sum);
}

}  // namespace zipc_example
