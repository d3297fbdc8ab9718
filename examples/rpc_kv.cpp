// A tiny key-value service over zipc Rpc, and clients that use it.
//
// Run with no arguments: forks a server (2 handler threads) and 3 client
// processes; each client stores its own keys, reads them back, deletes half,
// and checks every answer. Exits 0 only when every answer was right.
//
// Protocol (text): "SET <key> <value>" -> "OK"; "GET <key>" -> "VALUE <value>"
// or "NOTFOUND"; "DEL <key>" -> "OK" or "NOTFOUND"; "QUIT" stops the server.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "fork_run.hpp"
#include "zipc/rpc.hpp"

namespace {

using namespace std::chrono_literals;

std::string_view as_text(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}
std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

int run_server(const std::string& name) {
  std::map<std::string, std::string, std::less<>> store;
  std::mutex mutex;
  auto server = zipc::RpcServer::create(name, {});
  server.serve(
      [&](zipc::RpcRequest& req) {
        // Copy out first: the request lives in shared memory.
        const std::string line(as_text(req.data()));
        std::string reply;
        const auto sp1 = line.find(' ');
        const std::string op = line.substr(0, sp1);
        const std::string rest = sp1 == std::string::npos ? "" : line.substr(sp1 + 1);
        std::lock_guard<std::mutex> lock(mutex);
        if (op == "SET") {
          const auto sp2 = rest.find(' ');
          store[rest.substr(0, sp2)] = sp2 == std::string::npos ? "" : rest.substr(sp2 + 1);
          reply = "OK";
        } else if (op == "GET") {
          auto it = store.find(rest);
          reply = it == store.end() ? "NOTFOUND" : "VALUE " + it->second;
        } else if (op == "DEL") {
          reply = store.erase(rest) > 0 ? "OK" : "NOTFOUND";
        } else if (op == "QUIT") {
          reply = "BYE";
          server.stop();
        } else {
          reply = "ERROR unknown command";
        }
        (void)req.reply(as_bytes(reply));
      },
      2);
  return 0;
}

// Sends one command and returns the answer ("" on failure).
std::string ask(zipc::RpcClient& c, const std::string& command) {
  zipc::RpcResponse r = c.call(as_bytes(command), 5s);
  if (!r.ok()) {
    std::fprintf(stderr, "rpc_kv: '%s' failed: %s\n", command.c_str(), zipc::to_string(r.status()));
    return "";
  }
  return std::string(as_text(r.data()));
}

int run_client(const std::string& name, int id) {
  auto client = zipc::RpcClient::connect(name, 5s);
  int wrong = 0;
  auto expect = [&](const std::string& command, const std::string& want) {
    const std::string got = ask(client, command);
    if (got != want) {
      std::fprintf(stderr, "rpc_kv client %d: '%s' -> '%s', expected '%s'\n", id, command.c_str(), got.c_str(),
                   want.c_str());
      ++wrong;
    }
  };
  const std::string prefix = "c" + std::to_string(id) + ".k";
  for (int i = 0; i < 100; ++i) expect("SET " + prefix + std::to_string(i) + " v" + std::to_string(i * id), "OK");
  for (int i = 0; i < 100; ++i) expect("GET " + prefix + std::to_string(i), "VALUE v" + std::to_string(i * id));
  for (int i = 0; i < 100; i += 2) expect("DEL " + prefix + std::to_string(i), "OK");
  for (int i = 0; i < 100; ++i) {
    expect("GET " + prefix + std::to_string(i), i % 2 == 0 ? "NOTFOUND" : "VALUE v" + std::to_string(i * id));
  }
  // Pipelined: several GETs in flight, each answer matched to its ticket.
  zipc::RpcTicket a = client.call_async(as_bytes("GET " + prefix + "1"));
  zipc::RpcTicket b = client.call_async(as_bytes("GET " + prefix + "3"));
  zipc::RpcResponse rb = b.wait(5s);
  zipc::RpcResponse ra = a.wait(5s);
  if (!ra.ok() || as_text(ra.data()) != "VALUE v" + std::to_string(id)) ++wrong;
  if (!rb.ok() || as_text(rb.data()) != "VALUE v" + std::to_string(3 * id)) ++wrong;
  return wrong == 0 ? 0 : 1;
}

bool exited_zero(pid_t pid) {
  return zipc_example::wait_exit(pid) == 0;
}

}  // namespace

int main() {
  const std::string name = "rpc_kv_example." + std::to_string(::getpid());
  const pid_t server = zipc_example::fork_run([&] { return run_server(name); });
  pid_t clients[3];
  for (int i = 0; i < 3; ++i) clients[i] = zipc_example::fork_run([&, i] { return run_client(name, i + 1); });
  bool ok = true;
  for (pid_t c : clients) ok = exited_zero(c) && ok;
  try {
    auto admin = zipc::RpcClient::connect(name, 5s);
    ok = ask(admin, "QUIT") == "BYE" && ok;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rpc_kv: %s\n", e.what());
    ok = false;
    ::kill(server, SIGKILL);
  }
  ok = exited_zero(server) && ok;
  try {
    zipc::Segment::remove(name);  // normally gone already: the server removes it on exit
  } catch (...) {
  }
  std::printf("rpc_kv: %s\n", ok ? "every answer was right" : "FAILED");
  return ok ? 0 : 1;
}
