// Named event channels: notifiers set ids in every listener's bitmap and wake
// it; listeners take their bitmap (src/layout/event_channel_layout.hpp).
#include "event_channel/event_channel_state.hpp"

#include <bit>
#include <new>
#include <string>

#include "core/fail.hpp"
#include "core/options_mismatch.hpp"
#include "sync/use_check.hpp"
#include "zipc/process.hpp"

namespace zipc {

using detail::EventChannelState;

namespace {

enum Param : std::size_t { kVersion = 0, kMaxEventId = 1, kMaxListeners = 2 };

[[noreturn]] void channel_fail(Errc code, std::string_view name, const std::string& why) {
  fail(code, "event channel", name, why);
}

// Debug builds: what a listener's wait throws to a second thread inside it (use_check.hpp).
[[maybe_unused]] std::span<const std::uint32_t> in_use() {
  throw Error(Errc::busy, "listener: another thread is inside this listener's wait (one thread at a time)");
}

void check_geometry(std::string_view name, std::uint32_t max_event_id, std::uint32_t max_listeners) {
  if (max_event_id > layout::kMaxEventIdLimit) {
    channel_fail(
        Errc::invalid_argument, name,
        "max_event_id " + std::to_string(max_event_id) + " is over " + std::to_string(layout::kMaxEventIdLimit));
  }
  if (max_listeners < 1 || max_listeners > layout::kMaxListenersLimit) {
    channel_fail(Errc::invalid_argument, name,
                 "max_listeners " + std::to_string(max_listeners) + " is not in [1, " +
                     std::to_string(layout::kMaxListenersLimit) + "]");
  }
}

SegmentSpec spec_of(std::uint32_t max_event_id, std::uint32_t max_listeners) {
  SegmentSpec spec;
  spec.kind = SegmentKind::event;
  spec.payload_size = layout::event_payload_bytes(max_listeners, max_event_id);
  spec.params[kVersion] = layout::kEventChannelLayoutVersion;
  spec.params[kMaxEventId] = max_event_id;
  spec.params[kMaxListeners] = max_listeners;
  return spec;
}

InitFn init_of(std::uint32_t max_event_id, std::uint32_t max_listeners) {
  return [=](std::byte* p, std::size_t n) {
    if (n < layout::event_payload_bytes(max_listeners, max_event_id)) {
      throw Error(Errc::corrupt, "event channel payload too small");
    }
    // The creator is alone here: plain construction, published by the segment's init_state.
    auto* control = new (p) layout::EventChannelControl{};
    control->config.magic = layout::kEventChannelMagic;
    control->config.layout_version = layout::kEventChannelLayoutVersion;
    control->config.max_event_id = max_event_id;
    control->config.max_listeners = max_listeners;
    control->config.bitmap_words = layout::event_bitmap_words(max_event_id);
    control->config.bits_offset = layout::event_bits_offset(max_listeners);
    auto* slots = reinterpret_cast<layout::ListenerSlot*>(p + layout::event_slots_offset());
    for (std::uint32_t i = 0; i < max_listeners; ++i) new (slots + i) layout::ListenerSlot{};
    auto* bits = reinterpret_cast<std::atomic<std::uint64_t>*>(p + control->config.bits_offset);
    const std::uint64_t words = std::uint64_t{max_listeners} * control->config.bitmap_words;
    for (std::uint64_t i = 0; i < words; ++i) new (bits + i) std::atomic<std::uint64_t>(0);
  };
}

std::shared_ptr<EventChannelState> attach(Segment seg, const EventChannelOptions& o) {
  const std::string name = seg.name();
  if (seg.read_only()) {
    channel_fail(Errc::wrong_role, name, "cannot be opened read-only (listeners and notifiers both write it)");
  }
  const auto& pr = seg.params();
  if (pr[kVersion] != layout::kEventChannelLayoutVersion) {
    channel_fail(Errc::version_mismatch, name,
                 "created by event channel layout version " + std::to_string(pr[kVersion]) +
                     ", this library reads version " + std::to_string(layout::kEventChannelLayoutVersion));
  }
  if (pr[kMaxEventId] > layout::kMaxEventIdLimit || pr[kMaxListeners] < 1 ||
      pr[kMaxListeners] > layout::kMaxListenersLimit) {
    channel_fail(Errc::corrupt_header, name, "event channel parameters out of range");
  }
  const auto max_event_id = static_cast<std::uint32_t>(pr[kMaxEventId]);
  const auto max_listeners = static_cast<std::uint32_t>(pr[kMaxListeners]);
  const std::uint64_t need = layout::event_payload_bytes(max_listeners, max_event_id);
  if (seg.payload_size() < need) {
    channel_fail(
        Errc::truncated, name,
        "payload of " + std::to_string(seg.payload_size()) + " bytes, the channel needs " + std::to_string(need));
  }
  auto* control = reinterpret_cast<layout::EventChannelControl*>(seg.payload());
  const auto& cfg = control->config;
  if (cfg.magic != layout::kEventChannelMagic || cfg.max_event_id != max_event_id ||
      cfg.max_listeners != max_listeners || cfg.bitmap_words != layout::event_bitmap_words(max_event_id) ||
      cfg.bits_offset != layout::event_bits_offset(max_listeners)) {
    channel_fail(Errc::corrupt, name, "the control block disagrees with the segment header");
  }
  auto st = std::make_shared<EventChannelState>();
  st->segment = std::move(seg);
  st->control = control;
  // Private copies of the validated geometry: nothing read from shared memory later sizes a loop.
  st->max_event_id = max_event_id;
  st->max_listeners = max_listeners;
  st->bitmap_words = layout::event_bitmap_words(max_event_id);
  st->slots = reinterpret_cast<layout::ListenerSlot*>(st->segment.payload() + layout::event_slots_offset());
  st->bits =
      reinterpret_cast<std::atomic<std::uint64_t>*>(st->segment.payload() + layout::event_bits_offset(max_listeners));
  st->wait = o.wait;
  return st;
}

}  // namespace

// ---------------------------------------------------------------- EventChannel

EventChannel EventChannel::create(std::string_view name, const EventChannelOptions& options) {
  check_geometry(name, options.max_event_id, options.max_listeners);
  EventChannel c;
  c.state_ = attach(Segment::create(name, spec_of(options.max_event_id, options.max_listeners),
                                    init_of(options.max_event_id, options.max_listeners), options.segment),
                    options);
  return c;
}

EventChannel EventChannel::open(std::string_view name, const EventChannelOptions& options) {
  EventChannel c;
  c.state_ = attach(Segment::open(name, SegmentKind::event, options.segment), options);
  return c;
}

EventChannel EventChannel::open_or_create(std::string_view name, const EventChannelOptions& options, bool* created) {
  check_geometry(name, options.max_event_id, options.max_listeners);
  bool made = false;
  EventChannel c;
  c.state_ =
      attach(Segment::open_or_create(name, spec_of(options.max_event_id, options.max_listeners),
                                     init_of(options.max_event_id, options.max_listeners), options.segment, &made),
             options);
  if (created != nullptr) *created = made;
  if (!made) {
    detail::check_existing_geometry("event channel '" + std::string(name) + "'", options.accept_existing,
                                    {{"max_event_id", options.max_event_id, c.state_->max_event_id, ""},
                                     {"max_listeners", options.max_listeners, c.state_->max_listeners, ""}});
  }
  return c;
}

EventChannel EventChannel::open_fd(int fd, const EventChannelOptions& options) {
  const std::string name = "fd " + std::to_string(fd);
  EventChannel c;
  c.state_ = attach(Segment::open_fd(fd, SegmentKind::event, options.segment, name), options);
  return c;
}

bool EventChannel::remove(std::string_view name, const SegmentOptions& segment) {
  return Segment::remove(name, segment);
}

EventChannel::~EventChannel() = default;

// A detached handle (docs/guide/handles.md): zeros and an empty segment.
std::uint32_t EventChannel::max_event_id() const noexcept {
  return state_ ? state_->max_event_id : 0;
}
std::uint32_t EventChannel::max_listeners() const noexcept {
  return state_ ? state_->max_listeners : 0;
}
std::uint64_t EventChannel::notifications() const noexcept {
  if (!state_) return 0;
  return state_->control->admin.notifications.load(std::memory_order_relaxed);  // relaxed: a statistic
}
const Segment& EventChannel::segment() const noexcept {
  static const Segment none;
  return state_ ? state_->segment : none;
}

Listener EventChannel::listener() {
  if (!state_)
    throw Error(Errc::invalid_argument,
                "event channel: listener() on a detached handle (moved from, detached or default)");
  EventChannelState& s = *state_;
  const std::uint64_t me = pack(ProcessId::current());
  for (int pass = 0; pass < 2; ++pass) {
    for (std::uint32_t i = 0; i < s.max_listeners; ++i) {
      auto& slot = s.slots[i];
      // acquire: pairs with the release store that freed the slot.
      std::uint64_t owner = slot.owner.load(std::memory_order_acquire);
      const bool take = pass == 0 ? owner == 0 : owner != 0 && !is_alive_packed(owner);
      // acq_rel: owning the slot before we clear its bitmap; notifiers that
      // load the owner after this see a live listener and set its bits.
      if (take && slot.owner.compare_exchange_strong(owner, me, std::memory_order_acq_rel)) {
        // A dead or earlier listener's pending ids are not ours: start empty.
        // (A notify racing with this may be lost or kept: it was sent as we attached.)
        for (std::uint32_t w = 0; w < s.bitmap_words; ++w) s.bitmap(i)[w].store(0, std::memory_order_relaxed);
        slot.received.store(0, std::memory_order_relaxed);  // relaxed: a statistic
        Listener l;
        l.state_ = state_;
        l.slot_ = i;
        return l;
      }
    }
  }
  channel_fail(Errc::busy, s.segment.name(),
               "all " + std::to_string(s.max_listeners) + " listener slots are held by live listeners");
}

Notifier EventChannel::notifier() {
  if (!state_)
    throw Error(Errc::invalid_argument,
                "event channel: notifier() on a detached handle (moved from, detached or default)");
  Notifier n;
  n.state_ = state_;
  return n;
}

// ---------------------------------------------------------------- Notifier

Status Notifier::notify(std::uint32_t id) noexcept {
  ZIPC_USE_CHECK(this, Status::busy);
  if (!state_) [[unlikely]]
    return Status::detached;
  EventChannelState& s = *state_;
  if (id > s.max_event_id) return Status::too_large;
  const std::uint32_t word = id / 64;
  const std::uint64_t bit = 1ull << (id % 64);
  std::uint32_t reach = 0;
  for (std::uint32_t i = 0; i < s.max_listeners; ++i) {
    auto& slot = s.slots[i];
    // acquire: pairs with the listener's claim; a free slot gets nothing.
    if (slot.owner.load(std::memory_order_acquire) == 0) continue;
    // release: publishes the id to the listener's exchange (acq_rel) in take().
    s.bitmap(i)[word].fetch_or(bit, std::memory_order_release);
    // Dekker with the listener's waiters++ then pending() re-check (Event::notify_all's fence).
    slot.wake.notify_all();
    ++reach;
  }
  s.control->admin.notifications.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
  reach_ = reach;
  return Status::ok;
}

// ---------------------------------------------------------------- Listener

Listener::Listener(Listener&& o) noexcept : state_(std::move(o.state_)), slot_(o.slot_), taken_(std::move(o.taken_)) {}

Listener& Listener::operator=(Listener&& o) noexcept {
  if (this != &o) {
    detach();
    state_ = std::move(o.state_);
    slot_ = o.slot_;
    taken_ = std::move(o.taken_);
  }
  return *this;
}

Listener::~Listener() {
  detach();
}

void Listener::detach() noexcept {
  if (!state_) return;
  std::uint64_t me = pack(ProcessId::current());
  // release: our last reads of the slot come before another listener takes it.
  state_->slots[slot_].owner.compare_exchange_strong(me, 0, std::memory_order_release);
  state_.reset();
}

bool Listener::pending() const noexcept {
  const EventChannelState& s = *state_;
  const auto* words = s.bitmap(slot_);
  for (std::uint32_t w = 0; w < s.bitmap_words; ++w) {
    // acquire: pairs with the notifier's release fetch_or.
    if (words[w].load(std::memory_order_acquire) != 0) return true;
  }
  return false;
}

std::span<const std::uint32_t> Listener::try_wait() {
  ZIPC_USE_CHECK(this, in_use());  // before taken_ changes: the other thread's span shows it
  taken_.clear();
  if (!state_)
    throw Error(Errc::invalid_argument, "listener: wait on a detached handle (moved from, detached or default)");
  EventChannelState& s = *state_;
  auto* words = s.bitmap(slot_);
  for (std::uint32_t w = 0; w < s.bitmap_words; ++w) {
    // relaxed first: most words are zero, and a zero needs no exchange.
    if (words[w].load(std::memory_order_relaxed) == 0) continue;
    // acq_rel: takes the ids (pairs with the notifiers' release fetch_or).
    std::uint64_t bits = words[w].exchange(0, std::memory_order_acq_rel);
    while (bits != 0) {
      const auto b = static_cast<std::uint32_t>(std::countr_zero(bits));
      bits &= bits - 1;
      const std::uint32_t id = w * 64 + b;
      if (id <= s.max_event_id) taken_.push_back(id);  // a bit past the maximum was scribbled: dropped
    }
  }
  if (!taken_.empty()) {
    // relaxed: a statistic written by this listener only.
    s.slots[slot_].received.fetch_add(taken_.size(), std::memory_order_relaxed);
  }
  return taken_;
}

std::span<const std::uint32_t> Listener::wait(std::chrono::nanoseconds timeout) {
  ZIPC_USE_CHECK(this, in_use());
  if (!state_)
    throw Error(Errc::invalid_argument, "listener: wait on a detached handle (moved from, detached or default)");
  if (!try_wait().empty()) return taken_;
  const Deadline deadline = Deadline::after(timeout);
  for (;;) {
    const Status st =
        state_->slots[slot_].wake.wait_until([this]() noexcept { return pending(); }, deadline, state_->wait);
    if (!try_wait().empty() || st == Status::timeout) return taken_;
  }
}

std::uint64_t Listener::received() const noexcept {
  return state_ ? state_->slots[slot_].received.load(std::memory_order_relaxed) : 0;  // relaxed: a statistic
}

}  // namespace zipc
