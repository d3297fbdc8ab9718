// zipc call NAME [REQUEST]: one Rpc request, the response printed.
#include "message_format.hpp"

namespace zipc_tool {
namespace {

struct CallOptions {
  std::string name;
  std::string request;
  bool from_stdin = true;
  std::string format = "text";
  double timeout = 5;
};

int run_call(CallOptions o) {
  const OutFormat f = parse_out_format(o.format);
  if (o.from_stdin) {
    std::vector<char> chunk(1 << 16);
    while (std::size_t got = std::fread(chunk.data(), 1, chunk.size(), stdin)) o.request.append(chunk.data(), got);
    if (std::ferror(stdin)) fail(kIo, "stdin", std::strerror(errno));
  }
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(o.timeout * 1000));
  zipc::RpcClient client = zipc::RpcClient::connect(o.name, timeout);
  zipc::RpcResponse r = client.call({reinterpret_cast<const std::byte*>(o.request.data()), o.request.size()}, timeout);
  if (!r.ok()) {
    fail(exit_code_for(r.status()), o.name, std::string("call failed: ") + zipc::to_string(r.status()));
  }
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
      "Exit 3 when no server serves NAME, 5 when no answer came in --timeout.");
  app->add_option("name", o->name, "Rpc service name")->required();
  app->add_option("request", o->request, "request text (default: all of stdin)")->each([o](const std::string&) {
    o->from_stdin = false;
  });
  app->add_option("--format", o->format, "response as text | hex | json")
      ->check(CLI::IsMember({"text", "hex", "json"}));
  app->add_option("--timeout", o->timeout, "seconds to connect and to wait for the response");
  return {app, [o] { return run_call(*o); }};
}

}  // namespace zipc_tool
