#include "waitset/wait_hook.hpp"

#include "queue/queue_impl.hpp"
#include "topic/topic_state.hpp"
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
  if (q.ring == RingKind::vyukov &&
      q.ctl->tail.load(std::memory_order_relaxed) <= q.ctl->head.load(std::memory_order_relaxed))
    return;
  (void)poll_recovery(
      SharedStall(q.ctl->stall_consumers, q.recovery_ns, &q.stall_local[0]),
      // relaxed: the stall clock's key only.
      [&]() noexcept { return q.ctl->head.load(std::memory_order_relaxed); }, [&]() noexcept { (void)q.recover(); });
}
bool queue_room(const void* p) noexcept {
  return static_cast<const QueueImpl*>(p)->can_produce();
}
void queue_room_maintain(const void* p) noexcept {
  auto& q = *const_cast<QueueImpl*>(static_cast<const QueueImpl*>(p));
  // Room held back by a dead consumer (its taken positions) comes back by recovery.
  (void)poll_recovery(
      SharedStall(q.ctl->stall_producers, q.recovery_ns, &q.stall_local[1]),
      // relaxed: the stall clock's key only.
      [&]() noexcept { return q.ctl->tail.load(std::memory_order_relaxed); }, [&]() noexcept { (void)q.recover(); });
}

// Both sides of a queue: the role the handle needs, the event its peers wake,
// the readiness test and the recovery a blocked call would run.
WaitHook queue_hook(const QueueImpl* q, Role role, const char* role_name, Event layout::QueueControl::*event,
                    bool (*ready)(const void*) noexcept, void (*maintain)(const void*) noexcept) {
  if (q == nullptr) throw Error(Errc::invalid_argument, "WaitSet: the queue handle is not open");
  if ((static_cast<unsigned>(q->role) & static_cast<unsigned>(role)) == 0)
    throw Error(Errc::invalid_argument, "WaitSet: queue " + q->name + " was opened without Role::" + role_name);
  WaitHook h;
  h.event = &(q->ctl->*event);
  h.barrier = q->barrier;
  h.ready_fn = ready;
  h.maintain_fn = maintain;
  h.endpoint = q;
  return h;
}
}  // namespace

WaitHook WaitHookAccess::room_of(const Queue& producer) {
  return queue_hook(producer.impl_.get(), Role::producer, "producer", &layout::QueueControl::not_full, &queue_room,
                    &queue_room_maintain);
}

WaitHook WaitHookAccess::of(const Queue& consumer) {
  return queue_hook(consumer.impl_.get(), Role::consumer, "consumer", &layout::QueueControl::not_empty, &queue_ready,
                    &queue_maintain);
}

WaitHook WaitHookAccess::of(const Subscriber& subscriber) {
  if (!subscriber.state_) throw Error(Errc::invalid_argument, "WaitSet: the subscriber is not attached");
  if (subscriber.state_->read_only) {
    throw Error(Errc::wrong_role, "WaitSet: topic " + subscriber.state_->name() +
                                      " was opened read-only: its subscribers cannot register as sleepers (a write); "
                                      "poll them with read(timeout) instead");
  }
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
