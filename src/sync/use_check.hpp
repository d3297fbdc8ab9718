// Debug builds only: notices a handle used by two threads at once and
// refuses the second (docs/guide/handles.md, "Threads"). Release builds compile it
// away: there, using a handle from two threads at once is undefined.
//
//   UseCheck::Scope in(q.use);
//   if (!in) return Status::busy;  // another thread is inside this handle
#pragma once

#include <atomic>
#include <cstdint>

namespace zipc::detail {

#ifndef NDEBUG
class UseCheck {
 public:
  class Scope {
   public:
    explicit Scope(UseCheck& c) noexcept : c_(c), ok_(c.enter()) {}
    ~Scope() {
      if (ok_) c_.leave();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    explicit operator bool() const noexcept { return ok_; }

   private:
    UseCheck& c_;
    bool ok_;
  };

 private:
  static std::uintptr_t me() noexcept {
    static thread_local char tag;
    return reinterpret_cast<std::uintptr_t>(&tag);
  }
  // Re-entrant for the thread inside (a public call that makes another).
  bool enter() noexcept {
    const std::uintptr_t self = me();
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
#define ZIPC_USE_CHECK(check, refused)              \
  ::zipc::detail::UseCheck::Scope zipc_use_(check); \
  if (!zipc_use_) return refused
#else
struct UseCheck {};
#define ZIPC_USE_CHECK(check, refused) static_cast<void>(0)
#endif

}  // namespace zipc::detail
