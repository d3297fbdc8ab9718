// Internal: durable reliable subscribers (docs/design/topic.md, "Durable subscribers").
//
// A durable slot keeps its name, position and grace after its subscriber
// detaches (owner kOrphanOwner) or dies (a dead owner). Publishers hold it
// like a live reliable subscriber until the grace, counted from the first
// time a publisher needed room past it (or the detach), has run out; then a
// publisher records the next unread sequence in the slot and parks it (owner
// kParkedOwner), which releases the position. Attaching with the name takes
// the slot back with one CAS on its owner, the same word a parking publisher
// CASes: exactly one of them wins, so a restart either finds its position
// held (exact resume) or parked (the lost count is exact: sequences are dense).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "topic/topic_state.hpp"

namespace zipc::detail {

// Refuses a bad name, a lossy durable subscriber or a grace out of range
// (Errc::invalid_argument naming the topic and the rule).
void check_durable_options(std::string_view topic, const SubscribeOptions& options);

// What a durable attach found.
struct DurableClaim {
  enum class Kind : std::uint8_t { fresh, held, parked };
  Kind kind = Kind::fresh;
  std::uint32_t slot = 0;
  std::uint64_t position = 0;  // held: the position the slot still holds
  std::uint64_t sequence = 0;  // parked: the next unread sequence when it was parked
};

// Takes the slot named options.durable_name (or a new one for a new name)
// under AdminLine::durable_lock. Errc::busy while a live subscriber holds the
// name, or when no slot is free.
DurableClaim claim_durable_slot(TopicState& s, const SubscribeOptions& options);

// A publisher making room found the durable slot `slot` (owner `owner`, not
// alive) below the room it needs: true while the position is still held
// (the grace runs); false once this call parked it (the position is released).
bool durable_hold(TopicState& s, layout::SubscriberSlot& slot, std::uint64_t owner, std::uint64_t position) noexcept;

// A durable subscriber detaching: its position stays held for the grace.
void durable_detach(TopicState& s, layout::SubscriberSlot& slot) noexcept;

// True when the slot is durable and its owner word is not a process
// (orphaned or parked): a non-durable subscriber must not take it (parked
// slots only as a last resort).
inline bool durable_reserved(const layout::SubscriberSlot& slot, std::uint64_t owner) noexcept {
  // acquire: pairs with the attacher's release store of the flag.
  return slot.durable.load(std::memory_order_acquire) != 0 && owner != 0;
}

}  // namespace zipc::detail
