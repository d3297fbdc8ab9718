// The zipc record file format, version 1 (docs/guide/cli.md, "Record file format").
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
// its CRC, reports where, and keeps everything before it. A record's size is
// checked against the file's size and the destination's limit before its
// payload is read: a forged size costs no memory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace zipc_tool {

inline constexpr char kRecordMagic[8] = {'Z', 'I', 'P', 'C', 'R', 'E', 'C', '\n'};
inline constexpr std::uint32_t kRecordVersion = 1;
inline constexpr std::uint32_t kFileHeaderBytes = 64;
inline constexpr std::uint32_t kRecordHeaderBytes = 24;
inline constexpr std::uint32_t kMaxRecordPayload = 1u << 30;

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t n) noexcept;
// The CRC of a record whose 24-byte header is at `header` (size, sequence and
// stamp filled in), while copying its payload from src to dst in the same pass.
std::uint32_t record_crc_copy(const char* header, char* dst, const void* src, std::size_t n) noexcept;
// The CRC of a complete record (header fields filled in, payload after them).
std::uint32_t record_crc_in_place(const char* header, std::size_t n) noexcept;

// Builds records in 256 KiB chunks on the caller's thread; a writer thread
// writes full chunks (one write() each) while the caller fills the next, so
// the caller waits on the file only when every chunk is in flight. Errors of
// the writer surface as ToolError (exit 9) at the next hand-over or close().
class RecordWriter {
 public:
  // Creates (or truncates) path and writes the file header.
  RecordWriter(const std::string& path, const std::string& channel);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;
  void append(std::uint64_t sequence, std::uint64_t publish_ns, std::span<const std::byte> payload);
  // In place, for a reader that copies anyway (a lossy subscriber): room for
  // a payload of up to max bytes in the chunk, then the record made of its
  // first size bytes (no copy; nothing is recorded without finish()).
  std::span<std::byte> begin(std::size_t max);
  void finish(std::uint64_t sequence, std::uint64_t publish_ns, std::size_t size);
  void flush();  // hands every buffered record to the kernel and waits for it
  void close();
  [[nodiscard]] std::uint64_t bytes_written() const noexcept { return pending_ + used_; }

 private:
  struct Chunk {
    std::vector<char> data;
    std::size_t used = 0;
  };
  char* room(std::size_t need);  // where the next `need` bytes go
  void hand_over();              // queues the current chunk, takes a free one
  void write_loop();             // the writer thread
  std::string path_;
  int fd_ = -1;
  std::vector<char> cur_;
  std::size_t used_ = 0;
  std::uint64_t pending_ = 0;  // bytes handed to the writer
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk> full_;               // guarded by mu_
  std::vector<std::vector<char>> free_;  // guarded by mu_
  std::uint64_t written_ = 0;            // guarded by mu_
  int error_ = 0;                        // guarded by mu_: the writer's errno
  bool closing_ = false;                 // guarded by mu_
  std::thread writer_;
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
  // Records larger than max bytes fail next() with ToolError(kUsage) naming
  // `whose` limit ("the topic T's"), before their payload is read.
  void limit_payload(std::uint64_t max, std::string whose);
  // False at the end, or at a truncated/corrupt tail (then tail_problem() says
  // what and where).
  bool next(RecordView* out);
  [[nodiscard]] const std::string& tail_problem() const noexcept { return problem_; }
  [[nodiscard]] const std::string& channel() const noexcept { return channel_; }
  [[nodiscard]] std::uint64_t created_ns() const noexcept { return created_ns_; }
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }  // bytes consumed
  [[nodiscard]] std::uint64_t file_size() const noexcept { return file_size_; }

 private:
  // At least need bytes buffered from pos_; false at EOF. The buffer grows
  // with what is read (at most doubling), never to what a header claims.
  bool fill(std::size_t need);
  // False when the regular file cannot hold n more bytes from offset_.
  bool file_holds(std::uint64_t n);
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  std::uint64_t offset_ = 0;
  std::uint64_t file_size_ = 0;
  std::uint64_t created_ns_ = 0;
  bool regular_ = false;
  std::string channel_;
  std::string problem_;
  std::uint64_t max_payload_ = kMaxRecordPayload;
  std::string whose_ = "the format's";
};

}  // namespace zipc_tool
