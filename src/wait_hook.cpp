#include "wait_hook.hpp"

#include "queue_impl.hpp"
#include "topic_state.hpp"
#include "zipc/error.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"

namespace zipc::detail {

namespace {
bool queue_ready(const void* p) noexcept {
  return static_cast<const QueueImpl*>(p)->can_consume();
}
void queue_maintain(const void* p) noexcept {
  // The handle's stall filter and recovery state are its own: the WaitSet
  // thread is the one that uses this handle.
  auto& q = *const_cast<QueueImpl*>(static_cast<const QueueImpl*>(p));
  // Only a position taken and not yet delivered can be a dead producer's
  // (a dead consumer's are redelivered as orphans, which readiness sees).
  // relaxed: a hint; recovery itself re-reads everything.
  if (q.mpmc && q.ctl->tail.load(std::memory_order_relaxed) <= q.ctl->head.load(std::memory_order_relaxed)) return;
  (void)poll_recovery(
      SharedStall(q.ctl->stall_consumers, q.recovery_ns, &q.stall_local[0]),
      // relaxed: the stall clock's key only.
      [&]() noexcept { return q.ctl->head.load(std::memory_order_relaxed); }, [&]() noexcept { (void)q.recover(); });
}
}  // namespace

WaitHook WaitHookAccess::of(const Queue& consumer) {
  if (!consumer.impl_) throw Error(Errc::invalid_argument, "WaitSet: the queue handle is not open");
  if ((static_cast<unsigned>(consumer.impl_->role) & static_cast<unsigned>(Role::consumer)) == 0)
    throw Error(Errc::invalid_argument,
                "WaitSet: queue " + consumer.impl_->name + " was opened without Role::consumer");
  WaitHook h;
  h.event = &consumer.impl_->ctl->not_empty;
  h.barrier = consumer.impl_->barrier;
  h.ready_fn = &queue_ready;
  h.maintain_fn = &queue_maintain;
  h.endpoint = consumer.impl_.get();
  return h;
}

WaitHook WaitHookAccess::of(const Subscriber& subscriber) {
  if (!subscriber.state_) throw Error(Errc::invalid_argument, "WaitSet: the subscriber is not attached");
  WaitHook h;
  h.event = &subscriber.state_->events().data;
  h.barrier = subscriber.state_->barrier;
  h.ready_fn = [](const void* p) noexcept {
    const auto& s = *static_cast<const Subscriber*>(p);
    const std::uint64_t want = s.view_end_ != 0 ? s.view_end_ : s.position_;
    // acquire: pairs with the commit's release store of the cursor (publish_commit),
    // which comes before the publisher's wake of events().data.
    return s.state_->pub().cursor.load(std::memory_order_acquire) > want;
  };
  h.maintain_fn = [](const void* p) noexcept {
    TopicState& s = *static_cast<const Subscriber*>(p)->state_;
    // Only a claim beyond the commit frontier can be a dead publisher's.
    // relaxed: a hint; recovery itself re-reads everything.
    if (s.pub().tail.load(std::memory_order_relaxed) <= s.pub().cursor.load(std::memory_order_relaxed)) return;
    (void)poll_recovery(
        cursor_stall(s),
        // relaxed: the stall clock's key only.
        [&]() noexcept { return s.pub().cursor.load(std::memory_order_relaxed); },
        [&]() noexcept { recover_frontier(s); });
  };
  h.endpoint = &subscriber;
  return h;
}

}  // namespace zipc::detail
