// zipc-footprint: how much shared memory each channel kind maps and touches
// (docs/guide/segment.md, "What each channel maps and touches").
//
//   zipc-footprint           a table: one row per channel
//   zipc-footprint --json    the same as JSON lines
//
// Each row runs in a forked child so that its resident set starts empty. The
// child creates the channel, measures, moves 1000 messages of 64 bytes
// through it (in the same process: a reader or server thread where the kind
// needs one), measures again and removes the channel. Measured:
//   mapped   the segment's size: what every participant maps
//   file     the bytes of memory the segment file holds (st_blocks * 512,
//            what `du` and `zipc stat` show): shared memory in use, whoever
//            touched it
//   rss      this process's RssShmem growth (/proc/self/status): the shared
//            pages it has mapped in
//   commit   the bytes the segment has committed: what create checked room
//            for, plus what it allocated since (the rpc block pool grows on
//            demand: its watermark); the mapped size for the other kinds
// These are figures, not pass/fail checks; tests/segment/footprint_test.cpp
// asserts the goals.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "zipc/event_channel.hpp"
#include "zipc/zipc.hpp"

using namespace std::chrono_literals;

namespace {

constexpr int kMessages = 1000;
constexpr std::size_t kMessageSize = 64;

std::uint64_t rss_shmem_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  std::uint64_t kib = 0;
  while (in >> key) {
    if (key == "RssShmem:") {
      in >> kib;
      return kib * 1024;
    }
    in.ignore(4096, '\n');
  }
  return 0;
}

// What `zipc stat` shows as resident: the file's st_blocks * 512.
std::uint64_t file_bytes(const std::string& name) {
  return zipc::Segment::inspect(name).allocated;
}

// The rpc pool's uncommitted tail (the blocks above its watermark) is the
// only part of any segment that is mapped but not committed.
std::uint64_t committed_bytes(const std::string& name) {
  const zipc::ChannelReport r = zipc::inspect_channel(name);
  std::uint64_t blocks = 0, committed = 0, block_size = 0;
  for (const auto& f : r.geometry) {
    if (f.key == "large_blocks") blocks = f.value;
    if (f.key == "max_request_size" || f.key == "max_response_size") block_size = std::max(block_size, f.value);
  }
  for (const auto& f : r.positions) {
    if (f.key == "large_blocks_committed") committed = f.value;
  }
  block_size = (block_size + 4095) / 4096 * 4096;
  if (r.segment.kind != zipc::SegmentKind::rpc || committed > blocks) return r.segment.size;
  return r.segment.size - (blocks - committed) * block_size;
}

struct Figures {
  std::uint64_t mapped = 0;
  std::uint64_t commit_create = 0;
  std::uint64_t file_create = 0;
  std::uint64_t rss_create = 0;
  std::uint64_t commit_used = 0;
  std::uint64_t file_used = 0;
  std::uint64_t rss_used = 0;
};

// One channel kind: create() makes it and returns a function that moves the
// messages; remove() deletes the name.
struct Row {
  std::string label;
  std::function<std::function<void()>(const std::string& name)> create;
  std::function<void(const std::string& name)> remove;
};

// Holds whatever the row created until the child exits.
std::vector<std::shared_ptr<void>> g_keep;

template <class T>
T& keep(T&& value) {
  auto p = std::make_shared<std::decay_t<T>>(std::forward<T>(value));
  g_keep.push_back(p);
  return *p;
}

const std::array<std::byte, kMessageSize> kMessage{};

Row queue_row(std::string label, const zipc::QueueOptions& o) {
  return {std::move(label),
          [o](const std::string& name) -> std::function<void()> {
            auto& q = keep(zipc::Queue::create(name, o));
            return [&q] {
              std::array<std::byte, kMessageSize> buf{};
              for (int i = 0; i < kMessages; ++i) {
                if (q.send(kMessage, 1s) != zipc::Status::ok || !q.recv(buf, 1s).ok())
                  throw std::runtime_error("queue");
              }
            };
          },
          [](const std::string& name) { zipc::Queue::remove(name); }};
}

Row topic_row(std::string label, const zipc::TopicOptions& o) {
  return {std::move(label),
          [o](const std::string& name) -> std::function<void()> {
            auto& t = keep(zipc::Topic::create(name, o));
            return [&t] {
              auto sub = t.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
              auto pub = t.publisher();
              std::array<std::byte, kMessageSize> buf{};
              for (int i = 0; i < kMessages; ++i) {
                if (!pub.publish(kMessage, 1s).ok() || !sub.read(buf, 1s).ok()) throw std::runtime_error("topic");
              }
            };
          },
          [](const std::string& name) { zipc::Topic::remove(name); }};
}

// large: the client sends that many bytes instead, inflight_per_client
// calls at once (each holds a block of the pool), kMessages / 100 times.
Row rpc_row(std::string label, const zipc::RpcOptions& o, std::size_t large = 0) {
  return {std::move(label),
          [o, large](const std::string& name) -> std::function<void()> {
            auto& s = keep(zipc::RpcServer::create(name, o));
            return [&s, name, large, o] {
              std::thread server([&s] { s.serve([](zipc::RpcRequest& req) { (void)req.reply(req.data()); }, 1); });
              {
                auto c = zipc::RpcClient::connect(name, 1s);
                if (large == 0) {
                  for (int i = 0; i < kMessages; ++i) {
                    if (!c.call(kMessage, 1s).ok()) throw std::runtime_error("rpc");
                  }
                } else {
                  const std::vector<std::byte> big(large, std::byte{7});
                  for (int i = 0; i < kMessages / 100; ++i) {
                    std::vector<zipc::RpcTicket> t;
                    for (std::uint32_t k = 0; k < o.inflight_per_client; ++k) t.push_back(c.call_async(big));
                    for (auto& ticket : t) {
                      if (!ticket.wait(1s).ok()) throw std::runtime_error("rpc");
                    }
                  }
                }
              }
              s.stop();
              server.join();
            };
          },
          [](const std::string& name) { zipc::Segment::remove(name); }};
}

Row heap_row(std::string label, std::uint64_t size) {
  return {std::move(label),
          [size](const std::string& name) -> std::function<void()> {
            auto& h = keep(zipc::Heap::create(name, size));
            return [&h] {
              std::vector<void*> blocks;
              blocks.reserve(kMessages);
              for (int i = 0; i < kMessages; ++i) blocks.push_back(h.allocate(kMessageSize));
              for (void* b : blocks) {
                if (b == nullptr) throw std::runtime_error("heap");
                (void)h.deallocate(b);
              }
            };
          },
          [](const std::string& name) { zipc::Heap::remove(name); }};
}

Row event_row(std::string label) {
  return {std::move(label),
          [](const std::string& name) -> std::function<void()> {
            auto& e = keep(zipc::EventChannel::create(name));
            return [&e] {
              auto l = e.listener();
              auto n = e.notifier();
              for (int i = 0; i < kMessages; ++i) {
                (void)n.notify(static_cast<std::uint32_t>(i % 256));
                (void)l.try_wait();
              }
            };
          },
          [](const std::string& name) { zipc::EventChannel::remove(name); }};
}

std::vector<Row> rows() {
  std::vector<Row> out;
  out.push_back(queue_row("queue (default)", {}));
  zipc::QueueOptions wide;
  wide.block_size = 64 << 10;
  out.push_back(queue_row("queue 1024 blocks of 64 KiB", wide));
  out.push_back(topic_row("topic (default)", {}));
  zipc::TopicOptions big;
  big.capacity_bytes = 64ull << 20;
  out.push_back(topic_row("topic 64 MiB", big));
  big.segment.prefault = true;
  out.push_back(topic_row("topic 64 MiB, prefault", big));
  out.push_back(rpc_row("rpc (default)", {}));
  zipc::RpcOptions mib;
  mib.max_request_size = 1 << 20;
  mib.max_response_size = 1 << 20;
  out.push_back(rpc_row("rpc 1 MiB request/response", mib));
  out.push_back(rpc_row("rpc 1 MiB, 8 x 1 MiB at once", mib, 1 << 20));
  out.push_back(heap_row("heap 16 MiB", 16ull << 20));
  out.push_back(event_row("event channel (default)"));
  return out;
}

// In the child: the figures of one row, written to fd as raw bytes.
int measure(const Row& row, const std::string& name, int fd) {
  Figures f;
  const std::uint64_t rss0 = rss_shmem_bytes();
  std::function<void()> use = row.create(name);
  f.mapped = zipc::Segment::inspect(name).size;
  f.commit_create = committed_bytes(name);
  f.file_create = file_bytes(name);
  f.rss_create = rss_shmem_bytes() - rss0;
  use();
  f.commit_used = committed_bytes(name);
  f.file_used = file_bytes(name);
  f.rss_used = rss_shmem_bytes() - rss0;
  return ::write(fd, &f, sizeof f) == static_cast<ssize_t>(sizeof f) ? 0 : 1;
}

bool run_row(const Row& row, int index, Figures* out, std::string* error) {
  const std::string name = "footprint-" + std::to_string(::getpid()) + "-" + std::to_string(index);
  int fds[2];
  if (::pipe(fds) != 0) return false;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    int rc = 1;
    try {
      rc = measure(row, name, fds[1]);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", row.label.c_str(), e.what());
    }
    try {
      row.remove(name);
    } catch (...) {
    }
    g_keep.clear();
    ::_exit(rc);
  }
  ::close(fds[1]);
  const bool got = ::read(fds[0], out, sizeof *out) == static_cast<ssize_t>(sizeof *out);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  try {
    row.remove(name);  // in case the child died before removing it
  } catch (...) {
  }
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = "child failed";
    return false;
  }
  return true;
}

std::string mib(std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(b) / (1 << 20));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  const bool json = argc > 1 && std::string_view(argv[1]) == "--json";
  if (argc > 1 && !json) {
    std::fprintf(stderr, "usage: zipc-footprint [--json]\n");
    return 2;
  }
  if (!json) {
    std::printf(
        "MiB: mapped = segment size; commit = checked at create + allocated since; file = st_blocks*512 of the "
        "segment (du); rss = RssShmem growth\n");
    std::printf("%-30s %8s %13s %11s %10s %12s %11s %10s\n", "channel", "mapped", "commit@create", "file@create",
                "rss@create", "commit@used", "file@used", "rss@used");
  }
  int failures = 0;
  int index = 0;
  for (const Row& row : rows()) {
    Figures f;
    std::string error;
    if (!run_row(row, index++, &f, &error)) {
      std::fprintf(stderr, "%s: %s\n", row.label.c_str(), error.c_str());
      ++failures;
      continue;
    }
    if (json) {
      std::printf(
          "{\"channel\":\"%s\",\"mapped\":%llu,\"committed_after_create\":%llu,\"file_after_create\":%llu,"
          "\"rss_after_create\":%llu,\"committed_after_use\":%llu,\"file_after_1000\":%llu,\"rss_after_1000\":%llu}\n",
          row.label.c_str(), static_cast<unsigned long long>(f.mapped),
          static_cast<unsigned long long>(f.commit_create), static_cast<unsigned long long>(f.file_create),
          static_cast<unsigned long long>(f.rss_create), static_cast<unsigned long long>(f.commit_used),
          static_cast<unsigned long long>(f.file_used), static_cast<unsigned long long>(f.rss_used));
    } else {
      std::printf("%-30s %8s %13s %11s %10s %12s %11s %10s\n", row.label.c_str(), mib(f.mapped).c_str(),
                  mib(f.commit_create).c_str(), mib(f.file_create).c_str(), mib(f.rss_create).c_str(),
                  mib(f.commit_used).c_str(), mib(f.file_used).c_str(), mib(f.rss_used).c_str());
    }
  }
  return failures == 0 ? 0 : 1;
}
