// io_uring for zipc::WaitSet: futex waits (kernel 6.7+), polls, cancels,
// and the eventfd the ring signals on each completion. Debian's headers
// (linux-libc-dev 6.1, liburing 2.3) lack IORING_OP_FUTEX_WAIT: its SQE is
// built by hand here, behind a runtime probe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "file.hpp"  // close_fd

namespace zipc::platform {

struct Completion {
  std::uint64_t user_data;
  std::int32_t res;
};

class Ring {
 public:
  // Sets up a ring; false (and errno-like *error) when io_uring is unavailable
  // or lacks IORING_OP_FUTEX_WAIT.
  bool open(unsigned entries, int* error) noexcept;
  Ring();
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  [[nodiscard]] bool is_open() const noexcept;
  void close() noexcept;

  // Queue one request (submitted by submit() or the next wait()); false only
  // when the submission queue stays full even after submitting.
  bool futex_wait(std::uint64_t user_data, std::atomic<std::uint32_t>* word, std::uint32_t expected) noexcept;
  bool poll_add(std::uint64_t user_data, int fd, std::uint32_t events) noexcept;
  bool cancel(std::uint64_t user_data, std::uint64_t target) noexcept;
  int submit() noexcept;
  // Signals fd (an eventfd) on every completion.
  bool register_eventfd(int fd) noexcept;
  // Submits what is queued, then waits for a completion until the absolute
  // CLOCK_MONOTONIC deadline (UINT64_MAX: none; 0: do not wait).
  void wait(std::uint64_t deadline_ns) noexcept;
  // Takes up to max completions; returns how many.
  unsigned reap(Completion* out, unsigned max) noexcept;
  [[nodiscard]] bool has_completions() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Small fd helpers for the WaitSet (eventfd, timerfd, poll).
int eventfd_open() noexcept;                                                   // non-blocking, close-on-exec; -errno
void eventfd_signal(int fd) noexcept;                                          // adds 1
void eventfd_drain(int fd) noexcept;                                           // reads the counter to 0
int timerfd_open(std::uint64_t first_ns, std::uint64_t interval_ns) noexcept;  // CLOCK_MONOTONIC, absolute first
int timerfd_open_idle() noexcept;  // a disarmed timerfd (timerfd_set arms it); -errno
// Arms fd (CLOCK_MONOTONIC, absolute first expiry, 0 interval: once); -errno on failure.
int timerfd_set(int fd, std::uint64_t first_ns, std::uint64_t interval_ns) noexcept;
std::uint64_t timerfd_take(int fd) noexcept;                    // expirations since the last take (0: none)
std::uint32_t poll_now(int fd, std::uint32_t events) noexcept;  // revents now (0: none)
// Waits on fds (poll(2)) until one is ready or timeout_ns passes; fills revents.
void poll_many(const int* fds, const std::uint32_t* events, std::uint32_t* revents, unsigned n,
               std::uint64_t timeout_ns) noexcept;

}  // namespace zipc::platform
