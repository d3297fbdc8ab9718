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
  if (!thread_.joinable()) return;
  stopping_.store(true, std::memory_order_relaxed);
  waitset_.stop();
  thread_.join();
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
    natsMsg* msg = nullptr;
    // Timeout 0: take what the read queued, never block.
    while (m->core_sub != nullptr && natsSubscription_NextMsg(&msg, m->core_sub, 0) == NATS_OK)
      deliver_core_msg(*m, msg);
  }
}

void ReadLoop::run() {
  std::uint64_t seen = ~std::uint64_t{0};
  std::uint64_t id = 0;
  bool registered = false;
  natsConnection* nc = nullptr;
  while (!stopping_.load(std::memory_order_relaxed)) {
    {
      std::lock_guard lock(mu_);
      if (generation_ != seen) {
        if (registered) waitset_.detach(id);
        registered = false;
        const std::uint32_t events = (want_read_ ? POLLIN : 0) | (want_write_ ? POLLOUT : 0);
        if (fd_ >= 0 && events != 0) {
          id = waitset_.attach_fd(fd_, events);
          registered = true;
        }
        seen = generation_;
      }
      nc = nc_;
    }
    // A bounded wait: a change comes with a stop(), the bound is a safety net.
    for (const Ready& r : waitset_.wait(std::chrono::milliseconds(100))) {
      if (!registered || r.id != id || nc == nullptr) continue;
      if ((r.revents & POLLNVAL) != 0) {
        // The client closed the socket (a reconnect is coming with a new
        // one): stop polling it until then instead of spinning on it.
        waitset_.detach(id);
        registered = false;
        continue;
      }
      if ((r.revents & (POLLIN | POLLERR | POLLHUP)) != 0) natsConnection_ProcessReadEvent(nc);
      if ((r.revents & POLLOUT) != 0) natsConnection_ProcessWriteEvent(nc);
    }
    drain();
  }
  if (registered) waitset_.detach(id);
}

}  // namespace zipc::bridge_detail
