#include "core/type_record.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "zipc/error.hpp"
#include "zipc/segment.hpp"

namespace zipc {

std::string to_string(const TypeIdentity& t) {
  char fp[32];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(t.fingerprint));
  std::string s = "'" + t.name + "' (" + std::to_string(t.size) + " bytes, align " + std::to_string(t.align);
  if (t.field_count != 0) s += ", " + std::to_string(t.field_count) + " fields";
  s += ", version " + std::to_string(t.version) + ", fingerprint " + fp + ")";
  return s;
}

std::optional<TypeIdentity> Segment::type_identity() const {
  if (base_ == nullptr || size_ < layout::kTypeRecordOffset + sizeof(layout::TypeRecord)) return std::nullopt;
  layout::TypeRecord r;
  // A private copy: a peer scribbling on the mapping cannot change it under us.
  std::memcpy(static_cast<void*>(&r), base_ + layout::kTypeRecordOffset, sizeof r);
  TypeIdentity t;
  std::string why;
  switch (detail::read_type_record(r, &t, &why)) {
    case detail::TypeRecordState::absent: return std::nullopt;
    case detail::TypeRecordState::valid: return t;
    case detail::TypeRecordState::invalid: break;
  }
  throw Error(Errc::corrupt_header, "segment '" + name_ + "': corrupt header (type record: " + why + ")");
}

namespace detail {

namespace {

std::uint64_t record_checksum(const layout::TypeRecord& r) noexcept {
  return layout::fnv1a64(&r, layout::kTypeChecksummedBytes);
}

}  // namespace

void write_type_record(std::byte* base, const TypeIdentity& t) noexcept {
  layout::TypeRecord r{};
  r.magic = layout::kTypeMagic;
  r.size = t.size;
  r.align = t.align;
  r.fingerprint = t.fingerprint;
  r.version = t.version;
  r.field_count = t.field_count;
  const std::size_t n = std::min(t.name.size(), layout::kTypeNameBytes);
  r.name_length = static_cast<std::uint32_t>(n);
  std::memcpy(r.name, t.name.data(), n);
  r.checksum = record_checksum(r);
  std::memcpy(base + layout::kTypeRecordOffset, &r, sizeof r);
}

TypeRecordState read_type_record(const layout::TypeRecord& r, TypeIdentity* out, std::string* why) {
  if (r.magic == 0) return TypeRecordState::absent;
  if (r.magic != layout::kTypeMagic) {
    *why = "bad magic";
    return TypeRecordState::invalid;
  }
  if (record_checksum(r) != r.checksum) {
    *why = "checksum mismatch";
    return TypeRecordState::invalid;
  }
  if (r.name_length > layout::kTypeNameBytes) {
    *why = "name length " + std::to_string(r.name_length) + " is over " + std::to_string(layout::kTypeNameBytes);
    return TypeRecordState::invalid;
  }
  out->name.assign(r.name, r.name_length);
  out->size = r.size;
  out->align = r.align;
  out->fingerprint = r.fingerprint;
  out->version = r.version;
  out->field_count = r.field_count;
  return TypeRecordState::valid;
}

void check_type(std::string_view segment_name, const std::optional<TypeIdentity>& held, const TypeIdentity& want) {
  TypeIdentity stored = want;
  stored.name.resize(std::min(stored.name.size(), layout::kTypeNameBytes));  // what create would have stored
  if (held && *held == stored) return;
  const std::string holds = held ? "holds " + to_string(*held) : "holds no type (created with the byte API)";
  throw Error(Errc::type_mismatch, "segment '" + std::string(segment_name) + "': type mismatch (" + holds +
                                       ", opened as " + to_string(want) + ")");
}

}  // namespace detail
}  // namespace zipc
