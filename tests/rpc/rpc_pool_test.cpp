// The large-message block pool grows on demand: create commits (and checks
// room for) the fixed part and a few blocks; calls that find every committed
// block in use commit more (fallocate, then the watermark CAS); a full
// /dev/shm fails such a call with `full`, never SIGBUS; a block index or
// watermark a peer scribbles is checked before any touch.
//
// The cases that need a small /dev/shm run in a forked child that mounts a
// tmpfs of a chosen size over /dev/shm in a mount namespace of its own
// (root, or an unprivileged user namespace); where neither is allowed they
// are skipped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "layout/rpc_layout.hpp"
#include "rpc/rpc_shared.hpp"
#include "small_shm.hpp"
#include "zipc/introspect.hpp"
#include "zipc/log.hpp"
#include "zipc/process.hpp"
#include "zipc/rpc.hpp"
#include "zipc/segment.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::RpcClient;
using zipc::RpcOptions;
using zipc::RpcRequest;
using zipc::RpcServer;
using zipc::RpcTicket;
using zipc::Status;
namespace layout = zipc::layout;

namespace rpc_pool_test {
namespace {

using zipc::test::with_small_shm;

constexpr std::uint64_t kMiB = 1 << 20;

// The pool's watermark as `zipc stat` shows it.
std::uint64_t committed_blocks(const std::string& name) {
  for (const auto& f : zipc::inspect_channel(name).positions) {
    if (f.key == "large_blocks_committed") return f.value;
  }
  ADD_FAILURE() << "no large_blocks_committed in the report";
  return 0;
}

// Bytes of memory the segment file holds (st_blocks * 512).
std::uint64_t file_bytes(const std::string& name) {
  return zipc::Segment::inspect(name).allocated;
}

// A second mapping of the service's segment, as a hostile process would have.
struct Hostile {
  explicit Hostile(const std::string& name) : segment(zipc::Segment::open(name, zipc::SegmentKind::rpc)) {
    EXPECT_TRUE(zipc::detail::rpc_geometry_from_params(segment.params(), segment.payload_size(), &geometry));
    view = zipc::detail::RpcView(segment.payload(), geometry);
  }
  zipc::Segment segment;
  layout::RpcGeometry geometry{};
  zipc::detail::RpcView view;
};

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::byte>((i * 31 + static_cast<std::size_t>(seed) * 7) & 0xff);
  return v;
}

void echo(RpcRequest& req) {
  (void)req.reply(req.data());
}

// Sends n large requests at once (each holds a request block), claims them
// all, answers each into a fresh block (reserve_reply: a second block per
// call) with the request's bytes reversed, and checks every answer.
// Returns false (with a report) on the first mismatch.
bool large_calls_at_once(RpcServer& server, RpcClient& client, int n, std::size_t size) {
  std::vector<std::vector<std::byte>> sent;
  std::vector<RpcTicket> tickets;
  for (int i = 0; i < n; ++i) {
    sent.push_back(pattern(size, i));
    tickets.push_back(client.call_async(sent.back()));
    if (!tickets.back().ok()) {
      zipc::test::report("call_async " + std::to_string(i) + ": " + zipc::to_string(tickets.back().status()));
      return false;
    }
  }
  std::vector<RpcRequest> claimed;
  for (int i = 0; i < n; ++i) {
    claimed.push_back(server.next(5s));
    if (!claimed.back().ok()) {
      zipc::test::report("next " + std::to_string(i) + ": " + zipc::to_string(claimed.back().status()));
      return false;
    }
  }
  for (RpcRequest& req : claimed) {
    Status st = Status::ok;
    std::span<std::byte> out = req.reserve_reply(req.size(), &st);
    if (st != Status::ok) {
      zipc::test::report("reserve_reply: " + std::string(zipc::to_string(st)));
      return false;
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = req.data()[out.size() - 1 - i];
    (void)req.commit(out.size());
  }
  for (int i = 0; i < n; ++i) {
    auto r = tickets[static_cast<std::size_t>(i)].wait(5s);
    const auto& want = sent[static_cast<std::size_t>(i)];
    if (!r.ok() || r.size() != want.size()) {
      zipc::test::report("answer " + std::to_string(i) + ": " + zipc::to_string(r.status()));
      return false;
    }
    for (std::size_t j = 0; j < want.size(); ++j) {
      if (r.data()[j] != want[want.size() - 1 - j]) {
        zipc::test::report("answer " + std::to_string(i) + " differs at byte " + std::to_string(j));
        return false;
      }
    }
  }
  return true;
}

RpcOptions quarter_mebibyte() {
  RpcOptions o;
  o.max_request_size = o.max_response_size = 256 << 10;  // blocks of 256 KiB: 2 committed at create
  return o;
}

// Captures warn messages while alive (logging is process-wide).
struct LogCapture {
  LogCapture() {
    zipc::set_log_handler([this](zipc::LogLevel, std::string_view, std::string_view m) {
      std::lock_guard<std::mutex> lock(mutex);
      text += std::string(m) + "\n";
    });
  }
  ~LogCapture() { zipc::set_log_handler(nullptr); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  std::string all() {
    std::lock_guard<std::mutex> lock(mutex);
    return text;
  }
  std::mutex mutex;
  std::string text;
};

}  // namespace

TEST(RpcPool, AServerForOneMebibyteCallsMapsItsWholePoolButCommitsTwoBlocks) {
  zipc::test::TempName name("rpcpool");
  RpcOptions o;
  o.max_request_size = o.max_response_size = 1 << 20;
  auto sut = RpcServer::create(name.str(), o);
  EXPECT_GE(zipc::Segment::inspect(name.str()).size, 256 * kMiB);
  EXPECT_EQ(committed_blocks(name.str()), 2u);
}

TEST(RpcPool, ADefaultServerCommitsHalfAMebibyteOfBlocks) {
  zipc::test::TempName name("rpcpool");
  auto sut = RpcServer::create(name.str());
  EXPECT_EQ(committed_blocks(name.str()), 8u);  // 512 KiB of 64 KiB blocks
}

TEST(RpcPool, LargeCallsBeyondTheInitialBlocksGrowThePoolAndKeepTheirData) {
  zipc::test::TempName name("rpcpool");
  auto server = RpcServer::create(name.str(), quarter_mebibyte());
  auto client = RpcClient::connect(name.str(), 1s);
  // 8 requests held at once: the client grows 2 -> 4 -> 8; then 8 response
  // blocks more: the server grows 8 -> 16.
  EXPECT_TRUE(large_calls_at_once(server, client, 8, 256 << 10)) << "see the report above";
  EXPECT_EQ(committed_blocks(name.str()), 16u);
  // Blocks 2..15 were fallocated: the file holds them whether touched or not.
  EXPECT_GE(file_bytes(name.str()), 14 * (256u << 10));
  // Once grown, the pool is reused: the same calls again take no more.
  EXPECT_TRUE(large_calls_at_once(server, client, 8, 256 << 10));
  EXPECT_EQ(committed_blocks(name.str()), 16u);
}

TEST(RpcPool, AMemfdServerGrowsItsPoolThroughItsDescriptor) {
  RpcOptions o = quarter_mebibyte();
  o.segment.memfd = true;
  auto server = RpcServer::create(zipc::test::unique_name("rpcpool"), o);
  auto client = RpcClient::connect_fd(server.fd(), 1s);
  EXPECT_TRUE(large_calls_at_once(server, client, 8, 256 << 10));
  zipc::Segment seg = zipc::Segment::open_fd(server.fd(), zipc::SegmentKind::rpc);
  const auto* control = reinterpret_cast<const layout::RpcControl*>(seg.payload());
  EXPECT_EQ(control->blocks_committed.load(), 16u);
}

TEST(RpcPool, ClientsGrowingAtOnceInTwoProcessesAllSucceedAndTheWatermarkCoversWhatIsHeld) {
  zipc::test::TempName name("rpcpool");
  RpcOptions o = quarter_mebibyte();
  auto server = RpcServer::create(name.str(), o);
  const int rounds = 20;
  auto one_client = [&](int seed) {
    return zipc::test::spawn([&, seed] {
      auto c = RpcClient::connect(name.str(), 2s);
      for (int round = 0; round < rounds; ++round) {
        std::vector<std::vector<std::byte>> sent;
        std::vector<RpcTicket> tickets;
        for (int i = 0; i < 8; ++i) {  // all 8 slots: up to 8 request blocks held at once
          sent.push_back(pattern((128 << 10) + static_cast<std::size_t>(i), seed * 100 + i));
          tickets.push_back(c.call_async(sent.back()));
          if (!tickets.back().ok()) {
            zipc::test::report("call_async: " + std::string(zipc::to_string(tickets.back().status())));
            return 1;
          }
        }
        for (int i = 0; i < 8; ++i) {
          auto r = tickets[static_cast<std::size_t>(i)].wait(5s);
          if (!r.ok() || !std::equal(r.data().begin(), r.data().end(), sent[static_cast<std::size_t>(i)].begin(),
                                     sent[static_cast<std::size_t>(i)].end())) {
            zipc::test::report("answer " + std::to_string(i) + ": " + zipc::to_string(r.status()));
            return 2;
          }
        }
      }
      return 0;
    });
  };
  auto a = one_client(1);
  auto b = one_client(2);
  // Started after the forks (zipc::test::spawn says why): the clients' first
  // calls wait for it.
  std::thread serving([&] { server.serve(echo, 2); });
  const auto ra = a.wait();
  const auto rb = b.wait();
  server.stop();
  serving.join();
  EXPECT_TRUE(ra.exited && ra.exit_code == 0) << ra.output << " signal " << ra.signal;
  EXPECT_TRUE(rb.exited && rb.exit_code == 0) << rb.output << " signal " << rb.signal;
  // At most 16 blocks are ever held at once (two clients, 8 slots each, echoes
  // answered in place), and the pool grows only when all committed ones are
  // held: never past 16. Every block below the mark was fallocated.
  const std::uint64_t mark = committed_blocks(name.str());
  EXPECT_GE(mark, 2u);
  EXPECT_LE(mark, 16u);
  EXPECT_GE(file_bytes(name.str()), (mark - 2) * (256u << 10));
}

TEST(RpcPool, ClientAndServerThreadsGrowingAtOnceInOneProcessAllSucceed) {
  zipc::test::TempName name("rpcpool");
  auto server = RpcServer::create(name.str(), quarter_mebibyte());
  // Each reply takes a fresh block (reserve_reply), so server threads grow
  // the server's pool while client threads grow theirs.
  std::thread serving([&] {
    server.serve(
        [](RpcRequest& req) {
          Status st = Status::ok;
          std::span<std::byte> out = req.reserve_reply(req.size(), &st);
          if (st != Status::ok) return;  // (answered empty: the client reports it)
          std::copy(req.data().begin(), req.data().end(), out.begin());
          (void)req.commit(out.size());
        },
        4);
  });
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      auto c = RpcClient::connect(name.str(), 2s);
      for (int round = 0; round < 5; ++round) {
        std::vector<std::vector<std::byte>> sent;
        std::vector<RpcTicket> tickets;
        for (int i = 0; i < 8; ++i) {
          sent.push_back(pattern((64 << 10) + static_cast<std::size_t>(i), t * 100 + i));
          tickets.push_back(c.call_async(sent.back()));
        }
        for (int i = 0; i < 8; ++i) {
          auto r = tickets[static_cast<std::size_t>(i)].wait(10s);
          const auto& want = sent[static_cast<std::size_t>(i)];
          if (!r.ok() || !std::equal(r.data().begin(), r.data().end(), want.begin(), want.end())) ++failures;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  server.stop();
  serving.join();
  EXPECT_EQ(failures.load(), 0);
  // At most 64 blocks held at once (32 requests, 32 responses): never past 64.
  const std::uint64_t mark = committed_blocks(name.str());
  EXPECT_GT(mark, 2u);
  EXPECT_LE(mark, 64u);
}

TEST(RpcPool, ARequestNamingABlockAboveTheWatermarkIsAnsweredCorrupt) {
  zipc::test::TempName name("rpcpool");
  auto server = RpcServer::create(name.str(), quarter_mebibyte());
  Hostile h(name.str());
  // Pose as client 1 holding block 5, which nobody committed.
  h.view.record(1)->owner.store(zipc::pack(zipc::ProcessId::current()));
  h.view.block_owner(5)->store(1 + 1);
  layout::RpcSlot* s = h.view.slot(1 * h.geometry.slots_per_client);
  s->call_id.store(41);
  s->req_len.store(h.geometry.req_inline + 1);
  s->req_block.store(5);
  s->state.store(layout::kSlotRequest, std::memory_order_release);
  RpcRequest req = server.next(100ms);
  EXPECT_FALSE(req.ok());  // refused before any handler sees it
  ASSERT_EQ(s->state.load(), layout::kSlotResponse);
  EXPECT_EQ(s->result.load(), layout::kResultCorrupt);
  // A watermark raised without fallocate (a scribble, or a grower that died
  // before it): the server commits the range itself, then serves.
  h.view.control()->blocks_committed.store(6);
  h.view.block_owner(5)->store(1 + 1);
  s->call_id.store(42);
  s->state.store(layout::kSlotRequest, std::memory_order_release);
  req = server.next(5s);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req.size(), h.geometry.req_inline + 1);
  req = RpcRequest();  // answered (empty)
  EXPECT_EQ(s->result.load(), layout::kResultOk);
  h.view.record(1)->owner.store(0);
}

TEST(RpcPool, AWatermarkScribbledPastTheBlockCountIsClamped) {
  zipc::test::TempName name("rpcpool");
  RpcOptions o = quarter_mebibyte();
  o.large_blocks = 4;
  auto server = RpcServer::create(name.str(), o);
  Hostile h(name.str());
  h.view.control()->blocks_committed.store(0xffffffffu);
  EXPECT_EQ(committed_blocks(name.str()), 4u);  // what stat shows
  auto client = RpcClient::connect(name.str(), 1s);
  // 2 requests and 2 responses: every block; none past the 4th is touched.
  EXPECT_TRUE(large_calls_at_once(server, client, 2, 256 << 10));
  EXPECT_LE(file_bytes(name.str()), zipc::Segment::inspect(name.str()).size);
}

TEST(RpcPool, CreateChecksRoomOnlyForWhatItCommitsAndNamesTheSizesWhenThatDoesNotFit) {
  with_small_shm("16m", [] {
    // Maps 257 MiB, commits 3 MiB: fits in a 16 MiB /dev/shm.
    {
      zipc::test::TempName name("rpcpool");
      RpcOptions o;
      o.max_request_size = o.max_response_size = 1 << 20;
      auto sut = RpcServer::create(name.str(), o);
      if (zipc::Segment::inspect(name.str()).size < 256 * kMiB) return 1;
    }
    // Two blocks of 16 MiB are more than there is.
    zipc::test::TempName name("rpcpool");
    RpcOptions o;
    o.max_request_size = o.max_response_size = 16 << 20;
    std::string what;
    const Errc e = zipc::test::errc_of([&] { (void)RpcServer::create(name.str(), o); }, &what);
    zipc::test::report(what);
    if (e != Errc::out_of_memory) return 2;
    if (what.find("needs 33.0 MiB of shared memory, /dev/shm has 16.0 MiB free") == std::string::npos) return 3;
    return 0;
  });
}

TEST(RpcPool, GrowthOnAFullShmFailsTheCallWithFullNamingTheSizesNeverSigbus) {
  with_small_shm("8m", [] {
    LogCapture log;
    zipc::test::TempName name("rpcpool");
    RpcOptions o;
    o.max_request_size = o.max_response_size = 1 << 20;
    auto server = RpcServer::create(name.str(), o);
    auto client = RpcClient::connect(name.str(), 1s);
    // Leave the 2 committed blocks and half a block more free.
    struct statvfs vfs {};
    if (::statvfs("/dev/shm", &vfs) != 0) return 1;
    const std::uint64_t free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    const std::string filler = "/dev/shm/filler";
    const int fd = ::open(filler.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ::posix_fallocate(fd, 0, static_cast<off_t>(free_bytes - 2 * kMiB - 512 * 1024)) != 0) return 2;
    const std::vector<std::byte> big = pattern(1 << 20, 3);
    RpcTicket a = client.call_async(big);
    RpcTicket b = client.call_async(big);
    if (!a.ok() || !b.ok()) return 3;
    RpcTicket c = client.call_async(big);  // a third block: no room
    zipc::test::report("third call: " + std::string(zipc::to_string(c.status())) + "\nlog: " + log.all());
    if (c.status() != Status::full) return 4;
    // ("has 5xx KiB free": the owners page the first block took is on that side.)
    const std::string said = log.all();
    if (said.find("cannot grow the large-message pool from 2 to 3 blocks of 1.0 MiB: needs 1.0 MiB, /dev/shm has ") ==
            std::string::npos ||
        said.find(" KiB free") == std::string::npos) {
      return 5;
    }
    // Room again (after the retry pause): the pool grows and the call goes through.
    ::close(fd);
    ::unlink(filler.c_str());
    std::this_thread::sleep_for(20ms);
    c = client.call_async(big);
    if (!c.ok()) return 6;
    for (int i = 0; i < 3; ++i) {
      RpcRequest req = server.next(5s);
      if (!req.ok()) return 7;
      echo(req);
    }
    for (RpcTicket* t : {&a, &b, &c}) {
      auto r = t->wait(5s);
      if (!r.ok() || !std::equal(r.data().begin(), r.data().end(), big.begin(), big.end())) return 8;
    }
    return 0;
  });
}

}  // namespace rpc_pool_test
