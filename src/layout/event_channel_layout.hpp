// Shared-memory layout of a named event channel (the payload of a
// SegmentKind::event segment): notification only, no payload.
//
//  payload offset            size                          what
//  0                         128                           EventChannelConfig (immutable after init)
//  128                       128                           EventChannelAdmin  (counters)
//  256                       128 * max_listeners           ListenerSlot[max_listeners]
//  bits_offset (128-aligned) bitmap_bytes * max_listeners  one pending-id bitmap per listener
//
// A notifier sets bit `id` in the bitmap of every listener slot that has an
// owner, then wakes that slot's event. A listener takes its whole bitmap
// word by word with exchange(0). No locks: a process killed at any
// instruction leaves at most a bit set or not set (a notification that was
// not finished), never a blocked peer. A dead listener's slot is taken over
// by the next listener (its bitmap cleared).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "zipc/event.hpp"

namespace zipc::layout {

inline constexpr std::uint64_t kEventChannelMagic = 0x314e4843544e5645ull;  // "EVNTCHN1"
inline constexpr std::uint32_t kEventChannelLayoutVersion = 1;
inline constexpr std::uint32_t kMaxEventIdLimit = (1u << 16) - 1;  // ids 0..65535
inline constexpr std::uint32_t kMaxListenersLimit = 1024;

// Written once by the creator before the segment is marked ready.
struct EventChannelConfig {
  std::uint64_t magic;
  std::uint32_t layout_version;
  std::uint32_t max_event_id;   // ids are 0..max_event_id
  std::uint32_t max_listeners;  // listener slots
  std::uint32_t bitmap_words;   // 64-bit words per listener bitmap: max_event_id / 64 + 1, rounded to 16
  std::uint64_t bits_offset;    // from the payload start
  std::uint8_t reserved[96];
};
static_assert(sizeof(EventChannelConfig) == 128, "the config is one 128-byte line");
static_assert(std::is_standard_layout_v<EventChannelConfig>, "shared structs are standard layout");

struct alignas(128) EventChannelAdmin {
  // Notifications sent (one per notify call that reached a listener or not);
  // relaxed: a statistic for zipc stat.
  std::atomic<std::uint64_t> notifications;
  std::uint8_t reserved[120];
};
static_assert(sizeof(EventChannelAdmin) == 128, "the admin line is one 128-byte line");
static_assert(std::is_standard_layout_v<EventChannelAdmin>, "shared structs are standard layout");

struct alignas(128) ListenerSlot {
  std::atomic<std::uint64_t> owner;  // packed ProcessId of the listener, 0 = free
  Event wake;                        // the listener sleeps here; notifiers wake it
  // Notifications this listener took (ids, counted once per take); written
  // by the listener only, relaxed: a statistic.
  std::atomic<std::uint64_t> received;
  std::uint8_t reserved[104];
};
static_assert(sizeof(ListenerSlot) == 128, "a listener slot is one 128-byte line");
static_assert(offsetof(ListenerSlot, wake) == 8, "the wake event follows the owner");
static_assert(std::is_standard_layout_v<ListenerSlot>, "shared structs are standard layout");

struct EventChannelControl {
  EventChannelConfig config;
  EventChannelAdmin admin;
  // ListenerSlot[max_listeners] follows at slots_offset().
};
static_assert(sizeof(EventChannelControl) == 256, "config and admin lines");

inline constexpr std::uint64_t event_slots_offset() noexcept {
  return sizeof(EventChannelControl);
}
inline constexpr std::uint32_t event_bitmap_words(std::uint32_t max_event_id) noexcept {
  return ((max_event_id / 64 + 1) + 15) / 16 * 16;  // whole 128-byte lines
}
inline constexpr std::uint64_t event_bits_offset(std::uint32_t max_listeners) noexcept {
  return event_slots_offset() + std::uint64_t{max_listeners} * sizeof(ListenerSlot);
}
inline constexpr std::uint64_t event_payload_bytes(std::uint32_t max_listeners, std::uint32_t max_event_id) noexcept {
  return event_bits_offset(max_listeners) + std::uint64_t{max_listeners} * event_bitmap_words(max_event_id) * 8;
}
static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "bitmap words are lock-free atomics");

}  // namespace zipc::layout
