#include "link.hpp"

#include <chrono>
#include <fstream>
#include <thread>
#include <utility>
#include <vector>

#include "internal.hpp"
#include "read_loop.hpp"

namespace zipc::bridge_detail {

std::string status_text(natsStatus s) {
  std::string text = natsStatus_GetText(s);
  const char* last = nats_GetLastError(nullptr);
  if (last != nullptr && *last != '\0' && text != last) text += std::string(" (") + last + ")";
  return text;
}

Link::Link(const NatsOptions& options, std::string client_name, ReadLoop* loop, bool buffered)
    : options_(options), name_(std::move(client_name)), loop_(loop), buffered_(buffered) {}

void Link::flush(std::chrono::milliseconds timeout) const noexcept {
  if (conn_ != nullptr) natsConnection_FlushTimeout(conn_, timeout.count());
}

Link::~Link() {
  close();
}

std::string Link::servers_text() const {
  std::string s;
  for (const auto& u : options_.servers) s += (s.empty() ? "" : ",") + u;
  return s;
}

std::string Link::last_error() const {
  std::lock_guard lock(error_mu_);
  return last_error_;
}

void Link::set_error(std::string text) {
  std::lock_guard lock(error_mu_);
  last_error_ = std::move(text);
}

void Link::on_disconnected(natsConnection*, void* closure) {
  auto* self = static_cast<Link*>(closure);
  self->up_.store(false, std::memory_order_relaxed);
  self->set_error("nats: disconnected from " + self->servers_text() + "; reconnecting");
}

void Link::on_reconnected(natsConnection* nc, void* closure) {
  auto* self = static_cast<Link*>(closure);
  self->max_payload_.store(natsConnection_GetMaxPayload(nc), std::memory_order_relaxed);  // this server's
  self->reconnects_.fetch_add(1, std::memory_order_relaxed);
  self->up_.store(true, std::memory_order_relaxed);
  self->set_error("nats: reconnected (" + std::to_string(self->reconnects()) + " reconnects so far)");
}

void Link::on_closed(natsConnection*, void* closure) {
  // release: pairs with the acquire in close(); after it the Link may be freed.
  static_cast<Link*>(closure)->closed_.store(true, std::memory_order_release);
}

void Link::on_error(natsConnection*, natsSubscription*, natsStatus err, void* closure) {
  // Slow consumer and similar asynchronous errors: the sequence gaps count the loss.
  static_cast<Link*>(closure)->set_error(std::string("nats: ") + natsStatus_GetText(err));
}

std::string Link::build_options(OptionsPtr& out) const {
  natsOptions* created = nullptr;
  natsStatus s = natsOptions_Create(&created);
  OptionsPtr owner(created, &natsOptions_Destroy);  // every return below frees it, or hands it to `out`
  natsOptions* o = owner.get();
  auto fail = [&](const char* what) { return std::string("nats option ") + what + ": " + status_text(s); };
  if (s != NATS_OK) return fail("create");
  std::vector<const char*> urls;
  for (const auto& u : options_.servers) urls.push_back(u.c_str());
  if ((s = natsOptions_SetServers(o, urls.data(), static_cast<int>(urls.size()))) != NATS_OK) return fail("servers");
  if ((s = natsOptions_SetName(o, name_.c_str())) != NATS_OK) return fail("name");
  if (!options_.user.empty() &&
      (s = natsOptions_SetUserInfo(o, options_.user.c_str(), options_.password.c_str())) != NATS_OK)
    return fail("user/password");
  if (!options_.token.empty() && (s = natsOptions_SetToken(o, options_.token.c_str())) != NATS_OK) return fail("token");
  if (!options_.creds_file.empty() && !std::ifstream(options_.creds_file).good())
    return "nats option creds_file: cannot read '" + options_.creds_file + "'";
  if (!options_.creds_file.empty() &&
      (s = natsOptions_SetUserCredentialsFromFiles(o, options_.creds_file.c_str(), nullptr)) != NATS_OK)
    return fail("creds_file");
  if (uses_tls() && (s = natsOptions_SetSecure(o, true)) != NATS_OK) return fail("tls");
  if (!options_.tls_ca.empty() && (s = natsOptions_LoadCATrustedCertificates(o, options_.tls_ca.c_str())) != NATS_OK)
    return fail("tls_ca");
  if (!options_.tls_cert.empty() &&
      (s = natsOptions_LoadCertificatesChain(o, options_.tls_cert.c_str(), options_.tls_key.c_str())) != NATS_OK)
    return fail("tls_cert/tls_key");
  natsOptions_SetNoRandomize(o, !options_.randomize);
  natsOptions_SetNoEcho(o, true);  // our own publications never come back on this connection
  // Core: write in the publishing thread instead of waking the client's
  // flusher thread: one write per (batched) publish, no hand-off latency.
  // JetStream (buffered): one write for many publishes and acks; a write
  // each was most of a JetStream mapping's cost at 100 B (docs/guide/bridge.md).
  natsOptions_SetSendAsap(o, !buffered_);
  natsOptions_SetIOBufSize(o, 256 * 1024);  // a whole batch per read and write
  natsOptions_SetAllowReconnect(o, true);
  natsOptions_SetMaxReconnect(o, -1);  // forever; the bridge is long-running
  natsOptions_SetReconnectWait(o, options_.reconnect_wait.count());
  natsOptions_SetReconnectBufSize(o, options_.reconnect_buffer_bytes);
  natsOptions_SetMaxPendingMsgs(o, options_.pending_msgs);
  natsOptions_SetTimeout(o, 2000);
  natsOptions_SetPingInterval(o, 1000);  // a silently dead server is noticed within ~3 s
  natsOptions_SetMaxPingsOut(o, 2);
  natsOptions_SetDisconnectedCB(o, &Link::on_disconnected, const_cast<Link*>(this));
  natsOptions_SetReconnectedCB(o, &Link::on_reconnected, const_cast<Link*>(this));
  natsOptions_SetErrorHandler(o, &Link::on_error, const_cast<Link*>(this));
  natsOptions_SetClosedCB(o, &Link::on_closed, const_cast<Link*>(this));
  if (loop_ != nullptr && (s = natsOptions_SetEventLoop(o, loop_, &ReadLoop::on_attach, &ReadLoop::on_read,
                                                        &ReadLoop::on_write, &ReadLoop::on_detach)) != NATS_OK)
    return fail("event loop");
  out = std::move(owner);
  return {};
}

std::string Link::connect_once() {
  OptionsPtr o(nullptr, &natsOptions_Destroy);
  std::string err = build_options(o);
  if (!err.empty()) return err;
  natsStatus s = natsConnection_Connect(&conn_, o.get());  // (the connection keeps a copy of its own)
  o.reset();
  if (s != NATS_OK) {
    conn_ = nullptr;
    std::string e = "nats: cannot connect to " + servers_text() + ": " + status_text(s);
    // A server that requires a client certificate closes the TLS session
    // without a word; the client then reports a protocol error.
    if (uses_tls() && options_.tls_cert.empty() && (s == NATS_PROTOCOL_ERROR || s == NATS_CONNECTION_CLOSED))
      e += " (TLS: the server may require a client certificate: set nats.tls_cert and nats.tls_key)";
    return e;
  }
  max_payload_.store(natsConnection_GetMaxPayload(conn_), std::memory_order_relaxed);
  if (loop_ != nullptr) {  // inbound core only: no JetStream on this connection
    up_.store(true, std::memory_order_relaxed);
    return {};
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 5000;
  if ((s = natsConnection_JetStream(&js_, conn_, &jo)) != NATS_OK) {
    natsConnection_Destroy(conn_);
    conn_ = nullptr;
    return "nats: JetStream context: " + status_text(s);
  }
  up_.store(true, std::memory_order_relaxed);
  return {};
}

std::string Link::ensure_stream(const std::string& stream, const std::string& subject) {
  jsStreamInfo* si = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, js_, stream.c_str(), nullptr, &code);
  if (s == NATS_OK) {
    jsStreamInfo_Destroy(si);
    return {};
  }
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = stream.c_str();
  const char* subjects[1] = {subject.c_str()};
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  cfg.Duplicates = 120LL * 1000 * 1000 * 1000;  // de-duplication window: 2 min (ns)
  s = js_AddStream(&si, js_, &cfg, nullptr, &code);
  if (s == NATS_OK || code == JSStreamNameExistErr) {
    if (si != nullptr) jsStreamInfo_Destroy(si);
    return {};
  }
  return "jetstream: cannot create stream '" + stream + "' for '" + subject + "': " + status_text(s);
}

void Link::close() noexcept {
  if (js_ != nullptr) {
    jsCtx_Destroy(js_);
    js_ = nullptr;
  }
  if (conn_ != nullptr) {
    // The client calls back from its own thread, even after Destroy: wait for
    // the closed callback (the last one) before this Link can go away. It
    // comes within milliseconds; the bound is for a host so loaded that the
    // client's threads do not run for seconds.
    natsConnection_Close(conn_);
    for (int i = 0; i < 10000 && !closed_.load(std::memory_order_acquire); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    natsConnection_Destroy(conn_);
    conn_ = nullptr;
  }
  up_.store(false, std::memory_order_relaxed);
}

}  // namespace zipc::bridge_detail
