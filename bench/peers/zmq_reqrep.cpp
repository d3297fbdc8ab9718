// zipc-bench-zmq-reqrep: ZeroMQ REQ/REP over ipc:// between two processes,
// request/response at 128 B and 256 KiB (--full adds 4 KiB). The client
// writes every request byte, the server checks every byte and answers with a
// response of the same size that the client checks in turn.
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <cstdio>
#include <string>
#include <vector>

#include "payload.hpp"
#include "peer_common.hpp"
#include "sysinfo.hpp"

using namespace zipc::bench;

namespace {

int serve(const std::string& ep) {
  void* ctx = zmq_ctx_new();
  void* s = zmq_socket(ctx, ZMQ_REP);
  if (zmq_bind(s, ep.c_str()) != 0) return 10;
  std::vector<unsigned char> out;
  zmq_msg_t m;
  zmq_msg_init(&m);
  int rc = 0;
  for (;;) {
    if (zmq_msg_recv(&m, s, 0) < 0) {
      rc = 11;
      break;
    }
    MessageHeader h{};
    const std::size_t n = zmq_msg_size(&m);
    if (!check_message(zmq_msg_data(&m), n, &h)) {
      rc = 12;
      break;
    }
    out.resize(n);
    fill_message(out.data(), n, MessageHeader{h.seq, h.t_send_ns, 1, h.flags, 0});
    if (zmq_send(s, out.data(), n, 0) < 0) {
      rc = 13;
      break;
    }
    if (h.flags == kFlagStop) break;
  }
  zmq_msg_close(&m);
  int linger = 1000;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_close(s);
  zmq_ctx_term(ctx);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  const PeerArgs args = parse_peer_args(argc, argv, "ZeroMQ REQ/REP request/response between two processes");
  const auto cpus = allowed_cpus();
  std::vector<std::size_t> sizes = {128, 262144};
  if (args.full) sizes = {128, 4096, 262144};
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t size : sizes) {
    const std::string path = "/tmp/zipcb-zmq-reqrep." + std::to_string(::getpid()) + "." + std::to_string(size);
    const std::string ep = "ipc://" + path;
    std::fflush(nullptr);
    const pid_t server = ::fork();
    if (server == 0) {
      if (cpus.size() >= 2) pin_self(cpus[1]);
      ::_exit(serve(ep));
    }
    if (cpus.size() >= 2) pin_self(cpus[0]);
    void* ctx = zmq_ctx_new();
    void* s = zmq_socket(ctx, ZMQ_REQ);
    int linger = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(s, ep.c_str()) != 0) {
      std::fprintf(stderr, "zmq_connect %s: %s\n", ep.c_str(), zmq_strerror(zmq_errno()));
      return 1;
    }
    std::vector<unsigned char> buf(size);
    zmq_msg_t m;
    zmq_msg_init(&m);
    const std::uint64_t warmup = 200, max_iter = args.full ? 100000 : 20000;
    const std::uint64_t budget = args.full ? 3'000'000'000ull : 300'000'000ull;
    std::vector<std::uint64_t> samples;
    samples.reserve(max_iter);  // no allocation inside the timed loop
    std::uint64_t t_start = 0, t_end = 0;
    bool ok = true;
    for (std::uint64_t i = 0; i < warmup + max_iter && ok; ++i) {
      const std::uint64_t t0 = mono_ns();
      if (i == warmup) t_start = t0;
      fill_message(buf.data(), size, MessageHeader{i, t0, 0, i < warmup ? kFlagWarmup : kFlagData, 0});
      MessageHeader h{};
      ok = zmq_send(s, buf.data(), size, 0) >= 0 && zmq_msg_recv(&m, s, 0) >= 0 &&
           check_message(zmq_msg_data(&m), zmq_msg_size(&m), &h) && h.seq == i && zmq_msg_size(&m) == size;
      const std::uint64_t t1 = mono_ns();
      if (i >= warmup) {
        samples.push_back(t1 - t0);
        t_end = t1;
        if (t1 - t_start > budget) break;
      }
    }
    if (ok) {
      fill_message(buf.data(), kMinMessage, MessageHeader{0, mono_ns(), 0, kFlagStop, 0});
      ok = zmq_send(s, buf.data(), kMinMessage, 0) >= 0 && zmq_msg_recv(&m, s, 0) >= 0;
    }
    zmq_msg_close(&m);
    zmq_close(s);
    zmq_ctx_term(ctx);
    int st = 0;
    if (!ok) ::kill(server, SIGKILL);
    ::waitpid(server, &st, 0);
    ::unlink(path.c_str());
    if (!ok || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      std::fprintf(stderr, "zmq-reqrep %zu B: a response was wrong or the server failed (status %d)\n", size,
                   WIFEXITED(st) ? WEXITSTATUS(st) : -1);
      return 1;
    }
    rows.push_back(round_trip_row("reqrep", "zmq-reqrep", size, std::move(samples),
                                  static_cast<double>(t_end - t_start) / 1e9, cpus.size() >= 2 ? 2 : 1));
  }
  return write_rows(args.out, rows) ? 0 : 1;
}
