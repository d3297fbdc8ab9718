#include "segment/segment_header.hpp"

#include <cstring>
#include <string>

namespace zipc::detail {

std::uint64_t header_checksum(const layout::SegmentHeader& h) noexcept {
  return layout::fnv1a64(&h, layout::kChecksummedBytes);
}

namespace {

HeaderCheck bad(Errc e, std::string why) {
  return {HeaderState::invalid, e, std::move(why)};
}

bool known_kind(std::uint32_t k) {
  return k == static_cast<std::uint32_t>(SegmentKind::queue) || k == static_cast<std::uint32_t>(SegmentKind::topic) ||
         k == static_cast<std::uint32_t>(SegmentKind::rpc) || k == static_cast<std::uint32_t>(SegmentKind::heap) ||
         k == static_cast<std::uint32_t>(SegmentKind::bench) || k == static_cast<std::uint32_t>(SegmentKind::event) ||
         k == static_cast<std::uint32_t>(SegmentKind::topic_reader) ||
         k >= static_cast<std::uint32_t>(SegmentKind::user);
}

}  // namespace

HeaderCheck check_header(const void* bytes, std::size_t have, std::uint64_t file_size, SegmentKind expected) noexcept {
  try {
    std::uint64_t magic = 0;
    if (have >= sizeof magic) std::memcpy(&magic, bytes, sizeof magic);
    if (have < sizeof(layout::SegmentHeader)) {
      if (have >= sizeof magic && magic != 0) {
        if (magic != layout::kMagic) return bad(Errc::bad_magic, "not a zipc segment (bad magic)");
        return bad(Errc::truncated, "file is " + std::to_string(file_size) + " bytes, shorter than its header");
      }
      return {HeaderState::initializing, Errc::ok, {}};
    }
    layout::SegmentHeader h;
    std::memcpy(static_cast<void*>(&h), bytes, sizeof h);
    const std::uint32_t init = h.init_state.load(std::memory_order_relaxed);  // relaxed: a private copy
    if (magic == 0 && init == 0) return {HeaderState::initializing, Errc::ok, {}};
    if (magic != layout::kMagic) return bad(Errc::bad_magic, "not a zipc segment (bad magic)");
    if (h.layout_version != layout::kLayoutVersion) {
      return bad(Errc::version_mismatch, "created by layout version " + std::to_string(h.layout_version) +
                                             ", this library reads version " + std::to_string(layout::kLayoutVersion));
    }
    if (init == 0) return {HeaderState::initializing, Errc::ok, {}};
    if (init != layout::kInitReady) return bad(Errc::corrupt_header, "init_state word holds an unknown value");
    if (header_checksum(h) != h.checksum) return bad(Errc::corrupt_header, "header checksum mismatch");
    if (!known_kind(h.kind)) return bad(Errc::corrupt_header, "unknown kind " + std::to_string(h.kind));
    if (expected != SegmentKind::any && h.kind != static_cast<std::uint32_t>(expected)) {
      return bad(Errc::wrong_kind,
                 std::string("is a ") + to_string(static_cast<SegmentKind>(h.kind)) + ", not a " + to_string(expected));
    }
    if (h.payload_offset != layout::kPayloadOffset || h.total_size < h.payload_offset ||
        h.payload_size != h.total_size - h.payload_offset) {
      return bad(Errc::corrupt_header, "payload bounds do not fit the total size");
    }
    if (file_size < h.total_size) {
      return bad(Errc::truncated,
                 "file is " + std::to_string(file_size) + " bytes, header says " + std::to_string(h.total_size));
    }
    if (h.creator_pid == 0) return bad(Errc::corrupt_header, "no creator recorded");
    return {HeaderState::ready, Errc::ok, {}};
  } catch (...) {  // std::string allocation failure only
    return bad(Errc::corrupt_header, "out of memory while validating");
  }
}

}  // namespace zipc::detail
