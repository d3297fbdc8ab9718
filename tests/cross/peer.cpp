// zipc_cross_peer: the C++ side of the cross-language tests (driven by
// python/tests/test_cross.py). Every mode verifies the shared test vectors
// (vectors.hpp) and prints one result line "ok key=value ..." or
// "FAIL reason" on stdout; the exit status is 0 only when all checks held.
//
//   queue-produce NAME COUNT          open a queue, send vectors 0..COUNT-1
//   queue-consume NAME COUNT          receive COUNT vectors, each seq exactly once
//   topic-publish NAME COUNT          publish vectors 0..COUNT-1
//   topic-subscribe NAME COUNT MODE   MODE reliable|lossy, from the oldest message
//   rpc-serve NAME COUNT              create a server, answer COUNT calls
//   rpc-call NAME COUNT               call COUNT times; response = vector(seq + 1000000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "vectors.hpp"
#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/topic.hpp"

namespace {

using namespace std::chrono_literals;
using zipc::cross::check_vector;
using zipc::cross::make_vector;

constexpr std::uint64_t kReplyOffset = 1000000;

int fail(const std::string& why) {
  std::printf("FAIL %s\n", why.c_str());
  return 1;
}

int queue_produce(const std::string& name, std::uint64_t count) {
  auto q = zipc::Queue::open(name, zipc::Role::producer);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto v = make_vector(i);
    const zipc::Status s = q.send(v, 10s);
    if (s != zipc::Status::ok) return fail("send " + std::to_string(i) + ": " + zipc::to_string(s));
  }
  std::printf("ok sent=%llu\n", static_cast<unsigned long long>(count));
  return 0;
}

int queue_consume(const std::string& name, std::uint64_t count) {
  auto q = zipc::Queue::open(name, zipc::Role::consumer);
  std::vector<int> seen(count, 0);
  for (std::uint64_t n = 0; n < count; ++n) {
    zipc::QueueReadLoan in = q.acquire(10s);
    if (!in) return fail("recv " + std::to_string(n) + ": " + zipc::to_string(in.status()));
    const std::int64_t seq = check_vector(in.data());
    if (seq < 0 || static_cast<std::uint64_t>(seq) >= count) return fail("bad vector at message " + std::to_string(n));
    if (seen[static_cast<std::size_t>(seq)]++ != 0) return fail("duplicate seq " + std::to_string(seq));
  }
  const auto st = q.stats();
  std::printf("ok received=%llu redelivered=%llu\n", static_cast<unsigned long long>(count),
              static_cast<unsigned long long>(st.redelivered));
  return 0;
}

int topic_publish(const std::string& name, std::uint64_t count) {
  auto t = zipc::Topic::open(name);
  auto pub = t.publisher();
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto v = make_vector(i);
    const zipc::CommitResult r = pub.publish(v, 10s);
    if (!r.ok()) return fail("publish " + std::to_string(i) + ": " + zipc::to_string(r.status));
  }
  std::printf("ok published=%llu\n", static_cast<unsigned long long>(count));
  return 0;
}

int topic_subscribe(const std::string& name, std::uint64_t count, std::string_view mode) {
  auto t = zipc::Topic::open(name);
  const bool lossy = mode == "lossy";
  auto sub = t.subscribe({zipc::From::oldest(), lossy ? zipc::Delivery::lossy : zipc::Delivery::reliable});
  std::printf("ready\n");
  std::fflush(stdout);
  std::vector<std::byte> buf(t.max_message_size());
  std::uint64_t received = 0;
  std::uint64_t next = 0;  // the next sequence we may see (lossy: or later)
  while (next < count) {
    const zipc::ReadResult r = sub.read(buf, 10s);
    if (r.status == zipc::Status::overrun) continue;  // lost() counted the gap
    if (!r.ok()) return fail("read: " + std::string(zipc::to_string(r.status)));
    const std::int64_t seq = check_vector(std::span(buf).first(r.size));
    if (seq < 0) return fail("bad vector at sequence " + std::to_string(r.sequence));
    if (static_cast<std::uint64_t>(seq) != r.sequence) return fail("payload seq differs from the topic's sequence");
    if (lossy ? r.sequence < next : r.sequence != next) return fail("out of order at " + std::to_string(r.sequence));
    next = r.sequence + 1;
    ++received;
  }
  if (!lossy && received != count) return fail("reliable subscriber missed messages");
  if (received + sub.lost() != count) return fail("received + lost != count");
  std::printf("ok received=%llu lost=%llu\n", static_cast<unsigned long long>(received),
              static_cast<unsigned long long>(sub.lost()));
  return 0;
}

int rpc_serve(const std::string& name, std::uint64_t count) {
  auto server = zipc::RpcServer::create(name);
  std::printf("ready\n");
  std::fflush(stdout);
  std::uint64_t served = 0;
  std::uint64_t bad = 0;
  while (served < count) {
    zipc::RpcRequest req = server.next(10s);
    if (!req) return fail("next: " + std::string(zipc::to_string(req.status())));
    const std::int64_t seq = check_vector(req.data());
    if (seq < 0) {
      ++bad;
      (void)req.reply({});
    } else {
      const auto v = make_vector(static_cast<std::uint64_t>(seq) + kReplyOffset);
      if (req.reply(v) != zipc::Status::ok) return fail("reply");
    }
    ++served;
  }
  if (bad != 0) return fail(std::to_string(bad) + " bad requests");
  std::printf("ok served=%llu\n", static_cast<unsigned long long>(served));
  return 0;
}

int rpc_call(const std::string& name, std::uint64_t count) {
  auto client = zipc::RpcClient::connect(name, 10s);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto v = make_vector(i);
    zipc::RpcResponse r = client.call(v, 10s);
    if (!r.ok()) return fail("call " + std::to_string(i) + ": " + zipc::to_string(r.status()));
    if (check_vector(r.data()) != static_cast<std::int64_t>(i + kReplyOffset))
      return fail("bad response " + std::to_string(i));
  }
  std::printf("ok calls=%llu\n", static_cast<unsigned long long>(count));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: zipc_cross_peer MODE NAME COUNT [reliable|lossy]\n");
    return 2;
  }
  const std::string_view mode = argv[1];
  const std::string name = argv[2];
  const std::uint64_t count = std::strtoull(argv[3], nullptr, 10);
  try {
    if (mode == "queue-produce") return queue_produce(name, count);
    if (mode == "queue-consume") return queue_consume(name, count);
    if (mode == "topic-publish") return topic_publish(name, count);
    if (mode == "topic-subscribe") return topic_subscribe(name, count, argc > 4 ? argv[4] : "reliable");
    if (mode == "rpc-serve") return rpc_serve(name, count);
    if (mode == "rpc-call") return rpc_call(name, count);
  } catch (const zipc::Error& e) {
    return fail(e.what());
  }
  std::fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
