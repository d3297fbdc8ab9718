// Runs one benchmark configuration in a forked process of its own and brings
// its result back through a pipe, so no configuration inherits another's heap,
// mappings or warmed-up state. Shared by the bench/extra programs.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <type_traits>

namespace zipc::bench {

// T must be trivially copyable (it travels as bytes). A failed fork, a child
// that throws or dies yields a value-initialized T.
template <class T>
T isolated(const std::function<T()>& f) {
  static_assert(std::is_trivially_copyable_v<T>);
  int fds[2];
  if (::pipe(fds) != 0) return T{};
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return T{};
  }
  if (pid == 0) {
    ::close(fds[0]);
    T r{};
    try {
      r = f();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "isolated run: %s\n", e.what());
    }
    (void)!::write(fds[1], &r, sizeof r);
    ::_exit(0);
  }
  ::close(fds[1]);
  T r{};
  if (::read(fds[0], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) r = T{};
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return r;
}

}  // namespace zipc::bench
