// zipc-bench-liveness_check: cost of a liveness check and of taking an identity.
//
//   zipc-bench-liveness_check [--reps N] [--full] [--out FILE]
//
// (zipc-bench runs it with --out; rows: workload "liveness", transport
// "zipc-token" / "zipc-proc", check_ns and attach_ns. Default 100 rounds,
// --full 1000.)
//
// Two identities, measured alternately in one run (rounds of N):
//   token: the default, an open-file-description lock in /dev/shm/.zipc-liveness;
//          a check is one fcntl(F_OFD_GETLK);
//   proc:  ZIPC_LIVENESS=proc, the start time from /proc/<pid>/stat (what every
//          check did before the token); a check is open + read + close.
// check:  is_alive_packed() on the word of a live child process, ns per call
//         (median of rounds of 1000 calls);
// attach: the first ProcessId::current() of a freshly forked child, ns (median
//         over N children): opening the file and claiming a token, or reading /proc.
// The rounds run as kDefaultRepetitions repetitions (--full: kFullRepetitions)
// of N rounds each; a row is the median of its repetitions' medians, with
// their spread. Prints one line per row with the ratio token / proc.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "repetitions.hpp"
#include "zipc/process.hpp"

namespace {

using Clock = std::chrono::steady_clock;

using zipc::bench::median_of;

// A child that takes an identity (the token, or /proc when proc) and sleeps;
// returns its pid and packed word.
pid_t live_child(bool proc, std::uint64_t* word) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (proc) ::setenv("ZIPC_LIVENESS", "proc", 1);
    const std::uint64_t w = zipc::pack(zipc::ProcessId::current());
    (void)::write(fds[1], &w, sizeof w);
    for (;;) ::pause();
  }
  if (::read(fds[0], word, sizeof *word) != static_cast<ssize_t>(sizeof *word)) *word = 0;
  ::close(fds[0]);
  ::close(fds[1]);
  return pid;
}

double check_ns(std::uint64_t word) {
  constexpr int kCalls = 1000;
  int alive = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < kCalls; ++i) alive += zipc::is_alive_packed(word) ? 1 : 0;
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kCalls;
  if (alive != kCalls) std::fprintf(stderr, "a live child was judged dead\n");
  return ns;
}

double attach_ns(bool proc) {
  int fds[2];
  if (::pipe(fds) != 0) return 0;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (proc) ::setenv("ZIPC_LIVENESS", "proc", 1);
    const auto t0 = Clock::now();
    const zipc::ProcessId id = zipc::ProcessId::current();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    const double out = id.has_token() == !proc ? ns : -1.0;
    (void)::write(fds[1], &out, sizeof out);
    ::_exit(0);
  }
  double ns = 0;
  if (::read(fds[0], &ns, sizeof ns) != static_cast<ssize_t>(sizeof ns)) ns = -1;
  int st = 0;
  ::waitpid(pid, &st, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 100;
  int repetitions = zipc::bench::kDefaultRepetitions;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--full") {
      reps = 1000;
      repetitions = zipc::bench::kFullRepetitions;
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--reps N] [--full] [--out FILE]\n", argv[0]);
      return 2;
    }
  }
  std::uint64_t token_word = 0, proc_word = 0;
  const pid_t a = live_child(false, &token_word);
  const pid_t b = live_child(true, &proc_word);
  if (a < 0 || b < 0 || !zipc::unpack(token_word).has_token() || zipc::unpack(proc_word).has_token()) {
    std::fprintf(stderr, "could not start the two children (is /dev/shm/.zipc-liveness usable?)\n");
    return 1;
  }
  // Per repetition: the medians of its rounds (check token, check proc,
  // attach token, attach proc).
  std::vector<double> ct, cp, at, ap;
  bool bad = false;
  for (int k = 0; k < repetitions; ++k) {
    std::vector<double> rct, rcp, rat, rap;
    for (int r = 0; r < reps; ++r) {  // alternate, so drift hits both alike
      rct.push_back(check_ns(token_word));
      rcp.push_back(check_ns(proc_word));
      rat.push_back(attach_ns(false));
      rap.push_back(attach_ns(true));
      bad = bad || rat.back() < 0 || rap.back() < 0;
    }
    ct.push_back(median_of(rct));
    cp.push_back(median_of(rcp));
    at.push_back(median_of(rat));
    ap.push_back(median_of(rap));
  }
  ::kill(a, SIGKILL);
  ::kill(b, SIGKILL);
  ::waitpid(a, nullptr, 0);
  ::waitpid(b, nullptr, 0);
  const double mct = median_of(ct), mcp = median_of(cp), mat = median_of(at), map = median_of(ap);
  std::printf("check   token %8.0f ns   proc %8.0f ns   ratio token/proc %.3f\n", mct, mcp, mct / mcp);
  std::printf("attach  token %8.0f ns   proc %8.0f ns   ratio token/proc %.3f\n", mat, map, mat / map);
  std::printf("(medians of %d repetitions of %d alternating rounds; check: 1000 calls on a live child's word)\n",
              repetitions, reps);
  if (!out.empty()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [transport, check, attach, runs] :
         {std::tuple{"zipc-token", mct, mat, &ct}, std::tuple{"zipc-proc", mcp, map, &cp}}) {
      rows.push_back({{"workload", "liveness"},
                      {"transport", transport},
                      {"size", 0},
                      {"wait", "n/a"},
                      {"processes", 2},
                      {"check_ns", check},
                      {"attach_ns", attach},
                      {"reps", reps}});
      zipc::bench::add_repetitions(rows.back(), "check_ns", *runs);
    }
    std::ofstream(out) << rows.dump(2) << "\n";
  }
  return bad ? 1 : 0;
}
