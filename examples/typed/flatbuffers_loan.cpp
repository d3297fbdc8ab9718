// FlatBuffers built directly inside a queue write loan and read in place from
// a read loan: no serialization buffer, no copy on either side.
//
// Run with no arguments: forks a producer that builds 1000 snapshots in
// loans; this process verifies and reads each in place. Exit 0 when every
// message arrived intact and in order.
#include <chrono>
#include <cstdio>
#include <string>

#include "../fork_run.hpp"
#include "flatbuffers_codec.hpp"
#include "zipc/queue.hpp"

using namespace std::chrono_literals;

int main() {
  const std::string name = "example-typed-fb-" + std::to_string(::getpid());
  constexpr std::uint64_t kCount = 1000;
  zipc::QueueOptions opt;
  opt.block_size = 2048;  // one snapshot is about 1.1 KiB as a FlatBuffer
  opt.block_count = 64;
  auto q = zipc::Queue::create(name, opt);

  const pid_t producer = zipc_example::fork_run([&] {
    auto out = zipc::Queue::open(name, zipc::Role::producer);
    for (std::uint64_t id = 0; id < kCount; ++id) {
      zipc::QueueWriteLoan loan = out.reserve(5s);
      if (!loan || !zipc_example::fb_build(loan, id)) return 1;
    }
    return 0;
  });

  double sum = 0;
  std::uint64_t good = 0;
  for (std::uint64_t id = 0; id < kCount; ++id) {
    zipc::QueueReadLoan in = q.acquire(5s);
    if (!in) break;
    if (!zipc_example::fb_read(in.data(), id, &sum)) {
      std::fprintf(stderr, "message %llu: malformed or out of order\n", static_cast<unsigned long long>(id));
      break;
    }
    ++good;
  }
  const int code = zipc_example::wait_exit(producer);
  zipc::Queue::remove(name);
  std::printf("flatbuffers: %llu/%llu snapshots read in place (level sum %.0f), producer exit %d\n",
              static_cast<unsigned long long>(good), static_cast<unsigned long long>(kCount), sum, code);
  return good == kCount && code == 0 ? 0 : 1;
}
