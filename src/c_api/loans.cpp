// c_api/loans.cpp - commit, abort and release of the loans every channel
// hands out through zipc_write_loan_t / zipc_read_loan_t.
#include "c_api/c_api.hpp"
#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/topic.hpp"

using namespace zipc::c_api;

namespace {

zipc_status_t commit_queue(zipc_write_loan_t* loan, size_t n, uint64_t* sequence) noexcept {
  const zipc::CommitResult r = slot<zipc::QueueWriteLoan>(loan->private_)->commit(n);
  if (r.status == zipc::Status::too_large) return ZIPC_TOO_LARGE;  // the loan is kept
  destroy<zipc::QueueWriteLoan>(loan->private_);
  clear(loan);
  if (r.ok() && sequence != nullptr) *sequence = r.sequence;
  return from(r.status);
}

zipc_status_t commit_topic(zipc_write_loan_t* loan, size_t n, uint64_t* sequence) noexcept {
  if (n > loan->size) return ZIPC_TOO_LARGE;  // the loan is kept
  const zipc_status_t st = end_topic_write_loan(*slot<zipc_publisher*>(loan->private_), &n, sequence);
  if (st == ZIPC_TOO_LARGE) return st;  // the loan is kept
  clear(loan);
  return st;
}

zipc_status_t commit_rpc_request(zipc_write_loan_t* loan, size_t n) noexcept {
  // Sets the length sent by call_loan / call_async_loan; too_large changes nothing.
  const zipc::CommitResult r = slot<zipc::RpcWriteLoan>(loan->private_)->commit(n);
  if (r.ok()) loan->size = n;
  return from(r.status);
}

zipc_status_t commit_rpc_reply(zipc_write_loan_t* loan, size_t n) noexcept {
  zipc::RpcRequest* request = *slot<zipc::RpcRequest*>(loan->private_);
  const zipc::CommitResult r = request->commit(n);
  if (r.status == zipc::Status::too_large) return ZIPC_TOO_LARGE;  // the loan is kept
  loan->private_[0] = static_cast<std::uint64_t>(LoanKind::none);
  clear(loan);
  return from(r.status);
}

}  // namespace

extern "C" {

zipc_status_t zipc_write_loan_commit(zipc_write_loan_t* loan, size_t n, uint64_t* sequence) {
  if (loan == nullptr) return invalid("zipc_write_loan_commit", "loan is NULL");
  switch (kind_of(loan->private_)) {
    case LoanKind::queue_write: return commit_queue(loan, n, sequence);
    case LoanKind::topic_write: return commit_topic(loan, n, sequence);
    case LoanKind::rpc_request_loan: return commit_rpc_request(loan, n);
    case LoanKind::rpc_reply: return commit_rpc_reply(loan, n);
    default: return invalid("zipc_write_loan_commit", "the loan is not live (never reserved, or already ended)");
  }
}

zipc_status_t zipc_write_loan_abort(zipc_write_loan_t* loan) {
  if (loan == nullptr) return invalid("zipc_write_loan_abort", "loan is NULL");
  switch (kind_of(loan->private_)) {
    case LoanKind::queue_write:
      slot<zipc::QueueWriteLoan>(loan->private_)->abort();
      destroy<zipc::QueueWriteLoan>(loan->private_);
      break;
    case LoanKind::topic_write:
      (void)end_topic_write_loan(*slot<zipc_publisher*>(loan->private_), nullptr, nullptr);
      break;
    case LoanKind::rpc_request_loan: destroy<zipc::RpcWriteLoan>(loan->private_); break;
    case LoanKind::rpc_reply: break;  // nothing sent: releasing the request answers empty
    default: return invalid("zipc_write_loan_abort", "the loan is not live (never reserved, or already ended)");
  }
  clear(loan);
  return ZIPC_OK;
}

zipc_status_t zipc_read_loan_release(zipc_read_loan_t* loan) {
  if (loan == nullptr) return invalid("zipc_read_loan_release", "loan is NULL");
  switch (kind_of(loan->private_)) {
    case LoanKind::queue_read:
      slot<zipc::QueueReadLoan>(loan->private_)->release();
      destroy<zipc::QueueReadLoan>(loan->private_);
      break;
    case LoanKind::topic_read: release_topic_loan(*slot<zipc_subscriber*>(loan->private_)); break;
    case LoanKind::rpc_response: destroy<zipc::RpcResponse>(loan->private_); break;
    default: return invalid("zipc_read_loan_release", "the loan is not live (never acquired, or already released)");
  }
  clear(loan);
  return ZIPC_OK;
}

}  // extern "C"
