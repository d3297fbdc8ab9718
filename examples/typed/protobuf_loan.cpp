// Protobuf serialized straight into a queue write loan (no intermediate
// buffer); the reader parses from the read loan.
//
// Run with no arguments: forks a producer that serializes 1000 snapshots into
// loans; this process parses and checks each. Exit 0 when all arrived intact.
#include <chrono>
#include <cstdio>
#include <string>

#include "../fork_run.hpp"
#include "protobuf_codec.hpp"
#include "zipc/queue.hpp"

using namespace std::chrono_literals;

int main() {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  const std::string name = "example-typed-pb-" + std::to_string(::getpid());
  constexpr std::uint64_t kCount = 1000;
  zipc::QueueOptions opt;
  opt.block_size = 2048;
  opt.block_count = 64;
  auto q = zipc::Queue::create(name, opt);

  const pid_t producer = zipc_example::fork_run([&] {
    auto out = zipc::Queue::open(name, zipc::Role::producer);
    zipc_example::pb::Snapshot scratch;
    for (std::uint64_t id = 0; id < kCount; ++id) {
      if (!zipc_example::pb_send(out, scratch, id, 5s)) return 1;
    }
    return 0;
  });

  zipc_example::pb::Snapshot scratch;
  double sum = 0;
  std::uint64_t good = 0;
  for (std::uint64_t id = 0; id < kCount; ++id) {
    zipc::QueueReadLoan in = q.acquire(5s);
    if (!in) break;
    if (!zipc_example::pb_read(in.data(), scratch, id, &sum)) {
      std::fprintf(stderr, "message %llu: malformed or out of order\n", static_cast<unsigned long long>(id));
      break;
    }
    ++good;
  }
  const int code = zipc_example::wait_exit(producer);
  zipc::Queue::remove(name);
  std::printf("protobuf: %llu/%llu snapshots parsed (level sum %.0f), producer exit %d\n",
              static_cast<unsigned long long>(good), static_cast<unsigned long long>(kCount), sum, code);
  return good == kCount && code == 0 ? 0 : 1;
}
