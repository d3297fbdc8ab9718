#include "zipc_test.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

namespace zipc::test {
namespace {

std::atomic<std::uint64_t> g_counter{0};  // relaxed: only uniqueness matters
int g_report_fd = -1;                     // set in a child: where report() writes

std::uint64_t random_u64() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(::getpid())};
  return rng();
}

// Live children, so the watchdog can kill them from a signal handler.
// Lock-free slots: 0 is free; a slot is claimed by compare_exchange.
constexpr std::size_t kMaxChildren = 1024;
std::atomic<pid_t> g_children[kMaxChildren];

void register_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t free_slot = 0;
    // relaxed: the slots are only read by this process's own signal handler.
    if (slot.compare_exchange_strong(free_slot, pid, std::memory_order_relaxed)) return;
  }
}

void unregister_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0, std::memory_order_relaxed)) return;
  }
}

void kill_all_children() {
  for (auto& slot : g_children) {
    const pid_t pid = slot.load(std::memory_order_relaxed);
    if (pid > 0) ::kill(pid, SIGKILL);
  }
}

}  // namespace

std::string unique_name(std::string_view tag) {
  char buf[96];
  std::snprintf(buf, sizeof buf, ".%d.%llu.%04llx", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(g_counter.fetch_add(1, std::memory_order_relaxed)),
                static_cast<unsigned long long>(random_u64() & 0xffff));
  return "t." + std::string(tag) + buf;
}

TempName::TempName(std::string_view tag, bool file_backed) : name_(unique_name(tag)) {
  if (file_backed) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::string(tmp ? tmp : "/tmp") + "/zipc-test-" + name_;
  }
}

TempName::~TempName() {
  try {
    Segment::remove(name_, options());
  } catch (...) {
  }
  if (!path_.empty()) ::unlink(path_.c_str());
}

Child::Child(Child&& o) noexcept : pid_(std::exchange(o.pid_, -1)), read_fd_(std::exchange(o.read_fd_, -1)) {}

Child& Child::operator=(Child&& o) noexcept {
  if (this != &o) {
    this->~Child();
    pid_ = std::exchange(o.pid_, -1);
    read_fd_ = std::exchange(o.read_fd_, -1);
  }
  return *this;
}

Child::~Child() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int st;
    ::waitpid(pid_, &st, 0);
    unregister_child(pid_);
  }
  if (read_fd_ >= 0) ::close(read_fd_);
}

void Child::kill(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

ChildResult Child::wait(std::chrono::milliseconds timeout) {
  ChildResult r;
  if (pid_ <= 0) return r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    // Drain output so a chatty child never blocks on a full pipe.
    if (read_fd_ >= 0) {
      char buf[4096];
      ssize_t n;
      while ((n = ::read(read_fd_, buf, sizeof buf)) > 0) r.output.append(buf, static_cast<std::size_t>(n));
    }
    pid_t w = ::waitpid(pid_, &status, WNOHANG);
    if (w == pid_) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      r.timed_out = true;
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (read_fd_ >= 0) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(read_fd_, buf, sizeof buf)) > 0) r.output.append(buf, static_cast<std::size_t>(n));
    ::close(read_fd_);
    read_fd_ = -1;
  }
  unregister_child(pid_);
  pid_ = -1;
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

#if !defined(__SANITIZE_THREAD__)
namespace {

// Threads of this process now (/proc/self/task has one entry per thread).
int threads_in_this_process() {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace
#endif

Child spawn(const std::function<int()>& body) {
  // The child runs body(), which allocates. Forked while another thread holds
  // an allocator's lock, it would wait for that lock forever: ASan's allocator
  // (gcc 12) takes no lock around fork, so a test that forks beside a busy
  // thread hangs now and then, in CI only. Refused every time instead.
  // (Not under TSan, which runs a thread of its own in a forked child; the
  // release and ASan builds check the same tests.)
#if !defined(__SANITIZE_THREAD__)
  if (const int threads = threads_in_this_process(); threads > 1) {
    throw std::logic_error("zipc::test::spawn: the test process runs " + std::to_string(threads) +
                           " threads; fork before starting any (a child forked beside a thread that "
                           "holds the allocator's lock can hang)");
  }
#endif
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // Die with the test process (a crash, an abort) rather than linger and
    // hold its stdout open. (The signal follows the forking thread: the only one.)
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(97);
    for (auto& slot : g_children) slot.store(0, std::memory_order_relaxed);  // siblings are not ours
    ::close(fds[0]);
    g_report_fd = fds[1];
    int code = 98;
    try {
      code = body();
    } catch (const std::exception& e) {
      report(std::string("exception: ") + e.what());
      code = 99;
    } catch (...) {
      report("unknown exception");
      code = 99;
    }
    ::_exit(code);  // no atexit handlers, no gtest teardown in the child
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  register_child(pid);
  return Child(pid, fds[0]);
}

void report(std::string_view text) {
  if (g_report_fd < 0) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(text.size()), text.data());
    return;
  }
  std::string line(text);
  line += '\n';
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(g_report_fd, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void kill_after_random_delay(Child& child, std::chrono::microseconds min, std::chrono::microseconds max) {
  std::uniform_int_distribution<long long> d(min.count(), max.count());
  static thread_local std::mt19937_64 rng{test_seed()};
  std::this_thread::sleep_for(std::chrono::microseconds(d(rng)));
  child.kill(SIGKILL);
}

double stress_scale() {
  const char* s = std::getenv("ZIPC_STRESS_SCALE");
  double v = s ? std::atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

double stress_seconds(double def) {
  const char* s = std::getenv("ZIPC_STRESS_SECONDS");
  double v = s ? std::atof(s) : def;
  return v > 0 ? v : def;
}

std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    const char* s = std::getenv("ZIPC_TEST_SEED");
    std::uint64_t v = s ? std::strtoull(s, nullptr, 0) : std::random_device{}();
    std::fprintf(stderr, "[zipc] ZIPC_TEST_SEED=%llu\n", static_cast<unsigned long long>(v));
    return v;
  }();
  return seed;
}

namespace {

// Fails a hung test with a message instead of letting CI hit its limit.
// ZIPC_TEST_WATCHDOG_S (default 240) bounds one test. It is a SIGALRM timer,
// not a thread: a helper thread could hold an allocator lock (ASan's, TSan's)
// at the instant a test forks, and the child would deadlock on it. alarm()
// is not inherited by fork, so children are never timed by it.
constexpr std::size_t kNameCap = 256;
char g_current_test[kNameCap];  // written before alarm() is armed; read in the handler
unsigned g_watchdog_limit_s = 240;

void write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Async-signal-safe: write(2), kill(2), waitpid(2), abort(3).
void on_watchdog_alarm(int) {
  static const char head[] = "[zipc watchdog] test ";
  static const char tail[] = " hung for longer than ZIPC_TEST_WATCHDOG_S; killing its children and aborting\n";
  write_all(2, head, sizeof head - 1);
  write_all(2, g_current_test, ::strnlen(g_current_test, kNameCap));
  write_all(2, tail, sizeof tail - 1);
  // Children share our stdout; one left running would keep ctest waiting
  // for end-of-file long after this process is gone.
  kill_all_children();
  ::signal(SIGABRT, SIG_DFL);
  std::abort();
}

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  Watchdog() {
    const char* s = std::getenv("ZIPC_TEST_WATCHDOG_S");
    if (s != nullptr && std::atoi(s) > 0) g_watchdog_limit_s = static_cast<unsigned>(std::atoi(s));
    struct sigaction sa {};
    sa.sa_handler = on_watchdog_alarm;
    ::sigaction(SIGALRM, &sa, nullptr);
  }
  void OnTestStart(const ::testing::TestInfo& info) override {
    std::snprintf(g_current_test, kNameCap, "%s.%s", info.test_suite_name(), info.name());
    ::alarm(g_watchdog_limit_s);
  }
  void OnTestEnd(const ::testing::TestInfo&) override { ::alarm(0); }
};

}  // namespace
Errc errc_of(const std::function<void()>& f, std::string* what) {
  try {
    f();
  } catch (const zipc::Error& e) {
    if (what != nullptr) *what = e.what();
    return e.errc();
  }
  return Errc::ok;
}

void default_segv_action() noexcept {
  struct {
    void* handler = nullptr;  // SIG_DFL
    unsigned long flags = 0;
    void* restorer = nullptr;
    unsigned long mask = 0;
  } action;
  (void)::syscall(SYS_rt_sigaction, SIGSEGV, &action, nullptr, sizeof action.mask);
}

}  // namespace zipc::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  ::testing::UnitTest::GetInstance()->listeners().Append(new zipc::test::Watchdog);
  return RUN_ALL_TESTS();
}
