#include "fd_channel.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace zipc::bench {

bool write_all(int fd, const void* buf, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(buf);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* buf, std::size_t n) noexcept {
  auto* p = static_cast<unsigned char*>(buf);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

void close_fd(int& fd) noexcept {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void throw_errno(const std::string& what) {
  throw std::runtime_error(what + ": " + std::strerror(errno));
}

FramedSender::FramedSender(std::vector<int> fds, std::size_t max_message)
    : fds_(std::move(fds)), buf_(max_message + sizeof(std::uint64_t)) {}

FramedSender::~FramedSender() {
  for (int& fd : fds_) close_fd(fd);
}

void* FramedSender::prepare(std::size_t n) {
  if (n + sizeof(std::uint64_t) > buf_.size()) return nullptr;
  return buf_.data() + sizeof(std::uint64_t);
}

bool FramedSender::commit(std::size_t n) {
  const std::uint64_t len = n;
  std::memcpy(buf_.data(), &len, sizeof len);
  for (int fd : fds_) {
    if (!write_all(fd, buf_.data(), n + sizeof len)) return false;
  }
  return true;
}

FramedReceiver::FramedReceiver(int fd, std::size_t max_message)
    : fd_(fd), max_message_(max_message), buf_(std::max<std::size_t>(128 * 1024, 2 * (max_message + 8))) {}

FramedReceiver::~FramedReceiver() {
  close_fd(fd_);
}

bool FramedReceiver::fill(std::size_t need) {
  if (tail_ - head_ >= need) return true;
  if (head_ + need > buf_.size()) {  // compact: move the partial frame to the front
    std::memmove(buf_.data(), buf_.data() + head_, tail_ - head_);
    tail_ -= head_;
    head_ = 0;
  }
  while (tail_ - head_ < need) {
    const ssize_t r = ::read(fd_, buf_.data() + tail_, buf_.size() - tail_);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) return false;
    tail_ += static_cast<std::size_t>(r);
  }
  return true;
}

const void* FramedReceiver::acquire(std::size_t* n) {
  if (!fill(sizeof(std::uint64_t))) return nullptr;
  std::uint64_t len;
  std::memcpy(&len, buf_.data() + head_, sizeof len);
  if (len > max_message_) return nullptr;  // corrupt frame
  if (!fill(sizeof len + len)) return nullptr;
  *n = static_cast<std::size_t>(len);
  current_ = sizeof len + len;
  return buf_.data() + head_ + sizeof len;
}

void FramedReceiver::release() {
  head_ += current_;
  current_ = 0;
  if (head_ == tail_) head_ = tail_ = 0;
}

void FdPairs::close_all() noexcept {
  for (int& fd : send) close_fd(fd);
  for (int& fd : recv) close_fd(fd);
  send.clear();
  recv.clear();
}

}  // namespace zipc::bench
