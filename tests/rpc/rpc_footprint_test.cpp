// Memory of an Rpc server proportional to use: the resident bytes of its
// segment (the /dev/shm file's allocated blocks, as `du` shows them) and of
// its mapping in this process (Rss in /proc/self/smaps), printed right after
// create, after 1000 small calls and after large calls. The goals are page
// counts, not timings: default server <= 2 MiB, a server for 1 MiB requests
// and responses <= 8 MiB until large calls arrive, then one block more per
// large payload held at once.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "zipc/rpc.hpp"
#include "zipc/segment.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::RpcClient;
using zipc::RpcOptions;
using zipc::RpcRequest;
using zipc::RpcServer;

namespace rpc_footprint_test {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

struct Footprint {
  std::uint64_t file_size = 0;  // the segment's length (what is mapped)
  std::uint64_t file_du = 0;    // its allocated blocks (what /dev/shm holds)
  std::uint64_t rss = 0;        // resident pages of its mapping(s) in this process
};

// Sums the Rss of every mapping of path in this process.
std::uint64_t mapping_rss(const std::string& path) {
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool ours = false;
  std::uint64_t kib = 0;
  while (std::getline(in, line)) {
    const std::string first = line.substr(0, line.find(' '));
    if (!first.empty() && first.back() != ':') {  // a mapping's header line, not a "Key:" line
      ours = line.find(path) != std::string::npos;
      continue;
    }
    if (!ours) continue;
    if (line.rfind("Rss:", 0) == 0) {
      std::istringstream f(line.substr(4));
      std::uint64_t v = 0;
      f >> v;
      kib += v;
    }
  }
  return kib * 1024;
}

Footprint measure(const std::string& name) {
  const std::string path = zipc::Segment::path_for(name);
  Footprint f;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    f.file_size = static_cast<std::uint64_t>(st.st_size);
    f.file_du = static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  f.rss = mapping_rss(path);
  return f;
}

void print(const char* what, const Footprint& f) {
  std::printf("footprint %-44s mapped %8.2f MiB  du %6.2f MiB  rss %6.2f MiB\n", what,
              static_cast<double>(f.file_size) / kMiB, static_cast<double>(f.file_du) / kMiB,
              static_cast<double>(f.rss) / kMiB);
  std::fflush(stdout);
}

void echo(RpcRequest& req) {
  (void)req.reply(req.data());
}

// The goals assume a segment layer that reserves without touching (no
// fallocate of the whole file at create). Where it still allocates every
// page, the figures are printed and the goals not asserted.
bool segment_is_sparse(const Footprint& just_created) {
  return just_created.file_du < just_created.file_size / 2;
}

void small_calls(RpcClient& client, int n) {
  const char req[64] = "a small request";
  for (int i = 0; i < n; ++i) {
    auto r = client.call(std::as_bytes(std::span(req)), 5s);
    ASSERT_TRUE(r.ok()) << zipc::to_string(r.status());
  }
}

}  // namespace

TEST(RpcFootprint, ADefaultServerStaysUnderTwoMebibytesAfterAThousandSmallCalls) {
  zipc::test::TempName name("rpcfp");
  auto server = RpcServer::create(name.str());
  const Footprint created = measure(name.str());
  print("default: after create", created);
  std::thread serving([&] { server.serve(echo, 1); });
  {
    auto client = RpcClient::connect(name.str(), 2s);
    small_calls(client, 1000);
  }
  const Footprint used = measure(name.str());
  print("default: after 1000 small calls", used);
  server.stop();
  serving.join();
  if (!segment_is_sparse(created)) GTEST_SKIP() << "the segment layer allocates the whole file at create";
  EXPECT_LE(created.file_du, 2 * kMiB);
  EXPECT_LE(created.rss, 2 * kMiB);
  EXPECT_LE(used.file_du, 2 * kMiB);
  EXPECT_LE(used.rss, 2 * kMiB);
}

TEST(RpcFootprint, AServerForOneMebibyteCallsTouchesItsPoolOnlyForLargeCalls) {
  zipc::test::TempName name("rpcfp");
  RpcOptions opt;
  opt.max_request_size = opt.max_response_size = 1 << 20;
  auto server = RpcServer::create(name.str(), opt);
  const Footprint created = measure(name.str());
  print("1 MiB max: after create", created);
  std::thread serving([&] { server.serve(echo, 2); });
  Footprint used;
  Footprint large;
  {
    auto client = RpcClient::connect(name.str(), 2s);
    small_calls(client, 1000);
    used = measure(name.str());
    print("1 MiB max: after 1000 small calls", used);
    std::vector<std::byte> big(1 << 20, std::byte{7});
    for (int i = 0; i < 20; ++i) {
      auto r = client.call(big, 5s);
      ASSERT_TRUE(r.ok()) << zipc::to_string(r.status());
      ASSERT_EQ(r.size(), big.size());
    }
    large = measure(name.str());
    print("1 MiB max: after 20 sequential 1 MiB calls", large);
  }
  server.stop();
  serving.join();
  if (!segment_is_sparse(created)) GTEST_SKIP() << "the segment layer allocates the whole file at create";
  EXPECT_LE(created.file_du, 8 * kMiB);
  EXPECT_LE(used.file_du, 8 * kMiB);
  EXPECT_LE(used.rss, 8 * kMiB);
  // One call at a time: its request block becomes its response (an echo),
  // the lowest free block each time: one block of the pool is ever touched.
  EXPECT_LE(large.file_du, used.file_du + 2 * kMiB);
}

}  // namespace rpc_footprint_test
