// Validation of a segment header read from a file: pure functions over bytes,
// shared by Segment::open, Segment::inspect and the fuzz target.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "layout/segment_header.hpp"
#include "zipc/error.hpp"
#include "zipc/segment.hpp"

namespace zipc::detail {

// Every named segment's file is <shm dir>/zipc.<name> (or zipc.<ns>:<name>).
inline constexpr const char* kSegmentFilePrefix = "zipc.";

enum class HeaderState {
  initializing,  // the creator has not stored init_state yet
  ready,         // header complete and valid
  invalid,       // see errc / why
};

struct HeaderCheck {
  HeaderState state = HeaderState::invalid;
  Errc errc = Errc::ok;
  std::string why;
};

// Classifies the first `have` bytes of a file whose size is file_size.
// Never reads past `have`. expected may be SegmentKind::any.
HeaderCheck check_header(const void* bytes, std::size_t have, std::uint64_t file_size, SegmentKind expected) noexcept;

std::uint64_t header_checksum(const layout::SegmentHeader& h) noexcept;

}  // namespace zipc::detail
