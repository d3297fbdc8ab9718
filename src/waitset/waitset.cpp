// zipc::WaitSet: attachments, the public API, and the choice of mode: one
// io_uring per WaitSet with a FUTEX_WAIT per sleeping channel and a POLL_ADD
// per fd or timer (waitset_uring.cpp), or a polling fallback
// (waitset_fallback.cpp). docs/design/waitset.md.
#include <poll.h>

#include <algorithm>
#include <string>

#include "platform/clock.hpp"
#include "waitset/waitset_impl.hpp"

namespace zipc {

using namespace waitset_detail;

void WaitSet::Impl::release_slot(std::uint32_t idx) {
  Slot& s = slots[idx];
  if (s.armed && uring) {
    // The kernel must let go of the futex word or fd before the endpoint
    // may go: cancel, and wait for this request's completion.
    (void)ring.cancel(kCancelData | idx, data(idx));
    while (s.armed) {
      ring.wait(UINT64_MAX);
      platform::Completion c[64];
      const unsigned n = ring.reap(c, 64);
      for (unsigned i = 0; i < n; ++i) {
        if (internal_completion(c[i])) continue;
        Slot* o = find(c[i].user_data);
        if (o == nullptr || !o->armed) continue;
        o->armed = false;
        if (o != &s) pending.push_back(static_cast<std::uint32_t>(c[i].user_data));
      }
    }
  }
  if (s.registered) s.hook.leave();
  s.hook = detail::WaitHook{};  // lets go of what it kept mapped (an Rpc client's connection)
  if (s.own_fd) platform::close_fd(s.fd);
  if (is_channel(s.kind)) --channels;
  s.used = false;
  s.registered = false;
  --count;
  std::erase(level, idx);
  std::erase(pending, idx);
  std::erase(rearm, idx);
  free_slots.push_back(idx);
}

// A channel endpoint: its hook says what to sleep on and when it is ready.
std::uint64_t WaitSet::Impl::add_channel(ReadyKind kind, const detail::WaitHook& hook) {
  const std::uint32_t idx = new_slot();
  slots[idx].kind = kind;
  slots[idx].hook = hook;
  ++channels;
  return add(idx);
}

std::uint64_t WaitSet::Impl::add(std::uint32_t idx) {
  if (uring) {
    rearm.push_back(idx);
    // Armed at once so readiness_fd works before the first wait().
    const std::size_t before = out.size();
    arm_batch();
    if (out.size() != before) {
      out.resize(before);  // reported by the next wait() (it is on the level list)
      platform::eventfd_signal(notify_fd);
    }
    poll_maintenance();
    ring.submit();
  }
  return data(idx);
}

WaitSet::WaitSet(const WaitSetOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.opt = options;
  if (m.opt.fallback_nap.count() <= 0) m.opt.fallback_nap = std::chrono::milliseconds(1);
  m.stop_fd = platform::eventfd_open();
  if (m.stop_fd < 0) throw Error(Errc::system, "WaitSet: eventfd failed, errno " + std::to_string(-m.stop_fd));
  int err = 0;
  m.uring = !options.force_fallback && m.ring.open(256, &err);
  if (m.uring) {
    m.notify_fd = platform::eventfd_open();
    if (m.notify_fd < 0 || !m.ring.register_eventfd(m.notify_fd)) {
      platform::close_fd(m.stop_fd);
      platform::close_fd(m.notify_fd);
      throw Error(Errc::system, "WaitSet: cannot register the readiness eventfd");
    }
    (void)m.ring.poll_add(kStopData, m.stop_fd, POLLIN);
    m.ring.submit();
    // Created disarmed: readiness_fd() arms it (fd_mode_on).
    if (m.opt.maintenance_interval.count() > 0) m.maintain_fd = platform::timerfd_open_idle();
    if (m.opt.maintenance_interval.count() > 0 && m.maintain_fd < 0) {
      m.ring.close();
      platform::close_fd(m.stop_fd);
      platform::close_fd(m.notify_fd);
      throw Error(Errc::system, "WaitSet: timerfd failed, errno " + std::to_string(-m.maintain_fd));
    }
  }
}

WaitSet::~WaitSet() {
  if (!impl_) return;
  for (std::uint32_t i = 0; i < impl_->slots.size(); ++i)
    if (impl_->slots[i].used) impl_->release_slot(i);
  impl_->ring.close();  // cancels what is left (the stop poll) before the fds go
  platform::close_fd(impl_->stop_fd);
  platform::close_fd(impl_->notify_fd);
  if (impl_->maintain_fd >= 0) platform::close_fd(impl_->maintain_fd);
  if (const int fd = impl_->nap_fd.load(std::memory_order_relaxed); fd >= 0)
    platform::close_fd(fd);  // relaxed: see nap_fd
}
WaitSet::WaitSet(WaitSet&&) noexcept = default;
WaitSet& WaitSet::operator=(WaitSet&& o) noexcept {
  if (this != &o) {
    WaitSet dead(std::move(*this));
    impl_ = std::move(o.impl_);
  }
  return *this;
}

namespace {
// A moved-from WaitSet has no state: its setup calls and waits throw (docs/guide/handles.md).
template <class Impl>
Impl& live(const std::unique_ptr<Impl>& impl, const char* what) {
  if (!impl) throw Error(Errc::invalid_argument, std::string("WaitSet::") + what + ": the WaitSet was moved from");
  return *impl;
}
// Debug builds: what a second thread inside the WaitSet gets (sync/use_check.hpp).
template <class T = std::uint64_t>
[[noreturn, maybe_unused]] T in_use(const char* what) {
  throw Error(Errc::busy,
              std::string("WaitSet::") + what + ": another thread is inside this WaitSet (one thread at a time)");
}
}  // namespace

std::uint64_t WaitSet::attach(Queue& consumer) {
  (void)live(impl_, "attach");
  ZIPC_USE_CHECK(impl_->use, in_use("attach"));
  return impl_->add_channel(ReadyKind::queue, detail::WaitHookAccess::of(consumer));
}
std::uint64_t WaitSet::attach(Subscriber& subscriber) {
  (void)live(impl_, "attach");
  ZIPC_USE_CHECK(impl_->use, in_use("attach"));
  return impl_->add_channel(ReadyKind::subscriber, detail::WaitHookAccess::of(subscriber));
}
std::uint64_t WaitSet::attach_room(Queue& producer) {
  (void)live(impl_, "attach_room");
  ZIPC_USE_CHECK(impl_->use, in_use("attach_room"));
  return impl_->add_channel(ReadyKind::queue_room, detail::WaitHookAccess::room_of(producer));
}
std::uint64_t WaitSet::attach(RpcServer& server) {
  (void)live(impl_, "attach");
  ZIPC_USE_CHECK(impl_->use, in_use("attach"));
  return impl_->add_channel(ReadyKind::rpc_server, detail::WaitHookAccess::of(server));
}
std::uint64_t WaitSet::attach(RpcClient& client) {
  (void)live(impl_, "attach");
  ZIPC_USE_CHECK(impl_->use, in_use("attach"));
  return impl_->add_channel(ReadyKind::rpc_client, detail::WaitHookAccess::of(client));
}
std::uint64_t WaitSet::attach(Listener& listener) {
  (void)live(impl_, "attach");
  ZIPC_USE_CHECK(impl_->use, in_use("attach"));
  return impl_->add_channel(ReadyKind::listener, detail::WaitHookAccess::of(listener));
}
std::uint64_t WaitSet::attach_fd(int fd, std::uint32_t events) {
  (void)live(impl_, "attach_fd");
  ZIPC_USE_CHECK(impl_->use, in_use("attach_fd"));
  if (fd < 0 || events == 0) throw Error(Errc::invalid_argument, "WaitSet::attach_fd: bad fd or no events");
  const std::uint32_t idx = impl_->new_slot();
  impl_->slots[idx].kind = ReadyKind::fd;
  impl_->slots[idx].fd = fd;
  impl_->slots[idx].events = events;
  return impl_->add(idx);
}
namespace {
int make_timer(std::uint64_t first, std::uint64_t interval) {
  const int fd = platform::timerfd_open(first, interval);
  if (fd < 0) throw Error(Errc::system, "WaitSet: timerfd failed, errno " + std::to_string(-fd));
  return fd;
}
}  // namespace
std::uint64_t WaitSet::attach_deadline(Deadline at) {
  (void)live(impl_, "attach_deadline");
  ZIPC_USE_CHECK(impl_->use, in_use("attach_deadline"));
  if (at.is_never()) throw Error(Errc::invalid_argument, "WaitSet::attach_deadline: Deadline::never()");
  const int fd = make_timer(at.ns(), 0);
  const std::uint32_t idx = impl_->new_slot();
  auto& s = impl_->slots[idx];
  s.kind = ReadyKind::deadline;
  s.fd = fd;
  s.own_fd = true;
  s.events = POLLIN;
  return impl_->add(idx);
}
std::uint64_t WaitSet::attach_interval(std::chrono::nanoseconds period) {
  (void)live(impl_, "attach_interval");
  ZIPC_USE_CHECK(impl_->use, in_use("attach_interval"));
  if (period.count() <= 0) throw Error(Errc::invalid_argument, "WaitSet::attach_interval: period must be > 0");
  const auto p = static_cast<std::uint64_t>(period.count());
  const int fd = make_timer(platform::monotonic_ns() + p, p);
  const std::uint32_t idx = impl_->new_slot();
  auto& s = impl_->slots[idx];
  s.kind = ReadyKind::interval;
  s.fd = fd;
  s.own_fd = true;
  s.events = POLLIN;
  return impl_->add(idx);
}

bool WaitSet::detach(std::uint64_t id) {
  (void)live(impl_, "detach");
  ZIPC_USE_CHECK(impl_->use, in_use<bool>("detach"));
  if (impl_->find(id) == nullptr) return false;
  impl_->release_slot(static_cast<std::uint32_t>(id & kIndexMask));
  return true;
}

std::span<const Ready> WaitSet::wait(Timeout timeout) {
  (void)live(impl_, "wait");
  ZIPC_USE_CHECK(impl_->use, in_use<std::span<const Ready>>("wait"));
  const Deadline d =
      timeout == Timeout::max() ? Deadline::never() : Deadline::after(std::max(timeout, Timeout::zero()));
  return impl_->uring ? impl_->wait_uring(d) : impl_->wait_fallback(d);
}

void WaitSet::run(const std::function<void(const Ready&)>& handler) {
  for (;;) {
    const std::span<const Ready> ready = wait(Timeout::max());
    if (ready.empty()) return;  // stop()
    for (const Ready& r : ready) handler(r);
  }
}

void WaitSet::stop() noexcept {
  if (!impl_) return;
  impl_->stopping.store(true, std::memory_order_release);  // release: read by wait() (acq_rel exchange)
  platform::eventfd_signal(impl_->stop_fd);
}

int WaitSet::readiness_fd() const noexcept {
  if (!impl_) return -1;
  if (!impl_->uring) return impl_->fallback_fd();
  impl_->fd_mode_on();
  return impl_->notify_fd;
}
bool WaitSet::uses_io_uring() const noexcept {
  return impl_ && impl_->uring;
}
std::size_t WaitSet::size() const noexcept {
  return impl_ ? impl_->count : 0;
}

}  // namespace zipc
