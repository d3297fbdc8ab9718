// Runs a body in a forked process and collects its exit code (examples only).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>

namespace zipc_example {

template <class F>
pid_t fork_run(F&& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
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
