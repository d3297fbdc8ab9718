// c_api/rpc_server.cpp - zipc_rpc_server_* and zipc_rpc_request_* over zipc::RpcServer.
#include <span>
#include <string>

#include "c_api/c_api.hpp"
#include "zipc/rpc.hpp"

struct zipc_rpc_server {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::RpcServer server;
};

using namespace zipc::c_api;

zipc::RpcServer& zipc::c_api::rpc_server_of(zipc_rpc_server* server) noexcept {
  return server->server;
}

namespace {

constexpr std::size_t kOptionsV1 = sizeof(zipc_rpc_options_t);
static_assert(ZIPC_RPC_MAX_SERVE_THREADS == zipc::kRpcMaxServeThreads, "the C bound is the C++ one");
static_assert(ZIPC_RPC_HANDLER_FAILED == zipc::kRpcHandlerFailed, "the C code is the C++ one");
static_assert(ZIPC_RPC_BAD_REPLY == zipc::kRpcBadReply, "the C code is the C++ one");

zipc::RpcOptions to_cpp(const zipc_rpc_options_t& o) {
  zipc::RpcOptions r;
  r.max_clients = o.max_clients;
  r.inflight_per_client = o.inflight_per_client;
  r.max_request_size = o.max_request_size;
  r.max_response_size = o.max_response_size;
  r.inline_size = o.inline_size;
  r.large_blocks = o.large_blocks;
  r.wait = zipc::c_api::to_cpp(o.wait);
  r.segment = zipc::c_api::to_cpp(o.segment);
  r.replace_stale = o.replace_stale;
  r.recovery_time = std::chrono::milliseconds(o.recovery_time_ms);
  return r;
}

// Moves a served request into the caller's struct.
void fill(zipc_rpc_request_t* out, zipc::RpcRequest&& req) {
  std::memset(out, 0, sizeof *out);
  zipc::RpcRequest* r = emplace<zipc::RpcRequest>(out->private_, LoanKind::rpc_request, std::move(req));
  out->data = r->data().data();
  out->size = r->size();
  out->client = r->client();
}

bool live(const zipc_rpc_request_t* request) noexcept {
  return request != nullptr && kind_of(request->private_) == LoanKind::rpc_request;
}

}  // namespace

extern "C" {

zipc_status_t zipc_rpc_options_init(zipc_rpc_options_t* options) {
  if (options == nullptr) return invalid("zipc_rpc_options_init", "options is NULL");
  const zipc::RpcOptions d;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->max_clients = d.max_clients;
  options->inflight_per_client = d.inflight_per_client;
  options->large_blocks = d.large_blocks;
  options->max_request_size = d.max_request_size;
  options->max_response_size = d.max_response_size;
  options->inline_size = d.inline_size;
  options->recovery_time_ms = static_cast<uint64_t>(d.recovery_time.count());
  options->replace_stale = d.replace_stale;
  zipc_wait_options_init(&options->wait);
  zipc_segment_options_init(&options->segment);
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_server_create(const char* name, const zipc_rpc_options_t* options, zipc_rpc_server_t** out) {
  return guard("zipc_rpc_server_create", [&] {
    zipc_status_t st = ZIPC_OK;
    if (!valid_name("zipc_rpc_server_create", name, &st)) return st;
    if (out == nullptr) return invalid("zipc_rpc_server_create", "out is NULL");
    if (!options_ok("zipc_rpc_server_create", options, kOptionsV1, &st)) return st;
    const zipc_rpc_options_t o = read_options(options, zipc_rpc_options_init);
    *out = new zipc_rpc_server{zipc::RpcServer::create(name, to_cpp(o))};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_rpc_server_detach(zipc_rpc_server_t* server) {
  delete server;
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_server_next(zipc_rpc_server_t* server, int64_t timeout_ns, zipc_rpc_request_t* request) {
  if (server == nullptr) return invalid("zipc_rpc_server_next", "server is NULL");
  if (request == nullptr) return invalid("zipc_rpc_server_next", "request is NULL");
  std::memset(request, 0, sizeof *request);
  zipc::RpcRequest r = server->server.next(timeout(timeout_ns));
  if (!r.ok()) return from(r.status());
  fill(request, std::move(r));
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_server_serve(zipc_rpc_server_t* server, zipc_rpc_handler_fn handler, void* context,
                                    unsigned threads) {
  if (server == nullptr) return invalid("zipc_rpc_server_serve", "server is NULL");
  if (handler == nullptr) return invalid("zipc_rpc_server_serve", "handler is NULL");
  if (threads == 0 || threads > zipc::kRpcMaxServeThreads) {
    return fail(ZIPC_INVALID_ARGUMENT, "zipc_rpc_server_serve: threads must be 1.." +
                                           std::to_string(zipc::kRpcMaxServeThreads) + ", got " +
                                           std::to_string(threads));
  }
  return guard("zipc_rpc_server_serve", [&] {
    server->server.serve(
        [handler, context](zipc::RpcRequest& req) {
          zipc_rpc_request_t c;
          fill(&c, std::move(req));
          handler(context, &c);
          zipc_rpc_request_release(&c);
        },
        threads);
    return ZIPC_OK;
  });
}

zipc_status_t zipc_rpc_server_stop(zipc_rpc_server_t* server) {
  if (server == nullptr) return invalid("zipc_rpc_server_stop", "server is NULL");
  server->server.stop();
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_server_close(zipc_rpc_server_t* server) {
  if (server == nullptr) return invalid("zipc_rpc_server_close", "server is NULL");
  server->server.close();
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_server_connected_clients(const zipc_rpc_server_t* server, size_t* out) {
  if (server == nullptr) return invalid("zipc_rpc_server_connected_clients", "server is NULL");
  if (out == nullptr) return invalid("zipc_rpc_server_connected_clients", "out is NULL");
  *out = server->server.connected_clients();
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_request_reply(zipc_rpc_request_t* request, const void* data, size_t size) {
  if (!live(request)) return invalid("zipc_rpc_request_reply", "request is NULL or not live");
  if (data == nullptr && size != 0) return invalid("zipc_rpc_request_reply", "data is NULL");
  zipc::RpcRequest* r = slot<zipc::RpcRequest>(request->private_);
  return from(r->reply(std::span(static_cast<const std::byte*>(data), size)));
}

zipc_status_t zipc_rpc_request_reserve_reply(zipc_rpc_request_t* request, size_t n, zipc_write_loan_t* loan) {
  if (!live(request)) return invalid("zipc_rpc_request_reserve_reply", "request is NULL or not live");
  if (loan == nullptr) return invalid("zipc_rpc_request_reserve_reply", "loan is NULL");
  clear(loan);
  zipc::RpcRequest* r = slot<zipc::RpcRequest>(request->private_);
  zipc::Status st = zipc::Status::ok;
  const std::span<std::byte> mem = r->reserve_reply(n, &st);
  if (st != zipc::Status::ok) return from(st);
  loan->data = mem.data();
  loan->size = mem.size();
  emplace<zipc::RpcRequest*>(loan->private_, LoanKind::rpc_reply, r);
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_request_fail(zipc_rpc_request_t* request, uint32_t code, const char* message) {
  if (!live(request)) return invalid("zipc_rpc_request_fail", "request is NULL or not live");
  zipc::RpcRequest* r = slot<zipc::RpcRequest>(request->private_);
  return from(r->fail(code, message != nullptr ? std::string_view(message) : std::string_view()));
}

zipc_status_t zipc_rpc_request_release(zipc_rpc_request_t* request) {
  if (!live(request)) return invalid("zipc_rpc_request_release", "request is NULL or not live");
  destroy<zipc::RpcRequest>(request->private_);
  std::memset(request, 0, sizeof *request);
  return ZIPC_OK;
}

}  // extern "C"
