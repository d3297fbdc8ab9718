// Debug builds only: notices a handle used by two threads at once and
// refuses the second (docs/guide/handles.md, "Threads"). Release builds compile it
// away: there, using a handle from two threads at once is undefined.
//
//   ZIPC_USE_CHECK(q.use, Status::busy);  // returns Status::busy when another thread is inside
//   ZIPC_USE_CHECK(this, rr(Status::busy));
//
// What the check is keyed by:
// - a UseCheck member of the handle's internal state (QueueImpl,
//   RpcClientImpl, WaitSet::Impl): [[no_unique_address]], empty in release
//   builds, so it adds no byte there;
// - the handle's address, for handles whose state is declared in a public
//   header (Publisher, Subscriber, Listener, Notifier). A member there would
//   make the public layout depend on NDEBUG, and a program built without it
//   would then disagree with a release library on sizeof. The address is
//   looked up in a small process-wide table (use_check.cpp) for the length of
//   the call only: a handle cannot move or go while a thread is inside it.
#pragma once

#include <atomic>
#include <cstdint>

namespace zipc::detail {

#ifndef NDEBUG
// The calling thread's tag (never 0).
std::uintptr_t use_check_self() noexcept;
// The table: true when no other thread is inside `handle` (then the caller
// is inside it until use_check_leave). Re-entrant for the thread inside.
bool use_check_enter(const void* handle) noexcept;
void use_check_leave(const void* handle) noexcept;

class UseCheck {
 public:
  class Scope {
   public:
    explicit Scope(UseCheck& c) noexcept : check_(&c), ok_(c.enter()) {}
    explicit Scope(const void* handle) noexcept : handle_(handle), ok_(use_check_enter(handle)) {}
    ~Scope() {
      if (!ok_) return;
      if (check_ != nullptr) {
        check_->leave();
      } else {
        use_check_leave(handle_);
      }
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    explicit operator bool() const noexcept { return ok_; }

   private:
    UseCheck* check_ = nullptr;
    const void* handle_ = nullptr;
    bool ok_;
  };

 private:
  // Re-entrant for the thread inside (a public call that makes another).
  bool enter() noexcept {
    const std::uintptr_t self = use_check_self();
    std::uintptr_t expected = 0;
    // acquire: what the previous user did to the handle happens before us
    // (pairs with leave's release).
    if (!owner_.compare_exchange_strong(expected, self, std::memory_order_acquire) && expected != self) return false;
    ++depth_;
    return true;
  }
  void leave() noexcept {
    // release: our changes to the handle happen before the next user's enter.
    if (--depth_ == 0) owner_.store(0, std::memory_order_release);
  }
  std::atomic<std::uintptr_t> owner_{0};
  std::uint32_t depth_ = 0;  // written by the owner only
};
// `check`: a UseCheck member, or the handle's address. `refused`: what the
// call returns to a second thread (an expression; it may throw instead).
#define ZIPC_USE_CHECK(check, refused)              \
  ::zipc::detail::UseCheck::Scope zipc_use_(check); \
  if (!zipc_use_) return refused
#else
struct UseCheck {};
#define ZIPC_USE_CHECK(check, refused) static_cast<void>(0)
#endif

}  // namespace zipc::detail
