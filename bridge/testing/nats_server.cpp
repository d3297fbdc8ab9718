#include "nats_server.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace zipc::bridge_test {
namespace {

sockaddr_in loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

}  // namespace

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/zipc-bridge-test-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

int free_port() {
  static std::mt19937 rng(std::random_device{}());
  for (;;) {
    // Random ports in 20000-59999; bound-then-closed to see it is free.
    const int port = 20000 + static_cast<int>(rng() % 40000);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(port);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    ::close(fd);
    if (ok) return port;
  }
}

Proc::Proc(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t parent = ::getpid();
  // The argument vector is built before fork: the child of a threaded parent must not allocate.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the watchdog: dies with the test
    if (::getppid() != parent) ::_exit(127);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}

Proc::Proc(Proc&& o) noexcept : pid_(o.pid_) {
  o.pid_ = -1;
}
Proc& Proc::operator=(Proc&& o) noexcept {
  if (this != &o) {
    kill(SIGKILL);
    wait(std::chrono::seconds(5));
    pid_ = o.pid_;
    o.pid_ = -1;
  }
  return *this;
}
Proc::~Proc() {
  kill(SIGKILL);
  wait(std::chrono::seconds(5));
}

void Proc::kill(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

int Proc::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    if (std::chrono::steady_clock::now() > end) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool Proc::running() {
  if (pid_ <= 0) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

NatsServer::NatsServer(const std::string& dir, std::string node, int port)
    : NatsServer(dir, std::move(node), port, Cluster{0, {}, "zipc-test"}) {}

NatsServer::NatsServer(const std::string& dir, std::string node, int port, Cluster cluster)
    : dir_(dir), node_(std::move(node)), port_(port == 0 ? free_port() : port), cluster_(std::move(cluster)) {
  log_ = dir_ + "/" + node_ + ".log";
  start();
}

NatsServer::NatsServer(const std::string& dir, std::string node, std::vector<std::string> extra_args)
    : dir_(dir), node_(std::move(node)), port_(free_port()), extra_args_(std::move(extra_args)) {
  log_ = dir_ + "/" + node_ + ".log";
  start();
}

void NatsServer::start() {
  std::vector<std::string> argv{
      "/usr/sbin/nats-server", "-a", "127.0.0.1", "-p", std::to_string(port_), "-js", "-sd", store_dir(), "-n", node_};
  if (cluster_.port != 0) {
    argv.insert(argv.end(),
                {"--cluster_name", cluster_.name, "-cluster", "nats://127.0.0.1:" + std::to_string(cluster_.port)});
    std::string routes;
    for (int p : cluster_.route_ports) {
      if (!routes.empty()) routes += ',';
      routes.append("nats://127.0.0.1:").append(std::to_string(p));
    }
    argv.insert(argv.end(), {"-routes", routes});
  }
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  proc_ = Proc(argv, log_);
  // Ready when its client port accepts.
  const bool up = wait_for(
      [&] {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a = loopback(port_);
        const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
        ::close(fd);
        return ok;
      },
      std::chrono::seconds(10));
  if (!up) throw std::runtime_error("nats-server " + node_ + " did not start: " + log());
}

void NatsServer::kill() {
  proc_.kill(SIGKILL);
  proc_.wait(std::chrono::seconds(5));
}

void NatsServer::stop() {
  proc_.kill(SIGTERM);
  proc_.wait(std::chrono::seconds(10));
}

bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace zipc::bridge_test
