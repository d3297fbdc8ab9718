// Test harness for the NATS bridge: real nats-server processes on random
// loopback ports (JetStream store in a temporary directory), zipc-bridge
// processes, and a reader of the remote topic. Every process started here is
// killed by its RAII owner, and by the kernel if the test dies
// (PR_SET_PDEATHSIG): no server outlives a test.
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

#include "zipc/bridge.hpp"
#include "zipc/topic.hpp"

namespace zipc::bridge_test {

// A fresh directory under TMPDIR, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A loopback TCP port nobody listens on right now.
int free_port();

// A child process running argv, stdout+stderr to log.
class Proc {
 public:
  Proc() = default;
  Proc(const std::vector<std::string>& argv, const std::string& log);
  Proc(Proc&& o) noexcept;
  Proc& operator=(Proc&& o) noexcept;
  ~Proc();
  void kill(int sig);
  // Exit code (or 128+signal); -1 on timeout (then the process is killed).
  int wait(std::chrono::milliseconds timeout);
  [[nodiscard]] bool running();
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

std::string read_file(const std::string& path);

// One nats-server with JetStream; optional cluster routes.
class NatsServer {
 public:
  struct Cluster {
    int port = 0;                  // this node's cluster port
    std::vector<int> route_ports;  // the other nodes' cluster ports
    std::string name = "zipc-test";
  };
  explicit NatsServer(const std::string& dir, std::string node = "n1", int port = 0);
  NatsServer(const std::string& dir, std::string node, int port, Cluster cluster);
  // A single server with more command-line options (authentication, TLS).
  NatsServer(const std::string& dir, std::string node, std::vector<std::string> extra_args);
  ~NatsServer() { kill(); }
  void start();  // (again after kill: same port, same store)
  void kill();   // SIGKILL, like a crash
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] std::string log() const { return read_file(log_); }

 private:
  std::string dir_, node_, log_;
  int port_;
  Cluster cluster_;
  std::vector<std::string> extra_args_;
  Proc proc_;
};

// Polls pred every 10 ms until true or timeout; returns its last value.
bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

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
