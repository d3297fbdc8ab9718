// market_data: one publisher of price ticks, a fast reliable subscriber that
// must see every tick, and a slow lossy one that only wants recent prices.
//
//   example_market_data [ticks]
//
// Each runs in its own process. The reliable subscriber holds the publisher
// back when it falls behind; the lossy one never does and is told exactly how
// many ticks it missed. Exits 0 only when what each saw is right.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "fork_run.hpp"
#include "zipc/topic.hpp"

namespace {

struct Tick {
  char symbol[8];
  std::uint64_t number;  // the publisher's own count
  double price;
  std::uint32_t quantity;
  std::uint32_t check;  // of the fields above
};

std::uint32_t check_of(const Tick& t) {
  std::uint32_t h = 2166136261u;
  const auto* p = reinterpret_cast<const unsigned char*>(&t);
  for (std::size_t i = 0; i < offsetof(Tick, check); ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

Tick make_tick(std::uint64_t n) {
  static const char* const kSymbols[] = {"ACME", "GLOBX", "INITECH", "UMBRL"};
  Tick t{};
  std::strncpy(t.symbol, kSymbols[n % 4], sizeof t.symbol - 1);
  t.number = n;
  t.price = 100.0 + static_cast<double>(n % 1000) / 100.0;
  t.quantity = static_cast<std::uint32_t>(1 + n % 500);
  t.check = check_of(t);
  return t;
}

// Tells the parent this subscriber is in place.
void signal_ready(int fd) {
  const char c = 1;
  if (::write(fd, &c, 1) != 1) std::perror("write");
}

int reliable_subscriber(const std::string& name, int ready_fd, std::uint64_t ticks) {
  auto topic = zipc::Topic::open(name);
  auto sub = topic.subscribe({zipc::From::sequence(0), zipc::Delivery::reliable});
  signal_ready(ready_fd);
  std::uint64_t seen = 0;
  double notional = 0;
  while (seen < ticks) {
    const zipc::TopicReadLoan m = sub.acquire(std::chrono::seconds(10));  // zero copy
    if (!m) {
      std::printf("reliable: read failed: %s\n", zipc::to_string(m.status()));
      return 1;
    }
    Tick t;
    std::memcpy(&t, m.data().data(), sizeof t);
    if (m.size() != sizeof t || t.check != check_of(t) || t.number != seen || m.sequence() != seen) {
      std::printf("reliable: bad tick at %llu\n", static_cast<unsigned long long>(seen));
      return 1;
    }
    notional += t.price * t.quantity;
    ++seen;
  }
  std::printf("reliable subscriber: saw %llu of %llu ticks, lost %llu, notional %.2f\n",
              static_cast<unsigned long long>(seen), static_cast<unsigned long long>(ticks),
              static_cast<unsigned long long>(sub.lost()), notional);
  return sub.lost() == 0 ? 0 : 1;
}

int lossy_subscriber(const std::string& name, int ready_fd, std::uint64_t ticks) {
  auto topic = zipc::Topic::open(name);
  auto sub = topic.subscribe({zipc::From::sequence(0), zipc::Delivery::lossy});
  signal_ready(ready_fd);
  std::uint64_t seen = 0, overruns = 0, last = 0;
  Tick t;
  while (last + 1 < ticks || seen == 0) {
    const zipc::ReadResult r = sub.read(std::as_writable_bytes(std::span(&t, 1)), std::chrono::seconds(10));
    if (r.status == zipc::Status::overrun) {
      ++overruns;  // lapped: lost() grew by exactly the ticks we missed
      continue;
    }
    if (!r.ok()) {
      std::printf("lossy: read failed: %s\n", zipc::to_string(r.status));
      return 1;
    }
    if (t.check != check_of(t) || t.number != r.sequence) {
      std::printf("lossy: torn tick at %llu\n", static_cast<unsigned long long>(r.sequence));
      return 1;
    }
    last = r.sequence;
    ++seen;
    if (seen % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));  // a slow consumer
  }
  std::printf("lossy subscriber:    saw %llu of %llu ticks, lost %llu (in %llu overruns), last price %.2f\n",
              static_cast<unsigned long long>(seen), static_cast<unsigned long long>(ticks),
              static_cast<unsigned long long>(sub.lost()), static_cast<unsigned long long>(overruns), t.price);
  return seen + sub.lost() == ticks ? 0 : 1;
}

int publisher(const std::string& name, std::uint64_t ticks) {
  auto topic = zipc::Topic::open(name);
  auto pub = topic.publisher();
  for (std::uint64_t n = 0; n < ticks; ++n) {
    const Tick t = make_tick(n);
    const zipc::CommitResult r = pub.publish(std::as_bytes(std::span(&t, 1)), std::chrono::seconds(10));
    if (!r.ok() || r.sequence != n) {
      std::printf("publisher: publish failed: %s\n", zipc::to_string(r.status));
      return 1;
    }
  }
  std::printf("publisher:           sent %llu ticks\n", static_cast<unsigned long long>(ticks));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t ticks = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  const std::string name = "market-data-" + std::to_string(::getpid());
  zipc::TopicOptions options;
  options.capacity_bytes = 256 * 1024;  // ~5000 ticks of history
  options.max_message_size = sizeof(Tick);
  auto topic = zipc::Topic::create(name, options);

  int ready[2];
  if (::pipe(ready) != 0) return 1;
  const pid_t fast = zipc_example::fork_run([&] { return reliable_subscriber(name, ready[1], ticks); });
  const pid_t slow = zipc_example::fork_run([&] { return lossy_subscriber(name, ready[1], ticks); });
  char c;
  for (int i = 0; i < 2; ++i) {
    if (::read(ready[0], &c, 1) != 1) return 1;
  }
  const pid_t pub = zipc_example::fork_run([&] { return publisher(name, ticks); });

  const int pub_rc = zipc_example::wait_exit(pub);
  const int fast_rc = zipc_example::wait_exit(fast);
  const int slow_rc = zipc_example::wait_exit(slow);
  zipc::Topic::remove(name);
  const bool ok = pub_rc == 0 && fast_rc == 0 && slow_rc == 0;
  std::printf("%s\n", ok ? "market_data: OK" : "market_data: FAILED");
  return ok ? 0 : 1;
}
