// Test harness for the NATS bridge: real nats-server processes (bridge/testing/nats_server.hpp,
// shared with the bridge benchmark), zipc-bridge processes, and a reader of the remote topic.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nats_server.hpp"
#include "zipc/bridge.hpp"
#include "zipc/topic.hpp"

namespace zipc::bridge_test {

// Reads a topic reliably from the oldest record in a thread, parsing the
// envelope of each message: the origin sequences seen, in order.
class RemoteReader {
 public:
  explicit RemoteReader(const std::string& topic);
  ~RemoteReader();
  [[nodiscard]] std::vector<std::uint64_t> seqs() const;
  [[nodiscard]] std::size_t count() const { return count_.load(); }
  [[nodiscard]] std::size_t bad() const { return bad_.load(); }  // without an envelope, or payload mismatch

 private:
  Topic topic_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> count_{0}, bad_{0};
  mutable std::mutex mu_;
  std::vector<std::uint64_t> seqs_;
  std::thread thread_;
};

// A payload whose first 8 bytes are i (checked by RemoteReader).
std::vector<std::byte> payload(std::uint64_t i, std::size_t size = 100);

// Path of the zipc-bridge program under test.
std::string bridge_exe();

}  // namespace zipc::bridge_test
