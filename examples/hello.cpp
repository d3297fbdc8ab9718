// Two processes, one queue. In two shells, in any order:
//   example_hello recv        prints the messages as they arrive
//   example_hello send        sends five greetings, then closes the queue
// With no argument it forks both on a private queue name and checks the result.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>

#include "zipc/zipc.hpp"

using namespace std::chrono_literals;

namespace {

zipc::Queue open_queue(const std::string& name) {
  zipc::QueueOptions opt;
  opt.block_size = 64;                            // the largest message, in bytes
  opt.block_count = 16;                           // blocks in the ring
  return zipc::Queue::open_or_create(name, opt);  // whoever comes first creates it
}

int send(const std::string& name) {
  zipc::Queue q = open_queue(name);
  for (int i = 1; i <= 5; ++i) {
    const std::string msg = "hello " + std::to_string(i);
    if (q.send(std::as_bytes(std::span(msg)), 1s) != zipc::Status::ok) return 1;
  }
  q.close();  // the receiver drains what is left, then sees Status::closed
  return 0;
}

int recv(const std::string& name) {
  zipc::Queue q = open_queue(name);
  char buf[64];
  int n = 0;
  for (;;) {
    zipc::IoResult r = q.recv(std::as_writable_bytes(std::span(buf)), 10s);
    if (r.status == zipc::Status::closed) break;
    if (!r.ok()) return 1;
    std::printf("%.*s\n", static_cast<int>(r.size), buf);
    ++n;
  }
  zipc::Queue::remove(name);
  std::fflush(stdout);
  return n == 5 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view role = argc > 1 ? argv[1] : "";
  if (role == "send") return send("hello");
  if (role == "recv") return recv("hello");
  const std::string name = "hello-" + std::to_string(getpid());
  const pid_t child = fork();
  if (child == 0) _exit(recv(name));
  const int sent = send(name);
  int status = 0;
  waitpid(child, &status, 0);
  return sent == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
