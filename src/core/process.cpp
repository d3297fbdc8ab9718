#include "zipc/process.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/liveness_file.hpp"
#include "platform/address_space.hpp"  // random_u64
#include "platform/file.hpp"           // close_fd
#include "platform/liveness_lock.hpp"
#include "platform/process.hpp"

namespace zipc {
namespace {

// Cached identity of this process; re-read when getpid() changes (after fork).
struct Cache {
  std::atomic<std::int32_t> pid{0};          // relaxed: a stale read only causes a re-read
  std::atomic<std::uint64_t> start_time{0};  // relaxed: written before pid's release store
};
Cache g_cache;

// The liveness file descriptor of this process and the pid that opened it.
// fd is written under g_mutex and read by probes (relaxed: a probe that sees
// -1 answers "unknown", which counts as alive).
struct Liveness {
  std::mutex mutex;
  std::atomic<int> fd{-1};
  std::int32_t fd_pid = 0;  // under mutex
};
Liveness g_live;

constexpr int kPidBits = 22;
constexpr std::uint64_t kPidMask = (std::uint64_t{1} << kPidBits) - 1;
constexpr std::uint64_t kStartMask = (std::uint64_t{1} << (64 - kPidBits)) - 1;
constexpr std::uint64_t kTokenMask = kLivenessTokenTag - 1;
static_assert((kLivenessTokenTag & kStartMask) == kLivenessTokenTag, "the token tag must survive pack()");
static_assert(kLivenessTokenTag > (std::uint64_t{1} << 40), "kernel start times (ticks) never reach the tag bit");

// fork(): the child inherits the liveness descriptor, i.e. the parent's lock.
// Closing the child's copy leaves the lock to the parent alone; the child
// takes a fresh token on its next ProcessId::current().
void before_fork() {
  g_live.mutex.lock();
}
void after_fork_parent() {
  g_live.mutex.unlock();
}
void after_fork_child() {
  (void)platform::close_fd(g_live.fd.load(std::memory_order_relaxed));
  g_live.fd.store(-1, std::memory_order_relaxed);
  g_live.fd_pid = 0;
  g_cache.pid.store(0, std::memory_order_relaxed);  // single-threaded here: forces a re-read
  g_live.mutex.unlock();
}

// ZIPC_LIVENESS=proc: this process uses the /proc fallback identity (tests of
// the fallback, measurements). It still probes the tokens of others.
bool proc_forced() noexcept {
  const char* v = std::getenv("ZIPC_LIVENESS");  // NOLINT(concurrency-mt-unsafe): read once per pid
  return v != nullptr && std::strcmp(v, "proc") == 0;
}

// Under g_live.mutex: a descriptor of the liveness file opened by this pid.
int liveness_fd_locked(std::int32_t pid) noexcept {
  if (g_live.fd_pid != pid) {
    static std::once_flag registered;
    std::call_once(registered, [] { platform::on_fork(before_fork, after_fork_parent, after_fork_child); });
    const int old = g_live.fd.exchange(-1, std::memory_order_relaxed);
    (void)platform::close_fd(old);  // a copy inherited without the fork handler (raw clone)
    const int fd = platform::open_liveness_file(platform::kLivenessFile, /*create=*/false);
    g_live.fd.store(fd >= 0 ? fd : -1, std::memory_order_relaxed);
    g_live.fd_pid = pid;
  }
  return g_live.fd.load(std::memory_order_relaxed);
}

// A new identity word for pid: a token held in the liveness file, or the
// kernel start time when the file cannot be used (the /proc fallback).
// Under g_live.mutex, so two threads that both missed the cache take one
// identity: a second token would be held by our own description, which the
// self check by equality would not recognise, and a probe through that same
// description would call it dead.
std::uint64_t new_identity_locked(std::int32_t pid) noexcept {
  const int fd = liveness_fd_locked(pid);
  if (fd >= 0 && !proc_forced()) {
    for (int attempt = 0; attempt < 16; ++attempt) {
      const std::uint64_t token = platform::random_u64() & kTokenMask;
      if (token == 0) continue;
      const platform::Claim c = platform::claim_liveness_token(fd, token);
      if (c == platform::Claim::claimed) return token | kLivenessTokenTag;
      if (c == platform::Claim::failed) break;  // taken: draw another token
    }
  }
  return platform::process_start_time(pid);
}

// The file was missing when this process took its identity (which stays the
// /proc one); it may exist now, made by a peer: open it to probe others.
int reopen_for_probes(std::int32_t pid) noexcept {
  std::lock_guard<std::mutex> lock(g_live.mutex);
  if (g_live.fd_pid != pid) return -1;  // forked meanwhile: the next current() opens it
  int fd = g_live.fd.load(std::memory_order_relaxed);
  if (fd < 0) {
    fd = platform::open_liveness_file(platform::kLivenessFile, /*create=*/false);
    if (fd >= 0) g_live.fd.store(fd, std::memory_order_relaxed);
  }
  return fd;
}

// Liveness of an identity word (the start-time part of a ProcessId).
bool token_alive(std::uint64_t start_time) noexcept {
  const ProcessId me = ProcessId::current();     // also opens the liveness file
  if (start_time == me.start_time) return true;  // our own lock never conflicts with our probe
  int fd = g_live.fd.load(std::memory_order_relaxed);
  if (fd < 0) fd = reopen_for_probes(me.pid);
  if (fd < 0) return true;  // cannot tell: never recover a peer that may be alive
  return platform::probe_liveness_token(fd, start_time & kTokenMask) != platform::TokenState::dead;
}

}  // namespace

void detail::prepare_liveness_file() noexcept {
  const int fd = platform::open_liveness_file(platform::kLivenessFile, /*create=*/true);
  if (fd >= 0) (void)platform::close_fd(fd);
}

ProcessId ProcessId::current() noexcept {
  const std::int32_t pid = platform::current_pid();
  // acquire: pairs with the release store below, so start_time matches pid.
  if (g_cache.pid.load(std::memory_order_acquire) == pid) {
    return {pid, g_cache.start_time.load(std::memory_order_relaxed)};
  }
  std::lock_guard<std::mutex> lock(g_live.mutex);
  // acquire: as above; another thread may have taken the identity meanwhile.
  if (g_cache.pid.load(std::memory_order_acquire) == pid) {
    return {pid, g_cache.start_time.load(std::memory_order_relaxed)};
  }
  const std::uint64_t start = new_identity_locked(pid);
  g_cache.start_time.store(start, std::memory_order_relaxed);
  g_cache.pid.store(pid, std::memory_order_release);  // release: publishes start_time
  return {pid, start};
}

bool is_alive(const ProcessId& id) noexcept {
  if (id.pid <= 0) return false;
  if (id.has_token()) return token_alive(id.start_time);
  const std::uint64_t now = platform::process_start_time(id.pid);
  if (now == 0) return false;
  return id.start_time == 0 || now == id.start_time;
}

std::uint64_t pack(const ProcessId& id) noexcept {
  if (id.pid <= 0) return 0;
  return (static_cast<std::uint64_t>(id.pid) & kPidMask) | ((id.start_time & kStartMask) << kPidBits);
}

ProcessId unpack(std::uint64_t word) noexcept {
  return {static_cast<std::int32_t>(word & kPidMask), word >> kPidBits};
}

bool is_alive_packed(std::uint64_t word) noexcept {
  const ProcessId id = unpack(word);
  if (id.pid <= 0) return false;
  if (id.has_token()) return token_alive(id.start_time);
  const std::uint64_t now = platform::process_start_time(id.pid);
  if (now == 0) return false;
  return (now & kStartMask) == id.start_time;
}

}  // namespace zipc
