// zipc call NAME [REQUEST]: one Rpc request, the response printed.
#include <thread>

#include "message_format.hpp"

namespace zipc_tool {
namespace {

struct CallOptions {
  std::string name;
  std::string request;
  bool from_stdin = true;
  std::string format = "text";
  double timeout = 5;
  std::uint64_t repeat = 1;  // calls of the same request (a load generator); the last response is printed
  double rate = 0;           // calls/s when repeating (0: as fast as answers come)
};

int run_call(CallOptions o) {
  const OutFormat f = parse_out_format(o.format);
  if (o.from_stdin) {
    std::vector<char> chunk(1 << 16);
    while (std::size_t got = std::fread(chunk.data(), 1, chunk.size(), stdin)) o.request.append(chunk.data(), got);
    if (std::ferror(stdin)) fail(kIo, "stdin", std::strerror(errno));
  }
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout * 1000));
  if (o.repeat == 0) fail(kUsage, "--repeat", "must be at least 1");
  if (o.rate < 0) fail(kUsage, "--rate", "must not be negative");
  install_stop_handler();
  zipc::RpcClient client = zipc::RpcClient::connect(o.name, timeout);
  const std::span<const std::byte> request{reinterpret_cast<const std::byte*>(o.request.data()), o.request.size()};
  zipc::RpcResponse r;
  const std::uint64_t t0 = now_monotonic_ns();
  for (std::uint64_t i = 0; i < o.repeat; ++i) {
    if (o.rate > 0) {  // paced: call i is due at t0 + i / rate
      const auto due = t0 + static_cast<std::uint64_t>(static_cast<double>(i) * 1e9 / o.rate);
      while (now_monotonic_ns() < due && !stop_requested()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (stop_requested()) break;
    r.release();  // the previous answer's slot is free before the next call (one call out at a time)
    r = client.call(request, timeout);
    if (!r.ok()) fail(exit_code_for(r.status()), o.name, std::string("call failed: ") + zipc::to_string(r.status()));
  }
  if (!r.ok()) return kOk;  // stopped before the first call
  OutBuffer out(stdout);
  emit_message(out, f, 0, now_realtime_ns(), r.data());
  return kOk;
}

}  // namespace

Command add_call(CLI::App& root) {
  auto o = std::make_shared<CallOptions>();
  CLI::App* app = root.add_subcommand("call", "send one Rpc request (argument or stdin) and print the response");
  app->footer(
      "Example:\n  zipc call upper 'hello'                    # prints HELLO from `zipc serve upper --upper`\n"
      "  printf 'raw\\0bytes' | zipc call svc --format hex\n"
      "  zipc call upper hi --repeat 1000000 --rate 1000   # load: 1000 calls/s (see zipc top)\n"
      "Exit 3 when no server serves NAME, 5 when no answer came in --timeout.");
  app->add_option("name", o->name, "Rpc service name")->required();
  app->add_option("request", o->request, "request text (default: all of stdin)")->each([o](const std::string&) {
    o->from_stdin = false;
  });
  app->add_option("--format", o->format, "response as text | hex | json")
      ->check(CLI::IsMember({"text", "hex", "json"}));
  app->add_option("--timeout", o->timeout, "seconds to connect and to wait for each response");
  app->add_option("--repeat", o->repeat, "send the request N times (prints the last response; ^C stops)");
  app->add_option("--rate", o->rate, "with --repeat: calls per second (default: back to back)");
  return {app, [o] { return run_call(*o); }};
}

}  // namespace zipc_tool
