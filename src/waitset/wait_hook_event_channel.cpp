// The WaitSet's readiness hook of an event channel's listener.
#include "event_channel/event_channel_state.hpp"
#include "waitset/wait_hook.hpp"
#include "zipc/error.hpp"

namespace zipc::detail {

WaitHook WaitHookAccess::of(const Listener& listener) {
  if (!listener.state_) throw Error(Errc::invalid_argument, "WaitSet: the listener is not attached");
  WaitHook h;
  h.event = &listener.state_->slots[listener.slot_].wake;
  h.barrier = AsymmetricWait::here();
  h.ready_fn = [](const void* p) noexcept { return static_cast<const Listener*>(p)->pending(); };
  h.maintain_fn = [](const void*) noexcept {};  // no recovery: nothing is held
  h.endpoint = &listener;
  return h;
}

}  // namespace zipc::detail
