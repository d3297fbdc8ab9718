// The bridge's NATS connection: options passed through, JetStream context,
// reconnect counting.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "zipc/bridge.hpp"

namespace zipc::bridge_detail {

class ReadLoop;

class Link {
 public:
  // With a ReadLoop, that loop reads and writes the connection (the client
  // starts no reading thread) and the link has no JetStream context.
  // `buffered`: publishes collect in the client's buffer and its flusher
  // thread writes them (flush() writes them at once), for JetStream's
  // many small publishes and acks; otherwise each publish is written in the
  // publishing thread, for the core mappings' latency.
  Link(const NatsOptions& options, std::string client_name, ReadLoop* loop = nullptr, bool buffered = false);
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // One connection attempt: "" when connected, else why not (names the servers).
  std::string connect_once();
  // Creates the stream covering subject unless one by that name exists.
  std::string ensure_stream(const std::string& stream, const std::string& subject);
  void close() noexcept;
  // A buffered link: writes what the client holds now (one round trip to the
  // server, up to timeout), instead of within the flusher's next millisecond.
  void flush(std::chrono::milliseconds timeout) const noexcept;

  [[nodiscard]] natsConnection* conn() const noexcept { return conn_; }
  [[nodiscard]] jsCtx* js() const noexcept { return js_; }
  [[nodiscard]] bool up() const noexcept { return up_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t reconnects() const noexcept { return reconnects_.load(std::memory_order_relaxed); }
  // The connected server's max_payload (0 before the first connection), read
  // at connect and reconnect: no connection lock on the publishing path.
  [[nodiscard]] std::int64_t max_payload() const noexcept { return max_payload_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::string servers_text() const;
  [[nodiscard]] bool uses_tls() const { return options_.tls || !options_.tls_ca.empty() || !options_.tls_cert.empty(); }
  [[nodiscard]] int pending_msgs() const noexcept { return options_.pending_msgs; }
  [[nodiscard]] int pending_bytes() const noexcept { return options_.pending_bytes; }
  [[nodiscard]] std::string last_error() const;
  void set_error(std::string text);

 private:
  static void on_disconnected(natsConnection* nc, void* closure);
  static void on_reconnected(natsConnection* nc, void* closure);
  static void on_closed(natsConnection* nc, void* closure);
  static void on_error(natsConnection* nc, natsSubscription* sub, natsStatus err, void* closure);
  using OptionsPtr = std::unique_ptr<natsOptions, decltype(&natsOptions_Destroy)>;
  std::string build_options(OptionsPtr& out) const;

  NatsOptions options_;
  std::string name_;
  ReadLoop* loop_ = nullptr;
  bool buffered_ = false;
  natsConnection* conn_ = nullptr;
  jsCtx* js_ = nullptr;
  std::atomic<bool> up_{false};
  std::atomic<bool> closed_{false};  // the client's last callback for this connection ran
  std::atomic<std::uint64_t> reconnects_{0};
  std::atomic<std::int64_t> max_payload_{0};
  mutable std::mutex error_mu_;
  std::string last_error_;
};

}  // namespace zipc::bridge_detail
