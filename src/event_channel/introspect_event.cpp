// Introspection of event channels (read-only; see introspect_map.hpp):
// geometry, the notifications sent, and one participant per owned listener
// slot (its process, alive or dead, the ids pending in its bitmap, whether it
// sleeps, what it took so far).
#include <bit>

#include "core/introspect_map.hpp"
#include "layout/event_channel_layout.hpp"

namespace zipc::detail {

namespace {
// The creator's segment parameters (event_channel.cpp's spec_of).
constexpr std::size_t kParamVersion = 0;
constexpr std::size_t kParamMaxEventId = 1;
constexpr std::size_t kParamMaxListeners = 2;
}  // namespace

void inspect_event_channel(const ReadOnlyView& v, ChannelReport& report) {
  using namespace layout;
  if (!v.fits(0, sizeof(EventChannelControl))) {
    report.problem = "payload too small for an event channel's control block";
    return;
  }
  const auto* ctl = v.at<EventChannelControl>(0);
  const EventChannelConfig& cfg = ctl->config;
  const auto& params = report.segment.params;
  if (cfg.magic != kEventChannelMagic || cfg.layout_version != kEventChannelLayoutVersion ||
      params[kParamVersion] != kEventChannelLayoutVersion || cfg.max_event_id > kMaxEventIdLimit ||
      cfg.max_listeners < 1 || cfg.max_listeners > kMaxListenersLimit || params[kParamMaxEventId] != cfg.max_event_id ||
      params[kParamMaxListeners] != cfg.max_listeners || cfg.bitmap_words != event_bitmap_words(cfg.max_event_id) ||
      cfg.bits_offset != event_bits_offset(cfg.max_listeners) ||
      !v.fits(0, event_payload_bytes(cfg.max_listeners, cfg.max_event_id))) {
    report.problem = "event channel geometry does not validate";
    return;
  }
  add(report.geometry, "max_event_id", cfg.max_event_id);
  add(report.geometry, "max_listeners", cfg.max_listeners);
  const std::uint64_t notifications = peek(ctl->admin.notifications);
  add(report.counters, "notifications", notifications);
  report.messages = notifications;
  report.messages_known = true;

  const auto* slots = v.at<ListenerSlot>(event_slots_offset());
  const auto* bits = v.at<std::atomic<std::uint64_t>>(cfg.bits_offset);
  std::uint64_t received = 0;
  for (std::uint32_t i = 0; i < cfg.max_listeners; ++i) {
    const ListenerSlot& s = slots[i];
    const std::uint64_t owner = peek(s.owner);
    if (owner == 0) continue;
    ParticipantReport p;
    p.role = "listener";
    p.process = unpack(owner);
    p.alive = is_alive_packed(owner);
    p.slot = i;
    std::uint64_t pending = 0;
    for (std::uint32_t w = 0; w < cfg.bitmap_words; ++w)
      pending += static_cast<std::uint64_t>(std::popcount(peek(bits[std::uint64_t{i} * cfg.bitmap_words + w])));
    const std::uint64_t took = peek(s.received);
    add(p.fields, "pending", pending);  // ids notified and not yet taken
    add(p.fields, "received", took);
    // Registered sleepers on its event: a blocked wait() or a WaitSet.
    add(p.fields, "sleeping", peek(s.wake.waiters));
    received += took;
    report.participants.push_back(std::move(p));
  }
  report.received = received;
  report.readable = true;
}

}  // namespace zipc::detail
