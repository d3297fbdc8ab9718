// Debug builds only: the table of handles a thread is inside, keyed by the
// handle's address (use_check.hpp says which handles use it and why).
#include "sync/use_check.hpp"

#ifndef NDEBUG

#include <array>
#include <cstddef>
#include <functional>
#include <thread>

namespace zipc::detail {

namespace {

// One entry per (handle, thread inside it). A stripe holds the handles whose
// address hashes to it; a stripe that is full lets the call through
// unchecked (the check is an aid, and a false refusal would be worse).
struct Entry {
  const void* handle = nullptr;
  std::uintptr_t owner = 0;
  std::uint32_t depth = 0;
};

constexpr std::size_t kStripes = 64;
constexpr std::size_t kEntries = 8;

struct alignas(64) Stripe {
  std::atomic<bool> locked{false};
  std::array<Entry, kEntries> entries{};

  void lock() noexcept {
    // acquire: the previous holder's entry changes happen before ours (pairs with unlock).
    while (locked.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
  }
  void unlock() noexcept { locked.store(false, std::memory_order_release); }  // release: see lock
};

std::array<Stripe, kStripes>& stripes() noexcept {
  static std::array<Stripe, kStripes> table;  // zero-initialised, never destroyed before its users
  return table;
}

Stripe& stripe_of(const void* handle) noexcept {
  return stripes()[std::hash<const void*>{}(handle) / alignof(std::max_align_t) % kStripes];
}

}  // namespace

std::uintptr_t use_check_self() noexcept {
  static thread_local char tag;
  return reinterpret_cast<std::uintptr_t>(&tag);
}

bool use_check_enter(const void* handle) noexcept {
  const std::uintptr_t self = use_check_self();
  Stripe& s = stripe_of(handle);
  s.lock();
  Entry* free = nullptr;
  bool ok = true;
  bool found = false;
  for (Entry& e : s.entries) {
    if (e.handle == handle) {
      found = true;
      ok = e.owner == self;
      if (ok) ++e.depth;
      break;
    }
    if (e.handle == nullptr && free == nullptr) free = &e;
  }
  if (!found && free != nullptr) *free = Entry{handle, self, 1};
  s.unlock();
  return ok;
}

void use_check_leave(const void* handle) noexcept {
  const std::uintptr_t self = use_check_self();
  Stripe& s = stripe_of(handle);
  s.lock();
  for (Entry& e : s.entries) {
    if (e.handle == handle && e.owner == self) {
      if (--e.depth == 0) e = Entry{};
      break;
    }
  }
  s.unlock();
}

}  // namespace zipc::detail

#endif  // NDEBUG
