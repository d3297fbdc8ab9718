#include "zipc_test.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

namespace zipc::test {
namespace {

std::atomic<std::uint64_t> g_counter{0};  // relaxed: only uniqueness matters
int g_report_fd = -1;                     // set in a child: where report() writes

std::uint64_t random_u64() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(::getpid())};
  return rng();
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
  pid_ = -1;
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

Child spawn(const std::function<int()>& body) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
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
// ZIPC_TEST_WATCHDOG_S (default 240) bounds one test. The state is leaked on
// purpose: the detached thread may outlive static destruction.
struct WatchState {
  std::mutex mu;
  std::condition_variable cv;
  std::string current;
  std::chrono::steady_clock::time_point started;
  bool active = false;
  std::chrono::seconds limit{240};
};

class Watchdog : public ::testing::EmptyTestEventListener {
 public:
  Watchdog() : st_(new WatchState) {
    const char* s = std::getenv("ZIPC_TEST_WATCHDOG_S");
    if (s != nullptr && std::atoi(s) > 0) st_->limit = std::chrono::seconds(std::atoi(s));
    std::thread([st = st_] { run(st); }).detach();
  }
  void OnTestStart(const ::testing::TestInfo& info) override {
    std::lock_guard<std::mutex> lock(st_->mu);
    st_->current = std::string(info.test_suite_name()) + "." + info.name();
    st_->started = std::chrono::steady_clock::now();
    st_->active = true;
  }
  void OnTestEnd(const ::testing::TestInfo&) override {
    std::lock_guard<std::mutex> lock(st_->mu);
    st_->active = false;
  }

 private:
  static void run(WatchState* st) {
    std::unique_lock<std::mutex> lock(st->mu);
    for (;;) {
      st->cv.wait_for(lock, std::chrono::seconds(1));
      if (st->active && std::chrono::steady_clock::now() - st->started > st->limit) {
        std::fprintf(stderr, "[zipc watchdog] test %s hung for more than %lld s; aborting\n", st->current.c_str(),
                     static_cast<long long>(st->limit.count()));
        std::fflush(stderr);
        std::abort();
      }
    }
  }
  WatchState* st_;
};

}  // namespace
}  // namespace zipc::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::signal(SIGPIPE, SIG_IGN);
  ::testing::UnitTest::GetInstance()->listeners().Append(new zipc::test::Watchdog);
  return RUN_ALL_TESTS();
}
