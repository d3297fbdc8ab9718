// The record file writer (record_file.hpp): records are built in large
// buffers on the reading thread and written by a writer thread, so reading
// the topic never waits on the file system while a spare buffer is there.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>

#include "common.hpp"
#include "record_file.hpp"

namespace zipc_tool {

namespace {
// One write() per chunk. Small enough that the chunks in flight (2 MiB) stay
// in the shared cache: the kernel's copy into the page cache reads them from
// there, not from memory (on tmpfs, 256 KiB chunks beat 4 MiB ones here).
constexpr std::size_t kChunkBytes = 256u << 10;
constexpr std::size_t kChunks = 8;  // the reader fills one while the writer writes the others

// strerror() is not thread-safe, and this file runs a second thread.
std::string error_text(int err) {
  return std::error_code(err, std::generic_category()).message();
}

void put32(char* p, std::uint32_t v) {
  std::memcpy(p, &v, 4);  // little-endian hosts only (x86-64, arm64)
}
void put64(char* p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}
}  // namespace

RecordWriter::RecordWriter(const std::string& path, const std::string& channel) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(errno == EACCES ? kPermission : errno == ENOENT ? kNotFound : kIo, path, error_text(errno));
  for (std::size_t i = 0; i < kChunks; ++i) free_.push_back(std::vector<char>(kChunkBytes));
  cur_ = std::move(free_.back());
  free_.pop_back();
  char h[kFileHeaderBytes] = {};
  std::copy_n(kRecordMagic, sizeof kRecordMagic, h);  // 8 bytes, no terminator
  put32(h + 8, kRecordVersion);
  put32(h + 12, kFileHeaderBytes);
  put64(h + 16, now_realtime_ns());
  put64(h + 24, 0);
  std::copy_n(channel.data(), std::min<std::size_t>(channel.size(), 32), h + 32);  // NUL-padded, not terminated
  std::memcpy(cur_.data(), h, sizeof h);
  used_ = sizeof h;
  writer_ = std::thread([this] { write_loop(); });
}

RecordWriter::~RecordWriter() {
  try {
    close();
  } catch (...) {
  }
}

void RecordWriter::write_loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return !full_.empty() || closing_; });
    if (full_.empty()) return;  // closing, everything written
    Chunk c = std::move(full_.front());
    full_.pop_front();
    lk.unlock();
    int err = 0;
    std::size_t off = 0;
    while (off < c.used && err == 0) {
      const ssize_t n = ::write(fd_, c.data.data() + off, c.used - off);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
      } else if (n < 0 && errno != EINTR) {
        err = errno;
      } else if (n == 0) {
        err = EIO;
      }
    }
    lk.lock();
    if (err != 0 && error_ == 0) error_ = err;
    written_ += off;
    free_.push_back(std::move(c.data));
    cv_.notify_all();
  }
}

void RecordWriter::hand_over() {
  std::unique_lock<std::mutex> lk(mu_);
  if (error_ != 0) fail(kIo, path_, error_text(error_));
  full_.push_back(Chunk{std::move(cur_), used_});
  pending_ += used_;
  used_ = 0;
  cv_.notify_all();
  cv_.wait(lk, [this] { return !free_.empty() || error_ != 0; });
  if (error_ != 0) fail(kIo, path_, error_text(error_));
  cur_ = std::move(free_.back());
  free_.pop_back();
}

char* RecordWriter::room(std::size_t need) {
  if (cur_.size() - used_ < need) {
    if (used_ != 0) hand_over();
    if (cur_.size() < need) cur_.resize(need);
  }
  return cur_.data() + used_;
}

void RecordWriter::append(std::uint64_t sequence, std::uint64_t publish_ns, std::span<const std::byte> payload) {
  const std::size_t need = kRecordHeaderBytes + payload.size();
  char* h = room(need);
  put32(h, static_cast<std::uint32_t>(payload.size()));
  put64(h + 8, sequence);
  put64(h + 16, publish_ns);
  // One pass over the payload: copied and checksummed together.
  put32(h + 4, record_crc_copy(h, h + kRecordHeaderBytes, payload.data(), payload.size()));
  used_ += need;
}

std::span<std::byte> RecordWriter::begin(std::size_t max) {
  char* h = room(kRecordHeaderBytes + max);
  return {reinterpret_cast<std::byte*>(h + kRecordHeaderBytes), max};
}

void RecordWriter::finish(std::uint64_t sequence, std::uint64_t publish_ns, std::size_t size) {
  char* h = cur_.data() + used_;  // where begin() made room
  put32(h, static_cast<std::uint32_t>(size));
  put64(h + 8, sequence);
  put64(h + 16, publish_ns);
  put32(h + 4, record_crc_in_place(h, size));
  used_ += kRecordHeaderBytes + size;
}

void RecordWriter::flush() {
  if (fd_ < 0) return;
  if (used_ != 0) hand_over();
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [this] { return full_.empty() && free_.size() + 1 == kChunks; });
  if (error_ != 0) fail(kIo, path_, error_text(error_));
}

void RecordWriter::close() {
  if (fd_ < 0) return;
  std::exception_ptr failed;
  try {
    flush();
  } catch (...) {
    failed = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    closing_ = true;
    cv_.notify_all();
  }
  if (writer_.joinable()) writer_.join();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (failed) std::rethrow_exception(failed);
  if (rc != 0) fail(kIo, path_, error_text(errno));
}

}  // namespace zipc_tool
