#include "uring.hpp"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <new>

namespace zipc::platform {
namespace {
// Not in Debian's headers (kernel 6.7 uapi): the futex opcode and the futex2 size flag.
constexpr unsigned kOpFutexWait = 51;
constexpr std::uint32_t kFutex2SizeU32 = 0x02;    // FUTEX2_PRIVATE (128) not set: shared futexes
constexpr std::uint64_t kMatchAny = 0xffffffffu;  // FUTEX_BITSET_MATCH_ANY

__kernel_timespec to_ts(std::uint64_t ns) {
  __kernel_timespec ts{};
  ts.tv_sec = static_cast<long long>(ns / 1'000'000'000u);
  ts.tv_nsec = static_cast<long long>(ns % 1'000'000'000u);
  return ts;
}
std::uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}
}  // namespace

struct Ring::Impl {
  io_uring ring{};
  bool open = false;
  io_uring_sqe* sqe() {
    io_uring_sqe* s = io_uring_get_sqe(&ring);
    if (s == nullptr) {
      (void)io_uring_submit(&ring);
      s = io_uring_get_sqe(&ring);
    }
    return s;
  }
};

Ring::Ring() : impl_(std::make_unique<Impl>()) {}
Ring::~Ring() {
  close();
}
void Ring::close() noexcept {
  if (impl_->open) io_uring_queue_exit(&impl_->ring);
  impl_->open = false;
}
bool Ring::is_open() const noexcept {
  return impl_->open;
}

bool Ring::open(unsigned entries, int* error) noexcept {
  io_uring_params p{};
  p.flags = IORING_SETUP_CQSIZE;
  p.cq_entries = entries * 8;
  const int r = io_uring_queue_init_params(entries, &impl_->ring, &p);
  if (r < 0) {
    *error = -r;
    return false;
  }
  impl_->open = true;
  io_uring_probe* probe = io_uring_get_probe_ring(&impl_->ring);
  const bool futex = probe != nullptr && probe->last_op >= kOpFutexWait &&
                     (probe->ops[kOpFutexWait].flags & IO_URING_OP_SUPPORTED) != 0;
  if (probe != nullptr) io_uring_free_probe(probe);
  if (!futex || (p.features & IORING_FEAT_EXT_ARG) == 0) {
    io_uring_queue_exit(&impl_->ring);
    impl_->open = false;
    *error = ENOSYS;
    return false;
  }
  return true;
}

bool Ring::futex_wait(std::uint64_t user_data, std::atomic<std::uint32_t>* word, std::uint32_t expected) noexcept {
  io_uring_sqe* s = impl_->sqe();
  if (s == nullptr) return false;
  std::memset(s, 0, sizeof(*s));
  s->opcode = static_cast<__u8>(kOpFutexWait);
  s->addr = reinterpret_cast<std::uintptr_t>(word);
  s->addr2 = expected;  // (union with off)
  s->addr3 = kMatchAny;
  s->fd = static_cast<std::int32_t>(kFutex2SizeU32);
  s->user_data = user_data;
  return true;
}

bool Ring::poll_add(std::uint64_t user_data, int fd, std::uint32_t events) noexcept {
  io_uring_sqe* s = impl_->sqe();
  if (s == nullptr) return false;
  io_uring_prep_poll_add(s, fd, events);
  s->user_data = user_data;
  return true;
}

bool Ring::cancel(std::uint64_t user_data, std::uint64_t target) noexcept {
  io_uring_sqe* s = impl_->sqe();
  if (s == nullptr) return false;
  io_uring_prep_cancel64(s, target, 0);
  s->user_data = user_data;
  return true;
}

int Ring::submit() noexcept {
  return io_uring_submit(&impl_->ring);
}

bool Ring::register_eventfd(int fd) noexcept {
  return io_uring_register_eventfd(&impl_->ring, fd) == 0;
}

void Ring::wait(std::uint64_t deadline_ns) noexcept {
  if (deadline_ns == 0) {
    (void)io_uring_submit(&impl_->ring);
    return;
  }
  io_uring_cqe* cqe = nullptr;
  if (deadline_ns == UINT64_MAX) {
    (void)io_uring_submit_and_wait(&impl_->ring, 1);
    return;
  }
  const std::uint64_t now = now_ns();
  __kernel_timespec ts = to_ts(deadline_ns > now ? deadline_ns - now : 0);
  (void)io_uring_submit_and_wait_timeout(&impl_->ring, &cqe, 1, &ts, nullptr);
}

unsigned Ring::reap(Completion* out, unsigned max) noexcept {
  unsigned n = 0;
  io_uring_cqe* cqe = nullptr;
  while (n < max && io_uring_peek_cqe(&impl_->ring, &cqe) == 0 && cqe != nullptr) {
    out[n++] = Completion{cqe->user_data, cqe->res};
    io_uring_cqe_seen(&impl_->ring, cqe);
  }
  return n;
}

bool Ring::has_completions() noexcept {
  return io_uring_cq_ready(&impl_->ring) > 0;
}

int eventfd_open() noexcept {
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  return fd < 0 ? -errno : fd;
}
void eventfd_signal(int fd) noexcept {
  const std::uint64_t one = 1;
  (void)!::write(fd, &one, sizeof one);
}
void eventfd_drain(int fd) noexcept {
  std::uint64_t v = 0;
  (void)!::read(fd, &v, sizeof v);
}
int timerfd_open_idle() noexcept {
  const int fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  return fd < 0 ? -errno : fd;
}
int timerfd_set(int fd, std::uint64_t first_ns, std::uint64_t interval_ns) noexcept {
  itimerspec it{};
  if (first_ns == 0) first_ns = 1;  // 0 would disarm
  it.it_value.tv_sec = static_cast<time_t>(first_ns / 1'000'000'000u);
  it.it_value.tv_nsec = static_cast<long>(first_ns % 1'000'000'000u);
  it.it_interval.tv_sec = static_cast<time_t>(interval_ns / 1'000'000'000u);
  it.it_interval.tv_nsec = static_cast<long>(interval_ns % 1'000'000'000u);
  return ::timerfd_settime(fd, TFD_TIMER_ABSTIME, &it, nullptr) == 0 ? 0 : -errno;
}
int timerfd_open(std::uint64_t first_ns, std::uint64_t interval_ns) noexcept {
  const int fd = timerfd_open_idle();
  if (fd < 0) return fd;
  if (const int r = timerfd_set(fd, first_ns, interval_ns); r < 0) {
    ::close(fd);
    return r;
  }
  return fd;
}
std::uint64_t timerfd_take(int fd) noexcept {
  std::uint64_t v = 0;
  return ::read(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v) ? v : 0;
}
std::uint32_t poll_now(int fd, std::uint32_t events) noexcept {
  pollfd p{fd, static_cast<short>(events), 0};
  return ::poll(&p, 1, 0) > 0 ? static_cast<std::uint16_t>(p.revents) : 0u;
}
void poll_many(const int* fds, const std::uint32_t* events, std::uint32_t* revents, unsigned n,
               std::uint64_t timeout_ns) noexcept {
  pollfd stack[64];
  pollfd* p = n <= 64 ? stack : new (std::nothrow) pollfd[n];
  if (p == nullptr) return;
  for (unsigned i = 0; i < n; ++i) p[i] = pollfd{fds[i], static_cast<short>(events[i]), 0};
  const timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000u), static_cast<long>(timeout_ns % 1'000'000'000u)};
  const int r = ::ppoll(p, n, &ts, nullptr);
  for (unsigned i = 0; i < n; ++i) revents[i] = r > 0 ? static_cast<std::uint16_t>(p[i].revents) : 0u;
  if (p != stack) delete[] p;
}

}  // namespace zipc::platform
