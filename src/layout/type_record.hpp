// The type record of a typed channel: in the header page of the segment, at
// byte kTypeRecordOffset (after the 256-byte SegmentHeader, before the payload
// at 4096). Written by the creator before init_state is published (so every
// opener sees it complete), never changed afterwards. A segment created by the
// byte API leaves these bytes zero (magic 0: no type recorded).
//
//  offset  size  field
//  0       8     magic "ZIPCTYP1" (kTypeMagic)
//  8       8     size         sizeof(T)
//  16      8     align        alignof(T)
//  24      8     fingerprint  zipc::type_fingerprint(...)
//  32      4     version      type_name<T>::version
//  36      4     field_count  aggregate members (0: not counted)
//  40      4     name_length  bytes used in name (<= kTypeNameBytes)
//  44      4     reserved (zero)
//  48      192   name (not NUL-terminated)
//  240     8     checksum     FNV-1a 64 of bytes [0, 240)
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "layout/segment_header.hpp"

namespace zipc::layout {

inline constexpr std::uint64_t kTypeMagic = 0x315059544350495aull;  // "ZIPCTYP1" little-endian bytes
inline constexpr std::uint64_t kTypeRecordOffset = 3072;
inline constexpr std::size_t kTypeNameBytes = 192;

struct TypeRecord {
  std::uint64_t magic;
  std::uint64_t size;
  std::uint64_t align;
  std::uint64_t fingerprint;
  std::uint32_t version;
  std::uint32_t field_count;
  std::uint32_t name_length;
  std::uint32_t reserved;
  char name[kTypeNameBytes];
  std::uint64_t checksum;
};

static_assert(sizeof(TypeRecord) == 248, "TypeRecord: the on-disk layout documented above is 248 bytes");
static_assert(offsetof(TypeRecord, name) == 48, "TypeRecord: name starts at byte 48");
static_assert(offsetof(TypeRecord, checksum) == 240, "TypeRecord: checksum follows the name");
static_assert(kTypeRecordOffset >= sizeof(SegmentHeader), "TypeRecord must not overlap the SegmentHeader");
static_assert(kTypeRecordOffset + sizeof(TypeRecord) <= kPayloadOffset, "TypeRecord must end before the payload");
static_assert(kTypeRecordOffset % alignof(TypeRecord) == 0, "TypeRecord must be naturally aligned");

inline constexpr std::size_t kTypeChecksummedBytes = offsetof(TypeRecord, checksum);

// Shared-memory structs: standard layout (offsetof and the diagram above mean what they say)
// and trivially copyable (no constructor or destructor runs on bytes another process maps).
static_assert(std::is_standard_layout_v<TypeRecord>, "TypeRecord is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<TypeRecord>, "TypeRecord is shared memory: trivially copyable");

}  // namespace zipc::layout
