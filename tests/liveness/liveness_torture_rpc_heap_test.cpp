// Random-kill torture for Rpc and Heap (see liveness_torture_test.cpp for the
// queue and topic): forked processes, one SIGKILLed at a random time each
// round, survivors mixing short and long waits; ledgers reconciled in shared
// memory outside the channel. Rounds: ZIPC_TORTURE_ROUNDS (default 20).
#include <gtest/gtest.h>
#include <signal.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "liveness_support.hpp"
#include "zipc/heap.hpp"
#include "zipc/rpc.hpp"
#include "zipc_test.hpp"

namespace zipc {
namespace liveness_torture_rpc_heap_test {
namespace {

using namespace std::chrono_literals;
using test::SharedArray;
using test::SharedFlags;

constexpr std::uint64_t kCallsPerClient = 3000;

// Rpc: a server and two clients per round; the victim is the server or a
// client. A killed server is replaced at once (the new one takes the name
// over); clients see peer_dead or closed and reconnect. Every answer must be
// the echo of its own request, every answered call was served, no call
// hangs past its timeout.
TEST(RpcTorture, RandomKillsOfServersAndClientsNeverMixOrLoseAnswers) {
  const int rounds = test::torture_rounds(20);
  constexpr std::size_t kClients = 2;
  const std::size_t per_round = kClients + 1;
  test::TempName name("lv.rpc");
  SharedArray<std::uint8_t> served(static_cast<std::size_t>(rounds) * per_round * kCallsPerClient);
  SharedArray<std::uint8_t> answered(served.size());
  SharedFlags ctl(8);  // 0 stop, 1 longest gap us, 2 running, 3 mismatches, 4 late calls
  ASSERT_TRUE(served.ok() && answered.ok() && ctl.ok());
  std::mt19937_64 rng(test::test_seed());
  RpcOptions opt;
  opt.recovery_time = 10ms;
  const auto spawn_server = [&](std::uint64_t seed) {
    return test::spawn([&, seed]() {
      RpcServer s = RpcServer::create(name.str(), opt);
      std::mt19937_64 r(seed);
      while (ctl[0].load() == 0) {
        const auto timeout = r() % 2 == 0 ? std::chrono::nanoseconds(10ms) : std::chrono::nanoseconds(200ms);
        RpcRequest req = s.next(timeout);
        if (req.status() != Status::ok) continue;
        std::uint64_t id = 0;
        if (req.data().size() == sizeof id) std::memcpy(&id, req.data().data(), sizeof id);
        if (id < served.size()) served[id].store(1);
        (void)req.reply(req.data());
      }
      return 0;
    });
  };
  const auto spawn_client = [&](std::size_t child, std::uint64_t seed) {
    return test::spawn([&, child, seed]() {
      std::mt19937_64 r(seed);
      std::optional<RpcClient> c;
      auto last = std::chrono::steady_clock::now();
      for (std::uint64_t i = 0; i < kCallsPerClient && ctl[0].load() == 0;) {
        if (!c) {
          try {
            c.emplace(RpcClient::connect(name.str(), 100ms));
          } catch (const Error&) {
            continue;  // no server right now
          }
        }
        const std::uint64_t id = child * kCallsPerClient + i;
        const auto timeout = r() % 2 == 0 ? std::chrono::nanoseconds(10ms) : std::chrono::nanoseconds(1s);
        const auto t0 = std::chrono::steady_clock::now();
        RpcResponse resp = c->call(std::as_bytes(std::span(&id, 1)), timeout);
        const auto now = std::chrono::steady_clock::now();
        if (now - t0 > timeout + 500ms) ctl[4].fetch_add(1);  // a call overran its timeout by far
        if (resp.ok()) {
          std::uint64_t back = ~0ull;
          if (resp.size() == sizeof back) std::memcpy(&back, resp.data().data(), sizeof back);
          if (back != id) ctl[3].fetch_add(1);
          answered[id].store(1);
          if (ctl[2].load() != 0) {
            test::raise_max(ctl[1], static_cast<std::uint64_t>(
                                        std::chrono::duration_cast<std::chrono::microseconds>(now - last).count()));
          }
          last = now;
          ++i;
        } else if (resp.status() == Status::peer_dead || resp.status() == Status::closed) {
          c.reset();  // the server died or was replaced: reconnect
        } else if (resp.status() != Status::timeout && resp.status() != Status::full) {
          test::report(std::string("status ") + to_string(resp.status()));
          return 3;
        }
      }
      return 0;
    });
  };
  std::uint64_t server_kills = 0;
  for (int round = 0; round < rounds; ++round) {
    ctl[0].store(0);
    ctl[2].store(1);
    test::Child server = spawn_server(rng());
    std::vector<test::Child> clients;
    for (std::size_t k = 0; k < kClients; ++k) clients.push_back(spawn_client(round * per_round + k, rng()));
    std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 20000));
    if (rng() % 2 == 0) {
      server.kill(SIGKILL);
      (void)server.wait();
      ++server_kills;
      server = spawn_server(rng());  // takes the dead server's name over
    } else {
      const std::size_t v = rng() % kClients;
      clients[v].kill(SIGKILL);
      (void)clients[v].wait();
      clients[v] = spawn_client(round * per_round + kClients, rng());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20000 + rng() % 30000));
    ctl[2].store(0);
    ctl[0].store(1);
    for (auto& c : clients) {
      const test::ChildResult r = c.wait(30s);
      EXPECT_TRUE(r.exited && r.exit_code == 0) << "client exit " << r.exit_code << " signal " << r.signal
                                                << (r.timed_out ? " (timed out)" : "") << ": " << r.output;
    }
    const test::ChildResult r = server.wait(30s);
    EXPECT_TRUE(r.exited && r.exit_code == 0)
        << "server exit " << r.exit_code << " signal " << r.signal << ": " << r.output;
  }
  std::uint64_t answered_n = 0, unserved = 0;
  for (std::size_t i = 0; i < answered.size(); ++i) {
    if (answered[i].load() == 0) continue;
    ++answered_n;
    if (served[i].load() == 0) ++unserved;
  }
  EXPECT_EQ(ctl[3].load(), 0u) << "answers that were not the echo of their own call";
  EXPECT_EQ(unserved, 0u) << "answers no server produced";
  EXPECT_EQ(ctl[4].load(), 0u) << "calls that overran their timeout by more than 500 ms";
  EXPECT_GT(answered_n, 0u);
  std::printf("[ info ] rpc: %d rounds, %llu server kills, %llu answered calls, longest gap between answers %.1f ms\n",
              rounds, static_cast<unsigned long long>(server_kills), static_cast<unsigned long long>(answered_n),
              static_cast<double>(ctl[1].load()) / 1000.0);
}

// Heap: processes allocate, fill, check and free blocks; one is killed at a
// random time each round (often inside the allocator). Survivors never hang,
// and at the end the heap walks clean (the dead one's blocks leak: nobody
// knows they are garbage) and still allocates.
TEST(HeapTorture, RandomKillsInsideTheAllocatorNeverHangOrCorruptTheHeap) {
  const int rounds = test::torture_rounds(20);
  test::TempName name("lv.heap");
  // A killed worker's blocks leak (at most 16 of at most 1 KiB each): room for all of them.
  { Heap h = Heap::create(name.str(), (4u << 20) + static_cast<std::uint64_t>(rounds) * (16u << 10) * 2); }
  SharedFlags ctl(4);  // 0 stop, 1 bad fills, 2 longest call us
  ASSERT_TRUE(ctl.ok());
  std::mt19937_64 rng(test::test_seed());
  const auto spawn_worker = [&](std::uint64_t seed) {
    return test::spawn([&, seed]() {
      Heap h = Heap::open(name.str());
      std::mt19937_64 r(seed);
      std::vector<std::pair<unsigned char*, std::size_t>> mine;
      while (ctl[0].load() == 0) {
        const auto t0 = std::chrono::steady_clock::now();
        if (mine.size() < 16 && r() % 3 != 0) {
          const std::size_t n = 16 + r() % 1000;
          auto* p = static_cast<unsigned char*>(h.allocate(n, 16));
          if (p != nullptr) {
            std::memset(p, static_cast<int>(n & 0xff), n);
            mine.emplace_back(p, n);
          }
        } else if (!mine.empty()) {
          const std::size_t k = r() % mine.size();
          auto [p, n] = mine[k];
          for (std::size_t i = 0; i < n; ++i) {
            if (p[i] != static_cast<unsigned char>(n & 0xff)) {
              ctl[1].fetch_add(1);
              break;
            }
          }
          if (h.deallocate(p) != HeapStatus::ok) {
            test::report("deallocate failed");
            return 3;
          }
          mine[k] = mine.back();
          mine.pop_back();
        }
        test::raise_max(
            ctl[2],
            static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count()));
      }
      for (auto& [p, n] : mine) (void)h.deallocate(p);
      return 0;
    });
  };
  for (int round = 0; round < rounds; ++round) {
    ctl[0].store(0);
    std::vector<test::Child> workers;
    for (int k = 0; k < 3; ++k) workers.push_back(spawn_worker(rng()));
    std::this_thread::sleep_for(std::chrono::microseconds(1000 + rng() % 10000));
    const std::size_t v = rng() % workers.size();
    workers[v].kill(SIGKILL);
    (void)workers[v].wait();
    workers[v] = spawn_worker(rng());
    std::this_thread::sleep_for(std::chrono::microseconds(5000 + rng() % 10000));
    ctl[0].store(1);
    for (auto& w : workers) {
      const test::ChildResult r = w.wait(30s);
      EXPECT_TRUE(r.exited && r.exit_code == 0) << "worker exit " << r.exit_code << " signal " << r.signal
                                                << (r.timed_out ? " (timed out)" : "") << ": " << r.output;
    }
  }
  Heap h = Heap::open(name.str());
  const HeapCheck c = h.check();
  EXPECT_TRUE(c.ok) << c.problem;
  void* p = h.allocate(1000, 16);
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(h.deallocate(p), HeapStatus::ok);
  EXPECT_EQ(ctl[1].load(), 0u) << "blocks whose contents changed under their owner";
  const HeapStats st = h.stats();
  std::printf("[ info ] heap: %d rounds, %d kills, repairs %llu, leaked blocks %llu, longest allocator call %.1f ms\n",
              rounds, rounds, static_cast<unsigned long long>(st.repairs),
              static_cast<unsigned long long>(st.allocated_blocks), static_cast<double>(ctl[2].load()) / 1000.0);
}

}  // namespace

}  // namespace liveness_torture_rpc_heap_test
}  // namespace zipc
