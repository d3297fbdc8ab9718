// nats_server.hpp - real nats-server processes for the bridge's tests and its benchmark
// (tests/bridge, bench/bridge): one way to start one on a free loopback port with a JetStream
// store in a temporary directory, wait until it accepts, and kill it. Every process started
// here is killed by its RAII owner, and by the kernel if the owner dies (PR_SET_PDEATHSIG):
// no server outlives a test or a benchmark.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

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
  void stop();   // SIGTERM: a clean shutdown (the store is flushed)
  [[nodiscard]] std::string store_dir() const { return dir_ + "/js-" + node_; }
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

}  // namespace zipc::bridge_test
