// Reading and writing the type record of a typed channel (layout/type_record.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "layout/type_record.hpp"
#include "zipc/type_identity.hpp"

namespace zipc::detail {

// Fills the record at base + kTypeRecordOffset (the creator, before init_state).
void write_type_record(std::byte* base, const TypeIdentity& t) noexcept;

enum class TypeRecordState { absent, valid, invalid };

// Classifies a private copy of a record; fills *out when valid, *why when invalid.
TypeRecordState read_type_record(const layout::TypeRecord& r, TypeIdentity* out, std::string* why);

// Throws Errc::type_mismatch unless `held` (the segment's record) is `want`.
void check_type(std::string_view segment_name, const std::optional<TypeIdentity>& held, const TypeIdentity& want);

}  // namespace zipc::detail
