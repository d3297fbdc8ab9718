#include "read_loop.hpp"

#include <poll.h>

#include <algorithm>
#include <chrono>

#include "inbound.hpp"

namespace zipc::bridge_detail {

ReadLoop::~ReadLoop() {
  stop();
}

void ReadLoop::start() {
  if (thread_.joinable()) return;
  stopping_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
}

void ReadLoop::stop() noexcept {
  stopping_.store(true, std::memory_order_relaxed);
  waitset_.stop();
  if (thread_.joinable()) thread_.join();
}

void ReadLoop::add_wake(Subscriber& s) {
  wake_subscribers_.push_back(&s);
}

void ReadLoop::add_wake(Queue& q) {
  wake_queues_.push_back(&q);
}

void ReadLoop::add(MappingRuntime* m) {
  std::lock_guard lock(maps_mu_);
  maps_.push_back(m);
}

void ReadLoop::remove(MappingRuntime* m) {
  std::lock_guard lock(maps_mu_);  // not inside drain() once we hold it
  maps_.erase(std::remove(maps_.begin(), maps_.end(), m), maps_.end());
}

void ReadLoop::changed() {
  ++generation_;
  waitset_.stop();  // the loop's wait returns and rebuilds its poll set
}

natsStatus ReadLoop::on_attach(void** user, void* loop, natsConnection* nc, natsSock fd) {
  auto* self = static_cast<ReadLoop*>(loop);
  std::lock_guard lock(self->mu_);
  self->nc_ = nc;
  self->fd_ = static_cast<int>(fd);
  self->want_read_ = true;  // attached: poll for reading (the client says so again on a reconnect)
  self->changed();
  *user = self;
  return NATS_OK;
}

void ReadLoop::want(bool ReadLoop::*which, bool add) {
  std::lock_guard lock(mu_);
  if (this->*which == add) return;
  this->*which = add;
  changed();
}

natsStatus ReadLoop::on_read(void* user, bool add) {
  static_cast<ReadLoop*>(user)->want(&ReadLoop::want_read_, add);
  return NATS_OK;
}

natsStatus ReadLoop::on_write(void* user, bool add) {
  static_cast<ReadLoop*>(user)->want(&ReadLoop::want_write_, add);
  return NATS_OK;
}

natsStatus ReadLoop::on_detach(void* user) {
  auto* self = static_cast<ReadLoop*>(user);
  std::lock_guard lock(self->mu_);
  self->nc_ = nullptr;
  self->fd_ = -1;
  self->want_read_ = self->want_write_ = false;
  self->changed();
  return NATS_OK;
}

void ReadLoop::drain() {
  std::lock_guard lock(maps_mu_);
  for (MappingRuntime* m : maps_) {
    // A message held for room in the local channel (caller-driven) goes first.
    if (m->held_msg != nullptr && !deliver_core_msg(*m, m->held_msg)) continue;
    // Timeout 0: take what the read queued, never block.
    while (m->core_sub != nullptr) {
      natsMsg* msg = nullptr;
      const natsStatus s = natsSubscription_NextMsg(&msg, m->core_sub, 0);
      if (s == NATS_NO_RESPONDERS) {
        // A "503" status message with an empty body, which the client
        // destroys itself: anyone may publish one. Counted, and the
        // messages behind it are taken now, not at the next read.
        std::lock_guard lock(m->local_mu);
        count_reject(*m, Reject::status, "503");
        continue;
      }
      if (s == NATS_SLOW_CONSUMER) continue;  // the client dropped some (the sequence gaps count them)
      if (s != NATS_OK) break;                // NATS_TIMEOUT: nothing more queued
      if (!deliver_core_msg(*m, msg)) break;  // held: no room locally, the rest stays queued in the client
    }
  }
}

void ReadLoop::step(std::chrono::nanoseconds timeout) {
  natsConnection* nc = nullptr;
  {
    std::lock_guard lock(mu_);
    if (generation_ != seen_) {
      if (registered_) waitset_.detach(id_);
      registered_ = false;
      const std::uint32_t events = (want_read_ ? POLLIN : 0) | (want_write_ ? POLLOUT : 0);
      if (fd_ >= 0 && events != 0) {
        id_ = waitset_.attach_fd(fd_, events);
        registered_ = true;
      }
      seen_ = generation_;
    }
    nc = nc_;
  }
  if (!stopping_.load(std::memory_order_relaxed)) {
    if (timeout.count() > 0) {
      for (Subscriber* w : wake_subscribers_) wake_ids_.push_back(waitset_.attach(*w));
      for (Queue* w : wake_queues_) wake_ids_.push_back(waitset_.attach(*w));
    }
    for (const Ready& r : waitset_.wait(timeout)) {
      if (!registered_ || r.id != id_ || nc == nullptr) continue;  // (a wake source: only a wake-up)
      if ((r.revents & POLLNVAL) != 0) {
        // The client closed the socket (a reconnect is coming with a new
        // one): stop polling it until then instead of spinning on it.
        waitset_.detach(id_);
        registered_ = false;
        continue;
      }
      if ((r.revents & (POLLIN | POLLERR | POLLHUP)) != 0) natsConnection_ProcessReadEvent(nc);
      if ((r.revents & POLLOUT) != 0) natsConnection_ProcessWriteEvent(nc);
    }
    for (std::uint64_t w : wake_ids_) waitset_.detach(w);
    wake_ids_.clear();
  }
  drain();
}

void ReadLoop::run() {
  // A bounded wait: a change comes with a stop(), the bound is a safety net.
  while (!stopping_.load(std::memory_order_relaxed)) step(std::chrono::milliseconds(100));
  if (registered_) waitset_.detach(id_);
  registered_ = false;
}

}  // namespace zipc::bridge_detail
