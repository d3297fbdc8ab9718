// Internal: a read-only mapping of a segment for introspection, and the
// per-kind readers (src/introspect_*.cpp). Nothing here writes shared memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "zipc/introspect.hpp"

namespace zipc::detail {

struct ReadOnlyView {
  const std::byte* payload = nullptr;
  std::uint64_t payload_size = 0;  // validated: within the mapping

  // True when [offset, offset + n) lies inside the payload (overflow-safe).
  [[nodiscard]] bool fits(std::uint64_t offset, std::uint64_t n) const noexcept {
    return offset <= payload_size && n <= payload_size - offset;
  }
  template <class T>
  [[nodiscard]] const T* at(std::uint64_t offset) const noexcept {
    return reinterpret_cast<const T*>(payload + offset);
  }
};

// Relaxed load of a shared word (the mapping is read-only; a load never writes).
template <class T>
[[nodiscard]] inline T peek(const std::atomic<T>& a) noexcept {
  return a.load(std::memory_order_relaxed);  // relaxed: a statistics snapshot, no ordering needed
}

void add(ReportFields& f, const char* key, std::uint64_t value);

// Fill report from the kind's state; on a validation failure set
// report.problem and return (readable stays false).
void inspect_topic(const ReadOnlyView& v, ChannelReport& report);
void inspect_queue(const ReadOnlyView& v, ChannelReport& report);
void inspect_rpc(const ReadOnlyView& v, ChannelReport& report);
void inspect_reader_seat(const ReadOnlyView& v, ChannelReport& report);
void inspect_event_channel(const ReadOnlyView& v, ChannelReport& report);

}  // namespace zipc::detail
