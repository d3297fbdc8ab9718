// zipc-bench-grpc: gRPC unary calls over a Unix socket between two processes,
// request/response at 128 B and 256 KiB (--full adds 4 KiB). The client
// writes every request byte, the server checks them and answers with a
// response of the same size, which the client checks. The server is forked
// before gRPC starts any thread.
#include <grpcpp/grpcpp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "echo.grpc.pb.h"
#include "payload.hpp"
#include "peer_common.hpp"
#include "sysinfo.hpp"

using namespace zipc::bench;

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_bad{false};

// The callback API, which gRPC's performance guide (grpc.io/docs/guides/performance,
// C++) recommends over the sync API for servers whose speed matters.
class EchoImpl final : public zipcbench::Echo::CallbackService {
  grpc::ServerUnaryReactor* Call(grpc::CallbackServerContext* ctx, const zipcbench::Payload* req,
                                 zipcbench::Payload* rsp) override {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    MessageHeader h{};
    const std::string& in = req->data();
    if (!check_message(in.data(), in.size(), &h)) {
      g_bad = true;
      reactor->Finish(grpc::Status(grpc::StatusCode::DATA_LOSS, "checksum mismatch"));
      return reactor;
    }
    std::string* out = rsp->mutable_data();
    out->resize(in.size());
    fill_message(out->data(), in.size(), MessageHeader{h.seq, h.t_send_ns, 1, h.flags, 0});
    if (h.flags == kFlagStop) g_stop = true;
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

int serve(const std::string& addr) {
  EchoImpl svc;
  grpc::ServerBuilder b;
  b.AddListeningPort(addr, grpc::InsecureServerCredentials());
  b.RegisterService(&svc);
  b.SetMaxReceiveMessageSize(64 << 20);
  b.SetMaxSendMessageSize(64 << 20);
  auto server = b.BuildAndStart();
  if (!server) return 10;
  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return g_bad ? 12 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const PeerArgs args = parse_peer_args(argc, argv, "gRPC unary request/response over a Unix socket");
  const auto cpus = allowed_cpus();
  std::vector<std::size_t> sizes = {128, 262144};
  if (args.full) sizes = {128, 4096, 262144};
  nlohmann::json rows = nlohmann::json::array();
  // One server for all sizes, forked before any gRPC state exists in this process.
  const std::string path = "/tmp/zipcb-grpc." + std::to_string(::getpid()) + ".sock";
  const std::string addr = "unix:" + path;
  std::fflush(nullptr);
  const pid_t server = ::fork();
  if (server == 0) {
    if (cpus.size() >= 2) pin_self(cpus[1]);
    ::_exit(serve(addr));
  }
  if (cpus.size() >= 2) pin_self(cpus[0]);
  grpc::ChannelArguments ca;
  ca.SetMaxReceiveMessageSize(64 << 20);
  ca.SetMaxSendMessageSize(64 << 20);
  auto channel = grpc::CreateCustomChannel(addr, grpc::InsecureChannelCredentials(), ca);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "grpc: could not connect to %s\n", addr.c_str());
    ::kill(server, SIGKILL);
    ::waitpid(server, nullptr, 0);
    ::unlink(path.c_str());
    return 1;
  }
  auto stub = zipcbench::Echo::NewStub(channel);
  bool ok = true;
  std::uint64_t seq = 0;
  auto call = [&](std::size_t size, std::uint32_t flags) {
    zipcbench::Payload req, rsp;
    std::string* d = req.mutable_data();
    d->resize(size);
    fill_message(d->data(), size, MessageHeader{seq, mono_ns(), 0, flags, 0});
    grpc::ClientContext ctx;
    const grpc::Status st = stub->Call(&ctx, req, &rsp);
    MessageHeader h{};
    const bool good = st.ok() && rsp.data().size() == size && check_message(rsp.data().data(), size, &h) &&
                      h.seq == seq && h.sender == 1;
    ++seq;
    return good;
  };
  for (std::size_t size : sizes) {
    const std::uint64_t warmup = 200, max_iter = args.full ? 50000 : 10000;
    const std::uint64_t budget = args.full ? 3'000'000'000ull : 300'000'000ull;
    std::vector<std::uint64_t> samples;
    samples.reserve(max_iter);  // no allocation inside the timed loop
    std::uint64_t t_start = 0, t_end = 0;
    for (std::uint64_t i = 0; i < warmup + max_iter && ok; ++i) {
      const std::uint64_t t0 = mono_ns();
      if (i == warmup) t_start = t0;
      ok = call(size, i < warmup ? kFlagWarmup : kFlagData);
      const std::uint64_t t1 = mono_ns();
      if (i >= warmup) {
        samples.push_back(t1 - t0);
        t_end = t1;
        if (t1 - t_start > budget) break;
      }
    }
    if (!ok) break;
    rows.push_back(round_trip_row("reqrep", "grpc-unix", size, std::move(samples),
                                  static_cast<double>(t_end - t_start) / 1e9, cpus.size() >= 2 ? 2 : 1));
  }
  if (ok) ok = call(kMinMessage, kFlagStop);
  int st = 0;
  if (!ok) ::kill(server, SIGKILL);
  ::waitpid(server, &st, 0);
  ::unlink(path.c_str());
  if (!ok || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::fprintf(stderr, "grpc: a response was wrong or the server failed\n");
    return 1;
  }
  return write_rows(args.out, rows) ? 0 : 1;
}
