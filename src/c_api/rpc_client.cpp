// c_api/rpc_client.cpp - zipc_rpc_client_* and zipc_rpc_ticket_* over zipc::RpcClient.
#include <span>
#include <string>

#include "c_api/c_api.hpp"
#include "zipc/rpc.hpp"

struct zipc_rpc_client {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::RpcClient client;
};

using namespace zipc::c_api;

zipc::RpcClient& zipc::c_api::rpc_client_of(zipc_rpc_client* client) noexcept {
  return client->client;
}

namespace {

// This thread's last remote error (zipc_rpc_last_remote_error), copied out
// of the response so that the slot goes back at once.
struct RemoteError {
  bool set = false;
  std::uint32_t code = 0;
  std::string type;
  std::string message;
};
thread_local RemoteError t_remote;

zipc_status_t remote_error(const zipc::RpcResponse& r) {
  t_remote.set = true;
  t_remote.code = r.error_code();
  t_remote.type.assign(r.error_type());
  t_remote.message.assign(r.error_message());
  std::string text = "rpc: remote error " + std::to_string(t_remote.code);
  if (!t_remote.type.empty()) text += " (" + t_remote.type + ")";
  return fail(ZIPC_REMOTE_ERROR, text + ": " + t_remote.message);
}

// Hands a response to the caller's read loan (ok), or says why there is none.
zipc_status_t respond(zipc::RpcResponse&& r, zipc_read_loan_t* out) {
  if (r.status() == zipc::Status::remote_error) return guard("zipc_rpc_client_call", [&] { return remote_error(r); });
  if (!r.ok()) return from(r.status());
  zipc::RpcResponse* p = emplace<zipc::RpcResponse>(out->private_, LoanKind::rpc_response, std::move(r));
  out->data = p->data().data();
  out->size = p->size();
  return ZIPC_OK;
}

zipc_status_t ticket_out(zipc::RpcTicket&& t, zipc_rpc_ticket_t* out) {
  if (!t.ok()) return from(t.status());
  emplace<zipc::RpcTicket>(out->private_, LoanKind::rpc_ticket, std::move(t));
  return ZIPC_OK;
}

bool live(const zipc_rpc_ticket_t* t) noexcept {
  return t != nullptr && kind_of(t->private_) == LoanKind::rpc_ticket;
}

bool live_request_loan(const zipc_write_loan_t* l) noexcept {
  return l != nullptr && kind_of(l->private_) == LoanKind::rpc_request_loan;
}

}  // namespace

extern "C" {

zipc_status_t zipc_rpc_client_connect(const char* name, int64_t timeout_ns, zipc_rpc_client_t** out) {
  return guard("zipc_rpc_client_connect", [&] {
    zipc_status_t st = ZIPC_OK;
    if (!valid_name("zipc_rpc_client_connect", name, &st)) return st;
    if (out == nullptr) return invalid("zipc_rpc_client_connect", "out is NULL");
    // Forever: about 70 years (milliseconds::max() would overflow in nanoseconds).
    const std::chrono::milliseconds t =
        timeout_ns < 0 ? std::chrono::hours(24 * 365 * 70)
                       : std::chrono::ceil<std::chrono::milliseconds>(std::chrono::nanoseconds(timeout_ns));
    *out = new zipc_rpc_client{zipc::RpcClient::connect(name, t)};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_rpc_client_detach(zipc_rpc_client_t* client) {
  delete client;
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_client_call(zipc_rpc_client_t* client, const void* data, size_t size, int64_t timeout_ns,
                                   zipc_read_loan_t* response) {
  if (client == nullptr) return invalid("zipc_rpc_client_call", "client is NULL");
  if (data == nullptr && size != 0) return invalid("zipc_rpc_client_call", "data is NULL");
  if (response == nullptr) return invalid("zipc_rpc_client_call", "response is NULL");
  clear(response);
  return respond(client->client.call(std::span(static_cast<const std::byte*>(data), size), timeout(timeout_ns)),
                 response);
}

zipc_status_t zipc_rpc_client_call_async(zipc_rpc_client_t* client, const void* data, size_t size,
                                         zipc_rpc_ticket_t* ticket) {
  if (client == nullptr) return invalid("zipc_rpc_client_call_async", "client is NULL");
  if (data == nullptr && size != 0) return invalid("zipc_rpc_client_call_async", "data is NULL");
  if (ticket == nullptr) return invalid("zipc_rpc_client_call_async", "ticket is NULL");
  std::memset(ticket, 0, sizeof *ticket);
  return ticket_out(client->client.call_async(std::span(static_cast<const std::byte*>(data), size)), ticket);
}

zipc_status_t zipc_rpc_client_reserve(zipc_rpc_client_t* client, size_t n, zipc_write_loan_t* loan) {
  if (client == nullptr) return invalid("zipc_rpc_client_reserve", "client is NULL");
  if (loan == nullptr) return invalid("zipc_rpc_client_reserve", "loan is NULL");
  clear(loan);
  zipc::RpcWriteLoan l = client->client.reserve(n);
  if (!l) return from(l.status());
  loan->data = l.data().data();
  loan->size = l.data().size();
  emplace<zipc::RpcWriteLoan>(loan->private_, LoanKind::rpc_request_loan, std::move(l));
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_client_call_loan(zipc_rpc_client_t* client, zipc_write_loan_t* loan, int64_t timeout_ns,
                                        zipc_read_loan_t* response) {
  if (client == nullptr) return invalid("zipc_rpc_client_call_loan", "client is NULL");
  if (!live_request_loan(loan))
    return invalid("zipc_rpc_client_call_loan", "loan is NULL or not a live rpc request loan");
  if (response == nullptr) return invalid("zipc_rpc_client_call_loan", "response is NULL");
  clear(response);
  zipc::RpcWriteLoan l = std::move(*slot<zipc::RpcWriteLoan>(loan->private_));
  destroy<zipc::RpcWriteLoan>(loan->private_);
  clear(loan);
  return respond(client->client.call(std::move(l), timeout(timeout_ns)), response);
}

zipc_status_t zipc_rpc_client_call_async_loan(zipc_rpc_client_t* client, zipc_write_loan_t* loan,
                                              zipc_rpc_ticket_t* ticket) {
  if (client == nullptr) return invalid("zipc_rpc_client_call_async_loan", "client is NULL");
  if (!live_request_loan(loan)) {
    return invalid("zipc_rpc_client_call_async_loan", "loan is NULL or not a live rpc request loan");
  }
  if (ticket == nullptr) return invalid("zipc_rpc_client_call_async_loan", "ticket is NULL");
  std::memset(ticket, 0, sizeof *ticket);
  zipc::RpcWriteLoan l = std::move(*slot<zipc::RpcWriteLoan>(loan->private_));
  destroy<zipc::RpcWriteLoan>(loan->private_);
  clear(loan);
  return ticket_out(client->client.call_async(std::move(l)), ticket);
}

zipc_status_t zipc_rpc_ticket_wait(zipc_rpc_ticket_t* ticket, int64_t timeout_ns, zipc_read_loan_t* response) {
  if (!live(ticket)) return invalid("zipc_rpc_ticket_wait", "ticket is NULL or not live");
  if (response == nullptr) return invalid("zipc_rpc_ticket_wait", "response is NULL");
  clear(response);
  zipc::RpcResponse r = slot<zipc::RpcTicket>(ticket->private_)->wait(timeout(timeout_ns));
  if (r.status() == zipc::Status::timeout) return ZIPC_TIMEOUT;  // the ticket stays live
  destroy<zipc::RpcTicket>(ticket->private_);
  return respond(std::move(r), response);
}

zipc_status_t zipc_rpc_ticket_ready(const zipc_rpc_ticket_t* ticket, bool* ready) {
  if (!live(ticket)) return invalid("zipc_rpc_ticket_ready", "ticket is NULL or not live");
  if (ready == nullptr) return invalid("zipc_rpc_ticket_ready", "ready is NULL");
  *ready = slot<zipc::RpcTicket>(ticket->private_)->ready();
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_ticket_cancel(zipc_rpc_ticket_t* ticket) {
  if (!live(ticket)) return invalid("zipc_rpc_ticket_cancel", "ticket is NULL or not live");
  destroy<zipc::RpcTicket>(ticket->private_);
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_last_remote_error(zipc_rpc_error_t* out) {
  if (out == nullptr) return invalid("zipc_rpc_last_remote_error", "out is NULL");
  if (!t_remote.set) return fail(ZIPC_NOT_FOUND, "zipc_rpc_last_remote_error: no remote error on this thread");
  *out = {t_remote.code, t_remote.type.c_str(), t_remote.message.c_str()};
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_client_info(const zipc_rpc_client_t* client, zipc_rpc_client_info_t* out) {
  if (client == nullptr) return invalid("zipc_rpc_client_info", "client is NULL");
  if (out == nullptr) return invalid("zipc_rpc_client_info", "out is NULL");
  const zipc::RpcClient& c = client->client;
  *out = {c.max_request_size(), c.max_response_size(), c.inflight_limit(), c.reconnects()};
  return ZIPC_OK;
}

zipc_status_t zipc_rpc_client_set_wait(zipc_rpc_client_t* client, const zipc_wait_options_t* wait) {
  if (client == nullptr) return invalid("zipc_rpc_client_set_wait", "client is NULL");
  if (wait == nullptr) return invalid("zipc_rpc_client_set_wait", "wait is NULL");
  return guard("zipc_rpc_client_set_wait", [&] {
    client->client.set_wait(zipc::c_api::to_cpp(*wait));
    return ZIPC_OK;
  });
}

}  // extern "C"
