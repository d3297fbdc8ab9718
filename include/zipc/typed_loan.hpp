/// \file
/// zipc/typed_loan.hpp - what may be a typed message, and typed views of byte loans.
///
/// Part of zipc/typed.hpp (include that). A typed loan is a byte loan of one of
/// the channels plus a T* and an element count: nothing is copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

#include "zipc/error.hpp"
#include "zipc/type_identity.hpp"

namespace zipc {

/// The alignment every channel guarantees for a message's first byte.
inline constexpr std::size_t kMessageAlign = 8;

/// True for types that can live in shared memory and be read by another
/// process: objects copied byte for byte (trivially copyable), with one
/// well-defined layout (standard layout), not pointers, references, member
/// pointers or arrays (use std::array), no virtual functions, and aligned at
/// most to kMessageAlign.
///
/// Not detectable in C++20: a pointer (or a std::string_view, a span...)
/// stored as a member of an aggregate is trivially copyable and standard
/// layout, so it passes; the address it holds means nothing in the other
/// process. Store offsets (zipc::OffsetPtr in a Heap) or indices instead.
template <class T>
concept ShmMessage =
    std::is_object_v<T> && !std::is_pointer_v<T> && !std::is_member_pointer_v<T> && !std::is_null_pointer_v<T> &&
    !std::is_array_v<T> && !std::is_polymorphic_v<T> && std::is_trivially_copyable_v<T> &&
    std::is_standard_layout_v<T> && !std::is_const_v<T> && !std::is_volatile_v<T> && alignof(T) <= kMessageAlign;

namespace detail {

// One static_assert per rule, so the compiler names the rule that failed.
template <class T>
constexpr bool check_message_type() {
  static_assert(!std::is_reference_v<T>, "zipc: a typed channel's message type cannot be a reference");
  static_assert(!std::is_pointer_v<T> && !std::is_null_pointer_v<T>,
                "zipc: a typed channel's message type cannot be a pointer (an address means nothing in another "
                "process; send the object, or an offset)");
  static_assert(!std::is_member_pointer_v<T>, "zipc: a typed channel's message type cannot be a member pointer");
  static_assert(!std::is_array_v<T>, "zipc: use std::array<T, N> (or a slice) instead of a built-in array type");
  static_assert(!std::is_const_v<T> && !std::is_volatile_v<T>, "zipc: name the message type without const/volatile");
  static_assert(!std::is_polymorphic_v<T>,
                "zipc: a typed channel's message type cannot have virtual functions (its vtable pointer is only "
                "valid in one process)");
  static_assert(std::is_trivially_copyable_v<T>,
                "zipc: a typed channel's message type must be trivially copyable (no std::string, std::vector, "
                "smart pointers or user-defined copy/destructor: their heap memory is not shared)");
  static_assert(std::is_standard_layout_v<T>,
                "zipc: a typed channel's message type must be standard layout (one access control for all "
                "members, no virtual bases), so both processes agree on its layout");
  static_assert(alignof(T) <= kMessageAlign, "zipc: a typed channel's message type may be aligned to at most 8 bytes");
  return true;
}

inline bool aligned_for(const void* p, std::size_t a) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) % a == 0;
}

}  // namespace detail

/// A write loan of `count()` Ts in a channel's shared memory. Elements are
/// value-initialised (zeroed) when the loan is made; assign them
/// (loan->price = 1.5), or construct with emplace(), then commit().
/// Destroyed without commit: aborted, as the byte loan.
template <class T, class ByteLoan>
class TypedWriteLoan {
 public:
  TypedWriteLoan() = default;
  /// A loan that failed with s (what reserve returns when it cannot loan).
  explicit TypedWriteLoan(Status s) noexcept : status_(s) {}
  /// bytes: the byte loan's memory (at least count * sizeof(T) or the loan is aborted with too_large).
  TypedWriteLoan(ByteLoan&& loan, std::span<std::byte> bytes, std::size_t count) noexcept
      : loan_(std::move(loan)), status_(loan_.status()) {
    if (!loan_) return;
    if (bytes.size() / sizeof(T) < count) {
      loan_.abort();
      status_ = Status::too_large;
      return;
    }
    if (!detail::aligned_for(bytes.data(), alignof(T))) {
      loan_.abort();
      status_ = Status::corrupt;
      return;
    }
    T* p = reinterpret_cast<T*>(bytes.data());
    std::uninitialized_value_construct_n(p, count);
    data_ = std::launder(p);
    count_ = count;
  }
  /// Moves the loan; o is left empty.
  TypedWriteLoan(TypedWriteLoan&& o) noexcept
      : loan_(std::move(o.loan_)),
        data_(std::exchange(o.data_, nullptr)),
        count_(std::exchange(o.count_, 0)),
        status_(o.status_) {}
  /// Moves o's loan here (this one's loan, if any, is aborted first, as the byte loan's move does); o is left empty.
  TypedWriteLoan& operator=(TypedWriteLoan&& o) noexcept {
    if (this != &o) {
      loan_ = std::move(o.loan_);
      data_ = std::exchange(o.data_, nullptr);
      count_ = std::exchange(o.count_, 0);
      status_ = o.status_;
    }
    return *this;
  }
  TypedWriteLoan(const TypedWriteLoan&) = delete;
  TypedWriteLoan& operator=(const TypedWriteLoan&) = delete;
  ~TypedWriteLoan() = default;  ///< the byte loan aborts itself

  /// True while the loan holds elements (not failed, committed or aborted).
  [[nodiscard]] explicit operator bool() const noexcept { return data_ != nullptr; }
  /// Why the loan failed (ok when it did not).
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// Elements loaned.
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  /// The elements.
  [[nodiscard]] std::span<T> span() const noexcept { return {data_, count_}; }
  /// Element 0 (nullptr when the loan holds nothing).
  [[nodiscard]] T* get() const noexcept { return data_; }
  /// Element 0's members.
  T* operator->() const noexcept { return data_; }
  /// Element 0.
  T& operator*() const noexcept { return *data_; }
  /// Element i (i < count()).
  T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// Constructs element 0 from args (replacing the zeroed one).
  template <class... A>
  T& emplace(A&&... args) noexcept(std::is_nothrow_constructible_v<T, A...>) {
    return *std::launder(::new (static_cast<void*>(data_)) T{std::forward<A>(args)...});
  }

  /// Publishes all count() elements (or the first n, at most count()): the byte loan's result.
  [[nodiscard]] auto commit() noexcept { return commit(count_); }
  /// Publishes the first n elements (at most count()); the loan then holds nothing.
  [[nodiscard]] auto commit(std::size_t n) noexcept {
    const std::size_t k = n < count_ ? n : count_;  // never more than was loaned
    data_ = nullptr;
    count_ = 0;
    return loan_.commit(k * sizeof(T));
  }
  /// Gives the memory back unpublished (nothing when the loan holds nothing).
  void abort() noexcept {
    if (data_ != nullptr) loan_.abort();
    data_ = nullptr;
    count_ = 0;
  }
  /// The underlying byte loan.
  [[nodiscard]] ByteLoan& bytes() noexcept { return loan_; }

 private:
  ByteLoan loan_{};
  T* data_ = nullptr;
  std::size_t count_ = 0;
  Status status_ = Status::ok;
};

/// A received message viewed as Ts, holding what keeps it valid (a queue read
/// loan, a topic view, an rpc response). The message must be a whole number of
/// Ts (exactly one for the single-value calls), else status() is corrupt and
/// nothing is exposed: a peer cannot make you read past its message.
template <class T, class Holder>
class TypedRead {
 public:
  TypedRead() = default;
  /// A read that failed with s.
  explicit TypedRead(Status s) noexcept : status_(s) {}
  /// Views bytes (held by h) as Ts when the read status s is ok: single demands exactly one T; a size that is no whole
  /// number of Ts, or misaligned memory, gives corrupt.
  TypedRead(Holder&& h, std::span<const std::byte> bytes, Status s, bool single) noexcept
      : holder_(std::move(h)), status_(s) {
    if (s != Status::ok) return;
    const bool whole = bytes.size() % sizeof(T) == 0 && (!single || bytes.size() == sizeof(T));
    if (!whole || !detail::aligned_for(bytes.data(), alignof(T))) {
      status_ = Status::corrupt;
      return;
    }
    data_ = std::launder(reinterpret_cast<const T*>(bytes.data()));
    count_ = bytes.size() / sizeof(T);
  }

  /// True when the message is exposed (status() is ok).
  [[nodiscard]] explicit operator bool() const noexcept { return status_ == Status::ok; }
  /// True when the message is exposed (status() is ok).
  [[nodiscard]] bool ok() const noexcept { return status_ == Status::ok; }
  /// ok, or why nothing is exposed (empty, timeout, closed, corrupt, ...).
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// Elements in the message.
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  /// The elements.
  [[nodiscard]] std::span<const T> span() const noexcept { return {data_, count_}; }
  /// Element 0 (nullptr when there is none).
  [[nodiscard]] const T* get() const noexcept { return count_ != 0 ? data_ : nullptr; }
  /// Element 0's members.
  const T* operator->() const noexcept { return data_; }
  /// Element 0.
  const T& operator*() const noexcept { return *data_; }
  /// Element i (i < count()).
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// What holds the message (release it early, read a sequence number, ...).
  [[nodiscard]] Holder& raw() noexcept { return holder_; }

 private:
  Holder holder_{};
  const T* data_ = nullptr;
  std::size_t count_ = 0;
  Status status_ = Status::empty;
};

}  // namespace zipc
