// Helpers for the rpc tests: checksummed requests, an echoing server in a
// child process, and scaling for sanitizer builds.
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "zipc/rpc.hpp"
#include "zipc_test.hpp"

namespace rpc_test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr int kSanitizerDivisor = 8;
#else
inline constexpr int kSanitizerDivisor = 1;
#endif

inline int scaled(int n) {
  const int v = static_cast<int>(n * zipc::test::stress_scale()) / kSanitizerDivisor;
  return v > 0 ? v : 1;
}

inline std::uint64_t fnv(const std::byte* p, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<std::uint8_t>(p[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

// A request: {client, seq, payload checksum} then payload bytes.
struct RequestHead {
  std::uint32_t client;
  std::uint32_t pad;
  std::uint64_t seq;
  std::uint64_t sum;
};
// A response: {client, seq, the request's checksum as the server computed it, reply length}
// then reply_len bytes of a pattern derived from seq.
struct ResponseHead {
  std::uint32_t client;
  std::uint32_t ok;
  std::uint64_t seq;
  std::uint64_t sum;
  std::uint64_t reply_len;
};

inline std::byte pattern(std::uint64_t seq, std::size_t i) {
  return static_cast<std::byte>((seq * 131 + i * 7) & 0xff);
}

inline std::vector<std::byte> make_request(std::uint32_t client, std::uint64_t seq, std::size_t payload) {
  std::vector<std::byte> v(sizeof(RequestHead) + payload);
  for (std::size_t i = 0; i < payload; ++i) v[sizeof(RequestHead) + i] = pattern(seq ^ client, i);
  RequestHead h{client, 0, seq, fnv(v.data() + sizeof(RequestHead), payload)};
  std::memcpy(v.data(), &h, sizeof h);
  return v;
}

// The handler every checksum test uses: verifies the request's checksum and
// answers with its head, sized by the seq (so response sizes vary too).
inline void checksum_handler(zipc::RpcRequest& req, std::size_t max_reply) {
  ResponseHead r{};
  if (req.size() >= sizeof(RequestHead)) {
    RequestHead h;
    std::memcpy(&h, req.data().data(), sizeof h);
    const std::uint64_t sum = fnv(req.data().data() + sizeof h, req.size() - sizeof h);
    r = ResponseHead{h.client, sum == h.sum ? 1u : 0u, h.seq, sum, 0};
  }
  r.reply_len = max_reply == 0 ? 0 : (r.seq * 2654435761u) % (max_reply + 1);
  zipc::Status st;
  auto out = req.reserve_reply(sizeof r + r.reply_len, &st);
  if (st != zipc::Status::ok) return;
  std::memcpy(out.data(), &r, sizeof r);
  for (std::size_t i = 0; i < r.reply_len; ++i) out[sizeof r + i] = pattern(r.seq, i);
  (void)req.commit(out.size());
}

// True when resp answers exactly the request (client, seq) sent with sum.
inline bool response_matches(const zipc::RpcResponse& resp, std::uint32_t client, std::uint64_t seq,
                             std::uint64_t sum) {
  if (!resp.ok() || resp.size() < sizeof(ResponseHead)) return false;
  ResponseHead h;
  std::memcpy(&h, resp.data().data(), sizeof h);
  if (h.client != client || h.seq != seq || h.sum != sum || h.ok != 1) return false;
  if (resp.size() != sizeof h + h.reply_len) return false;
  for (std::size_t i = 0; i < h.reply_len; ++i) {
    if (resp.data()[sizeof h + i] != pattern(seq, i)) return false;
  }
  return true;
}

inline std::atomic<zipc::RpcServer*> g_server{nullptr};

inline void stop_on_signal(int) {
  if (auto* s = g_server.load()) s->stop();
}

// Runs a server until SIGTERM; returns the exit code for a child.
template <class Handler>
int run_server(const std::string& name, const zipc::RpcOptions& opt, unsigned threads, Handler&& handler) {
#if defined(__SANITIZE_THREAD__)
  // TSan cannot start threads in a child forked from a multi-threaded
  // process (the test harness has a watchdog thread): one handler thread
  // here; multi-threaded servers are covered in-process (rpc_basic_test).
  threads = 1;
#endif
  auto sut = zipc::RpcServer::create(name, opt);
  g_server.store(&sut);
  struct sigaction sa {};
  sa.sa_handler = stop_on_signal;
  ::sigaction(SIGTERM, &sa, nullptr);
  sut.serve(handler, threads);
  g_server.store(nullptr);
  return 0;
}

inline std::span<const std::byte> bytes(const std::vector<std::byte>& v) {
  return {v.data(), v.size()};
}

}  // namespace rpc_test
