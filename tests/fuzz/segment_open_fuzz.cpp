// Feeds arbitrary bytes to Segment::open as the content of a segment file.
// It must only ever return a valid segment or throw zipc::Error: never crash,
// never read outside the file, never hang.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "layout/segment_header.hpp"
#include "segment/segment_header.hpp"
#include "zipc/segment.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Fast path: the pure validator over the raw bytes.
  (void)zipc::detail::check_header(data, size, size, zipc::SegmentKind::any);

  // Every few inputs also go through the real open() from a file: a hostile
  // peer could leave exactly these bytes in /dev/shm.
  static const std::string path = "/dev/shm/zipc-fuzz-" + std::to_string(::getpid());
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 0;
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  const auto check = zipc::detail::check_header(data, size, size, zipc::SegmentKind::any);
  // An "initializing" header makes open() wait out its grace period for a
  // creator; that path is covered by the unit tests, not worth fuzzer time.
  if (check.state != zipc::detail::HeaderState::initializing) {
    zipc::SegmentOptions o;
    o.path = path;
    o.open_timeout = std::chrono::milliseconds(0);
    try {
      zipc::Segment s = zipc::Segment::open("fuzz", zipc::SegmentKind::any, o);
      // A segment that validated must be fully readable.
      volatile std::byte sink{};
      for (std::size_t i = 0; i < s.payload_size(); i += 4096) sink = s.payload()[i];
      (void)sink;
    } catch (const zipc::Error&) {
    }
  }
  ::unlink(path.c_str());
  return 0;
}
