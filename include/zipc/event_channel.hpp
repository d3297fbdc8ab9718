/// \file
/// zipc/event_channel.hpp - a named notification channel: notifiers signal
/// event ids, listeners wake and learn which ids fired. No payload: for
/// "something changed, look at the heap (or the topic)" designs.
///
/// \code
///   auto events = zipc::EventChannel::open_or_create("config");
///   zipc::Listener l = events.listener();      // in the waiting process
///   zipc::Notifier n = events.notifier();      // in the signalling one
///   n.notify(7);                               // every listener attached now gets id 7
///   for (std::uint32_t id : l.wait(std::chrono::seconds(1))) (void)id;  // look at what id names
/// \endcode
///
/// Notifications of one id coalesce until the listener takes them: a listener
/// learns the set of ids notified since its last take, not how often each was
/// (count them in shared state of your own if that matters). A listener sees
/// only notifications sent after it attached. Listeners plug into a WaitSet
/// (WaitSet::attach(Listener&)). Nothing is locked: a notifier or listener
/// killed at any instruction never blocks the others; a dead listener's slot
/// is taken over by the next listener.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/segment.hpp"

namespace zipc {

/// An event channel's geometry and this handle's settings.
struct EventChannelOptions {
  std::uint32_t max_event_id = 255;  ///< ids 0..max_event_id (at most 65535)
  std::uint32_t max_listeners = 16;  ///< listener slots (at most 1024)
  SegmentOptions segment{};          ///< permissions, path, name space, memfd, ...
  WaitOptions wait{};                ///< how this handle's listeners wait
  /// open_or_create on an existing channel of another geometry: false fails
  /// with Errc::options_mismatch naming both values; true attaches.
  bool accept_existing = false;
};

namespace detail {
struct EventChannelState;
struct WaitHookAccess;
}  // namespace detail

/// Takes the ids notified on its channel (one slot of the channel). Use it from one thread at a time; it gives its slot
/// back when destroyed.
class Listener {
 public:
  Listener() = default;
  /// Moves the slot; the source is left detached.
  Listener(Listener&& o) noexcept;
  /// Gives up this slot, then moves o's; o is left detached.
  Listener& operator=(Listener&& o) noexcept;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();

  /// The ids notified since the last take, ascending, each once; empty when
  /// none. The span stays valid until this listener's next call.
  [[nodiscard]] std::span<const std::uint32_t> try_wait();
  /// Waits up to timeout (zipc::forever; 0 or negative: tries once) for a
  /// notification; empty when none came. On a detached listener, both throw
  /// Errc::invalid_argument.
  [[nodiscard]] std::span<const std::uint32_t> wait(std::chrono::nanoseconds timeout);
  /// Notifications taken so far (ids, once per take).
  [[nodiscard]] std::uint64_t received() const noexcept;
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return state_ != nullptr; }
  /// Gives the slot back now (the destructor does the same).
  void detach() noexcept;

 private:
  friend class EventChannel;
  friend struct detail::WaitHookAccess;  // the WaitSet's readiness hook (src/waitset/wait_hook.hpp)
  [[nodiscard]] bool pending() const noexcept;
  std::shared_ptr<detail::EventChannelState> state_;
  std::uint32_t slot_ = 0;
  std::vector<std::uint32_t> taken_;
};

/// Signals ids to the listeners of its channel. Holds no slot: any number may exist.
class Notifier {
 public:
  Notifier() = default;
  /// Marks `id` pending for every listener attached now and wakes those that
  /// sleep. ok; too_large when id > max_event_id (nothing sent). Never blocks.
  Status notify(std::uint32_t id) noexcept;
  /// Listeners the last ok notify reached.
  [[nodiscard]] std::uint32_t last_reach() const noexcept { return reach_; }
  /// False when default-constructed or moved from.
  [[nodiscard]] bool is_attached() const noexcept { return state_ != nullptr; }

 private:
  friend class EventChannel;
  std::shared_ptr<detail::EventChannelState> state_;
  std::uint32_t reach_ = 0;
};

/// Notifications by id without payload, across processes (see the file overview): notifiers mark ids pending, every
/// listener attached at the time takes each once (notifications of one id coalesce). No locks: a killed peer blocks
/// nobody.
class EventChannel {
 public:
  /// Creates a channel; Errc::already_exists if the name is taken.
  static EventChannel create(std::string_view name, const EventChannelOptions& options = {});
  /// Opens an existing channel; its geometry comes from the segment.
  static EventChannel open(std::string_view name, const EventChannelOptions& options = {});
  /// Opens, or creates with options when absent (race-free); *created (may be nullptr) tells which.
  static EventChannel open_or_create(std::string_view name, const EventChannelOptions& options = {},
                                     bool* created = nullptr);
  /// Opens a channel from a descriptor (SegmentOptions::memfd + zipc::receive_fd).
  static EventChannel open_fd(int fd, const EventChannelOptions& options = {});
  /// Removes the name: true when removed, false when absent (open handles keep working). Throws Errc::invalid_name, or
  /// the unlink's error.
  static bool remove(std::string_view name, const SegmentOptions& segment = {});

  EventChannel() = default;
  /// Moves the handle; the source is left detached.
  EventChannel(EventChannel&&) noexcept = default;
  /// Moves the handle; the source is left detached.
  EventChannel& operator=(EventChannel&&) noexcept = default;
  EventChannel(const EventChannel&) = delete;
  EventChannel& operator=(const EventChannel&) = delete;
  ~EventChannel();

  /// A listener slot (a free one, else one whose owner died); Errc::busy when
  /// all hold live listeners.
  [[nodiscard]] Listener listener();
  /// A notifier of this channel.
  [[nodiscard]] Notifier notifier();

  /// The highest id notify() accepts.
  [[nodiscard]] std::uint32_t max_event_id() const noexcept;
  /// Listener slots.
  [[nodiscard]] std::uint32_t max_listeners() const noexcept;
  /// Notify calls so far, by every notifier.
  [[nodiscard]] std::uint64_t notifications() const noexcept;
  /// The shared-memory segment the channel lives in.
  [[nodiscard]] const Segment& segment() const noexcept;
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return state_ != nullptr; }

 private:
  std::shared_ptr<detail::EventChannelState> state_;
};

}  // namespace zipc
