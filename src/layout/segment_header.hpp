// The header at byte 0 of every zipc segment.
//
//  offset  size  field
//  0       8     magic "ZIPCSEG1" (kMagic)
//  8       4     layout_version
//  12      4     kind (SegmentKind)
//  16      8     total_size       bytes of the file / mapping
//  24      8     payload_offset   start of the kind's area (kPayloadOffset)
//  32      8     payload_size     total_size - payload_offset
//  40      4     creator_pid
//  44      4     creator_uid
//  48      8     creator_start_time (clock ticks since boot; with pid = ProcessId)
//  56      8     created_ns       CLOCK_REALTIME at creation
//  64      64    params[8]        kind-specific parameters (capacity, sizes, ...)
//  128     8     checksum         FNV-1a 64 of bytes [0, 128)
//  136     4     init_state       0 while initializing; kReady stored LAST (release)
//  140     116   reserved (zero)
//  256..4095     reserved; the payload starts at 4096 (page aligned)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace zipc::layout {

inline constexpr std::uint64_t kMagic = 0x3147455350495a5aull;  // "ZZIPSEG1" little-endian bytes
inline constexpr std::uint32_t kLayoutVersion = 1;
inline constexpr std::uint32_t kInitReady = 0x52454459u;  // "YDER"
inline constexpr std::uint64_t kPayloadOffset = 4096;
inline constexpr std::size_t kParamCount = 8;

struct SegmentHeader {
  std::uint64_t magic;
  std::uint32_t layout_version;
  std::uint32_t kind;
  std::uint64_t total_size;
  std::uint64_t payload_offset;
  std::uint64_t payload_size;
  std::uint32_t creator_pid;
  std::uint32_t creator_uid;
  std::uint64_t creator_start_time;
  std::uint64_t created_ns;
  std::uint64_t params[kParamCount];
  std::uint64_t checksum;
  std::atomic<std::uint32_t> init_state;
  std::uint8_t reserved[116];
};

static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "shared uint32_t atomics are lock-free (a lock would be private to one process)");
static_assert(sizeof(SegmentHeader) == 256, "SegmentHeader is 256 bytes (the diagram above)");
static_assert(offsetof(SegmentHeader, kind) == 12, "SegmentHeader::kind at byte 12 (the diagram above)");
static_assert(offsetof(SegmentHeader, params) == 64, "SegmentHeader::params at byte 64 (the diagram above)");
static_assert(offsetof(SegmentHeader, checksum) == 128, "SegmentHeader::checksum at byte 128 (the diagram above)");
static_assert(offsetof(SegmentHeader, init_state) == 136, "SegmentHeader::init_state at byte 136 (the diagram above)");
static_assert(kPayloadOffset >= sizeof(SegmentHeader), "kPayloadOffset leaves room for the SegmentHeader");

inline constexpr std::size_t kChecksummedBytes = offsetof(SegmentHeader, checksum);

inline std::uint64_t fnv1a64(const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

// Shared-memory structs: standard layout (offsetof and the diagram above mean what they say)
// and trivially copyable (no constructor or destructor runs on bytes another process maps).
static_assert(std::is_standard_layout_v<SegmentHeader>, "SegmentHeader is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<SegmentHeader>, "SegmentHeader is shared memory: trivially copyable");

}  // namespace zipc::layout
