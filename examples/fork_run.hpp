// fork_run.hpp - the examples' one way to run a part in its own process.
//
//   const pid_t child = zipc_example::fork_run([&] { return consumer(name); });
//   ...
//   const bool ok = zipc_example::wait_exit(child) == 0;
//
// fork_run flushes stdio first (so nothing buffered is printed twice), runs the body in the
// child and exits with what it returns; an exception becomes a message on stderr and exit
// code 1. wait_exit reaps the child: its exit code, 128 + the signal that killed it, or -1.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

namespace zipc_example {

template <class F>
pid_t fork_run(F&& body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 1;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child %d: %s\n", static_cast<int>(::getpid()), e.what());
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  return pid;
}

inline int wait_exit(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace zipc_example
