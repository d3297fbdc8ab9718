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
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

void put32(char* p, std::uint32_t v) {
  std::memcpy(p, &v, 4);  // little-endian hosts only (x86-64, arm64)
}
void put64(char* p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}
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

RecordWriter::RecordWriter(const std::string& path, const std::string& channel) : path_(path), buf_(8 << 20) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) fail(errno == EACCES ? kPermission : kIo, path, std::strerror(errno));
  char h[kFileHeaderBytes] = {};
  std::copy_n(kRecordMagic, sizeof kRecordMagic, h);  // 8 bytes, no terminator
  put32(h + 8, kRecordVersion);
  put32(h + 12, kFileHeaderBytes);
  put64(h + 16, now_realtime_ns());
  put64(h + 24, 0);
  std::copy_n(channel.data(), std::min<std::size_t>(channel.size(), 32), h + 32);  // zero-padded, no terminator
  std::memcpy(buf_.data(), h, sizeof h);
  used_ = sizeof h;
}

RecordWriter::~RecordWriter() {
  try {
    close();
  } catch (...) {
  }
}

void RecordWriter::append(std::uint64_t sequence, std::uint64_t publish_ns, std::span<const std::byte> payload) {
  const std::size_t need = kRecordHeaderBytes + payload.size();
  if (buf_.size() - used_ < need) {
    flush();
    if (buf_.size() < need) buf_.resize(need);
  }
  char* h = buf_.data() + used_;
  put32(h, static_cast<std::uint32_t>(payload.size()));
  put64(h + 8, sequence);
  put64(h + 16, publish_ns);
  std::memcpy(h + kRecordHeaderBytes, payload.data(), payload.size());
  put32(h + 4, record_crc(h, h + kRecordHeaderBytes, payload.size()));
  used_ += need;
}

void RecordWriter::flush() {
  if (file_ == nullptr || used_ == 0) return;
  const std::size_t wrote = std::fwrite(buf_.data(), 1, used_, file_);
  if (wrote != used_ || std::fflush(file_) != 0) fail(kIo, path_, std::strerror(errno));
  written_ += used_;
  used_ = 0;
}

void RecordWriter::close() {
  if (file_ == nullptr) return;
  flush();
  std::fclose(file_);
  file_ = nullptr;
}

RecordReader::RecordReader(const std::string& path) : path_(path), buf_(8 << 20) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    fail(errno == ENOENT ? kNotFound : errno == EACCES ? kPermission : kIo, path, std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fileno(file_), &st) == 0) file_size_ = static_cast<std::uint64_t>(st.st_size);
  if (!fill(kFileHeaderBytes)) fail(kCorrupt, path, "shorter than a record file header (64 bytes)");
  const char* h = buf_.data();
  if (std::memcmp(h, kRecordMagic, 8) != 0) fail(kCorrupt, path, "not a zipc record file (bad magic)");
  const std::uint32_t version = get32(h + 8);
  if (version != kRecordVersion) {
    fail(kCorrupt, path,
         "record file version " + std::to_string(version) + ", this zipc reads " + std::to_string(kRecordVersion));
  }
  const std::uint32_t header_bytes = get32(h + 12);
  if (header_bytes < kFileHeaderBytes || header_bytes > (1u << 20)) fail(kCorrupt, path, "bad header length");
  created_ns_ = get64(h + 16);
  channel_.assign(h + 32, strnlen(h + 32, 32));
  if (!fill(header_bytes)) fail(kCorrupt, path, "shorter than its header");
  pos_ += header_bytes;
  offset_ = header_bytes;
}

RecordReader::~RecordReader() {
  if (file_ != nullptr) std::fclose(file_);
}

bool RecordReader::fill(std::size_t need) {
  if (end_ - pos_ >= need) return true;
  std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
  end_ -= pos_;
  pos_ = 0;
  if (buf_.size() < need) buf_.resize(need);
  while (end_ < need) {
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
  if (size > kMaxRecordPayload) {
    problem_ = "record at offset " + std::to_string(offset_) + " claims " + std::to_string(size) +
               " bytes: corrupt tail skipped";
    return false;
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
