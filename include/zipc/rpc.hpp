/// \file
/// zipc/rpc.hpp - request/response between processes, from 0 B to many MiB.
///
/// \code
///   #include <cstring>
///   #include <thread>
///   #include "zipc/rpc.hpp"
///   ---
///   zipc::RpcOptions opt;
///   opt.max_request_size = 1 << 20;
///   auto server = zipc::RpcServer::create("rpc-doc-example", opt);
///   std::thread t([&] {
///     server.serve([](zipc::RpcRequest& req) {
///       (void)req.reply(req.data());  // echo
///     }, 1);
///   });
///   auto client = zipc::RpcClient::connect("rpc-doc-example", std::chrono::seconds(1));
///   const char hello[] = "hello";
///   zipc::RpcResponse r = client.call(std::as_bytes(std::span(hello)), std::chrono::seconds(1));
///   bool same = r.ok() && r.size() == sizeof hello && std::memcmp(r.data().data(), hello, sizeof hello) == 0;
///   // Pipelining: several calls in flight, each ticket gets its own answer.
///   zipc::RpcTicket a = client.call_async(std::as_bytes(std::span(hello)));
///   zipc::RpcTicket b = client.call_async(std::as_bytes(std::span(hello)));
///   same = same && a.wait(std::chrono::seconds(1)).ok() && b.wait(std::chrono::seconds(1)).ok();
///   // Zero copy: write the request where the server will read it.
///   zipc::RpcWriteLoan loan = client.reserve(4);
///   if (loan) {
///     std::memcpy(loan.data().data(), "ping", 4);
///     (void)loan.commit(4);  // the length sent
///   }
///   same = same && client.call(std::move(loan), std::chrono::seconds(1)).size() == 4;
///   server.stop();
///   t.join();
///   (void)same;
/// \endcode
///
/// One server process owns a segment of per-client slot rings: each client has
/// `inflight_per_client` slots; a call fills one, the server answers in the
/// same slot, so a response cannot reach another call. Payloads up to
/// `inline_size` travel inside the slot; larger ones live in one block of a
/// shared pool passed by index (no chunking, no extra copy: the loans hand out
/// that memory). docs/design/rpc.md has the algorithm, layout and recovery protocol.
///
/// Failure semantics: a call in flight when the server dies fails with
/// Status::peer_dead within 5 ms (clients check the server that often), never at its
/// timeout. The next call on the same RpcClient reconnects transparently to a
/// server that came back under the same name (waiting up to that call's
/// timeout for it), else fails with peer_dead. A dead client's slots and
/// blocks are recovered by the server within `recovery_time`.
///
/// Errors: a handler that cannot answer ends the call with a code and a
/// message, req.fail(code, "why") or throw zipc::RpcError(code, "why") under
/// serve(); the caller's response then has Status::remote_error and
/// error_code() / error_message(). Any other exception escaping a handler
/// under serve() is sent the same way (code kRpcHandlerFailed, its type name
/// in error_type()). Each call, pipelined or not, gets its own outcome.
///
/// Threads: RpcServer::serve and next() may run on many threads at once. An
/// RpcClient, its tickets and responses belong to one thread at a time; use
/// one RpcClient per thread for parallel calls. Responses and tickets keep
/// their connection mapped; they must not outlive their RpcClient.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/options.hpp"
#include "zipc/segment.hpp"

namespace zipc {

/// A service's limits and the server's settings (stored in the segment at create).
struct RpcOptions {
  std::uint32_t max_clients = 16;              ///< client connections at once
  std::uint32_t inflight_per_client = 8;       ///< pipelined calls per client (slots)
  std::uint64_t max_request_size = 64 << 10;   ///< largest request, bytes
  std::uint64_t max_response_size = 64 << 10;  ///< largest response, bytes
  std::uint64_t inline_size = 4096;            ///< payloads up to this travel inside the slot
  /// Blocks of max(max_request, max_response) bytes shared by all calls whose
  /// payload is over inline_size. 0: two per slot (request and response),
  /// capped to ~256 MiB of blocks (at least 2). The pool is mapped, not
  /// touched: blocks are taken lowest first, so only as many as were ever
  /// in use at once become resident (docs/guide/rpc.md, "Memory").
  std::uint32_t large_blocks = 0;
  /// Permissions (mode), prefault, huge pages, ... (path must stay empty:
  /// clients find a service by name in /dev/shm).
  SegmentOptions segment{};
  WaitOptions wait{};  ///< server threads, and clients by default
  /// The server looks for dead clients this often: a dead client's slots and
  /// blocks are recovered within it.
  std::chrono::milliseconds recovery_time = kDefaultRecoveryTime;
  bool replace_stale = true;  ///< create() replaces a segment whose server died
};

// The codes zipc's own serve loops send when a handler fails without giving
// one (RpcResponse::error_code); an application picks any other values.
/// Error code zipc's serve loops send when a handler threw (C++) or raised (Python) without giving one.
inline constexpr std::uint32_t kRpcHandlerFailed = 1;
/// Error code zipc's serve loops send when a handler's result is no reply (Python: not bytes-like).
inline constexpr std::uint32_t kRpcBadReply = 2;
/// An error's type name is cut to this many bytes (its message to max_response_size).
inline constexpr std::size_t kRpcMaxErrorType = 255;
/// RpcServer::serve's thread count is 1 .. this.
inline constexpr unsigned kRpcMaxServeThreads = 256;

/// Thrown by a handler under RpcServer::serve: the call ends with
/// Status::remote_error carrying code and what().
class RpcError : public std::runtime_error {
 public:
  /// An error with this code (sent as the response's error_code) and message.
  RpcError(std::uint32_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  /// The code the call ends with.
  [[nodiscard]] std::uint32_t code() const noexcept { return code_; }

 private:
  std::uint32_t code_;
};

namespace detail {
struct RpcServerImpl;
struct RpcConnection;
class RpcClientImpl;
struct WaitHookAccess;
}  // namespace detail

/// One request being served. Answer once: reply(), reserve_reply()+commit(),
/// or fail(); a request dropped without an answer gets an empty response.
/// data() stays valid until the answer is published.
class RpcRequest {
 public:
  RpcRequest() = default;
  /// Moves the request; other is left holding nothing.
  RpcRequest(RpcRequest&& other) noexcept;
  /// Ends this request (unanswered: an empty response), then moves other's; other is left holding nothing.
  RpcRequest& operator=(RpcRequest&& other) noexcept;
  RpcRequest(const RpcRequest&) = delete;
  RpcRequest& operator=(const RpcRequest&) = delete;
  ~RpcRequest();

  /// ok when this holds a request; timeout / closed / corrupt from next()
  /// (detached from a server that holds nothing).
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// status() == Status::ok.
  [[nodiscard]] bool ok() const noexcept { return status_ == Status::ok; }
  /// status() == Status::ok.
  explicit operator bool() const noexcept { return ok(); }
  /// The request bytes, in shared memory (a hostile client may change them
  /// while you read: validate what you parse).
  [[nodiscard]] std::span<const std::byte> data() const noexcept { return {data_, size_}; }
  /// Request bytes.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Which client connection sent it (0 .. max_clients-1).
  [[nodiscard]] std::uint32_t client() const noexcept { return client_; }

  /// Copies the response in and publishes it. too_large over max_response_size
  /// (the client then sees too_large); full when no block is free for it.
  [[nodiscard]] Status reply(std::span<const std::byte> response) noexcept;
  /// Zero copy: writable memory for an n-byte response (empty span with
  /// *status set when n is too large or no block is free). Then commit(n').
  [[nodiscard]] std::span<std::byte> reserve_reply(std::size_t n, Status* status = nullptr) noexcept;
  /// Like reserve_reply, but a response larger than the inline area is written
  /// over the request's own block when the request has one (its cache lines
  /// are already here, and no second block is taken). data() is overwritten
  /// as you write: read the request first.
  [[nodiscard]] std::span<std::byte> reserve_reply_in_place(std::size_t n, Status* status = nullptr) noexcept;
  /// Publishes the first n bytes of the reserved reply: too_large when n is
  /// over the reserved size (or nothing was reserved). sequence is 0: a
  /// response is matched to its call by slot, not numbered.
  [[nodiscard]] CommitResult commit(std::size_t n) noexcept;
  /// Ends the call with an error instead of a reply (an open reserve_reply
  /// is dropped): the caller sees Status::remote_error, code, type (may be
  /// empty; cut to kRpcMaxErrorType bytes) and message (cut to what fits:
  /// max_response_size bytes with the type, inline_size when no block is
  /// free). closed when the request was already answered.
  Status fail(std::uint32_t code, std::string_view message, std::string_view type = {}) noexcept;

 private:
  friend struct detail::RpcServerImpl;
  detail::RpcServerImpl* server_ = nullptr;
  Status status_ = Status::closed;
  std::uint32_t client_ = 0;
  std::uint32_t slot_ = 0;  // global slot index
  std::uint64_t call_id_ = 0;
  std::uint32_t req_block_ = 0xffffffffu;
  std::uint32_t resp_block_ = 0xffffffffu;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t loaned_ = 0;
  bool loan_open_ = false;
};

namespace detail {
// Inside a catch block: ends req with the exception in flight as serve() does
// (RpcError: its code; else kRpcHandlerFailed, logged under server's name).
void rpc_fail_current_exception(RpcRequest& req, std::string_view server) noexcept;
}  // namespace detail

/// A request/response service in shared memory (see the file overview): serve() runs a handler on threads, or next()
/// pulls requests. The server owns the name; clients connect to it.
class RpcServer {
 public:
  /// What serve() runs for each request.
  using Handler = std::function<void(RpcRequest&)>;

  /// Creates the service; Errc::already_exists when a live server has the
  /// name (a dead server's segment is replaced when options.replace_stale).
  static RpcServer create(std::string_view name, const RpcOptions& options = {});

  RpcServer();
  /// Moves the service; the source holds nothing.
  RpcServer(RpcServer&&) noexcept;
  /// Closes this service (as close()), then moves the other's; the other holds nothing.
  RpcServer& operator=(RpcServer&&) noexcept;
  ~RpcServer();  ///< closes: pending and later calls see Status::closed; removes the name

  /// Runs handler on `threads` threads (1 .. kRpcMaxServeThreads, else
  /// Errc::invalid_argument) until stop(). Handlers may reply, fail, or
  /// neither (then the response is empty). A handler that throws ends its
  /// call with Status::remote_error: RpcError's code and message, or
  /// kRpcHandlerFailed with another exception's type and what() (logged at warn).
  /// Errc::invalid_argument when the server holds nothing (not created or
  /// moved from), Errc::closed after close().
  void serve(const Handler& handler, unsigned threads = 1);
  /// Pull loop: the next request, or a status (timeout, closed after stop()).
  [[nodiscard]] RpcRequest next(std::chrono::nanoseconds timeout) noexcept;
  /// Makes serve() return and next() report closed. Thread- and signal-safe.
  void stop() noexcept;

  /// The service's name.
  [[nodiscard]] const std::string& name() const noexcept;
  /// Clients connected now.
  [[nodiscard]] std::size_t connected_clients() const noexcept;
  [[nodiscard]] std::uint64_t reaped_clients() const noexcept;  ///< dead clients recovered so far
  /// Marks the service closed and removes its name now (the destructor does the same).
  void close() noexcept;
  /// The segment's descriptor when it lives in a memfd (RpcOptions::segment.memfd:
  /// no name in /dev/shm), else -1. Hand it to a client process with
  /// zipc::send_fd; it connects with RpcClient::connect_fd.
  [[nodiscard]] int fd() const noexcept;

 private:
  friend struct detail::WaitHookAccess;  // the WaitSet's readiness hook (src/waitset/wait_hook.hpp)
  std::unique_ptr<detail::RpcServerImpl> impl_;
};

/// A response, read in place (zero copy). Holds its slot until destroyed.
class RpcResponse {
 public:
  RpcResponse() = default;
  /// Moves the response; other is left holding nothing.
  RpcResponse(RpcResponse&& other) noexcept;
  /// Frees this response's slot, then moves other's; other is left holding nothing.
  RpcResponse& operator=(RpcResponse&& other) noexcept;
  RpcResponse(const RpcResponse&) = delete;
  RpcResponse& operator=(const RpcResponse&) = delete;
  ~RpcResponse();

  /// ok, remote_error (the handler failed: error_code() and error_message()),
  /// timeout, too_large (request or response over its maximum), full (all
  /// slots in use, or no block), peer_dead, closed, detached (a client not
  /// connected, moved from or detached: docs/guide/handles.md), corrupt.
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// status() == Status::ok.
  [[nodiscard]] bool ok() const noexcept { return status_ == Status::ok; }
  /// status() == Status::ok.
  explicit operator bool() const noexcept { return ok(); }
  /// The response bytes (empty unless ok).
  [[nodiscard]] std::span<const std::byte> data() const noexcept {
    return status_ == Status::ok ? std::span<const std::byte>(data_, size_) : std::span<const std::byte>();
  }
  /// Response bytes (0 unless ok).
  [[nodiscard]] std::size_t size() const noexcept { return status_ == Status::ok ? size_ : 0; }
  /// remote_error: the handler's code, its error's type name ("" when it
  /// gave none) and message, read in place like data() (a hostile server may
  /// change them while you read). 0 and "" otherwise.
  [[nodiscard]] std::uint32_t error_code() const noexcept { return status_ == Status::remote_error ? error_code_ : 0; }
  /// remote_error: the handler's error type name ("" when it gave none); "" otherwise.
  [[nodiscard]] std::string_view error_type() const noexcept;
  /// remote_error: the handler's message; "" otherwise.
  [[nodiscard]] std::string_view error_message() const noexcept;
  /// Frees the slot now (the destructor does the same).
  void release() noexcept;

 private:
  friend class detail::RpcClientImpl;
  friend class RpcClient;
  std::shared_ptr<detail::RpcConnection> conn_;
  Status status_ = Status::closed;
  std::uint32_t slot_ = 0;
  const std::byte* data_ = nullptr;  // remote_error: type name then message
  std::size_t size_ = 0;
  std::uint32_t error_code_ = 0;
  std::uint32_t error_type_len_ = 0;
};

/// A call in flight (pipelining). wait() once; dropping it abandons the call.
class RpcTicket {
 public:
  RpcTicket() = default;
  /// Moves the call; other is left holding nothing.
  RpcTicket(RpcTicket&& other) noexcept;
  /// Abandons this ticket's call (if any), then moves other's; other is left holding nothing.
  RpcTicket& operator=(RpcTicket&& other) noexcept;
  RpcTicket(const RpcTicket&) = delete;
  RpcTicket& operator=(const RpcTicket&) = delete;
  ~RpcTicket();

  /// ok once sent; else why nothing was sent (too_large, full, peer_dead, ...).
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// status() == Status::ok.
  [[nodiscard]] bool ok() const noexcept { return status_ == Status::ok; }
  /// Waits for this call's response. On timeout the ticket stays valid: wait again.
  [[nodiscard]] RpcResponse wait(std::chrono::nanoseconds timeout) noexcept;
  /// True when the response has arrived (wait() will not block).
  [[nodiscard]] bool ready() const noexcept;

 private:
  friend class detail::RpcClientImpl;
  detail::RpcClientImpl* client_ = nullptr;
  std::shared_ptr<detail::RpcConnection> conn_;
  Status status_ = Status::closed;
  std::uint32_t slot_ = 0;
  std::uint64_t call_id_ = 0;
};

/// Request memory in the segment (zero copy): fill data(), commit(n) the
/// length to send, then call(std::move(loan), ...) or call_async. A loan
/// passed to call uncommitted is sent whole (as commit(size())). Destroyed
/// (or aborted) unsent, it gives its slot back.
class RpcWriteLoan {
 public:
  RpcWriteLoan() = default;
  /// Moves the loan; other is left holding nothing.
  RpcWriteLoan(RpcWriteLoan&& other) noexcept;
  /// Gives this loan's slot back (if any), then moves other's; other is left holding nothing.
  RpcWriteLoan& operator=(RpcWriteLoan&& other) noexcept;
  RpcWriteLoan(const RpcWriteLoan&) = delete;
  RpcWriteLoan& operator=(const RpcWriteLoan&) = delete;
  ~RpcWriteLoan();

  /// True while the loan holds request memory (not failed, sent or aborted).
  [[nodiscard]] explicit operator bool() const noexcept { return data_ != nullptr; }
  /// Why reserve gave no loan (ok when it did).
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// The request memory (empty once the loan ended).
  [[nodiscard]] std::span<std::byte> data() const noexcept { return {data_, size_}; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }  ///< bytes reserved
  /// Sets the length sent to the first n bytes: too_large (nothing changed)
  /// when n > size(). sequence is 0 (a call is numbered when it is sent).
  [[nodiscard]] CommitResult commit(std::size_t n) noexcept;
  /// Gives the slot back unsent (nothing when the loan holds none).
  void abort() noexcept;

 private:
  friend class detail::RpcClientImpl;
  detail::RpcClientImpl* client_ = nullptr;
  std::shared_ptr<detail::RpcConnection> conn_;
  Status status_ = Status::closed;
  std::uint32_t slot_ = 0;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t length_ = 0;  // bytes to send (commit); size_ when not committed
  bool committed_ = false;
};

/// One connection to an Rpc service: blocking calls, pipelined calls (tickets) and zero-copy requests. It reconnects by
/// itself to a server restarted under the same name. Use it from one thread at a time.
class RpcClient {
 public:
  /// Connects to a server, waiting up to timeout for it to appear and for a
  /// free client record. Throws zipc::Error (not_found, busy, peer_dead, ...).
  static RpcClient connect(std::string_view name, std::chrono::milliseconds timeout = std::chrono::seconds(1));
  /// Connects through a descriptor of the server's segment (RpcServer::fd()
  /// received with zipc::receive_fd; duplicated, the caller keeps fd). There
  /// is no name to find a successor by: once this server is gone, calls fail
  /// with peer_dead or closed for good.
  static RpcClient connect_fd(int fd, std::chrono::milliseconds timeout = std::chrono::seconds(1));

  /// Not connected: every call returns Status::detached (as after detach()).
  RpcClient();
  /// Moves the connection; the source is left detached.
  RpcClient(RpcClient&&) noexcept;
  /// Detaches this client, then moves the other's; the other is left detached.
  RpcClient& operator=(RpcClient&&) noexcept;
  ~RpcClient();

  /// Blocking call: sends request, waits up to timeout for the response.
  [[nodiscard]] RpcResponse call(std::span<const std::byte> request, std::chrono::nanoseconds timeout) noexcept;
  /// Sends a request loan (from reserve(); committed or sent whole) and waits up to timeout for the response.
  [[nodiscard]] RpcResponse call(RpcWriteLoan&& loan, std::chrono::nanoseconds timeout) noexcept;
  /// Sends without waiting; full when inflight_per_client calls are outstanding.
  [[nodiscard]] RpcTicket call_async(std::span<const std::byte> request) noexcept;
  /// Sends a request loan without waiting; full when inflight_per_client calls are outstanding.
  [[nodiscard]] RpcTicket call_async(RpcWriteLoan&& loan) noexcept;
  /// Memory for an n-byte request (too_large over max_request_size, full
  /// when every slot is in use).
  [[nodiscard]] RpcWriteLoan reserve(std::size_t n) noexcept;

  /// How this client waits (default: the server's strategy).
  void set_wait(const WaitOptions& wait) noexcept;
  /// The service's largest request, bytes.
  [[nodiscard]] std::uint64_t max_request_size() const noexcept;
  /// The service's largest response, bytes.
  [[nodiscard]] std::uint64_t max_response_size() const noexcept;
  /// Calls this client may have in flight at once.
  [[nodiscard]] std::uint32_t inflight_limit() const noexcept;
  /// Connections made after the first (transparent reconnects to a new server).
  [[nodiscard]] std::uint64_t reconnects() const noexcept;
  /// Gives the client record back now (the destructor does the same); later
  /// calls return Status::detached. Responses and tickets still held keep
  /// their connection until they end.
  void detach() noexcept;
  /// False when detached, moved from or default-constructed.
  [[nodiscard]] bool is_attached() const noexcept;

 private:
  friend struct detail::WaitHookAccess;  // the WaitSet's readiness hook (src/waitset/wait_hook.hpp)
  std::unique_ptr<detail::RpcClientImpl> impl_;
};

}  // namespace zipc
