// The zipc record file format (record_file.hpp).
#include "record_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common.hpp"

namespace zipc_tool {
namespace {

std::uint32_t crc_table_entry(std::uint32_t i) {
  std::uint32_t c = i;
  for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
  return c;
}

std::uint32_t crc32c_soft(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) t[i] = crc_table_entry(i);
    return t;
  }();
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_hw(std::uint32_t crc, const unsigned char* p,
                                                          std::size_t n) noexcept {
  std::uint64_t c = crc;
  while (n >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n-- != 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}
__attribute__((target("sse4.2"))) std::uint32_t crc32c_copy_hw(std::uint32_t crc, unsigned char* dst,
                                                               const unsigned char* p, std::size_t n) noexcept {
  std::uint64_t c = crc;
  while (n >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    std::memcpy(dst, &v, 8);
    c = __builtin_ia32_crc32di(c, v);
    p += 8;
    dst += 8;
    n -= 8;
  }
  auto c32 = static_cast<std::uint32_t>(c);
  while (n-- != 0) {
    *dst++ = *p;
    c32 = __builtin_ia32_crc32qi(c32, *p++);
  }
  return c32;
}
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

std::uint32_t get32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
std::uint64_t get64(const char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
#if defined(__x86_64__)
  crc = kHaveSse42 ? crc32c_hw(crc, p, n) : crc32c_soft(crc, p, n);
#else
  crc = crc32c_soft(crc, p, n);
#endif
  return ~crc;
}

namespace {
// CRC of a record: its size, sequence and stamp (bytes 0-3 and 8-23), then the payload.
std::uint32_t record_crc(const char* header, const void* payload, std::size_t n) {
  char fields[20];
  std::memcpy(fields, header, 4);
  std::memcpy(fields + 4, header + 8, 16);
  const std::uint32_t c = crc32c(0, fields, sizeof fields);
  return crc32c(c, payload, n);
}
}  // namespace

std::uint32_t record_crc_in_place(const char* header, std::size_t n) noexcept {
  return record_crc(header, header + kRecordHeaderBytes, n);
}

std::uint32_t record_crc_copy(const char* header, char* dst, const void* src, std::size_t n) noexcept {
  char fields[20];
  std::memcpy(fields, header, 4);
  std::memcpy(fields + 4, header + 8, 16);
  const std::uint32_t c = crc32c(0, fields, sizeof fields);
#if defined(__x86_64__)
  if (kHaveSse42) {
    return ~crc32c_copy_hw(~c, reinterpret_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), n);
  }
#endif
  std::memcpy(dst, src, n);
  return crc32c(c, dst, n);
}

RecordReader::RecordReader(const std::string& path) : path_(path), buf_(1 << 20) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    fail(errno == ENOENT ? kNotFound : errno == EACCES ? kPermission : kIo, path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fileno(file_), &st) == 0) {
    file_size_ = static_cast<std::uint64_t>(st.st_size);
    regular_ = S_ISREG(st.st_mode);
  }
  if (!fill(kFileHeaderBytes)) fail(kCorrupt, path, "shorter than a record file header (64 bytes)");
  const char* h = buf_.data();
  if (std::memcmp(h, kRecordMagic, 8) != 0) fail(kCorrupt, path, "not a zipc record file (bad magic)");
  const std::uint32_t version = get32(h + 8);
  if (version != kRecordVersion) {
    fail(kCorrupt, path,
         "record file version " + std::to_string(version) + ", this zipc reads " + std::to_string(kRecordVersion));
  }
  const std::uint32_t header_bytes = get32(h + 12);
  if (header_bytes < kFileHeaderBytes || header_bytes > (1u << 20)) {
    fail(kCorrupt, path, "header length " + std::to_string(header_bytes) + " is not from 64 to 1048576 bytes");
  }
  created_ns_ = get64(h + 16);
  channel_.assign(h + 32, strnlen(h + 32, 32));
  if (!fill(header_bytes)) fail(kCorrupt, path, "shorter than its header");
  pos_ += header_bytes;
  offset_ = header_bytes;
}

RecordReader::~RecordReader() {
  if (file_ != nullptr) std::fclose(file_);
}

void RecordReader::limit_payload(std::uint64_t max, std::string whose) {
  max_payload_ = std::min<std::uint64_t>(max, kMaxRecordPayload);
  whose_ = std::move(whose);
}

bool RecordReader::file_holds(std::uint64_t n) {
  if (!regular_) return true;  // a pipe: fill() finds out, growing with the data
  if (offset_ <= file_size_ && n <= file_size_ - offset_) return true;
  struct stat st {};  // it may have grown since (a recorder still writing)
  if (::fstat(fileno(file_), &st) == 0) file_size_ = static_cast<std::uint64_t>(st.st_size);
  return offset_ <= file_size_ && n <= file_size_ - offset_;
}

bool RecordReader::fill(std::size_t need) {
  if (end_ - pos_ >= need) return true;
  std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
  end_ -= pos_;
  pos_ = 0;
  while (end_ < need) {
    if (end_ == buf_.size()) buf_.resize(std::min(need, buf_.size() * 2));
    const std::size_t got = std::fread(buf_.data() + end_, 1, buf_.size() - end_, file_);
    if (got == 0) {
      if (std::ferror(file_)) fail(kIo, path_, std::strerror(errno));
      return false;
    }
    end_ += got;
  }
  return true;
}

bool RecordReader::next(RecordView* out) {
  if (!problem_.empty()) return false;
  if (!fill(kRecordHeaderBytes)) {
    if (end_ != pos_) {
      problem_ = "truncated record header at offset " + std::to_string(offset_) + " (" + std::to_string(end_ - pos_) +
                 " bytes): tail skipped";
    }
    return false;
  }
  const char* h = buf_.data() + pos_;
  const std::uint32_t size = get32(h);
  if (size > kMaxRecordPayload || !file_holds(std::uint64_t{kRecordHeaderBytes} + size)) {
    problem_ = std::string(size > kMaxRecordPayload ? "corrupt" : "truncated") + " record at offset " +
               std::to_string(offset_) + " claims " + std::to_string(size) + " bytes, " +
               (size > kMaxRecordPayload ? "over the format's " + std::to_string(kMaxRecordPayload) + "-byte limit"
                                         : "past the end of the file (" + std::to_string(file_size_) + " bytes)") +
               ": tail skipped";
    return false;
  }
  if (size > max_payload_) {
    fail(kUsage, path_,
         "record at offset " + std::to_string(offset_) + " is " + std::to_string(size) + " bytes, larger than " +
             whose_ + " " + std::to_string(max_payload_) + "-byte limit");
  }
  if (!fill(kRecordHeaderBytes + size)) {
    problem_ = "truncated record at offset " + std::to_string(offset_) + " (" + std::to_string(end_ - pos_) + " of " +
               std::to_string(kRecordHeaderBytes + size) + " bytes): tail skipped";
    return false;
  }
  h = buf_.data() + pos_;
  if (record_crc(h, h + kRecordHeaderBytes, size) != get32(h + 4)) {
    problem_ = "record at offset " + std::to_string(offset_) + " fails its CRC: corrupt tail skipped";
    return false;
  }
  out->sequence = get64(h + 8);
  out->publish_ns = get64(h + 16);
  out->payload = {reinterpret_cast<const std::byte*>(h + kRecordHeaderBytes), size};
  pos_ += kRecordHeaderBytes + size;
  offset_ += kRecordHeaderBytes + size;
  return true;
}

}  // namespace zipc_tool
