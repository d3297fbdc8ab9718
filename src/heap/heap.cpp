#include "zipc/heap.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include "core/fail.hpp"
#include "core/options_mismatch.hpp"
#include "core/round_up.hpp"
#include "heap/heap_cache.hpp"
#include "heap/heap_tlsf.hpp"
#include "layout/heap_cache_layout.hpp"
#include "layout/heap_layout.hpp"
#include "layout/segment_header.hpp"
#include "platform/address_space.hpp"
#include "platform/clock.hpp"
#include "platform/file.hpp"

namespace zipc {

using namespace layout;

const char* to_string(HeapStatus s) noexcept {
  switch (s) {
    case HeapStatus::ok: return "ok";
    case HeapStatus::out_of_memory: return "out_of_memory";
    case HeapStatus::invalid_argument: return "invalid_argument";
    case HeapStatus::double_free: return "double_free";
    case HeapStatus::foreign_pointer: return "foreign_pointer";
    case HeapStatus::corrupt_header: return "corrupt_header";
    case HeapStatus::corrupt: return "corrupt";
    case HeapStatus::detached: return "detached";
  }
  return "unknown";
}

namespace {

constexpr std::uint64_t kMinArena = 4096;
// Where zipc looks for a free fixed address: above ASan's shadow and below
// the usual PIE/mmap areas, so unrelated processes are likely to have it free.
#if defined(__SANITIZE_THREAD__)
// TSan reserves most of the address space for its shadow; application
// mappings must lie in 0x7e8000000000-0x800000000000. Take the bottom of that
// range, far below where mmap places things top-down, so a forked peer does
// not find the address taken by its own later mappings.
constexpr std::uintptr_t kHintBase = 0x7e8000000000ull;
constexpr std::uintptr_t kHintStride = std::uintptr_t{1} << 30;
#else
constexpr std::uintptr_t kHintBase = 0x3f0000000000ull;
constexpr std::uintptr_t kHintStride = std::uintptr_t{16} << 30;
#endif

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// A free address range for a fixed heap, tried with a random hint first.
void* pick_address(std::uint64_t total) {
  const std::uint64_t r = platform::random_u64() ^ platform::monotonic_ns();
  const auto hint = reinterpret_cast<void*>(kHintBase + (r % 256) * kHintStride);
  void* p = platform::reserve_address_space_near(hint, total);
  if (p == nullptr) return nullptr;
  platform::unmap(p, total);
  return p;
}

SegmentSpec heap_spec(std::uint64_t arena, AddressMode mode, std::uint64_t address) {
  SegmentSpec spec;
  spec.kind = SegmentKind::heap;
  spec.payload_size = kArenaOffset + arena + cache_table_bytes(arena);
  spec.params[0] = kHeapMagic;
  spec.params[1] = static_cast<std::uint64_t>(mode);
  spec.params[2] = address;
  spec.params[3] = arena;
  return spec;
}

void init_heap(std::byte* payload, std::uint64_t arena, AddressMode mode, std::uint64_t address) {
  auto* c = ::new (payload) HeapControl{};
  c->magic = kHeapMagic;
  c->version = kHeapVersion;
  c->address_mode = static_cast<std::uint32_t>(mode);
  c->fixed_address = address;
  c->arena_offset = kArenaOffset;
  c->arena_size = arena;
  c->directory_head = kNil;
  std::uint64_t salt = platform::random_u64();
  if (salt == 0) salt = platform::realtime_ns() * 0x9e3779b97f4a7c15ull + 1;
  detail::tlsf_init(detail::Arena{c, payload + kArenaOffset, arena}, salt);
  detail::cache_init(c, payload + kArenaOffset + arena, kArenaOffset + arena, arena);
  // relaxed: the segment's init_state release store publishes the whole payload.
  c->state.store(kStateHealthy, std::memory_order_relaxed);
}

// The arena of a heap named `name` asked for `size` bytes: whole pages, in [kMinArena, kMaxArena].
std::uint64_t arena_bytes(std::string_view name, std::uint64_t size) {
  Segment::validate_name(name);
  if (size < kMinArena || size > kMaxArena) {
    fail(Errc::invalid_argument, "heap", name, "size " + std::to_string(size) + " is outside [4096, 2^46]");
  }
  return round_up(size, 4096);
}

// The segment options of one attempt to map a heap: a fixed heap goes at the caller's address,
// or at a free range picked for this attempt.
SegmentOptions attempt_options(const HeapOptions& options, std::uint64_t total, std::string_view name) {
  SegmentOptions so = options.segment;
  so.fixed_address = nullptr;
  if (options.address_mode == AddressMode::fixed) {
    so.fixed_address = options.address != nullptr ? options.address : pick_address(total);
    if (so.fixed_address == nullptr) fail(Errc::address_unavailable, "heap", name, "no free address range found");
  }
  return so;
}

}  // namespace

Heap Heap::create(std::string_view name, std::uint64_t size, const HeapOptions& options) {
  const std::uint64_t arena = arena_bytes(name, size);
  const std::uint64_t total = kPayloadOffset + kArenaOffset + arena;
  const bool fixed = options.address_mode == AddressMode::fixed;
  if (!fixed && options.address != nullptr)
    fail(Errc::invalid_argument, "heap", name, "an address needs AddressMode::fixed");
  if (fixed && reinterpret_cast<std::uintptr_t>(options.address) % platform::page_size() != 0) {
    fail(Errc::invalid_argument, "heap", name,
         "fixed address " + hex(reinterpret_cast<std::uintptr_t>(options.address)) + " is not page aligned");
  }
  for (int attempt = 0;; ++attempt) {
    const SegmentOptions so = attempt_options(options, total, name);
    const auto address = reinterpret_cast<std::uint64_t>(so.fixed_address);
    try {
      Segment seg = Segment::create(
          name, heap_spec(arena, options.address_mode, address),
          [&](std::byte* p, std::size_t) { init_heap(p, arena, options.address_mode, address); }, so);
      return attach(std::move(seg), options);
    } catch (const Error& e) {
      // A picked address taken meanwhile by another thread: pick again.
      if (e.errc() != Errc::address_unavailable || options.address != nullptr || attempt >= 8) throw;
    }
  }
}

Heap Heap::open(std::string_view name, const HeapOptions& options) {
  SegmentOptions so = options.segment;
  so.fixed_address = nullptr;
  // Read the header first (no mapping), so a ready fixed heap is mapped once,
  // at its address (a probe mapping would e.g. prefault everything twice).
  if (const SegmentInfo info = Segment::inspect(name, so);
      info.valid && info.params[0] == kHeapMagic && info.params[1] == static_cast<std::uint64_t>(AddressMode::fixed) &&
      info.params[2] != 0 && info.params[2] % platform::page_size() == 0) {
    so.fixed_address = reinterpret_cast<void*>(info.params[2]);
  }
  Segment seg;
  try {
    seg = Segment::open(name, SegmentKind::heap, so);
  } catch (const Error& e) {
    if (e.errc() != Errc::address_unavailable) throw;
    fail(Errc::address_unavailable, "heap", name,
         "created at fixed address " + hex(reinterpret_cast<std::uint64_t>(so.fixed_address)) +
             ", which is already in use in this process; a fixed heap is never relocated");
  }
  const auto& params = seg.params();
  if (params[0] != kHeapMagic) fail(Errc::corrupt_header, "heap", name, "segment parameters do not describe a heap");
  if (params[1] == static_cast<std::uint64_t>(AddressMode::fixed)) {
    const std::uint64_t want = params[2];
    if (want == 0 || want % platform::page_size() != 0) fail(Errc::corrupt_header, "heap", name, "bad fixed address");
    if (reinterpret_cast<std::uint64_t>(seg.base()) != want) {
      seg.detach();
      so.fixed_address = reinterpret_cast<void*>(want);
      try {
        seg = Segment::open(name, SegmentKind::heap, so);
      } catch (const Error& e) {
        if (e.errc() != Errc::address_unavailable) throw;
        fail(Errc::address_unavailable, "heap", name,
             "created at fixed address " + hex(want) + ", which is already in use in this process; " +
                 "a fixed heap is never relocated");
      }
    }
  }
  return attach(std::move(seg), options);
}

Heap Heap::open_or_create(std::string_view name, std::uint64_t size, const HeapOptions& options, bool* created) {
  const std::uint64_t arena = arena_bytes(name, size);
  const std::uint64_t total = kPayloadOffset + kArenaOffset + arena;
  const bool fixed = options.address_mode == AddressMode::fixed;
  for (int attempt = 0;; ++attempt) {
    const SegmentOptions so = attempt_options(options, total, name);
    const auto address = reinterpret_cast<std::uint64_t>(so.fixed_address);
    bool made = false;
    try {
      // Segment::open_or_create settles the race (one creator) and reclaims
      // a segment whose creator died during initialization.
      Segment seg = Segment::open_or_create(
          name, heap_spec(arena, options.address_mode, address),
          [&](std::byte* p, std::size_t) { init_heap(p, arena, options.address_mode, address); }, so, &made);
      if (created) *created = made;
      if (made) return attach(std::move(seg), options);
      // Someone else's heap: map it the way it was created (maybe elsewhere).
      seg.detach();
      Heap h = open(name, options);
      detail::check_existing_geometry("heap '" + std::string(name) + "'", options.accept_existing,
                                      {{"size (rounded to pages)", arena, h.arena_size(), " bytes"},
                                       {"address_mode (fixed)", fixed, h.address_mode() == AddressMode::fixed, ""}});
      return h;
    } catch (const Error& e) {
      if (e.errc() != Errc::address_unavailable || options.address != nullptr || made || attempt >= 8) throw;
    }
  }
}

Heap Heap::open_fd(int fd, const HeapOptions& options) {
  const std::string name = "fd " + std::to_string(fd);
  SegmentOptions so = options.segment;
  so.fixed_address = nullptr;
  Segment seg = Segment::open_fd(fd, SegmentKind::heap, so, name);
  const auto& params = seg.params();
  if (params[0] != kHeapMagic) fail(Errc::corrupt_header, "heap", name, "segment parameters do not describe a heap");
  if (params[1] == static_cast<std::uint64_t>(AddressMode::fixed)) {
    const std::uint64_t want = params[2];
    if (want == 0 || want % platform::page_size() != 0) fail(Errc::corrupt_header, "heap", name, "bad fixed address");
    if (reinterpret_cast<std::uint64_t>(seg.base()) != want) {
      seg.detach();
      so.fixed_address = reinterpret_cast<void*>(want);
      seg = Segment::open_fd(fd, SegmentKind::heap, so, name);
    }
  }
  return attach(std::move(seg), options);
}

bool Heap::remove(std::string_view name, const SegmentOptions& options) {
  return Segment::remove(name, options);
}

Heap Heap::attach(Segment seg, const HeapOptions&) {
  const std::string name = seg.name();
  const auto& params = seg.params();
  const std::uint64_t arena = params[3];
  if (arena < kMinArena || arena > kMaxArena || seg.payload_size() < kArenaOffset ||
      seg.payload_size() - kArenaOffset < arena) {
    fail(Errc::corrupt_header, "heap", name, "arena size " + std::to_string(arena) + " does not fit the segment");
  }
  auto* c = reinterpret_cast<HeapControl*>(seg.payload());
  if (c->magic != kHeapMagic) fail(Errc::bad_magic, "heap", name, "the heap control block has no heap magic");
  if (c->version != kHeapVersion) {
    fail(Errc::version_mismatch, "heap", name,
         "created by heap layout version " + std::to_string(c->version) + ", this library reads version " +
             std::to_string(kHeapVersion));
  }
  if (c->arena_offset != kArenaOffset || c->arena_size != arena || c->address_mode != params[1] ||
      c->fixed_address != params[2]) {
    fail(Errc::corrupt_header, "heap", name, "heap control block disagrees with the segment header");
  }
  if (params[1] == static_cast<std::uint64_t>(AddressMode::fixed) &&
      reinterpret_cast<std::uint64_t>(seg.base()) != params[2]) {
    fail(Errc::address_unavailable, "heap", name, "mapped at the wrong address");
  }
  std::uint32_t cache_slots = 0;
  if (c->cache_magic == kCacheMagic) {
    // Trusted only when it is exactly the table this library would have made.
    if (c->cache_offset != kArenaOffset + arena || c->cache_slots == 0 || c->cache_slots > kCacheMaxSlots ||
        seg.payload_size() < c->cache_offset + std::uint64_t{c->cache_slots} * sizeof(CacheSlot)) {
      fail(Errc::corrupt_header, "heap", name, "the thread-cache table does not fit the segment");
    }
    cache_slots = c->cache_slots;
  }
  Heap h;
  h.control_ = c;
  h.arena_ = seg.payload() + kArenaOffset;
  h.arena_size_ = arena;
  h.mode_ = static_cast<AddressMode>(params[1]);
  h.cache_slots_ = seg.read_only() ? 0 : cache_slots;
  h.mapping_id_ = detail::next_mapping_id();
  // A read-only heap stays out of the registry: StlAllocator calls through it fail
  // (corrupt / foreign_pointer) instead of writing to a PROT_READ mapping.
  if (!seg.read_only() && !detail::registry_add(h.view())) {
    h.control_ = nullptr;
    fail(Errc::busy, "heap", name, "too many heaps open in this process");
  }
  h.segment_ = std::move(seg);
  return h;
}

Heap::Heap(Heap&& o) noexcept
    : segment_(std::move(o.segment_)),
      control_(std::exchange(o.control_, nullptr)),
      arena_(std::exchange(o.arena_, nullptr)),
      arena_size_(std::exchange(o.arena_size_, 0)),
      mode_(o.mode_),
      cache_slots_(std::exchange(o.cache_slots_, 0)),
      mapping_id_(std::exchange(o.mapping_id_, 0)) {}

Heap& Heap::operator=(Heap&& o) noexcept {
  if (this != &o) {
    detach();
    segment_ = std::move(o.segment_);
    control_ = std::exchange(o.control_, nullptr);
    arena_ = std::exchange(o.arena_, nullptr);
    arena_size_ = std::exchange(o.arena_size_, 0);
    mode_ = o.mode_;
    cache_slots_ = std::exchange(o.cache_slots_, 0);
    mapping_id_ = std::exchange(o.mapping_id_, 0);
  }
  return *this;
}

Heap::~Heap() {
  detach();
}

detail::Arena Heap::view() const noexcept {
  return detail::Arena{control_, arena_, arena_size_, cache_slots_, mapping_id_};
}

void Heap::detach() noexcept {
  if (control_ != nullptr && !segment_.read_only()) {
    detail::cache_release_mapping(view());  // this mapping's cached blocks go back before it goes
  }
  if (control_ != nullptr) detail::registry_remove(control_);
  control_ = nullptr;
  arena_ = nullptr;
  arena_size_ = 0;
  cache_slots_ = 0;
  mapping_id_ = 0;
  segment_.detach();
}

Allocation Heap::try_allocate(std::size_t size, std::size_t align) noexcept {
  if (control_ == nullptr) return {nullptr, HeapStatus::detached};
  if (segment_.read_only()) return {nullptr, HeapStatus::invalid_argument};
  return detail::cached_allocate(view(), size, align);
}

HeapStatus Heap::deallocate(void* p) noexcept {
  if (control_ == nullptr) return p == nullptr ? HeapStatus::ok : HeapStatus::detached;
  if (segment_.read_only()) return HeapStatus::invalid_argument;
  return detail::cached_deallocate(view(), p);
}

HeapStats Heap::stats() const noexcept {
  if (control_ == nullptr || segment_.read_only()) return {};
  // Blocks in thread caches are free: the calling thread's and the dead's go
  // back to the lists first; live threads' are counted as free.
  const detail::Arena a = view();
  detail::cache_flush_mine(a);
  detail::cache_reclaim_dead(a);
  HeapStats st = detail::tlsf_stats(a);
  if (!st.corrupt) {
    const detail::CacheTotals t = detail::cache_totals(a);
    st.free_bytes += t.bytes;
    st.allocated_blocks -= std::min(st.allocated_blocks, t.blocks);
  }
  return st;
}

HeapCheck Heap::check() const noexcept {
  if (control_ == nullptr) return {false, "heap not open", 0, 0};
  if (segment_.read_only()) return {false, "heap opened read-only: check() needs the allocator lock", 0, 0};
  const detail::Arena a = view();
  detail::cache_flush_mine(a);
  detail::cache_reclaim_dead(a);
  return detail::tlsf_check(a);
}

}  // namespace zipc
