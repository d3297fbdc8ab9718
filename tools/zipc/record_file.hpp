// The zipc record file format, version 1 (docs/cli.md, "Record file format").
//
// Streaming and append-only: a 64-byte file header, then records back to
// back, each self-checking. All integers little-endian.
//
//  file header (64 bytes)
//   0   8  magic "ZIPCREC\n"
//   8   4  version (1)
//   12  4  header_bytes (64; readers skip what they do not know)
//   16  8  created_ns (CLOCK_REALTIME when recording started)
//   24  8  flags (0)
//   32  32 channel name, NUL-padded (truncated if longer)
//
//  record (24-byte header + payload, no padding)
//   0   4  size         payload bytes (<= kMaxRecordPayload)
//   4   4  crc          CRC-32C of size, sequence, publish_ns and the payload
//   8   8  sequence     the message's sequence in the recorded topic
//   16  8  publish_ns   the message's CLOCK_REALTIME publish stamp
//   24  size payload
//
// A reader stops at the first record that is short (a crash tail) or fails
// its CRC, reports where, and keeps everything before it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace zipc_tool {

inline constexpr char kRecordMagic[8] = {'Z', 'I', 'P', 'C', 'R', 'E', 'C', '\n'};
inline constexpr std::uint32_t kRecordVersion = 1;
inline constexpr std::uint32_t kFileHeaderBytes = 64;
inline constexpr std::uint32_t kRecordHeaderBytes = 24;
inline constexpr std::uint32_t kMaxRecordPayload = 1u << 30;

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t n) noexcept;

class RecordWriter {
 public:
  // Creates (or truncates) path and writes the file header.
  RecordWriter(const std::string& path, const std::string& channel);
  ~RecordWriter();
  void append(std::uint64_t sequence, std::uint64_t publish_ns, std::span<const std::byte> payload);
  void flush();  // hands buffered records to the kernel
  void close();
  [[nodiscard]] std::uint64_t bytes_written() const noexcept { return written_ + used_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  std::size_t used_ = 0;
  std::uint64_t written_ = 0;
};

struct RecordView {
  std::uint64_t sequence = 0;
  std::uint64_t publish_ns = 0;
  std::span<const std::byte> payload;  // valid until the next next()
};

class RecordReader {
 public:
  explicit RecordReader(const std::string& path);  // validates the file header
  ~RecordReader();
  // False at the end, or at a truncated/corrupt tail (then tail_problem() says
  // what and where).
  bool next(RecordView* out);
  [[nodiscard]] const std::string& tail_problem() const noexcept { return problem_; }
  [[nodiscard]] const std::string& channel() const noexcept { return channel_; }
  [[nodiscard]] std::uint64_t created_ns() const noexcept { return created_ns_; }
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }  // bytes consumed
  [[nodiscard]] std::uint64_t file_size() const noexcept { return file_size_; }

 private:
  bool fill(std::size_t need);  // at least need bytes buffered from pos_; false at EOF
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t offset_ = 0;
  std::uint64_t file_size_ = 0;
  std::uint64_t created_ns_ = 0;
  std::string channel_;
  std::string problem_;
};

}  // namespace zipc_tool
