/// \file
/// zipc/typed_rpc.hpp - Rpc whose requests are Reqs and responses Resps (or slices).
///
/// Part of zipc/typed.hpp (include that; the example is there). The segment
/// records one identity for the pair: the name "Req -> Resp", Req's size and
/// alignment, and a fingerprint over both types' fingerprints.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "zipc/rpc.hpp"
#include "zipc/typed_loan.hpp"

namespace zipc {

/// The identity a typed Rpc service records: named after both types ("Req (n B) -> Resp (m B)"), with Req's size,
/// alignment, field count and version, and a fingerprint of both types' fingerprints.
template <class Req, class Resp>
TypeIdentity rpc_type_identity() {
  const TypeIdentity q = type_identity_of<Req>();
  const TypeIdentity r = type_identity_of<Resp>();
  TypeIdentity t;
  t.name = q.name + " (" + std::to_string(q.size) + " B) -> " + r.name + " (" + std::to_string(r.size) + " B)";
  if (t.name.size() > kMaxTypeName) t.name.resize(kMaxTypeName);
  t.size = q.size;
  t.align = q.align;
  t.field_count = q.field_count;
  t.version = q.version;
  t.fingerprint = detail::fnv1a(detail::fnv1a(0xcbf29ce484222325ull, q.fingerprint), r.fingerprint);
  return t;
}

/// One request seen by a typed server: span() of Reqs (get() when exactly one).
/// Answer once: reply(), reply_slice(), reserve_reply() then commit(), or fail().
template <class Req, class Resp>
class TypedRpcRequest {
 public:
  TypedRpcRequest() = default;
  /// Views r's request as Reqs: a size that is no whole number of Reqs, or misaligned memory, gives corrupt (the call
  /// is then answered empty when the request is dropped).
  explicit TypedRpcRequest(RpcRequest r) noexcept : req_(std::move(r)), status_(req_.status()) {
    if (status_ != Status::ok) return;
    const std::span<const std::byte> b = req_.data();
    if (b.size() % sizeof(Req) != 0 || !detail::aligned_for(b.data(), alignof(Req))) {
      status_ = Status::corrupt;  // answered with an empty response when dropped
      return;
    }
    data_ = std::launder(reinterpret_cast<const Req*>(b.data()));
    count_ = b.size() / sizeof(Req);
  }

  /// True when the request is exposed (status() is ok).
  [[nodiscard]] explicit operator bool() const noexcept { return status_ == Status::ok; }
  /// ok, or why no request is exposed (timeout, closed, corrupt, ...).
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// Reqs in the request.
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  /// The Reqs.
  [[nodiscard]] std::span<const Req> span() const noexcept { return {data_, count_}; }
  /// The request when it is exactly one Req, else nullptr.
  [[nodiscard]] const Req* get() const noexcept { return count_ == 1 ? data_ : nullptr; }

  /// Answers with one Resp (as RpcRequest::reply).
  [[nodiscard]] Status reply(const Resp& v) noexcept { return req_.reply(std::as_bytes(std::span(&v, 1))); }
  /// Answers with the Resps of v.
  [[nodiscard]] Status reply_slice(std::span<const Resp> v) noexcept { return req_.reply(std::as_bytes(v)); }
  /// Zero copy: n value-initialised Resps in the response memory (empty span on failure, *status says why).
  [[nodiscard]] std::span<Resp> reserve_reply(std::size_t n = 1, Status* status = nullptr) noexcept {
    Status s = Status::ok;
    std::span<std::byte> b = req_.reserve_reply(n * sizeof(Resp), &s);
    if (s == Status::ok && (b.size() < n * sizeof(Resp) || !detail::aligned_for(b.data(), alignof(Resp)))) {
      s = Status::corrupt;
    }
    if (status != nullptr) *status = s;
    if (s != Status::ok) return {};
    Resp* p = reinterpret_cast<Resp*>(b.data());
    std::uninitialized_value_construct_n(p, n);
    return {std::launder(p), n};
  }
  /// Publishes the first n Resps of the loan.
  [[nodiscard]] Status commit(std::size_t n = 1) noexcept { return req_.commit(n * sizeof(Resp)).status; }
  /// Ends the call with an error (RpcRequest::fail): the caller's response has Status::remote_error.
  Status fail(std::uint32_t code, std::string_view message, std::string_view type = {}) noexcept {
    return req_.fail(code, message, type);
  }
  /// The byte request under it.
  [[nodiscard]] RpcRequest& raw() noexcept { return req_; }

 private:
  RpcRequest req_;
  const Req* data_ = nullptr;
  std::size_t count_ = 0;
  Status status_ = Status::closed;
};

template <class Req, class Resp>
/// An RpcServer whose requests are Reqs and responses Resps (see zipc/typed.hpp); the pair's identity is recorded at
/// create and checked by TypedRpcClient::connect.
class TypedRpcServer {
  static_assert(detail::check_message_type<Req>(), "Req must be a message type (the rule that failed is named above)");
  static_assert(detail::check_message_type<Resp>(),
                "Resp must be a message type (the rule that failed is named above)");

 public:
  /// One request as the handler sees it.
  using Request = TypedRpcRequest<Req, Resp>;
  /// What serve() runs for each request.
  using Handler = std::function<void(Request&)>;

  /// As RpcServer::create; the maximum sizes are raised to one Req / one Resp
  /// when smaller. Records the pair's identity.
  static TypedRpcServer create(std::string_view name, RpcOptions options = {}) {
    if (options.max_request_size < sizeof(Req)) options.max_request_size = sizeof(Req);
    if (options.max_response_size < sizeof(Resp)) options.max_response_size = sizeof(Resp);
    options.segment.type = rpc_type_identity<Req, Resp>();
    return TypedRpcServer(RpcServer::create(name, options));
  }
  TypedRpcServer() = default;

  /// As RpcServer::serve: a handler that throws ends its call with Status::remote_error.
  void serve(const Handler& handler, unsigned threads = 1) {
    const std::string& name = server_.name();
    server_.serve(
        [&handler, &name](RpcRequest& r) {
          Request typed(std::move(r));
          if (!typed) return;  // a malformed request is answered empty
          try {
            handler(typed);
          } catch (...) {
            detail::rpc_fail_current_exception(typed.raw(), name);
          }
        },
        threads);
  }
  /// Pull form: the next request, waiting up to timeout (as RpcServer::next).
  [[nodiscard]] Request next(std::chrono::nanoseconds timeout) noexcept { return Request(server_.next(timeout)); }
  /// As RpcServer::stop.
  void stop() noexcept { server_.stop(); }
  /// As RpcServer::close.
  void close() noexcept { server_.close(); }
  /// The byte API under it.
  [[nodiscard]] RpcServer& bytes() noexcept { return server_; }

 private:
  explicit TypedRpcServer(RpcServer s) noexcept : server_(std::move(s)) {}
  RpcServer server_;
};

/// Request memory of a typed client: n value-initialised Reqs; call() sends it.
template <class Req>
class TypedRpcLoan {
 public:
  TypedRpcLoan() = default;
  /// Value-initialises n Reqs in l's memory (corrupt when they do not fit or it is misaligned).
  TypedRpcLoan(RpcWriteLoan&& l, std::size_t n) noexcept : loan_(std::move(l)), status_(loan_.status()) {
    if (!loan_) return;
    const std::span<std::byte> b = loan_.data();
    if (b.size() < n * sizeof(Req) || !detail::aligned_for(b.data(), alignof(Req))) {
      status_ = Status::corrupt;
      return;
    }
    Req* p = reinterpret_cast<Req*>(b.data());
    std::uninitialized_value_construct_n(p, n);
    data_ = std::launder(p);
    count_ = n;
  }
  /// True while the loan holds Reqs.
  [[nodiscard]] explicit operator bool() const noexcept { return data_ != nullptr; }
  /// Why the loan failed (ok when it did not).
  [[nodiscard]] Status status() const noexcept { return status_; }
  /// Reqs loaned.
  [[nodiscard]] std::size_t count() const noexcept { return count_; }
  /// The Reqs.
  [[nodiscard]] std::span<Req> span() const noexcept { return {data_, count_}; }
  /// Req 0's members.
  Req* operator->() const noexcept { return data_; }
  /// Req 0.
  Req& operator*() const noexcept { return *data_; }
  /// Sends only the first n Reqs (call() sends all count() otherwise).
  [[nodiscard]] CommitResult commit(std::size_t n) noexcept {
    if (n < count_) count_ = n;
    return loan_.commit(count_ * sizeof(Req));
  }
  /// The byte loan under it.
  [[nodiscard]] RpcWriteLoan& raw() noexcept { return loan_; }

 private:
  RpcWriteLoan loan_;
  Req* data_ = nullptr;
  std::size_t count_ = 0;
  Status status_ = Status::closed;
};

template <class Req, class Resp>
/// An RpcClient whose requests are Reqs and responses Resps (see zipc/typed.hpp); connect checks the server's recorded
/// pair of types.
class TypedRpcClient {
  static_assert(detail::check_message_type<Req>(), "Req must be a message type (the rule that failed is named above)");
  static_assert(detail::check_message_type<Resp>(),
                "Resp must be a message type (the rule that failed is named above)");

 public:
  /// A response in place: one Resp (call) or a slice (call_slice); raw() is the RpcResponse.
  using Response = TypedRead<Resp, RpcResponse>;
  /// Request memory of Reqs.
  using Loan = TypedRpcLoan<Req>;

  /// Connects as RpcClient::connect, then checks the server's recorded pair of
  /// types (Errc::type_mismatch). After a transparent reconnect (the server
  /// came back under the same name) the types are checked again: a server of
  /// other types makes that call, and every later one, return Status::corrupt.
  static TypedRpcClient connect(std::string_view name, std::chrono::milliseconds timeout = std::chrono::seconds(1)) {
    RpcClient c = RpcClient::connect(name, timeout);
    check(name);  // throws type_mismatch
    TypedRpcClient t(std::move(c));
    t.name_ = std::string(name);
    t.checked_reconnects_ = t.client_.reconnects();
    return t;
  }
  TypedRpcClient() = default;

  /// Sends one Req and waits up to timeout for exactly one Resp (corrupt when the response is not one Resp).
  [[nodiscard]] Response call(const Req& v, std::chrono::nanoseconds timeout) noexcept {
    return wrap(client_.call(std::as_bytes(std::span(&v, 1)), timeout), true);
  }
  /// Sends the Reqs of v and waits up to timeout for any number of Resps.
  [[nodiscard]] Response call_slice(std::span<const Req> v, std::chrono::nanoseconds timeout) noexcept {
    return wrap(client_.call(std::as_bytes(v), timeout), false);
  }
  /// Zero copy: n value-initialised Reqs of request memory (too_large over max_request_size).
  [[nodiscard]] Loan reserve(std::size_t n = 1) noexcept { return Loan(client_.reserve(n * sizeof(Req)), n); }
  /// Sends a loan; single: expect exactly one Resp back.
  [[nodiscard]] Response call(Loan&& l, std::chrono::nanoseconds timeout, bool single = true) noexcept {
    if (!l) return Response(l.status());
    return wrap(client_.call(std::move(l.raw()), timeout), single);
  }
  /// The byte API under it.
  [[nodiscard]] RpcClient& bytes() noexcept { return client_; }

 private:
  explicit TypedRpcClient(RpcClient c) noexcept : client_(std::move(c)) {}
  static void check(std::string_view name) {
    SegmentOptions so;
    so.type = rpc_type_identity<Req, Resp>();
    (void)Segment::open(name, SegmentKind::rpc, so);
  }
  // False when a reconnect reached a server of other types (or none could be checked).
  bool same_server_types() noexcept {
    const std::uint64_t now = client_.reconnects();
    if (now == checked_reconnects_) return true;
    try {
      check(name_);
      checked_reconnects_ = now;
      return true;
    } catch (...) {
      return false;
    }
  }
  Response wrap(RpcResponse r, bool single) noexcept {
    if (!same_server_types()) return Response(Status::corrupt);
    const Status s = r.status();
    const std::span<const std::byte> b = r.data();
    return Response(std::move(r), b, s, single);
  }
  RpcClient client_;
  std::string name_;
  std::uint64_t checked_reconnects_ = 0;
};

}  // namespace zipc
