/// \file
/// zipc/type_identity.hpp - what a typed channel records about its message type.
///
/// \code
///   struct Quote { double price; std::uint32_t qty; };
///   template <> struct zipc::type_name<Quote> {
///     static constexpr std::string_view value = "demo.Quote";  // stable across compilers
///     static constexpr std::uint32_t version = 2;              // bump when the layout changes
///   };
///   ---
///   zipc::TypeIdentity id = zipc::type_identity_of<Quote>();  // {"demo.Quote", 16, 8, fp, 2}
/// \endcode
///
/// Every typed channel (zipc/typed.hpp) stores the identity of its message type
/// in its segment when it creates it, and refuses to open a segment that holds
/// another identity (Errc::type_mismatch, naming both). The byte API ignores the
/// record and can read it: Segment::type_identity(), SegmentInfo::type.
///
/// The name: zipc::type_name<T>::value when specialised, else the spelling the
/// compiler gives T in __PRETTY_FUNCTION__ (GCC and Clang agree for plain
/// structs in named namespaces; they may differ for templates, anonymous
/// namespaces and standard types, so specialise type_name when processes are
/// built by different compilers or the struct is renamed).
///
/// The fingerprint (FNV-1a 64 over name, size, alignment, the aggregate's
/// field count and the user's version) catches a renamed type, a different
/// size or alignment, an added or removed field and an explicit version bump.
/// It cannot see two fields swapped, a field's type changed to another of the
/// same size, or padding moved: C++20 has no reflection over members. Bump
/// type_name<T>::version when you change a layout in such a way.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace zipc {

/// Runtime form of a type identity (also what a segment holds).
struct TypeIdentity {
  std::string name;               ///< at most kMaxTypeName bytes are stored
  std::uint64_t size = 0;         ///< sizeof(T)
  std::uint64_t align = 0;        ///< alignof(T)
  std::uint64_t fingerprint = 0;  ///< see above
  std::uint32_t version = 0;      ///< type_name<T>::version (0 unless specialised)
  std::uint32_t field_count = 0;  ///< aggregate members (0: not an aggregate or not countable)
  /// Equal when every field is.
  bool operator==(const TypeIdentity&) const = default;
};

/// The longest type name a segment stores, bytes.
inline constexpr std::size_t kMaxTypeName = 192;

/// "Quote (16 bytes, align 8, 2 fields, version 2, fingerprint 0x...)".
std::string to_string(const TypeIdentity& t);

namespace detail {

template <class T>
constexpr std::string_view pretty_type_name() noexcept {
#if defined(__clang__)
  constexpr std::string_view kPretty = __PRETTY_FUNCTION__;  // "... [T = Quote]"
  constexpr std::string_view kKey = "T = ";
  constexpr std::size_t kBegin = kPretty.find(kKey) + kKey.size();
  return kPretty.substr(kBegin, kPretty.rfind(']') - kBegin);
#elif defined(__GNUC__)
  constexpr std::string_view kPretty = __PRETTY_FUNCTION__;  // "... [with T = Quote; std::string_view = ...]"
  constexpr std::string_view kKey = "T = ";
  constexpr std::size_t kBegin = kPretty.find(kKey) + kKey.size();
  constexpr std::size_t kEnd = kPretty.find_first_of(";]", kBegin);
  return kPretty.substr(kBegin, kEnd - kBegin);
#else
  static_assert(sizeof(T) == 0, "zipc: specialise zipc::type_name<T> for this compiler");
  return {};
#endif
}

// Counts the members of an aggregate: the largest N for which T{a1..aN} compiles.
struct AnyField {
  template <class U>
  constexpr operator U() const noexcept;  // never defined: unevaluated use only
};

template <class T, class... A>
concept BraceConstructible = requires {
  T{std::declval<A>()...};
};

template <class T, class... A>
constexpr std::uint32_t count_fields() noexcept {
  if constexpr (sizeof...(A) > 64) {
    return 0;  // give up: reported as "not countable"
  } else if constexpr (BraceConstructible<T, A..., AnyField>) {
    return count_fields<T, A..., AnyField>();
  } else {
    return static_cast<std::uint32_t>(sizeof...(A));
  }
}

template <class T>
constexpr std::uint32_t field_count() noexcept {
  if constexpr (std::is_aggregate_v<T> && !std::is_array_v<T>) {
    return count_fields<T>();
  } else {
    return 0;
  }
}

constexpr std::uint64_t fnv1a(std::uint64_t h, std::string_view s) noexcept {
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}
constexpr std::uint64_t fnv1a(std::uint64_t h, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xffu;
    h *= 0x100000001b3ull;
  }
  return h;
}

template <class T>
concept HasTypeVersion = requires {
  { T::version } -> std::convertible_to<std::uint32_t>;
};

}  // namespace detail

/// Specialise for a stable name (and optionally a layout version).
template <class T>
struct type_name {
  /// The name recorded for T: by default the compiler's spelling of T; a specialisation may say another (and add a
  /// `static constexpr std::uint32_t version`).
  static constexpr std::string_view value = detail::pretty_type_name<T>();
};

/// type_name<T>::version when the specialisation has one, else 0.
template <class T>
constexpr std::uint32_t type_version() noexcept {
  if constexpr (detail::HasTypeVersion<type_name<T>>) {
    return static_cast<std::uint32_t>(type_name<T>::version);
  } else {
    return 0;
  }
}

/// The fingerprint of a type's identity: FNV-1a over name, size, alignment, field count and version (what C and Python
/// compute too).
// NOLINTNEXTLINE(readability-identifier-naming): a function; clang-tidy 14 reports it as a constexpr variable
constexpr std::uint64_t type_fingerprint(std::string_view name, std::uint64_t size, std::uint64_t align,
                                         std::uint32_t fields, std::uint32_t version) noexcept {
  std::uint64_t h = detail::fnv1a(0xcbf29ce484222325ull, name);
  h = detail::fnv1a(h, size);
  h = detail::fnv1a(h, align);
  h = detail::fnv1a(h, std::uint64_t{fields});
  return detail::fnv1a(h, std::uint64_t{version});
}

/// type_fingerprint of T's name, size, alignment, field count and version.
template <class T>
inline constexpr std::uint64_t type_fingerprint_v = type_fingerprint(type_name<T>::value, sizeof(T), alignof(T),
                                                                     detail::field_count<T>(), type_version<T>());

/// T's identity, as typed channels record and check it.
template <class T>
TypeIdentity type_identity_of() {
  static_assert(type_name<T>::value.size() <= kMaxTypeName, "zipc: type_name<T>::value is longer than 192 bytes");
  TypeIdentity t;
  t.name = std::string(type_name<T>::value);
  t.size = sizeof(T);
  t.align = alignof(T);
  t.field_count = detail::field_count<T>();
  t.version = type_version<T>();
  t.fingerprint = type_fingerprint_v<T>;
  return t;
}

}  // namespace zipc
