// The process-local registry of attached heaps (control block -> arena), for
// the allocator entry points that get a HeapControl only.
#include <atomic>
#include <cstdint>

#include "heap/heap_tlsf.hpp"

namespace zipc::detail {

using namespace layout;

namespace {
constexpr std::size_t kRegistrySize = 64;
struct RegistryEntry {
  std::atomic<std::uintptr_t> control{0};
  std::atomic<std::uintptr_t> base{0};
  std::atomic<std::uint64_t> size{0};
};
RegistryEntry g_registry[kRegistrySize];
}  // namespace

bool registry_add(const Arena& a) noexcept {
  for (auto& e : g_registry) {
    std::uintptr_t expected = 0;
    // Claim with a sentinel, fill, then publish the real address.
    if (e.control.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) {
      e.base.store(reinterpret_cast<std::uintptr_t>(a.base), std::memory_order_relaxed);  // relaxed: published below
      e.size.store(a.size, std::memory_order_relaxed);                                    // relaxed: published below
      // release: publishes base and size to registry_find's acquire load.
      e.control.store(reinterpret_cast<std::uintptr_t>(a.control), std::memory_order_release);
      return true;
    }
  }
  return false;
}

void registry_remove(const layout::HeapControl* c) noexcept {
  for (auto& e : g_registry) {
    // relaxed: only the owner of this mapping removes it
    if (e.control.load(std::memory_order_relaxed) == reinterpret_cast<std::uintptr_t>(c)) {
      e.control.store(0, std::memory_order_release);  // release: pairs with registry_add's claim
      return;
    }
  }
}

bool registry_find(const layout::HeapControl* c, Arena* out) noexcept {
  const auto key = reinterpret_cast<std::uintptr_t>(c);
  if (key <= 1) return false;
  for (auto& e : g_registry) {
    // acquire: pairs with registry_add's release, so base and size are complete.
    if (e.control.load(std::memory_order_acquire) == key) {
      out->control = const_cast<layout::HeapControl*>(c);
      out->base = reinterpret_cast<std::byte*>(e.base.load(std::memory_order_relaxed));  // relaxed: see acquire
      out->size = e.size.load(std::memory_order_relaxed);                                // relaxed: see acquire
      return true;
    }
  }
  return false;
}

Allocation heap_allocate(layout::HeapControl* c, std::size_t size, std::size_t align) noexcept {
  Arena a;
  if (!registry_find(c, &a)) return {nullptr, HeapStatus::corrupt};
  return tlsf_allocate(a, size, align);
}

HeapStatus heap_deallocate(layout::HeapControl* c, void* p) noexcept {
  Arena a;
  if (!registry_find(c, &a)) return HeapStatus::foreign_pointer;
  return tlsf_deallocate(a, p);
}

}  // namespace zipc::detail
