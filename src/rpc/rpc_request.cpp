// RpcRequest: a claimed slot on the server side and its reply.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <thread>
#include <typeinfo>
#include <utility>

#include "layout/rpc_layout.hpp"
#include "rpc/rpc_server_impl.hpp"
#include "zipc/log.hpp"
#include "zipc/rpc.hpp"

namespace zipc {
namespace {
constexpr int kBlockRetries = 20000;  // yields, ~tens of ms
}  // namespace

RpcRequest::RpcRequest(RpcRequest&& o) noexcept
    : server_(std::exchange(o.server_, nullptr)),
      status_(o.status_),
      client_(o.client_),
      slot_(o.slot_),
      call_id_(o.call_id_),
      req_block_(std::exchange(o.req_block_, layout::kNoBlock)),
      resp_block_(std::exchange(o.resp_block_, layout::kNoBlock)),
      data_(o.data_),
      size_(o.size_),
      loaned_(o.loaned_),
      loan_open_(std::exchange(o.loan_open_, false)) {}

RpcRequest& RpcRequest::operator=(RpcRequest&& o) noexcept {
  if (this != &o) {
    this->~RpcRequest();
    new (this) RpcRequest(std::move(o));
  }
  return *this;
}

RpcRequest::~RpcRequest() {
  if (server_ == nullptr) return;
  // Never answered: the caller gets an empty response rather than a stuck slot.
  if (resp_block_ != layout::kNoBlock) server_->view.release_block(resp_block_, client_);
  resp_block_ = layout::kNoBlock;
  server_->publish(*this, layout::kResultOk, 0, layout::kNoBlock);
  server_ = nullptr;
}

std::span<std::byte> RpcRequest::reserve_reply(std::size_t n, Status* status) noexcept {
  auto set = [status](Status s) {
    if (status != nullptr) *status = s;
  };
  if (server_ == nullptr) {
    set(Status::closed);
    return {};
  }
  const layout::RpcGeometry& g = server_->view.geometry();
  if (n > g.max_response) {
    set(Status::too_large);
    return {};
  }
  if (resp_block_ != layout::kNoBlock) {  // a second loan replaces the first
    server_->view.release_block(resp_block_, client_);
    resp_block_ = layout::kNoBlock;
  }
  std::byte* dst = nullptr;
  if (n <= g.resp_inline) {
    dst = server_->view.response_inline(slot_);
  } else {
    std::uint32_t b = server_->pool.acquire(client_, /*grow=*/true);
    // Blocks come back as clients read their responses: wait a little for one.
    for (int i = 0; b == layout::kNoBlock && i < kBlockRetries; ++i) {
      std::this_thread::yield();
      b = server_->pool.acquire(client_, /*grow=*/false);
    }
    if (b == layout::kNoBlock) {
      set(Status::full);
      return {};
    }
    resp_block_ = b;
    dst = server_->view.block(b);
  }
  loaned_ = n;
  loan_open_ = true;
  set(Status::ok);
  return {dst, n};
}

std::span<std::byte> RpcRequest::reserve_reply_in_place(std::size_t n, Status* status) noexcept {
  if (server_ != nullptr && req_block_ != layout::kNoBlock && resp_block_ == layout::kNoBlock &&
      n > server_->view.geometry().resp_inline && n <= server_->view.geometry().max_response) {
    resp_block_ = std::exchange(req_block_, layout::kNoBlock);
    loaned_ = n;
    loan_open_ = true;
    if (status != nullptr) *status = Status::ok;
    return {server_->view.block(resp_block_), n};
  }
  return reserve_reply(n, status);
}

CommitResult RpcRequest::commit(std::size_t n) noexcept {
  if (server_ == nullptr) return {Status::closed, 0};
  if (!loan_open_ || n > loaned_) return {Status::too_large, 0};
  std::uint32_t block = resp_block_;
  if (n <= server_->view.geometry().resp_inline && block != layout::kNoBlock) {
    // Shrunk to inline size: the data is in the block, the client expects it
    // inline. Move it and give the block back.
    std::memcpy(server_->view.response_inline(slot_), server_->view.block(block), n);
    server_->view.release_block(block, client_);
    block = layout::kNoBlock;
  }
  resp_block_ = layout::kNoBlock;
  loan_open_ = false;
  server_->publish(*this, layout::kResultOk, n, block);
  server_ = nullptr;
  return {Status::ok, 0};
}

Status RpcRequest::reply(std::span<const std::byte> response) noexcept {
  if (server_ == nullptr) return Status::closed;
  if (response.size() > server_->view.geometry().max_response) {
    if (resp_block_ != layout::kNoBlock) server_->view.release_block(resp_block_, client_);
    resp_block_ = layout::kNoBlock;
    server_->publish(*this, layout::kResultTooLarge, 0, layout::kNoBlock);
    server_ = nullptr;
    return Status::too_large;
  }
  const layout::RpcGeometry& g = server_->view.geometry();
  if (response.size() > g.resp_inline && req_block_ != layout::kNoBlock && resp_block_ == layout::kNoBlock) {
    // The request's block becomes the response's: memmove copes with a
    // response that is (part of) the request itself.
    std::byte* dst = server_->view.block(req_block_);
    // An echo (reply(req.data())) is already in place: no copy at all.
    if (!response.empty() && response.data() != dst) std::memmove(dst, response.data(), response.size());
    resp_block_ = std::exchange(req_block_, layout::kNoBlock);
    loaned_ = response.size();
    loan_open_ = true;
    return commit(response.size()).status;
  }
  Status st = Status::ok;
  std::span<std::byte> dst = reserve_reply(response.size(), &st);
  if (st != Status::ok) {
    server_->publish(*this, layout::kResultNoMemory, 0, layout::kNoBlock);
    server_ = nullptr;
    return st;
  }
  // memmove: a handler may echo a view that overlaps (never in our layout,
  // but cheap insurance).
  if (!response.empty()) std::memmove(dst.data(), response.data(), response.size());
  return commit(response.size()).status;
}

Status RpcRequest::fail(std::uint32_t code, std::string_view message, std::string_view type) noexcept {
  if (server_ == nullptr) return Status::closed;
  const layout::RpcGeometry& g = server_->view.geometry();
  if (resp_block_ != layout::kNoBlock) server_->view.release_block(resp_block_, client_);
  resp_block_ = layout::kNoBlock;
  loan_open_ = false;
  if (type.size() > kRpcMaxErrorType) type = type.substr(0, kRpcMaxErrorType);
  std::uint64_t len = std::min<std::uint64_t>(type.size() + message.size(), g.max_response);
  std::uint32_t block = layout::kNoBlock;
  if (len > g.resp_inline) {
    block = server_->pool.acquire(client_, /*grow=*/true);  // no waiting: the text is cut to inline instead
    if (block == layout::kNoBlock) len = g.resp_inline;
  }
  std::byte* dst = block != layout::kNoBlock ? server_->view.block(block) : server_->view.response_inline(slot_);
  const std::uint64_t type_len = std::min<std::uint64_t>(type.size(), len);
  // memmove: a handler may pass views of the request itself.
  if (type_len != 0) std::memmove(dst, type.data(), type_len);
  if (len > type_len) std::memmove(dst + type_len, message.data(), len - type_len);
  layout::RpcSlot* s = server_->view.slot(slot_);
  // relaxed (both): published by publish()'s release store of state.
  s->error_code.store(code, std::memory_order_relaxed);
  s->error_type_len.store(static_cast<std::uint32_t>(type_len), std::memory_order_relaxed);
  server_->publish(*this, layout::kResultError, len, block);
  server_ = nullptr;
  return Status::ok;
}

namespace detail {
namespace {

std::string demangled(const std::type_info& t) {
  int rc = 0;
  char* d = abi::__cxa_demangle(t.name(), nullptr, nullptr, &rc);
  std::string out = rc == 0 && d != nullptr ? d : t.name();
  std::free(d);  // NOLINT(cppcoreguidelines-no-malloc): __cxa_demangle's buffer is malloc'ed
  return out;
}

}  // namespace

void rpc_fail_current_exception(RpcRequest& req, std::string_view server) noexcept {
  try {
    try {
      throw;
    } catch (const RpcError& e) {
      (void)req.fail(e.code(), e.what());
    } catch (const std::exception& e) {
      const std::string type = demangled(typeid(e));
      log_message(LogLevel::warn, server, "handler threw " + type + ": " + e.what());
      (void)req.fail(kRpcHandlerFailed, e.what(), type);
    } catch (...) {
      log_message(LogLevel::warn, server, "handler threw an exception that is no std::exception");
      (void)req.fail(kRpcHandlerFailed, "an exception that is no std::exception", "unknown");
    }
  } catch (...) {
    // (std::bad_alloc building the log text): the call still ends in an error.
    (void)req.fail(kRpcHandlerFailed, "handler failed");
  }
}

}  // namespace detail
}  // namespace zipc
