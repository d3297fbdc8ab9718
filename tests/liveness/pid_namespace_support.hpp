// Runs a test body as pid 1 of a new PID namespace with its own /proc: what
// `unshare --pid --fork --mount-proc` does, done with the same system calls
// (unshare(CLONE_NEWPID | CLONE_NEWNS), a private mount tree, a fresh proc
// mount) so the test needs no helper binary. /dev/shm stays shared: the
// situation of two containers that share /dev/shm but not a PID namespace.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <thread>

#include "liveness_support.hpp"
#include "zipc_test.hpp"

namespace zipc::test {

// Shared slots of a namespaced child: [0] its pid as the host sees it,
// [1] setup (1 = in the namespace, 2 = not permitted), [2] ready (the body
// holds what it was asked to hold), [3] stop request, [4..7] free for tests.
struct NsChild {
  SharedFlags flags{8};
  Child child;

  // Waits until the body said ready (true) or the namespace could not be made
  // or the body failed first (false; `why` says which).
  bool wait_ready(std::string& why, std::chrono::milliseconds bound = std::chrono::seconds(30)) {
    // Ready also needs the host pid (stored by the parent after its fork,
    // possibly after the body said ready), or kill_and_reap could not kill.
    const bool done =
        eventually([&] { return (flags[2].load() != 0 && flags[0].load() != 0) || flags[1].load() == 2; }, bound);
    if (flags[1].load() == 2) {
      why = "unshare(CLONE_NEWPID | CLONE_NEWNS) or mounting /proc is not permitted here";
      return false;
    }
    if (!done) why = "the child in the new PID namespace never said ready";
    return done;
  }
  // SIGKILL to the child's pid 1 (kills the whole namespace), then reaps.
  void kill_and_reap() {
    const auto pid = static_cast<pid_t>(flags[0].load());
    if (pid > 0) ::kill(pid, SIGKILL);
    (void)child.wait(std::chrono::seconds(30));
  }
};

// Starts body in a new PID namespace. body returns an exit code (0 = fine).
inline void spawn_in_new_pid_namespace(NsChild& ns, const std::function<int()>& body) {
  SharedFlags* flags = &ns.flags;
  ns.child = spawn([flags, body]() {
    if (::unshare(CLONE_NEWPID | CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      (*flags)[1].store(2);
      return 0;
    }
    const pid_t p = ::fork();  // pid 1 of the new namespace
    if (p < 0) return 3;
    if (p == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
        (*flags)[1].store(2);
        ::_exit(0);
      }
      (*flags)[1].store(1);
      int code = 98;
      try {
        code = body();
      } catch (const std::exception& e) {
        report(std::string("exception in the namespace: ") + e.what());
        code = 99;
      }
      ::_exit(code);
    }
    (*flags)[0].store(static_cast<std::uint64_t>(p));
    int st = 0;
    while (::waitpid(p, &st, 0) < 0) {
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  });
}

// In a namespaced body: waits (bounded) for the parent's stop request.
inline void hold_until_stopped(SharedFlags& flags) {
  (void)eventually([&] { return flags[3].load() != 0; }, std::chrono::seconds(60));
}

}  // namespace zipc::test
