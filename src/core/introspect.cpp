// Channel introspection (include/zipc/introspect.hpp): maps a segment
// read-only and hands its payload to the kind's reader.
#include "zipc/introspect.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "core/fail.hpp"
#include "core/introspect_map.hpp"
#include "layout/segment_header.hpp"
#include "platform/file.hpp"
#include "zipc/error.hpp"

namespace zipc {
namespace detail {

void add(ReportFields& f, const char* key, std::uint64_t value) {
  f.push_back({key, value});
}

namespace {

class Mapping {
 public:
  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (base_ != nullptr) platform::unmap(base_, size_);
  }
  // 0 or -errno.
  int map(int fd, std::uint64_t size) {
    int err = 0;
    platform::MapRequest req;
    req.size = size;
    req.read_only = true;
    base_ = platform::map_fd(fd, req, &err);
    if (base_ == nullptr) return err;
    size_ = size;
    return 0;
  }
  [[nodiscard]] const std::byte* base() const noexcept { return static_cast<const std::byte*>(base_); }

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

void read_state(ChannelReport& report, int fd, std::uint64_t file_size) {
  const SegmentInfo& info = report.segment;
  if (!info.valid) {
    report.problem = info.problem.empty() ? "invalid header" : info.problem;
    return;
  }
  if (file_size < layout::kPayloadOffset) {
    report.problem = "file shorter than the header";
    return;
  }
  Mapping m;
  if (int r = m.map(fd, file_size); r < 0) {
    report.problem = "mmap: " + platform::error_text(-r);
    return;
  }
  // The header was validated by Segment::inspect; re-read payload_size from
  // the mapping and check it against the file again (it may have changed).
  layout::SegmentHeader h;
  std::memcpy(static_cast<void*>(&h), m.base(), sizeof h);
  if (h.payload_offset != layout::kPayloadOffset || h.payload_size > file_size - layout::kPayloadOffset) {
    report.problem = "payload bounds do not fit the file";
    return;
  }
  ReadOnlyView v{m.base() + layout::kPayloadOffset, h.payload_size};
  switch (info.kind) {
    case SegmentKind::topic: inspect_topic(v, report); break;
    case SegmentKind::queue: inspect_queue(v, report); break;
    case SegmentKind::rpc: inspect_rpc(v, report); break;
    case SegmentKind::topic_reader: inspect_reader_seat(v, report); break;
    case SegmentKind::event: inspect_event_channel(v, report); break;
    default: report.readable = true; return;  // heap, bench, user: the header is all we know
  }
  report.participants_known = report.readable;
}

}  // namespace
}  // namespace detail

std::size_t ChannelReport::alive_count() const noexcept {
  std::size_t n = 0;
  for (const auto& p : participants) n += p.alive ? 1 : 0;
  return n;
}

std::size_t ChannelReport::dead_count() const noexcept {
  return participants.size() - alive_count();
}

const std::uint64_t* find_field(const ReportFields& fields, std::string_view key) noexcept {
  for (const auto& f : fields) {
    if (f.key == key) return &f.value;
  }
  return nullptr;
}

ChannelReport inspect_channel(std::string_view name, const SegmentOptions& options) {
  ChannelReport report;
  report.segment = Segment::inspect(name, options);  // throws not_found, permission_denied
  const std::string& path = report.segment.path;
  const int fd = platform::open_file(path, O_RDONLY, 0);
  if (fd < 0) {
    throw Error(errc_from_errno(-fd),
                "zipc: '" + std::string(name) + "': open " + path + ": " + platform::error_text(-fd));
  }
  platform::FileStat st;
  if (int r = platform::stat_fd(fd, &st); r < 0) {
    platform::close_fd(fd);
    throw Error(Errc::system, "zipc: '" + std::string(name) + "': fstat: " + platform::error_text(-r));
  }
  report.mode = st.mode & 07777;
  report.owner_uid = st.uid;
  try {
    detail::read_state(report, fd, st.size);
  } catch (...) {
    platform::close_fd(fd);
    throw;
  }
  platform::close_fd(fd);
  return report;
}

std::vector<ChannelReport> inspect_channels() {
  return inspect_channels(nullptr);
}

std::vector<ChannelReport> inspect_channels(const std::function<bool(std::string_view name)>& only) {
  std::vector<ChannelReport> out;
  // A listed name carries its name space ("ns:x"); one without is of none,
  // whatever ZIPC_NAMESPACE says (else "x" would read its namesake "ns:x").
  SegmentOptions exact;
  exact.name_space = std::string();
  for (const SegmentInfo& info : Segment::list()) {
    if (only && !only(info.name)) continue;
    try {
      out.push_back(inspect_channel(info.name, exact));
    } catch (const Error& e) {
      if (e.errc() == Errc::not_found) continue;  // removed meanwhile
      ChannelReport r;
      r.segment = info;
      r.problem = e.what();
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace zipc
