/// \file
/// zipc/stl_allocator.hpp - std containers whose memory lives in a zipc::Heap.
///
/// \code
///   #include <map>
///   #include <string>
///   #include <vector>
///   #include "zipc/stl_allocator.hpp"
///   ---
///   using String = std::basic_string<char, std::char_traits<char>, zipc::StlAllocator<char>>;
///   using Map = std::map<String, String, std::less<>, zipc::StlAllocator<std::pair<const String, String>>>;
///   zipc::HeapOptions options;
///   options.address_mode = zipc::AddressMode::fixed;  // raw pointers inside: same address everywhere
///   auto heap = zipc::Heap::create("demo-stl", 1 << 20, options);
///   zipc::StlAllocator<char> alloc(heap);
///   Map* map = heap.construct<Map>("map", alloc);     // other processes: heap.find<Map>("map")
///   map->emplace(String("key", alloc), String("value", alloc));
///   using Vec = std::vector<int, zipc::RelocatableAllocator<int>>;  // relocatable (any mode) too
///   Vec* vec = heap.construct<Vec>("vec", zipc::RelocatableAllocator<int>(heap));
///   vec->push_back(7);
///   heap.destroy<Vec>("vec");
///   heap.destroy<Map>("map");
///   zipc::Heap::remove("demo-stl");
/// \endcode
///
/// StlAllocator<T> hands out raw T*: containers that hold it work across
/// processes only in AddressMode::fixed. RelocatableAllocator<T> hands out
/// zipc::offset_ptr<T>: containers that store only the allocator's pointer
/// type are position independent. With libstdc++ (gcc 12) that is
/// std::vector, std::basic_string and std::deque (tested in
/// tests/heap/containers_test.cpp); std::list, std::map, std::set and the
/// unordered containers keep raw node pointers and need fixed mode.
/// Both allocators throw std::bad_alloc when the heap is exhausted.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

#include "zipc/heap.hpp"
#include "zipc/offset_ptr.hpp"

namespace zipc {

namespace detail {

// Common part: a self-relative link to the heap's control block (itself in
// the heap's segment, or on a process's stack: offset_ptr copes with both).
template <class T>
class HeapAllocatorBase {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  explicit HeapAllocatorBase(const Heap& heap) noexcept : control_(heap.control()) {}
  explicit HeapAllocatorBase(layout::HeapControl* control) noexcept : control_(control) {}
  HeapAllocatorBase(const HeapAllocatorBase&) noexcept = default;
  HeapAllocatorBase& operator=(const HeapAllocatorBase&) noexcept = default;

  [[nodiscard]] layout::HeapControl* control() const noexcept { return control_.get(); }
  // T may be a pointer type (a container of pointers): sizeof(T) is meant.
  [[nodiscard]] size_type max_size() const noexcept {
    return std::numeric_limits<size_type>::max() / sizeof(T);  // NOLINT(bugprone-sizeof-expression)
  }

 protected:
  T* allocate_raw(size_type n) const {
    if (n > max_size()) throw std::bad_array_new_length();
    Allocation a = heap_allocate(control_.get(), n * sizeof(T),  // NOLINT(bugprone-sizeof-expression): as above
                                 alignof(T) < 16 ? 16 : alignof(T));
    if (a.ptr == nullptr) throw std::bad_alloc();
    return static_cast<T*>(a.ptr);
  }
  void deallocate_raw(T* p) const noexcept { (void)heap_deallocate(control_.get(), p); }

 private:
  offset_ptr<layout::HeapControl> control_;
};

}  // namespace detail

template <class T>
/// A standard allocator over a zipc::Heap that hands out raw T* (see the file overview: across processes only with
/// AddressMode::fixed). Throws std::bad_alloc when the heap is full.
class StlAllocator : public detail::HeapAllocatorBase<T> {
 public:
  /// The shared part (holds the heap's control block; detail).
  using Base = detail::HeapAllocatorBase<T>;
  /// Raw pointers.
  using pointer = T*;
  template <class U>
  /// This allocator for another element type.
  struct rebind {
    /// The rebound allocator.
    using other = StlAllocator<U>;
  };

  using Base::Base;
  template <class U>
  /// The same heap, for another element type.
  StlAllocator(const StlAllocator<U>& o) noexcept : Base(o.control()) {}  // NOLINT: rebinding is implicit

  /// n Ts from the heap (std::bad_alloc when it has no room, std::bad_array_new_length when n is too large).
  [[nodiscard]] T* allocate(std::size_t n) { return this->allocate_raw(n); }
  /// Gives p back to the heap.
  void deallocate(T* p, std::size_t) noexcept { this->deallocate_raw(p); }

  template <class U>
  friend bool operator==(const StlAllocator& a, const StlAllocator<U>& b) noexcept {
    return a.control() == b.control();
  }
};

template <class T>
/// A standard allocator over a zipc::Heap that hands out zipc::offset_ptr<T>: containers that store only these pointers
/// are position independent (see the file overview). Throws std::bad_alloc when the heap is full.
class RelocatableAllocator : public detail::HeapAllocatorBase<T> {
 public:
  /// The shared part (holds the heap's control block; detail).
  using Base = detail::HeapAllocatorBase<T>;
  /// Self-relative pointers.
  using pointer = offset_ptr<T>;
  /// Self-relative pointers to const T.
  using const_pointer = offset_ptr<const T>;
  /// Self-relative untyped pointers.
  using void_pointer = offset_ptr<void>;
  /// Self-relative untyped pointers to const.
  using const_void_pointer = offset_ptr<const void>;
  template <class U>
  /// This allocator for another element type.
  struct rebind {
    /// The rebound allocator.
    using other = RelocatableAllocator<U>;
  };

  using Base::Base;
  template <class U>
  /// The same heap, for another element type.
  RelocatableAllocator(const RelocatableAllocator<U>& o) noexcept : Base(o.control()) {}  // NOLINT

  /// n Ts from the heap (std::bad_alloc when it has no room, std::bad_array_new_length when n is too large).
  [[nodiscard]] pointer allocate(std::size_t n) { return pointer(this->allocate_raw(n)); }
  /// Gives p back to the heap.
  void deallocate(pointer p, std::size_t) noexcept { this->deallocate_raw(p.get()); }

  template <class U>
  friend bool operator==(const RelocatableAllocator& a, const RelocatableAllocator<U>& b) noexcept {
    return a.control() == b.control();
  }
};

}  // namespace zipc
