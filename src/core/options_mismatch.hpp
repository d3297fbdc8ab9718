// open_or_create on an existing segment: the caller's geometry against the
// segment's. One helper for every channel, so every message reads the same.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace zipc::detail {

struct GeometryField {
  const char* name;     // the option's name, e.g. "block_count"
  std::uint64_t asked;  // what the caller's options say
  std::uint64_t found;  // what the existing segment has
  const char* unit;     // "" or " ms", " bytes", ...
};

// Throws Errc::options_mismatch naming every field that differs (both
// values), unless accept_existing. `what` names the object: "queue 'jobs'".
void check_existing_geometry(std::string_view what, bool accept_existing, std::initializer_list<GeometryField> fields);

}  // namespace zipc::detail
