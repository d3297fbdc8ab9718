/// \file
/// zipc/heap.hpp - a heap in shared memory: allocator, named objects, offsets.
///
/// \code
///   #include <cstring>
///   #include "zipc/heap.hpp"
///   ---
///   zipc::HeapOptions options;
///   options.address_mode = zipc::AddressMode::fixed;  // same address in every process
///   auto heap = zipc::Heap::create("demo-heap", 1 << 20, options);
///   void* block = heap.allocate(100, 64);              // nullptr when out of memory
///   std::memset(block, 0, 100);
///   std::uint64_t off = heap.offset_of(block);         // send this to another process
///   char* same = heap.at<char>(off);                   // bounds-checked; nullptr if outside
///   (void)same;
///   (void)heap.deallocate(block);                      // HeapStatus: ok, double_free, ...
///   int* counter = heap.find_or_construct<int>("counter", 0);
///   ++*counter;
///   zipc::HeapStats s = heap.stats();
///   (void)s;
///   zipc::Heap::remove("demo-heap");
/// \endcode
///
/// The allocator is TLSF (two-level segregated fit): O(1) allocate and free,
/// immediate coalescing, alignment up to 4096, all state inside the segment
/// (no per-process caches; no OS calls after create), guarded by a robust
/// process-shared mutex. A process that dies inside allocate/deallocate does
/// not block the others: the next caller walks every block and rebuilds the
/// free lists, or marks the heap corrupt (later calls return corrupt); it never
/// hands out overlapping memory. See docs/design/heap.md.
///
/// AddressMode::fixed maps the heap at one address in every process, so plain
/// pointers and std containers with zipc::StlAllocator work across processes.
/// AddressMode::any maps it anywhere: use offsets or zipc::offset_ptr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "zipc/error.hpp"
#include "zipc/mutex.hpp"
#include "zipc/offset_ptr.hpp"
#include "zipc/segment.hpp"

namespace zipc {

namespace layout {
struct HeapControl;
}

/// Where each process maps a heap.
enum class AddressMode : std::uint8_t {
  any = 0,    ///< relocatable: each process maps it where the kernel likes
  fixed = 1,  ///< every process maps it at the address recorded at create
};

/// How a heap is created and mapped.
struct HeapOptions {
  AddressMode address_mode = AddressMode::any;  ///< relocatable (any) or at one address in every process (fixed)
  /// fixed mode, create: map here (nullptr: zipc picks a free address)
  void* address = nullptr;
  /// segment options (mode, path, prefault, ...); fixed_address is set by Heap
  SegmentOptions segment;
  /// open_or_create on an existing heap of another size (rounded to pages) or
  /// address mode: false fails with Errc::options_mismatch naming both
  /// values; true attaches to the existing heap as it is.
  bool accept_existing = false;
  // (No wait or recovery_time: the heap never blocks on a peer for long; a
  // dead lock holder is detected within 1 ms.)
};

/// Result of a heap call. Never thrown.
enum class HeapStatus : std::uint8_t {
  ok = 0,            ///< success
  out_of_memory,     ///< no free block is large enough
  invalid_argument,  ///< alignment not a power of two or over 4096
  double_free,       ///< the block is already free
  foreign_pointer,   ///< the pointer is not inside this heap, or not where a block can start
  corrupt_header,    ///< the block's header fails its check (overwritten, or not a block)
  corrupt,           ///< the heap failed validation (now or earlier); nothing was changed
  detached,          ///< the handle is detached, moved from or default-constructed (docs/guide/handles.md)
};
/// The status's name: "ok", "out_of_memory", ...
const char* to_string(HeapStatus s) noexcept;

/// What Heap::try_allocate returns: the memory, or why there is none.
struct Allocation {
  void* ptr = nullptr;                 ///< the block (nullptr unless status is ok)
  HeapStatus status = HeapStatus::ok;  ///< ok, or why not
};

/// A heap's counters (Heap::stats).
struct HeapStats {
  std::uint64_t size = 0;                ///< arena bytes
  std::uint64_t free_bytes = 0;          ///< bytes in free blocks (block headers included)
  std::uint64_t largest_free_block = 0;  ///< largest single allocation that would succeed now
  std::uint64_t allocated_blocks = 0;    ///< live allocations (named objects included)
  std::uint64_t repairs = 0;             ///< recoveries after a process died inside the allocator
  bool corrupt = false;                  ///< the walk found the heap damaged
};

/// A full walk of the heap (Heap::check).
struct HeapCheck {
  bool ok = false;                ///< the walk found nothing wrong
  std::string problem;            ///< empty when ok
  std::uint64_t blocks = 0;       ///< blocks walked
  std::uint64_t free_blocks = 0;  ///< of which free
};

namespace detail {
struct Arena;  // the allocator's view of one mapping (src/heap/heap_tlsf.hpp)
// The allocator entry points StlAllocator uses: they need only the control
// block, which lives in the segment. A control block that is not an open
// heap of this process returns foreign_pointer / corrupt, never crashes.
[[nodiscard]] Allocation heap_allocate(layout::HeapControl* c, std::size_t size, std::size_t align) noexcept;
[[nodiscard]] HeapStatus heap_deallocate(layout::HeapControl* c, void* p) noexcept;

template <class T>
constexpr std::uint64_t type_hash() noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char* s = __PRETTY_FUNCTION__; *s != '\0'; ++s)
    h = (h ^ static_cast<unsigned char>(*s)) * 0x100000001b3ull;
  return h;
}
}  // namespace detail

/// An allocator in shared memory (TLSF; see the file overview): allocate and free from any process, find objects by
/// name; a process that dies inside it is recovered from.
class Heap {
 public:
  /// What offset_of returns for a pointer outside the arena.
  static constexpr std::uint64_t kNoOffset = ~std::uint64_t{0};

  /// size: bytes of the arena (rounded up to the page size; at least 4096).
  static Heap create(std::string_view name, std::uint64_t size, const HeapOptions& options = {});
  /// Takes the address mode from the heap; fixed heaps map at the recorded
  /// address or fail with Errc::address_unavailable.
  static Heap open(std::string_view name, const HeapOptions& options = {});
  /// Opens, or creates with size bytes when absent (race-free); *created (may be nullptr) tells which.
  static Heap open_or_create(std::string_view name, std::uint64_t size, const HeapOptions& options = {},
                             bool* created = nullptr);
  /// Opens a heap from a descriptor (SegmentOptions::memfd + zipc::receive_fd);
  /// fd is duplicated, the caller keeps its own.
  static Heap open_fd(int fd, const HeapOptions& options = {});
  /// Removes the name: true when removed, false when absent (mappings stay valid). Throws Errc::invalid_name, or the
  /// unlink's error.
  static bool remove(std::string_view name, const SegmentOptions& options = {});

  Heap() = default;
  /// Moves the handle; the source is left detached.
  Heap(Heap&& other) noexcept;
  /// Detaches this handle, then moves other's; other is left detached.
  Heap& operator=(Heap&& other) noexcept;
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;
  ~Heap();

  /// nullptr when out of memory, on a bad alignment, or when the heap is corrupt
  /// (or opened read-only: try_allocate says invalid_argument).
  [[nodiscard]] void* allocate(std::size_t size, std::size_t align = 16) noexcept {
    return try_allocate(size, align).ptr;
  }
  /// size bytes aligned to align (a power of two up to 4096), or why not (out_of_memory, invalid_argument, corrupt,
  /// detached).
  [[nodiscard]] Allocation try_allocate(std::size_t size, std::size_t align = 16) noexcept;
  /// nullptr is ok (does nothing). invalid_argument on a heap opened read-only.
  [[nodiscard]] HeapStatus deallocate(void* p) noexcept;

  /// Named objects. construct throws Errc::already_exists when the name is
  /// taken, Errc::out_of_memory when there is no room; find returns nullptr
  /// when absent; all throw Errc::wrong_kind when the name holds another type
  /// (types are told apart by a hash of their name, so every process must be
  /// built with the same compiler). T's constructor runs under the directory
  /// lock: it may allocate, but must not construct/find named objects itself.
  /// A heap opened with SegmentOptions::read_only (mapped PROT_READ) can only
  /// find: without the lock, retrying a walk that a writer's change overlapped;
  /// construct and destroy throw Errc::wrong_role. Writing through what find
  /// returns faults in the reader's own process only.
  template <class T, class... Args>
  T* construct(std::string_view name, Args&&... args) {
    return construct_impl<T>(name, /*may_exist=*/false, std::forward<Args>(args)...);
  }
  /// The named object, constructed from args when absent (same rules as construct).
  template <class T, class... Args>
  T* find_or_construct(std::string_view name, Args&&... args) {
    return construct_impl<T>(name, /*may_exist=*/true, std::forward<Args>(args)...);
  }
  /// The named object of type T, or nullptr when absent (same rules as construct).
  template <class T>
  T* find(std::string_view name) {
    return static_cast<T*>(names_find(name, detail::type_hash<T>()));
  }
  /// Runs ~T and frees the memory; false when absent.
  template <class T>
  bool destroy(std::string_view name) {
    NamedSlot slot = names_unlink(name, detail::type_hash<T>());
    if (slot.object == nullptr) return false;
    static_cast<T*>(slot.object)->~T();
    names_release(slot);
    return true;
  }

  /// Offset of p from the arena start (the same in every process), or
  /// kNoOffset when p is not inside the arena.
  [[nodiscard]] std::uint64_t offset_of(const void* p) const noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(arena_);
    const auto q = reinterpret_cast<std::uintptr_t>(p);
    return (q >= a && q < a + arena_size_) ? q - a : kNoOffset;
  }
  /// The object at an offset: nullptr unless [offset, offset + sizeof(T)) lies
  /// inside the arena and is aligned for T. Safe with offsets from any peer.
  template <class T>
  [[nodiscard]] T* at(std::uint64_t offset) const noexcept {
    constexpr std::uint64_t kSize = std::is_void_v<T> ? 1 : sizeof(std::conditional_t<std::is_void_v<T>, char, T>);
    constexpr std::uint64_t kAlign = std::is_void_v<T> ? 1 : alignof(std::conditional_t<std::is_void_v<T>, char, T>);
    if (arena_ == nullptr || offset >= arena_size_ || arena_size_ - offset < kSize || offset % kAlign != 0) {
      return nullptr;
    }
    return reinterpret_cast<T*>(arena_ + offset);
  }

  /// Both walk every block under the allocator lock; on a read-only heap
  /// (which cannot lock) stats() is all zero and check() says why it did not run.
  [[nodiscard]] HeapStats stats() const noexcept;
  /// Walks every block and reports the first problem found.
  [[nodiscard]] HeapCheck check() const noexcept;
  /// Opened with SegmentOptions::read_only (find only).
  [[nodiscard]] bool read_only() const noexcept { return segment_.read_only(); }

  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept { return control_ != nullptr; }
  /// The heap's address mode.
  [[nodiscard]] AddressMode address_mode() const noexcept { return mode_; }
  /// Where the segment is mapped in this process.
  [[nodiscard]] void* base_address() const noexcept { return segment_.base(); }
  /// The first byte of the arena in this process.
  [[nodiscard]] std::byte* arena() const noexcept { return arena_; }
  /// Arena bytes.
  [[nodiscard]] std::uint64_t arena_size() const noexcept { return arena_size_; }
  /// The shared-memory segment the heap lives in.
  [[nodiscard]] const Segment& segment() const noexcept { return segment_; }
  /// The heap's name.
  [[nodiscard]] const std::string& name() const noexcept { return segment_.name(); }
  /// The allocator's control block in shared memory (what the allocators of zipc/stl_allocator.hpp hold).
  [[nodiscard]] layout::HeapControl* control() const noexcept { return control_; }
  /// Unmaps this process's view now (the destructor does the same); the heap
  /// and its objects stay for every other process.
  void detach() noexcept;

 private:
  struct NamedSlot {
    void* object = nullptr;
    void* entry = nullptr;
    bool existed = false;
  };
  // Locks the directory; when a new object must be built, returns with the
  // lock held (commit or abort release it).
  NamedSlot names_begin(std::string_view name, std::uint64_t type_hash, std::size_t size, std::size_t align,
                        bool may_exist);
  void names_commit(const NamedSlot& slot) noexcept;
  void names_abort(const NamedSlot& slot) noexcept;
  void* names_find(std::string_view name, std::uint64_t type_hash);
  void* names_find_unlocked(std::string_view name, std::uint64_t type_hash) const;
  void refuse_if_read_only(const char* what, std::string_view object) const;
  NamedSlot names_unlink(std::string_view name, std::uint64_t type_hash);
  void names_release(const NamedSlot& slot) noexcept;

  template <class T, class... Args>
  T* construct_impl(std::string_view name, bool may_exist, Args&&... args) {
    NamedSlot slot = names_begin(name, detail::type_hash<T>(), sizeof(T), alignof(T), may_exist);
    if (slot.existed) return static_cast<T*>(slot.object);
    try {
      T* p = ::new (slot.object) T(std::forward<Args>(args)...);
      names_commit(slot);
      return p;
    } catch (...) {
      names_abort(slot);
      throw;
    }
  }

  static Heap attach(Segment seg, const HeapOptions& options);
  [[nodiscard]] detail::Arena view() const noexcept;

  Segment segment_;
  layout::HeapControl* control_ = nullptr;
  std::byte* arena_ = nullptr;
  std::uint64_t arena_size_ = 0;
  AddressMode mode_ = AddressMode::any;
  std::uint32_t cache_slots_ = 0;  // thread-cache slots (0: none), checked at attach
  std::uint64_t mapping_id_ = 0;   // this mapping in this process (thread caches are tied to it)
};

}  // namespace zipc
