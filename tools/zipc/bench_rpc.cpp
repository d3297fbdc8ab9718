// zipc bench: the Rpc ping-pong (a client here, an echo server in a forked process).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "bench_rpc.hpp"

namespace zipc_tool {

double rpc_ping_pong(const std::string& base, std::uint64_t n) {
  const std::string name = base + ".rpc";
  std::fflush(stdout);  // or the child inherits (and could repeat) pending output
  int ready[2];
  if (::pipe(ready) != 0) fail(kFailure, name, "pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) fail(kFailure, name, "fork failed");
  if (pid == 0) {
    int code = 0;
    try {
      zipc::RpcServer server = zipc::RpcServer::create(name);
      const char one = 1;
      if (::write(ready[1], &one, 1) != 1) ::_exit(3);
      for (std::uint64_t i = 0; i < n; ++i) {
        zipc::RpcRequest req = server.next(std::chrono::seconds(10));
        if (!req.ok() || req.reply(req.data()) != zipc::Status::ok) {
          code = 1;
          break;
        }
      }
    } catch (...) {
      code = 2;
    }
    ::_exit(code);  // a forked child never flushes stdio: its buffers are the parent's
  }
  char c = 0;
  const bool started = ::read(ready[0], &c, 1) == 1;
  std::vector<std::uint64_t> rtt;
  bool ok = started;
  if (started) {
    rtt.reserve(n);
    zipc::RpcClient client = zipc::RpcClient::connect(name, std::chrono::seconds(5));
    std::byte buf[8]{};
    for (std::uint64_t i = 0; i < n && ok; ++i) {
      std::memcpy(buf, &i, 8);
      const std::uint64_t t = now_monotonic_ns();
      zipc::RpcResponse r = client.call(buf, std::chrono::seconds(10));
      std::uint64_t back = ~0ull;
      if (r.ok() && r.size() == 8) std::memcpy(&back, r.data().data(), 8);
      rtt.push_back(now_monotonic_ns() - t);
      ok = back == i;
    }
  }
  ::close(ready[0]);
  ::close(ready[1]);
  int status = 0;
  const bool child_ok = ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  zipc::Segment::remove(name);
  if (!ok || !child_ok || rtt.empty()) fail(kFailure, name, "rpc ping-pong: a call failed or the server failed");
  std::sort(rtt.begin(), rtt.end());
  return static_cast<double>(rtt[rtt.size() / 2]);
}

}  // namespace zipc_tool
