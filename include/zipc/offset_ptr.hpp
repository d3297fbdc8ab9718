/// \file
/// zipc/offset_ptr.hpp - a self-relative pointer, valid at any mapping address.
///
/// \code
///   #include "zipc/offset_ptr.hpp"
///   ---
///   struct Node { int value; zipc::offset_ptr<Node> next; };
///   Node nodes[2] = {{1, nullptr}, {2, nullptr}};
///   nodes[0].next = &nodes[1];      // stores (&nodes[1] - &nodes[0].next), not an address
///   int second = nodes[0].next->value;
///   (void)second;
/// \endcode
///
/// An offset_ptr stores the distance from its own address to its target, so a
/// structure built from offset_ptrs inside one shared-memory mapping reads the
/// same in every process, wherever each maps it. It is a "fancy pointer" for
/// allocators (see zipc/stl_allocator.hpp: RelocatableAllocator). Copying an
/// offset_ptr recomputes the distance for the copy's own address. Null is the
/// distance 1 (no object can start inside the pointer itself).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <type_traits>

namespace zipc {

namespace detail {
template <class T>
struct OffsetPtrIterTypes {
  using iterator_category = std::random_access_iterator_tag;
  using iterator_concept = std::contiguous_iterator_tag;
  using value_type = std::remove_cv_t<T>;
  using reference = T&;
};
template <class T>
requires std::is_void_v<T>
struct OffsetPtrIterTypes<T> {
};
}  // namespace detail

template <class T>
/// A pointer stored as the distance from itself to its target (see the file overview): valid in every process that maps
/// the same memory, wherever. Works as an allocator's fancy pointer.
class offset_ptr : public detail::OffsetPtrIterTypes<T> {
 public:
  /// The pointee type.
  using element_type = T;
  /// The difference of two pointers.
  using difference_type = std::ptrdiff_t;
  /// This type (for std::pointer_traits).
  using pointer = offset_ptr;
  /// The same pointer to another type (for std::pointer_traits).
  template <class U>
  using rebind = offset_ptr<U>;

  offset_ptr() noexcept = default;
  /// A null pointer.
  offset_ptr(std::nullptr_t) noexcept {}  // NOLINT: implicit like a raw pointer
  /// Points at p (nullptr: null).
  offset_ptr(T* p) noexcept { set(p); }  // NOLINT
  /// Points where o points (the distance is recomputed for this address).
  offset_ptr(const offset_ptr& o) noexcept { set(o.get()); }
  /// Converts from a pointer to a derived (or less qualified) type.
  template <class U>
  requires std::is_convertible_v<U*, T*> offset_ptr(const offset_ptr<U>& o)
  noexcept {  // NOLINT
    set(o.get());
  }
  /// static_cast from offset_ptr<void> (allocators need it) and other explicit casts.
  template <class U>
  requires(!std::is_convertible_v<U*, T*> &&
           requires(U * u) { static_cast<T*>(u); }) explicit offset_ptr(const offset_ptr<U>& o) noexcept {
    set(static_cast<T*>(o.get()));
  }

  /// Points where o points.
  offset_ptr& operator=(const offset_ptr& o) noexcept {
    set(o.get());
    return *this;
  }
  /// Points at p.
  offset_ptr& operator=(T* p) noexcept {
    set(p);
    return *this;
  }
  /// Becomes null.
  offset_ptr& operator=(std::nullptr_t) noexcept {
    diff_ = kNull;
    return *this;
  }

  /// The address in this process (nullptr when null).
  [[nodiscard]] T* get() const noexcept {
    if (diff_ == kNull) return nullptr;
    return reinterpret_cast<T*>(reinterpret_cast<std::intptr_t>(this) + diff_);
  }
  /// Member access, as for T*.
  T* operator->() const noexcept { return get(); }
  /// The pointee (non-void T).
  template <class U = T>
  requires(!std::is_void_v<U>) U& operator*() const noexcept { return *get(); }
  /// The i-th element from here (non-void T).
  template <class U = T>
  requires(!std::is_void_v<U>) U& operator[](std::ptrdiff_t i) const noexcept { return get()[i]; }
  /// True unless null.
  explicit operator bool() const noexcept { return diff_ != kNull; }
  /// Implicit, like Boost's: libstdc++'s basic_string converts its allocator's
  /// pointer to CharT* internally (it still STORES the offset_ptr).
  operator T*() const noexcept { return get(); }  // NOLINT

  /// A pointer to r (for std::pointer_traits).
  template <class U = T>
  requires(!std::is_void_v<U>) static offset_ptr pointer_to(U& r) noexcept { return offset_ptr(std::addressof(r)); }

  /// Pointer arithmetic (non-void T).
  offset_ptr& operator+=(std::ptrdiff_t n) noexcept {
    set(get() + n);
    return *this;
  }
  /// Moves back n elements.
  offset_ptr& operator-=(std::ptrdiff_t n) noexcept {
    set(get() - n);
    return *this;
  }
  /// Moves to the next element.
  offset_ptr& operator++() noexcept { return *this += 1; }
  /// Moves to the previous element.
  offset_ptr& operator--() noexcept { return *this -= 1; }
  /// Moves to the next element; returns the old position.
  offset_ptr operator++(int) noexcept {
    offset_ptr t(*this);
    ++*this;
    return t;
  }
  /// Moves to the previous element; returns the old position.
  offset_ptr operator--(int) noexcept {
    offset_ptr t(*this);
    --*this;
    return t;
  }
  friend offset_ptr operator+(const offset_ptr& p, std::ptrdiff_t n) noexcept { return offset_ptr(p.get() + n); }
  friend offset_ptr operator+(std::ptrdiff_t n, const offset_ptr& p) noexcept { return offset_ptr(p.get() + n); }
  friend offset_ptr operator-(const offset_ptr& p, std::ptrdiff_t n) noexcept { return offset_ptr(p.get() - n); }
  friend std::ptrdiff_t operator-(const offset_ptr& a, const offset_ptr& b) noexcept { return a.get() - b.get(); }

  friend bool operator==(const offset_ptr& a, const offset_ptr& b) noexcept { return a.get() == b.get(); }
  friend bool operator==(const offset_ptr& a, std::nullptr_t) noexcept { return !a; }
  friend std::strong_ordering operator<=>(const offset_ptr& a, const offset_ptr& b) noexcept {
    return std::compare_three_way{}(a.get(), b.get());
  }

 private:
  static constexpr std::intptr_t kNull = 1;
  void set(T* p) noexcept {
    diff_ = p == nullptr ? kNull : reinterpret_cast<std::intptr_t>(p) - reinterpret_cast<std::intptr_t>(this);
  }
  std::intptr_t diff_ = kNull;
};

static_assert(sizeof(offset_ptr<int>) == 8, "an offset_ptr is one 64-bit offset in shared memory");

/// static_cast of the pointee type, as std::static_pointer_cast.
template <class T, class U>
offset_ptr<T> static_pointer_cast(const offset_ptr<U>& p) noexcept {
  return offset_ptr<T>(static_cast<T*>(p.get()));
}

}  // namespace zipc

/// \cond STD_SPECIALIZATIONS
// offset_ptr is a fancy pointer for allocator_traits and std::to_address.
template <class T>
struct std::pointer_traits<zipc::offset_ptr<T>> {
  using pointer = zipc::offset_ptr<T>;
  using element_type = T;
  using difference_type = std::ptrdiff_t;
  template <class U>
  using rebind = zipc::offset_ptr<U>;
  template <class U = T>
  requires(!std::is_void_v<U>) static pointer pointer_to(U& r) noexcept { return pointer(std::addressof(r)); }
  static T* to_address(const pointer& p) noexcept { return p.get(); }
};
/// \endcond
