#include "raw_nats.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace zipc::bridge_test {

RawNats::RawNats(int port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0)
    throw std::runtime_error("raw nats: cannot connect to port " + std::to_string(port));
  out_ = "CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"no_responders\":false}\r\n";
  flush();
}

RawNats::~RawNats() {
  if (fd_ >= 0) ::close(fd_);
}

void RawNats::publish(const std::string& subject, const std::string& header_block, const std::string& body) {
  if (header_block.empty()) {
    out_ += "PUB " + subject + " " + std::to_string(body.size()) + "\r\n";
  } else {
    out_ += "HPUB " + subject + " " + std::to_string(header_block.size()) + " " +
            std::to_string(header_block.size() + body.size()) + "\r\n" + header_block;
  }
  out_ += body;
  out_ += "\r\n";
  if (out_.size() > (1 << 16)) write_out();
}

void RawNats::write_out() {
  std::size_t done = 0;
  while (done < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + done, out_.size() - done, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("raw nats: write failed");
    done += static_cast<std::size_t>(n);
  }
  out_.clear();
}

void RawNats::flush() {
  out_ += "PING\r\n";
  write_out();
  std::string in;
  char buf[4096];
  for (;;) {  // the INFO line, server PINGs, then our PONG (an -ERR is an error)
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) throw std::runtime_error("raw nats: no PONG within 10 s");
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) throw std::runtime_error("raw nats: the server closed the connection: " + in);
    in.append(buf, static_cast<std::size_t>(n));
    if (in.find("-ERR") != std::string::npos) throw std::runtime_error("raw nats: " + in);
    std::size_t ping = 0;
    while ((ping = in.find("PING\r\n", ping)) != std::string::npos) {
      const std::string pong = "PONG\r\n";
      (void)::send(fd_, pong.data(), pong.size(), MSG_NOSIGNAL);
      in.erase(ping, 6);
    }
    if (in.find("PONG\r\n") != std::string::npos) return;
  }
}

std::string header_block(std::initializer_list<std::pair<std::string, std::string>> headers) {
  std::string b = "NATS/1.0\r\n";
  for (const auto& [k, v] : headers) b.append(k).append(": ").append(v).append("\r\n");
  return b.append("\r\n");
}

std::uint64_t rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

}  // namespace zipc::bridge_test
