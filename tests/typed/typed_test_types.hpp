// Message types shared by the typed tests (both sides of a fork see the same definitions).
#pragma once

#include <cstdint>
#include <string_view>

#include "zipc/type_identity.hpp"

namespace typed_test {

struct Order {
  std::uint64_t id;
  double price;
  std::uint32_t qty;
};

struct Quote {
  double bid;
  double ask;
};

struct Big {
  std::uint8_t bytes[40];
};

// Same size and alignment as Quote, one more field: the fingerprint differs.
struct Triple {
  double a;
  std::uint32_t b;
  std::uint32_t c;
};

struct Versioned {
  std::uint64_t x;
};

}  // namespace typed_test

template <>
struct zipc::type_name<typed_test::Versioned> {
  static constexpr std::string_view value = "test.Versioned";
  static constexpr std::uint32_t version = 3;
};
