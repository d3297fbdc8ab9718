// Test harness shared by every zipc test executable.
//
//   TEST(Thing, ChildSeesWhatParentWrote) {
//     zipc::test::TempName name("thing");           // unique, removed at scope exit
//     auto child = zipc::test::spawn([&] { return check_in_child(name.str()) ? 0 : 1; });
//     EXPECT_EQ(child.wait().exit_code, 0);
//   }
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "zipc/segment.hpp"

namespace zipc::test {

// A segment name unique to this process and call: "t.<tag>.<pid>.<n>.<rand>".
std::string unique_name(std::string_view tag);

// A unique name whose segment (and optional file) is removed when the scope
// ends, whether the test passed or not.
class TempName {
 public:
  explicit TempName(std::string_view tag, bool file_backed = false);
  ~TempName();
  TempName(const TempName&) = delete;
  TempName& operator=(const TempName&) = delete;
  [[nodiscard]] const std::string& str() const { return name_; }
  // For file-backed segments: a path under the test temp dir (empty otherwise).
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] SegmentOptions options() const {
    SegmentOptions o;
    o.path = path_;
    return o;
  }

 private:
  std::string name_;
  std::string path_;
};

struct ChildResult {
  bool exited = false;  // normal exit
  int exit_code = -1;   // when exited
  int signal = 0;       // when killed by a signal
  bool timed_out = false;
  std::string output;  // what the child wrote with report()
};

// A forked child process running body(); its return value is the exit code.
// An exception escaping body() becomes exit code 99 with the message reported.
// spawn() throws std::logic_error when the test process runs other threads:
// start them after forking.
class Child {
 public:
  Child() = default;
  Child(pid_t pid, int read_fd) : pid_(pid), read_fd_(read_fd) {}
  Child(Child&& o) noexcept;
  Child& operator=(Child&& o) noexcept;
  ~Child();  // kills (SIGKILL) and reaps a child still running

  [[nodiscard]] pid_t pid() const { return pid_; }
  // Waits at most timeout; on expiry kills the child and says timed_out.
  ChildResult wait(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  void kill(int sig);

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
};

Child spawn(const std::function<int()>& body);
// In a child: appends text to what the parent's ChildResult::output shows.
void report(std::string_view text);

// Sends SIGKILL to the child after a random delay in [min, max].
void kill_after_random_delay(Child& child, std::chrono::microseconds min, std::chrono::microseconds max);

// Scale for stress tests: ZIPC_STRESS_SCALE (default 1). Long soak runs set it higher.
double stress_scale();
// Seconds for soak-style tests: ZIPC_STRESS_SECONDS (default def).
double stress_seconds(double def);
// A reproducible seed: ZIPC_TEST_SEED or a fresh one (printed by the test).
std::uint64_t test_seed();

// The error kind f throws (Errc::ok when it throws nothing); *what gets the message.
Errc errc_of(const std::function<void()>& f, std::string* what = nullptr);

// In a child that observes the kernel's default SIGSEGV action (death by the
// signal): restores it with the raw system call, since the sanitizers
// intercept signal() and sigaction() to report faults themselves.
void default_segv_action() noexcept;

}  // namespace zipc::test
