// The process-local registry of attached heaps (control block -> arena), for
// the allocator entry points that get a HeapControl only.
#include <atomic>
#include <cstdint>

#include "heap/heap_cache.hpp"
#include "heap/heap_tlsf.hpp"

namespace zipc::detail {

using namespace layout;

namespace {
constexpr std::size_t kRegistrySize = 64;
struct RegistryEntry {
  std::atomic<std::uintptr_t> control{0};
  std::atomic<std::uintptr_t> base{0};
  std::atomic<std::uint64_t> size{0};
  std::atomic<std::uint64_t> mapping_id{0};
  std::atomic<std::uint32_t> cache_slots{0};
};
std::atomic<std::uint64_t> g_next_mapping_id{1};
RegistryEntry g_registry[kRegistrySize];
}  // namespace

bool registry_add(const Arena& a) noexcept {
  for (auto& e : g_registry) {
    std::uintptr_t expected = 0;
    // Claim with a sentinel, fill, then publish the real address.
    if (e.control.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) {
      e.base.store(reinterpret_cast<std::uintptr_t>(a.base), std::memory_order_relaxed);  // relaxed: published below
      e.size.store(a.size, std::memory_order_relaxed);                                    // relaxed: published below
      e.mapping_id.store(a.mapping_id, std::memory_order_relaxed);                        // relaxed: published below
      e.cache_slots.store(a.cache_slots, std::memory_order_relaxed);                      // relaxed: published below
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
      out->mapping_id = e.mapping_id.load(std::memory_order_relaxed);                    // relaxed: see acquire
      out->cache_slots = e.cache_slots.load(std::memory_order_relaxed);                  // relaxed: see acquire
      return true;
    }
  }
  return false;
}

std::uint64_t next_mapping_id() noexcept {
  return g_next_mapping_id.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter, publishes nothing
}

Allocation heap_allocate(layout::HeapControl* c, std::size_t size, std::size_t align) noexcept {
  Arena a;
  if (!registry_find(c, &a)) return {nullptr, HeapStatus::corrupt};
  return cached_allocate(a, size, align);
}

HeapStatus heap_deallocate(layout::HeapControl* c, void* p) noexcept {
  Arena a;
  if (!registry_find(c, &a)) return HeapStatus::foreign_pointer;
  return cached_deallocate(a, p);
}

}  // namespace zipc::detail
