// Shared pieces for transports built on file descriptors (pipe, FIFO, Unix
// and TCP sockets): a framed sender that writes [u64 length][payload] to one
// or more fds (one per subscriber for fan-out), and a buffered framed
// receiver that reads as much as the kernel has and hands out whole messages.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "transport.hpp"

namespace zipc::bench {

// Writes all n bytes (retrying short writes and EINTR); false on error.
bool write_all(int fd, const void* buf, std::size_t n) noexcept;
// Reads exactly n bytes; false on error or end of file.
bool read_all(int fd, void* buf, std::size_t n) noexcept;
void close_fd(int& fd) noexcept;
// Throws std::runtime_error naming what failed with strerror(errno).
[[noreturn]] void throw_errno(const std::string& what);

class FramedSender final : public Sender {
 public:
  FramedSender(std::vector<int> fds, std::size_t max_message);
  ~FramedSender() override;
  void* prepare(std::size_t n) override;
  bool commit(std::size_t n) override;

 private:
  std::vector<int> fds_;
  std::vector<unsigned char> buf_;
};

class FramedReceiver final : public Receiver {
 public:
  FramedReceiver(int fd, std::size_t max_message);
  ~FramedReceiver() override;
  const void* acquire(std::size_t* n) override;
  void release() override;

 private:
  bool fill(std::size_t need);
  int fd_;
  std::size_t max_message_;
  std::vector<unsigned char> buf_;
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
  std::size_t current_ = 0;  // bytes of the message handed out (frame included)
};

// A pair of connected fds per subscriber, made in the parent before fork.
struct FdPairs {
  std::vector<int> send;  // one per subscriber (broadcast) or one
  std::vector<int> recv;
  void close_all() noexcept;
};

}  // namespace zipc::bench
