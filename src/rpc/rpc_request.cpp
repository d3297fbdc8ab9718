// RpcRequest: a claimed slot on the server side and its reply.
#include <cstring>
#include <new>
#include <thread>
#include <utility>

#include "layout/rpc_layout.hpp"
#include "rpc/rpc_server_impl.hpp"
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
    std::uint32_t b = server_->view.acquire_block(client_);
    // Blocks come back as clients read their responses: wait a little for one.
    for (int i = 0; b == layout::kNoBlock && i < kBlockRetries; ++i) {
      std::this_thread::yield();
      b = server_->view.acquire_block(client_);
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

}  // namespace zipc
