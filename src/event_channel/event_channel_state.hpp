// Internal: what every EventChannel, Listener and Notifier handle of one mapping shares.
#pragma once

#include <atomic>
#include <cstdint>

#include "layout/event_channel_layout.hpp"
#include "zipc/event.hpp"
#include "zipc/event_channel.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

struct EventChannelState {
  Segment segment;
  layout::EventChannelControl* control = nullptr;
  layout::ListenerSlot* slots = nullptr;
  std::atomic<std::uint64_t>* bits = nullptr;
  std::uint32_t max_event_id = 0;  // validated copies of the immutable config
  std::uint32_t max_listeners = 0;
  std::uint32_t bitmap_words = 0;
  WaitOptions wait{};

  // Listener `slot`'s pending-id bitmap (bitmap_words words).
  std::atomic<std::uint64_t>* bitmap(std::uint32_t slot) const noexcept {
    return bits + std::uint64_t{slot} * bitmap_words;
  }
};

}  // namespace zipc::detail
