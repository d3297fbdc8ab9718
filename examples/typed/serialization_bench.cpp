// Cost of a 1 KiB message per encoding, producer and consumer in separate
// processes: plain struct (copy, and loan), slice of doubles (loan),
// FlatBuffers (built in the loan, read in place), Protobuf (serialized into
// the loan, parsed on read).
//
//   serialization_bench [messages] [repetitions]     (default 2000 1: a quick self-check)
//
// Each repetition runs every mode once (modes alternate); the table gives the
// median over repetitions of ns per message on each side, and the ratio of
// the consumer's figure to the struct loan's. Every message is checked by the
// consumer; exit 1 if any was wrong.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../fork_run.hpp"
#include "flatbuffers_codec.hpp"
#include "protobuf_codec.hpp"
#include "snapshot.hpp"
#include "zipc/typed.hpp"

using namespace std::chrono_literals;
using zipc_example::kLevels;
using zipc_example::Snapshot;

namespace {

enum class Mode { struct_copy, struct_loan, slice_loan, flatbuffers, protobuf };
constexpr Mode kModes[] = {Mode::struct_copy, Mode::struct_loan, Mode::slice_loan, Mode::flatbuffers, Mode::protobuf};
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::struct_copy: return "struct, copy send/recv";
    case Mode::struct_loan: return "struct, loan (baseline)";
    case Mode::slice_loan: return "slice of 124 doubles, loan";
    case Mode::flatbuffers: return "FlatBuffers in loan";
    case Mode::protobuf: return "Protobuf into loan";
  }
  return "?";
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// One side of one mode: open() once, then one(id) per message.
struct Side {
  Mode m;
  std::string name;
  zipc::Role role;
  zipc::TypedQueue<Snapshot> structs;
  zipc::TypedQueue<double> slices;
  zipc::Queue bytes;
  zipc_example::pb::Snapshot scratch;
  Snapshot copy{};
  double sum = 0;

  Side(Mode mode, std::string n, zipc::Role r) : m(mode), name(std::move(n)), role(r) {
    if (m == Mode::struct_copy || m == Mode::struct_loan) {
      structs = zipc::TypedQueue<Snapshot>::open(name, role);
    } else if (m == Mode::slice_loan) {
      slices = zipc::TypedQueue<double>::open(name, role);
    } else {
      bytes = zipc::Queue::open(name, role);
    }
  }

  bool send(std::uint64_t id) {
    switch (m) {
      case Mode::struct_copy: zipc_example::fill(copy, id); return structs.send(copy, 10s) == zipc::Status::ok;
      case Mode::struct_loan: {
        auto loan = structs.reserve(10s);
        if (!loan) return false;
        zipc_example::fill(*loan, id);
        return loan.commit().ok();
      }
      case Mode::slice_loan: {
        auto loan = slices.reserve_slice(kLevels, 10s);
        if (!loan) return false;
        for (std::size_t i = 0; i < kLevels; ++i) loan[i] = zipc_example::level_value(id, i);
        return loan.commit().ok();
      }
      case Mode::flatbuffers: {
        zipc::QueueWriteLoan loan = bytes.reserve(10s);
        return loan && zipc_example::fb_build(loan, id);
      }
      case Mode::protobuf: return zipc_example::pb_send(bytes, scratch, id, 10s);
    }
    return false;
  }

  bool receive(std::uint64_t id) {
    switch (m) {
      case Mode::struct_copy:
        return structs.recv(copy, 10s) == zipc::Status::ok && copy.id == id &&
               zipc_example::check_levels(id, copy.levels, &sum);
      case Mode::struct_loan: {
        auto in = structs.acquire(10s);
        return in && in->id == id && zipc_example::check_levels(id, in->levels, &sum);
      }
      case Mode::slice_loan: {
        auto in = slices.acquire_slice(10s);
        return in && zipc_example::check_levels(id, in.span(), &sum);
      }
      case Mode::flatbuffers: {
        zipc::QueueReadLoan in = bytes.acquire(10s);
        return in && zipc_example::fb_read(in.data(), id, &sum);
      }
      case Mode::protobuf: {
        zipc::QueueReadLoan in = bytes.acquire(10s);
        return in && zipc_example::pb_read(in.data(), scratch, id, &sum);
      }
    }
    return false;
  }
};

// Consumer side, in the child: elapsed ns from the first to the last message, or -1.
std::int64_t consume(Mode m, const std::string& name, std::uint64_t n) {
  Side side(m, name, zipc::Role::consumer);
  std::uint64_t first = 0;
  for (std::uint64_t id = 0; id < n; ++id) {
    if (!side.receive(id)) return -1;
    if (id == 0) first = now_ns();
  }
  return static_cast<std::int64_t>(now_ns() - first);
}

// Producer side, in the parent.
bool produce(Mode m, const std::string& name, std::uint64_t n) {
  Side side(m, name, zipc::Role::producer);
  for (std::uint64_t id = 0; id < n; ++id) {
    if (!side.send(id)) return false;
  }
  return true;
}

// One process sends and receives each message in turn: the CPU cost of
// encode + decode + one queue round trip, without scheduling between processes.
double same_process_ns(Mode m, const std::string& name, std::uint64_t n) {
  Side side(m, name, zipc::Role::both);
  const std::uint64_t t0 = now_ns();
  for (std::uint64_t id = 0; id < n; ++id) {
    if (!side.send(id) || !side.receive(id)) return -1;
  }
  return static_cast<double>(now_ns() - t0) / static_cast<double>(n);
}

void create(Mode m, const std::string& name) {
  zipc::QueueOptions opt;
  opt.block_count = 256;
  opt.producers = zipc::Multiplicity::single;
  opt.consumers = zipc::Multiplicity::single;
  if (m == Mode::struct_copy || m == Mode::struct_loan) {
    opt.block_size = sizeof(Snapshot);
    (void)zipc::TypedQueue<Snapshot>::create(name, opt, zipc::Role::none);
  } else if (m == Mode::slice_loan) {
    opt.block_size = 1024;
    (void)zipc::TypedQueue<double>::create(name, opt, zipc::Role::none);
  } else {
    opt.block_size = 2048;
    (void)zipc::Queue::create(name, opt, zipc::Role::none);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 1;
  if (n < 2 || reps < 1) return 64;
  const std::string base = "example-typed-bench-" + std::to_string(::getpid());
  const std::string results = base + "-results";
  auto res = zipc::TypedQueue<std::int64_t>::create(results);

  std::vector<double> prod[5], cons[5], local[5];
  bool all_ok = true;
  for (int r = 0; r < reps; ++r) {
    for (Mode m : kModes) {
      const std::string name = base + "-" + std::to_string(static_cast<int>(m));
      create(m, name);
      const double one = same_process_ns(m, name, n);
      if (one < 0) {
        std::fprintf(stderr, "%s: a message was wrong (same process)\n", mode_name(m));
        all_ok = false;
      }
      local[static_cast<int>(m)].push_back(one);
      const pid_t child = zipc_example::fork_run([&] {
        auto out = zipc::TypedQueue<std::int64_t>::open(results);
        if (out.send(0, 1s) != zipc::Status::ok) return 2;  // ready
        const std::int64_t elapsed = consume(m, name, n);
        return out.send(elapsed, 1s) == zipc::Status::ok && elapsed >= 0 ? 0 : 1;
      });
      std::int64_t ready = -1, elapsed = -1;
      bool ok = res.recv(ready, 10s) == zipc::Status::ok;
      const std::uint64_t t0 = now_ns();
      ok = ok && produce(m, name, n);
      const std::uint64_t t1 = now_ns();
      ok = ok && res.recv(elapsed, 30s) == zipc::Status::ok && elapsed >= 0;
      ok = zipc_example::wait_exit(child) == 0 && ok;
      zipc::Queue::remove(name);
      if (!ok) {
        std::fprintf(stderr, "%s: a message was lost or wrong\n", mode_name(m));
        all_ok = false;
        continue;
      }
      prod[static_cast<int>(m)].push_back(static_cast<double>(t1 - t0) / static_cast<double>(n));
      cons[static_cast<int>(m)].push_back(static_cast<double>(elapsed) / static_cast<double>(n - 1));
    }
  }
  zipc::Queue::remove(results);
  const double base_ns = median(cons[static_cast<int>(Mode::struct_loan)]);
  const double base_local = median(local[static_cast<int>(Mode::struct_loan)]);
  std::printf("%llu messages of ~1 KiB x %d repetitions (median ns/message)\n", static_cast<unsigned long long>(n),
              reps);
  std::printf("%-28s %9s %9s %9s | %12s %9s\n", "encoding", "producer", "consumer", "vs struct", "one process",
              "vs struct");
  for (Mode m : kModes) {
    const int i = static_cast<int>(m);
    const double c = median(cons[i]);
    const double l = median(local[i]);
    std::printf("%-28s %9.0f %9.0f %8.2fx | %12.0f %8.2fx\n", mode_name(m), median(prod[i]), c,
                base_ns > 0 ? c / base_ns : 0.0, l, base_local > 0 ? l / base_local : 0.0);
  }
  return all_ok ? 0 : 1;
}
