// Shared pieces of the zipc Python extension: timeouts, sliced waits that
// release the GIL and honour Ctrl-C, error translation, and the loan buffer
// exporter that makes a memoryview unusable once its loan has ended.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "zipc/error.hpp"
#include "zipc/event.hpp"
#include "zipc/type_identity.hpp"

namespace nb = nanobind;

namespace zipc {
class Queue;
class Subscriber;
class RpcClient;
class RpcServer;
class Listener;
}  // namespace zipc

namespace zipc::py {

using ns = std::chrono::nanoseconds;

// None -> forever (nullopt); float/int seconds or datetime.timedelta -> ns (>= 0).
std::optional<ns> to_timeout(nb::handle t);
// keyword value for std::chrono::milliseconds options (seconds float / timedelta)
std::chrono::milliseconds to_millis(nb::handle t);

// Raises the zipc.Error subclass registered for a kind name ("not_found", "timeout", ...).
[[noreturn]] void raise_kind(const char* kind, const std::string& message);
[[noreturn]] void raise_status(Status s, const std::string& what);
const char* status_kind(Status s) noexcept;

// Every handle object: one C++ handle used by one thread at a time. Python
// threads may share the Python object, so calls take this mutex (always with
// the GIL released, and never holding it while taking the GIL back).
struct Guarded {
  std::mutex mu;
  int live_loans = 0;
  int in_waitsets = 0;  // WaitSets that hold this endpoint's address (detach() refused meanwhile)
};

// How long one slice of a blocking wait lasts before the GIL is taken back to
// look for signals (Ctrl-C raises KeyboardInterrupt within about this time).
inline constexpr ns kSlice = std::chrono::milliseconds(20);

void check_signals();  // throws nb::python_error when a handler raised

// Runs op(slice_timeout) with the GIL released and g.mu held, in slices, until
// its status is not timeout or the timeout passed. status(r) -> Status.
template <class Op, class St>
auto sliced(Guarded& g, std::optional<ns> timeout, Op&& op, St&& status) {
  using clock = std::chrono::steady_clock;
  if (timeout && timeout->count() == 0) {
    nb::gil_scoped_release nogil;
    std::lock_guard lock(g.mu);
    return op(ns::zero());
  }
  const auto deadline = timeout ? clock::now() + *timeout : clock::time_point::max();
  for (;;) {
    ns slice = kSlice;
    if (timeout) {
      const auto left = std::chrono::duration_cast<ns>(deadline - clock::now());
      slice = left < ns::zero() ? ns::zero() : std::min(slice, left);
    }
    {
      nb::gil_scoped_release nogil;
      std::unique_lock lock(g.mu);
      auto r = op(slice);
      if (status(r) != Status::timeout || (timeout && clock::now() >= deadline)) return r;
    }
    check_signals();
  }
}

// The state behind one loan: the memory, who keeps the mapping alive, and how
// many buffer exports are out. finish() gives the loan back to the C++ side;
// it runs once, when the loan ended and no export is left.
struct LoanState {
  std::byte* ptr = nullptr;
  std::size_t len = 0;
  bool readonly = true;
  int exports = 0;
  bool ended = false;
  bool finished = false;
  Guarded* guard = nullptr;  // counted in guard->live_loans until finished
  nb::object owner;          // the handle object (keeps its mapping alive)

  LoanState() = default;
  LoanState(const LoanState&) = delete;
  LoanState& operator=(const LoanState&) = delete;
  virtual ~LoanState() = default;
  virtual void finish() noexcept = 0;  // GIL held
  void attach(Guarded* g, nb::handle handle_obj);
  // Marks the loan ended; finishes now when nothing is exported (returns true).
  bool end() noexcept;
};

// A fresh memoryview over the loan (raises zipc.LoanEnded once it ended).
nb::object make_view(const std::shared_ptr<LoanState>& st);
// Ends a loan object's views: releases every memoryview handed out; true when
// none is still exported (else the loan finishes when the last export goes).
bool release_views(nb::list& views);

// Python object base for loans: views handed out + the state.
struct LoanBase {
  std::shared_ptr<LoanState> st;
  nb::list views;
  LoanBase() = default;
  LoanBase(const LoanBase&) = delete;
  LoanBase& operator=(const LoanBase&) = delete;
  ~LoanBase();        // an unended loan ends (read: released; write: aborted)
  nb::object view();  // new memoryview, remembered for release at the end
  bool active() const noexcept { return st && !st->ended; }
  void require_active(const char* what) const;
  // Ends the loan; returns false when a view is still exported (finish deferred).
  bool end();
};

void init_errors(nb::module_& m);
void init_loans(nb::module_& m);
void init_queue(nb::module_& m);
void init_topic(nb::module_& m);
void init_rpc(nb::module_& m);
void init_heap(nb::module_& m);
void init_segment(nb::module_& m);
void init_waitset(nb::module_& m);
void init_event_channel(nb::module_& m);
void init_type_identity(nb::module_& m);
// A `type=` argument (zipc.TypeIdentity or None) and a recorded identity as one.
std::optional<zipc::TypeIdentity> type_arg(nb::handle t);
nb::object identity_obj(const std::optional<zipc::TypeIdentity>& t);

// The C++ endpoint behind a zipc.Subscriber / zipc.Queue object (nullptr when
// h is something else), with its Guarded part; for the WaitSet binding.
zipc::Subscriber* subscriber_of(nb::handle h, Guarded** guard);
zipc::Queue* queue_of(nb::handle h, Guarded** guard);
zipc::RpcClient* rpc_client_of(nb::handle h, Guarded** guard);
zipc::RpcServer* rpc_server_of(nb::handle h, Guarded** guard);  // refuses one served by threads
zipc::Listener* listener_of(nb::handle h, Guarded** guard);

zipc::WaitOptions wait_options(WaitStrategy s);

}  // namespace zipc::py

namespace zipc::py {
// A read-only view of any bytes-like object (held while the GIL is released).
class InBuf {
 public:
  explicit InBuf(nb::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &v_, PyBUF_SIMPLE) != 0) throw nb::python_error();
  }
  ~InBuf() { PyBuffer_Release(&v_); }
  InBuf(const InBuf&) = delete;
  InBuf& operator=(const InBuf&) = delete;
  std::span<const std::byte> span() const noexcept {
    return {static_cast<const std::byte*>(v_.buf), static_cast<std::size_t>(v_.len)};
  }

 private:
  Py_buffer v_{};
};

inline nb::bytes to_bytes(std::span<const std::byte> s) {
  return nb::bytes(reinterpret_cast<const char*>(s.data()), s.size());
}
}  // namespace zipc::py
