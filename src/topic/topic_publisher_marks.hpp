// Internal: a publisher's private bookkeeping arrays, kept out of the public header (topic.hpp).
#pragma once

#include <array>
#include <cstdint>

namespace zipc::detail {

// Streaming mode (single publisher): commits made visible together.
inline constexpr std::uint32_t kCommitBatch = 256;
// Single mode: record starts a publisher remembers (see Publisher::note_record_start).
inline constexpr std::uint32_t kDropMarks = 160;

// Held by a Publisher through a pointer (allocated when it attaches): 3.3 KB
// that a Publisher handle would otherwise carry inline. Measured in
// docs/design/topic.md ("Source files"): the indirection costs nothing measurable.
struct PublisherMarks {
  // Streaming mode: records committed but not yet visible (their tags are stored at flush).
  std::array<std::uint64_t, kCommitBatch> pending_records{};
  // Single mode: record starts we claimed (see make_room).
  std::array<std::uint64_t, kDropMarks> drop_marks{};
};

}  // namespace zipc::detail
