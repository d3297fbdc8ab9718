// Peer: iceoryx classic 2.0 (Debian package iceoryx / libiceoryx-posh-dev),
// configured as its own iceperf benchmark and icedelivery example do
// (docs/design/peers.md, "iceoryx classic"): untyped publisher loan/publish,
// untyped subscriber take/release, history 0, a WaitSet for the blocking
// class and a polling take() for the busy class. Lossless like every row:
// the publisher waits for a full subscriber (WAIT_FOR_CONSUMER +
// BLOCK_PRODUCER), queue depth zipc's where iceoryx allows it (max 256).
//
// RouDi, iceoryx's broker, runs for one row: the parent starts iox-roudi in
// the first create() (a config with a mempool sized for the row) and stops it
// in the last destroy(), both outside the timed window. Each forked worker
// registers its own runtime; the parent never does (a runtime is not fork-safe).
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include "iceoryx_hoofs/log/logmanager.hpp"
#include "iceoryx_posh/mepoo/chunk_header.hpp"
#include "iceoryx_posh/popo/untyped_publisher.hpp"
#include "iceoryx_posh/popo/untyped_subscriber.hpp"
#include "iceoryx_posh/popo/wait_set.hpp"
#include "iceoryx_posh/runtime/posh_runtime.hpp"
#include "transport.hpp"

extern char** environ;

namespace zipc::bench {
namespace {

constexpr const char* kRoudi = "iox-roudi";
// Where iceoryx 2.0's runtime finds RouDi (its Unix socket, IPC_CHANNEL_ROOT_PATH + "roudi").
constexpr const char* kRoudiSocket = "/tmp/roudi";
// What a RouDi leaves behind when it ends (it purges them at its next start):
// its lock files, its management segment, and the payload segment named
// after the user.
constexpr const char* kRoudiLock = "/tmp/iox-unique-roudi.lock";
constexpr const char* kRoudiFiles[] = {"/tmp/roudi", "/tmp/roudi.lock", "/tmp/iox-unique-roudi.lock"};
constexpr std::uint64_t kMaxQueue = iox::MAX_SUBSCRIBER_QUEUE_CAPACITY;  // 256 in the Debian build
constexpr std::uint64_t kPoolBytesCap = 1ull << 30;                      // all chunks of one row

std::optional<std::string> roudi_path() {
  const char* path = std::getenv("PATH");  // NOLINT(concurrency-mt-unsafe): the harness is single-threaded
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', pos), dirs.size());
    const std::string p = dirs.substr(pos, end - pos) + "/" + kRoudi;
    if (::access(p.c_str(), X_OK) == 0) return p;
    pos = end + 1;
  }
  return std::nullopt;
}

// Whether a RouDi answers on its socket (a stale socket file refuses).
bool roudi_answers() {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, kRoudiSocket, sizeof a.sun_path - 1);
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

// Whether a live RouDi holds its unique lock (an flock, freed when it dies).
bool roudi_running() {
  const int fd = ::open(kRoudiLock, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

std::uint64_t chunk_size(const ChannelSpec& spec) {
  return (spec.max_message + 63) / 64 * 64;
}

// Chunks one channel can have out at once: every subscriber's full queue plus
// the one it holds, and what the publisher may hold.
std::uint64_t chunks_for(const ChannelSpec& spec, std::uint64_t queue) {
  return static_cast<std::uint64_t>(spec.receivers) * (queue + 1) +
         static_cast<std::uint64_t>(spec.senders) * iox::MAX_CHUNKS_ALLOCATED_PER_PUBLISHER_SIMULTANEOUSLY;
}

// The subscriber queue depth: zipc's (the spec's, or zipc-queue's 1024) capped
// by iceoryx's build limit, and smaller for large messages so one row's
// mempool stays under kPoolBytesCap (2 channels for ping-pong).
std::uint64_t queue_depth(const ChannelSpec& spec) {
  std::uint64_t q = std::min<std::uint64_t>(spec.capacity ? spec.capacity : 1024, kMaxQueue);
  while (q > 8 && 2 * chunks_for(spec, q) * chunk_size(spec) > kPoolBytesCap) q /= 2;
  return q;
}

iox::capro::ServiceDescription service(const ChannelSpec& spec) {
  if (spec.name.size() >= iox::capro::IdString_t::capacity())
    throw std::runtime_error("iceoryx: channel name " + spec.name + " longer than " +
                             std::to_string(iox::capro::IdString_t::capacity() - 1) + " characters");
  return {"zipcb", iox::capro::IdString_t(iox::cxx::TruncateToCapacity, spec.name.c_str()), "m"};
}

// One runtime per worker process, registered on first use.
void ensure_runtime() {
  static const bool done = [] {
    iox::log::LogManager::GetLogManager().SetDefaultLogLevel(iox::log::LogLevel::kWarn,
                                                             iox::log::LogLevelOutput::kHideLogLevel);
    const std::string name = "zipcb-" + std::to_string(::getpid());
    iox::runtime::PoshRuntime::initRuntime(iox::RuntimeName_t(iox::cxx::TruncateToCapacity, name.c_str()));
    return true;
  }();
  (void)done;
}

// Like zipc's busy class: poll with a PAUSE between polls, and once 50 us
// passed without a message also yield the CPU at each poll (the clock is
// read every 256 polls), so a subscriber sharing a CPU is not starved.
class BusyWait {
 public:
  void pause() noexcept {
    if (yielding_) {
      std::this_thread::yield();
      return;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (++spins_ % 256 != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (spins_ == 256) start_ = now;
    yielding_ = now - start_ > std::chrono::microseconds(50);
  }

 private:
  std::uint64_t spins_ = 0;
  std::chrono::steady_clock::time_point start_{};
  bool yielding_ = false;
};

class IceoryxSender final : public Sender {
 public:
  explicit IceoryxSender(const ChannelSpec& spec)
      : pub_(service(spec), [] {
          iox::popo::PublisherOptions o;
          o.historyCapacity = 0;
          o.subscriberTooSlowPolicy = iox::popo::ConsumerTooSlowPolicy::WAIT_FOR_CONSUMER;
          return o;
        }()) {}
  void* prepare(std::size_t n) override {
    if (n > UINT32_MAX) return nullptr;
    void* p = nullptr;
    pub_.loan(static_cast<std::uint32_t>(n)).and_then([&](void* chunk) { p = chunk; });
    return loaned_ = p;
  }
  bool commit(std::size_t) override {
    if (!loaned_) return false;
    pub_.publish(loaned_);  // blocks while a subscriber's queue is full (WAIT_FOR_CONSUMER)
    loaned_ = nullptr;
    return true;
  }

 private:
  iox::popo::UntypedPublisher pub_;
  void* loaned_ = nullptr;
};

class IceoryxReceiver final : public Receiver {
 public:
  IceoryxReceiver(const ChannelSpec& spec)
      : sub_(service(spec),
             [&] {
               iox::popo::SubscriberOptions o;
               o.queueCapacity = queue_depth(spec);
               o.historyRequest = 0;
               o.queueFullPolicy = iox::popo::QueueFullPolicy::BLOCK_PRODUCER;
               return o;
             }()),
        busy_(spec.wait == Wait::busy) {
    // Subscription is asynchronous (RouDi's discovery loop); with history 0 a
    // message published before it completes would be lost, so wait for it
    // here, before the harness releases the workers.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sub_.getSubscriptionState() != iox::SubscribeState::SUBSCRIBED) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("iceoryx: subscriber to " + spec.name + " not connected after 10 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!busy_) {
      ws_.emplace();
      if (ws_->attachState(sub_, iox::popo::SubscriberState::HAS_DATA).has_error())
        throw std::runtime_error("iceoryx: cannot attach the subscriber to " + spec.name + " to a WaitSet");
    }
  }
  const void* acquire(std::size_t* n) override {
    BusyWait spin;
    for (;;) {
      auto r = sub_.take();
      if (!r.has_error()) {
        held_ = r.value();
        *n = iox::mepoo::ChunkHeader::fromUserPayload(held_)->userPayloadSize();
        return held_;
      }
      if (r.get_error() != iox::popo::ChunkReceiveResult::NO_CHUNK_AVAILABLE) return nullptr;
      if (busy_) {
        spin.pause();
      } else {
        (void)ws_->wait();
      }
    }
  }
  void release() override {
    if (held_) sub_.release(held_);
    held_ = nullptr;
  }

 private:
  iox::popo::UntypedSubscriber sub_;
  bool busy_;
  std::optional<iox::popo::WaitSet<>> ws_;
  const void* held_ = nullptr;
};

// iox-roudi for one row: started by the first create(), stopped by the last destroy().
class Roudi {
 public:
  Roudi() = default;
  Roudi(const Roudi&) = delete;
  Roudi& operator=(const Roudi&) = delete;
  ~Roudi() {
    // A row that never reached its destroy(); never from a forked worker.
    if (pid_ > 0 && owner_ == ::getpid()) stop();
  }
  void acquire(const ChannelSpec& spec) {
    if (users_++ > 0) return;
    try {
      start(spec);
    } catch (...) {
      users_ = 0;
      throw;
    }
  }
  int users() const { return users_; }
  void release() {
    if (users_ == 0 || --users_ > 0) return;
    stop();
  }

 private:
  void start(const ChannelSpec& spec) {
    const auto exe = roudi_path();
    if (!exe) throw std::runtime_error("iceoryx: iox-roudi not found (apt-get install iceoryx)");
    if (roudi_running())
      throw std::runtime_error(std::string("iceoryx: another RouDi is running (") + kRoudiLock + ")");
    config_ = "/tmp/zipcb-roudi-" + std::to_string(::getpid()) + ".toml";
    {
      std::ofstream f(config_);
      f << "[general]\nversion = 1\n\n[[segment]]\n\n[[segment.mempool]]\nsize = " << chunk_size(spec)
        << "\ncount = " << 2 * chunks_for(spec, queue_depth(spec)) << "\n";
      if (!f) throw std::runtime_error("iceoryx: cannot write " + config_);
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> args = {*exe, "-c", config_, "-l", "error", "-k", "1"};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    owner_ = ::getpid();
    const int rc = ::posix_spawn(&pid_, exe->c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
      throw std::runtime_error("iceoryx: cannot start " + *exe + ": " +
                               std::strerror(rc));  // NOLINT(concurrency-mt-unsafe): single-threaded
    // Ready once its socket answers; a RouDi that exits (no /dev/shm, a bad
    // config) is an error naming its exit status.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!roudi_answers()) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        std::remove(config_.c_str());
        throw std::runtime_error("iceoryx: iox-roudi exited at start (status " + std::to_string(status) +
                                 "; /dev/shm writable? run iox-roudi by hand to see why)");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        stop();
        throw std::runtime_error("iceoryx: iox-roudi not ready after 10 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGINT);  // RouDi's own shutdown; it leaves its files (purged at its next start)
      int status = 0;
      for (int i = 0; i < 500 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
      pid_ = -1;
      for (const char* f : kRoudiFiles) ::unlink(f);
      ::shm_unlink("iceoryx_mgmt");
      // NOLINTNEXTLINE(concurrency-mt-unsafe): the harness's parent is single-threaded
      if (const passwd* pw = ::getpwuid(::geteuid())) ::shm_unlink(pw->pw_name);
      remove_worker_locks();
    }
    if (!config_.empty()) std::remove(config_.c_str());
  }

  // Each worker's runtime ("zipcb-<pid>") keeps a lock file /tmp/zipcb-<pid>.lock
  // that its runtime removes only on an orderly shutdown, which a worker's
  // _exit skips. Those of workers no longer alive go when RouDi does.
  static void remove_worker_locks() {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/tmp", ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("zipcb-", 0) != 0 || n.size() <= 11 || n.compare(n.size() - 5, 5, ".lock") != 0) continue;
      const std::string digits = n.substr(6, n.size() - 11);
      if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
      const pid_t pid = static_cast<pid_t>(std::stol(digits));
      if (::kill(pid, 0) != 0 && errno == ESRCH) std::filesystem::remove(e.path(), ec);
    }
  }

  int users_ = 0;
  pid_t pid_ = -1;
  pid_t owner_ = -1;  // the process that started RouDi
  std::string config_;
};

class IceoryxTransport final : public Transport {
 public:
  std::string name() const override { return "iceoryx"; }
  std::string family() const override { return "peer"; }
  std::vector<Wait> waits() const override { return {Wait::busy, Wait::block}; }
  bool supports(const ChannelSpec& spec, std::string* why) const override {
    if (!spec.broadcast && spec.receivers > 1) {
      *why = "publish-subscribe: every subscriber gets every message";
      return false;
    }
    if (!roudi_path()) {
      *why = "iox-roudi not found (apt-get install iceoryx)";
      return false;
    }
    if (roudi_.users() == 0 && roudi_running()) {
      *why = std::string("another RouDi is running (") + kRoudiLock + "); the bench starts its own per row";
      return false;
    }
    return true;
  }
  void create(const ChannelSpec& spec) override { roudi_.acquire(spec); }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& spec, int) override {
    ensure_runtime();
    return std::make_unique<IceoryxSender>(spec);
  }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& spec, int) override {
    ensure_runtime();
    return std::make_unique<IceoryxReceiver>(spec);
  }
  void destroy(const ChannelSpec&) override { roudi_.release(); }

 private:
  Roudi roudi_;
};

}  // namespace
}  // namespace zipc::bench

using zipc::bench::IceoryxTransport;
ZIPC_BENCH_TRANSPORT(IceoryxTransport);
