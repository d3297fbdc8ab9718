// RpcClient's public calls and the handles it returns (RpcResponse, RpcTicket,
// RpcWriteLoan): glue over RpcClientImpl (rpc_client.cpp).
#include <cstring>
#include <new>
#include <thread>
#include <utility>

#include "core/fail.hpp"
#include "core/recovery_wait.hpp"
#include "layout/rpc_layout.hpp"
#include "platform/clock.hpp"
#include "rpc/rpc_client_impl.hpp"
#include "sync/use_check.hpp"
#include "zipc/process.hpp"
#include "zipc/rpc.hpp"

namespace zipc {

// ---- RpcClient ----

RpcClient RpcClient::connect(std::string_view name, std::chrono::milliseconds timeout) {
  RpcClient c;
  c.impl_->name = std::string(name);
  c.impl_->conn = detail::RpcClientImpl::open(name, Deadline::after(timeout));
  c.impl_->attached = true;
  c.impl_->wait_options.strategy = static_cast<WaitStrategy>(c.impl_->conn->view.geometry().wait);
  c.impl_->next_check_ns = platform::monotonic_ns() + c.impl_->liveness_ns;
  return c;
}

RpcClient RpcClient::connect_fd(int fd, std::chrono::milliseconds timeout) {
  if (fd < 0) fail(Errc::invalid_argument, "rpc", "fd " + std::to_string(fd), "not a descriptor");
  RpcClient c;
  c.impl_->name = "fd " + std::to_string(fd);
  c.impl_->by_fd = true;
  c.impl_->conn = detail::RpcClientImpl::open(c.impl_->name, Deadline::after(timeout), fd);  // maps its own duplicate
  c.impl_->attached = true;
  c.impl_->wait_options.strategy = static_cast<WaitStrategy>(c.impl_->conn->view.geometry().wait);
  c.impl_->next_check_ns = platform::monotonic_ns() + c.impl_->liveness_ns;
  return c;
}

RpcClient::RpcClient() : impl_(std::make_unique<detail::RpcClientImpl>()) {}
RpcClient::RpcClient(RpcClient&&) noexcept = default;
RpcClient& RpcClient::operator=(RpcClient&&) noexcept = default;
RpcClient::~RpcClient() = default;

RpcResponse RpcClient::call(std::span<const std::byte> request, std::chrono::nanoseconds timeout) noexcept {
  if (!impl_ || !impl_->attached) return detail::RpcClientImpl::failed_response(Status::detached);
  ZIPC_USE_CHECK(impl_->use, detail::RpcClientImpl::failed_response(Status::busy));
  const Deadline deadline = Deadline::after(timeout);
  RpcWriteLoan l = impl_->reserve(request.size());
  while (l.status() == Status::full && !deadline.expired()) {
    std::this_thread::yield();
    l = impl_->reserve(request.size());
  }
  if (!l) {
    RpcResponse r;
    r.status_ = l.status();
    return r;
  }
  if (!request.empty()) std::memcpy(l.data().data(), request.data(), request.size());
  RpcTicket t = impl_->send(std::move(l));
  return impl_->wait(t, deadline);
}

RpcResponse RpcClient::call(RpcWriteLoan&& loan, std::chrono::nanoseconds timeout) noexcept {
  if (!impl_ || !impl_->attached) {
    loan.abort();
    return detail::RpcClientImpl::failed_response(Status::detached);
  }
  ZIPC_USE_CHECK(impl_->use, detail::RpcClientImpl::failed_response(Status::busy));  // (the loan stays with the caller)
  const Deadline deadline = Deadline::after(timeout);
  RpcTicket t = impl_->send(std::move(loan));
  return impl_->wait(t, deadline);
}

RpcTicket RpcClient::call_async(std::span<const std::byte> request) noexcept {
  if (!impl_ || !impl_->attached) return detail::RpcClientImpl::failed_ticket(Status::detached);
  ZIPC_USE_CHECK(impl_->use, detail::RpcClientImpl::failed_ticket(Status::busy));
  RpcWriteLoan l = impl_->reserve(request.size());
  if (l && !request.empty()) std::memcpy(l.data().data(), request.data(), request.size());
  return impl_->send(std::move(l));
}

RpcTicket RpcClient::call_async(RpcWriteLoan&& loan) noexcept {
  if (!impl_ || !impl_->attached) {
    loan.abort();
    return detail::RpcClientImpl::failed_ticket(Status::detached);
  }
  ZIPC_USE_CHECK(impl_->use, detail::RpcClientImpl::failed_ticket(Status::busy));  // (the loan stays with the caller)
  return impl_->send(std::move(loan));
}

RpcWriteLoan RpcClient::reserve(std::size_t n) noexcept {
  if (!impl_ || !impl_->attached) return detail::RpcClientImpl::failed_loan(Status::detached);
  ZIPC_USE_CHECK(impl_->use, detail::RpcClientImpl::failed_loan(Status::busy));
  return impl_->reserve(n);
}

void RpcClient::set_wait(const WaitOptions& wait) noexcept {
  if (impl_) impl_->wait_options = wait;
}

std::uint64_t RpcClient::max_request_size() const noexcept {
  return impl_ && impl_->conn ? impl_->conn->view.geometry().max_request : 0;
}
std::uint64_t RpcClient::max_response_size() const noexcept {
  return impl_ && impl_->conn ? impl_->conn->view.geometry().max_response : 0;
}
std::uint32_t RpcClient::inflight_limit() const noexcept {
  return impl_ && impl_->conn ? static_cast<std::uint32_t>(impl_->conn->view.geometry().slots_per_client) : 0;
}
std::uint64_t RpcClient::reconnects() const noexcept {
  return impl_ ? impl_->reconnects : 0;
}

void RpcClient::detach() noexcept {
  if (!impl_) return;
  impl_->attached = false;
  impl_->conn.reset();  // the record goes back once no response or ticket holds the connection
}

bool RpcClient::is_attached() const noexcept {
  return impl_ && impl_->attached;
}

// ---- RpcResponse, RpcTicket, RpcWriteLoan ----

RpcResponse::RpcResponse(RpcResponse&& o) noexcept
    : conn_(std::move(o.conn_)),
      status_(std::exchange(o.status_, Status::closed)),
      slot_(o.slot_),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      error_code_(std::exchange(o.error_code_, 0)),
      error_type_len_(std::exchange(o.error_type_len_, 0)) {}

RpcResponse& RpcResponse::operator=(RpcResponse&& o) noexcept {
  if (this != &o) {
    release();
    new (this) RpcResponse(std::move(o));
  }
  return *this;
}

RpcResponse::~RpcResponse() {
  release();
}

void RpcResponse::release() noexcept {
  if (conn_) conn_->release(slot_);
  conn_.reset();
  data_ = nullptr;
  size_ = 0;
  error_type_len_ = 0;
}

std::string_view RpcResponse::error_type() const noexcept {
  if (status_ != Status::remote_error || data_ == nullptr) return {};
  return {reinterpret_cast<const char*>(data_), error_type_len_};  // error_type_len_ <= size_ (checked in wait)
}

std::string_view RpcResponse::error_message() const noexcept {
  if (status_ != Status::remote_error || data_ == nullptr) return {};
  return {reinterpret_cast<const char*>(data_) + error_type_len_, size_ - error_type_len_};
}

RpcTicket::RpcTicket(RpcTicket&& o) noexcept
    : client_(o.client_),
      conn_(std::move(o.conn_)),
      status_(std::exchange(o.status_, Status::closed)),
      slot_(o.slot_),
      call_id_(o.call_id_) {}

RpcTicket& RpcTicket::operator=(RpcTicket&& o) noexcept {
  if (this != &o) {
    this->~RpcTicket();
    new (this) RpcTicket(std::move(o));
  }
  return *this;
}

RpcTicket::~RpcTicket() {
  if (client_ != nullptr) client_->abandon(*this);
}

RpcResponse RpcTicket::wait(std::chrono::nanoseconds timeout) noexcept {
  if (client_ == nullptr) {  // never sent (or already waited on): closed, or detached from an empty client
    return status_ == Status::detached ? detail::RpcClientImpl::failed_response(Status::detached) : RpcResponse();
  }
  return client_->wait(*this, Deadline::after(timeout));
}

bool RpcTicket::ready() const noexcept {
  return client_ != nullptr && client_->ready(*this);
}

RpcWriteLoan::RpcWriteLoan(RpcWriteLoan&& o) noexcept
    : client_(o.client_),
      conn_(std::move(o.conn_)),
      status_(std::exchange(o.status_, Status::closed)),
      slot_(o.slot_),
      data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      length_(o.length_),
      committed_(std::exchange(o.committed_, false)) {}

RpcWriteLoan& RpcWriteLoan::operator=(RpcWriteLoan&& o) noexcept {
  if (this != &o) {
    this->~RpcWriteLoan();
    new (this) RpcWriteLoan(std::move(o));
  }
  return *this;
}

RpcWriteLoan::~RpcWriteLoan() {
  abort();
}

CommitResult RpcWriteLoan::commit(std::size_t n) noexcept {
  if (data_ == nullptr) return {status_ == Status::ok ? Status::closed : status_, 0};
  if (n > size_) return {Status::too_large, 0};
  length_ = n;
  committed_ = true;
  return {Status::ok, 0};
}

void RpcWriteLoan::abort() noexcept {
  if (!conn_ || data_ == nullptr) return;
  detail::RpcConnection& c = *conn_;
  if (c.req_block[slot_] != layout::kNoBlock) c.view.release_block(c.req_block[slot_], c.client);
  c.req_block[slot_] = layout::kNoBlock;
  c.local[slot_] = detail::LocalSlot::free;
  data_ = nullptr;
  conn_.reset();
  status_ = Status::closed;
}

}  // namespace zipc
