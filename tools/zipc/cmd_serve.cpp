// zipc serve NAME: a small Rpc server (echo or upper-case) for trying `zipc call`.
#include <cctype>

#include "args.hpp"
#include "common.hpp"

namespace zipc_tool {
namespace {

struct ServeOptions {
  std::string name;
  bool upper = false;
  std::uint64_t count = 0;
  std::uint64_t max_response = zipc::RpcOptions{}.max_response_size;
};

int run_serve(const ServeOptions& o) {
  install_stop_handler();
  zipc::RpcOptions ro;
  ro.max_response_size = o.max_response;
  zipc::RpcServer server = zipc::RpcServer::create(o.name, ro);
  std::uint64_t served = 0;
  std::string reply;
  while (!stop_requested() && (o.count == 0 || served < o.count)) {
    zipc::RpcRequest req = server.next(std::chrono::milliseconds(100));
    if (req.status() == zipc::Status::timeout) continue;
    if (!req.ok()) fail(exit_code_for(req.status()), o.name, std::string("serve: ") + zipc::to_string(req.status()));
    reply.assign(reinterpret_cast<const char*>(req.data().data()), req.size());
    if (o.upper) {
      for (char& ch : reply) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    }
    const zipc::Status st = req.reply({reinterpret_cast<const std::byte*>(reply.data()), reply.size()});
    if (st == zipc::Status::too_large) {
      std::fprintf(stderr, "zipc serve: '%s': reply of %zu bytes is larger than the %llu-byte limit\n", o.name.c_str(),
                   reply.size(), static_cast<unsigned long long>(o.max_response));
    } else if (st != zipc::Status::ok) {
      std::fprintf(stderr, "zipc serve: '%s': reply: %s\n", o.name.c_str(), zipc::to_string(st));
    }
    ++served;
  }
  return kOk;
}

}  // namespace

Command add_serve(CLI::App& root) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* app = root.add_subcommand("serve", "serve an Rpc name: echo each request (or upper-case it)");
  app->footer(
      "Example:\n  zipc serve upper --upper &  zipc call upper hello    # HELLO\n"
      "  zipc serve tiny --max-response 4 &  zipc call tiny hello   # exit 2: too_large (counted in stat's errors)");
  app->add_option("name", o->name, "Rpc service name")->required();
  app->add_flag("--upper", o->upper, "reply with the request upper-cased");
  add_count(app, "--count", o->count, 0, kNoMax, "exit after serving N requests (0: until ^C)");
  add_size(app, "--max-response", o->max_response, 1, 1u << 30,
           "largest response (e.g. 4KiB); a longer reply fails the call with too_large");
  return {app, [o] { return run_serve(*o); }};
}

}  // namespace zipc_tool
