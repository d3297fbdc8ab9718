// A raw NATS protocol client over TCP, for the hostile tests: it sends
// exactly the bytes it is given, status lines and malformed headers
// included, which the NATS C client will not.
#pragma once

#include <cstdint>
#include <string>

namespace zipc::bridge_test {

class RawNats {
 public:
  explicit RawNats(int port);  // connects and says CONNECT (headers on); throws on failure
  ~RawNats();
  RawNats(const RawNats&) = delete;
  RawNats& operator=(const RawNats&) = delete;

  // One message: header_block is the whole block ("NATS/1.0 503\r\n\r\n",
  // or "" for none).
  void publish(const std::string& subject, const std::string& header_block, const std::string& body);
  // Writes what is buffered and waits for the server to have read it (PING/PONG).
  void flush();

 private:
  void write_out();
  int fd_ = -1;
  std::string out_;
};

// A header block "NATS/1.0\r\nName: value\r\n...\r\n" from name/value pairs.
std::string header_block(std::initializer_list<std::pair<std::string, std::string>> headers);

// The resident set of this process (VmRSS), bytes.
std::uint64_t rss_bytes();

}  // namespace zipc::bridge_test
