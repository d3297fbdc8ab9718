// libFuzzer target: the zipc tool's record-file reader (tools/zipc/record_file.cpp),
// the parser `zipc replay` uses. Any bytes: the reader stops at a bad tail or
// fails with a ToolError, never crashes, and a record's claimed length costs
// no memory (libFuzzer's -rss_limit_mb catches an allocation of what a header
// claims).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common.hpp"
#include "record_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("record_file_fuzz", MFD_CLOEXEC);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0) return 0;
  if (size != 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  try {
    zipc_tool::RecordReader reader(path);  // opens its own description: offset 0
    reader.limit_payload(1u << 16, "the fuzz topic's");
    zipc_tool::RecordView r;
    std::uint64_t total = 0;
    unsigned sink = 0;
    while (reader.next(&r)) {
      total += r.payload.size();
      for (std::byte b : r.payload) sink += std::to_integer<unsigned>(b);  // every payload byte is readable
    }
    if (total > size) __builtin_trap();  // payloads come from the file
    static volatile unsigned keep;
    keep = sink;
  } catch (const zipc_tool::ToolError&) {
  }
  return 0;
}
