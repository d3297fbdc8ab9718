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
#include <thread>
#include <vector>

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

// A timeout argument: None -> forever (nullopt); seconds (int/float) or a
// datetime.timedelta -> ns; 0 -> try once; inf or more than 1e9 s -> forever.
// Negative or NaN raises ValueError and any other type TypeError, naming arg.
std::optional<ns> to_timeout(nb::handle t, const char* arg = "timeout");
// A duration option (recovery_time, durable_grace): as to_timeout, None -> a year.
std::chrono::milliseconds to_millis(nb::handle t, const char* arg = "duration");

// Raises the zipc.Error subclass registered for a kind name ("not_found", "timeout", ...).
[[noreturn]] void raise_kind(const char* kind, const std::string& message);
// Raises the exception of a failed call's status: a wait that ended without
// its result (timeout, or empty/full after a zero timeout) is zipc.Timeout.
[[noreturn]] void raise_status(Status s, const std::string& what);
const char* status_kind(Status s) noexcept;

// Releases the GIL for a wait or a system call. Once the interpreter exits
// (zipc's atexit hook has run), a thread other than the exiting one never
// takes the GIL back: it parks for good. A daemon thread that takes the GIL
// while the interpreter finalizes is ended by pthread_exit, whose forced
// unwind through these C++ frames would abort the process ("terminate called
// without an active exception"); the hook waits until every thread that
// released the GIL here has either taken it back or parked.
class NoGil {
 public:
  NoGil() noexcept;
  ~NoGil();
  NoGil(const NoGil&) = delete;
  NoGil& operator=(const NoGil&) = delete;

 private:
  PyThreadState* state_;
};

struct Guarded;
// A WaitSet that holds an endpoint's address: the endpoint's detach() makes
// it let go first (forget runs with the GIL held).
struct WaitSetLink {
  virtual void forget(Guarded& endpoint) = 0;

 protected:
  ~WaitSetLink() = default;
};

// Every handle object: one C++ handle used by one thread at a time. Python
// threads may share the Python object, so calls take mu (always with the GIL
// released, and never holding it while taking the GIL back).
//
// Lifetime: every call that touches the C++ handle holds a Use for its whole
// length. detach()/close() (request_detach) marks the handle closing: new
// calls raise Closed, waits in flight raise Closed at the end of their
// current slice (kSlice), and the C++ handle is let go (let_go) once no call
// uses it and no loan of it is out. A signal handler that detaches the handle
// its own thread is waiting on defers the let-go to that call's end.
// The fields below mu are changed with the GIL held.
struct Guarded {
  std::mutex mu;
  int live_loans = 0;
  int in_waitsets = 0;  // waitsets.size(): WaitSets that hold this endpoint's address
  std::vector<WaitSetLink*> waitsets;
  bool closing = false;                // detach()/close() asked: no new call, waits end with Closed
  bool gone = false;                   // let_go() ran
  std::vector<std::thread::id> users;  // the threads inside a call (a thread may nest: a signal handler)
  std::string label;                   // "queue 'name'": the start of every error message

  Guarded() = default;
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  virtual ~Guarded();
  // Lets the C++ handle go (GIL held, no call in flight, no loan out).
  virtual void let_go() noexcept {}
  // detach(): refuses while loans are out (InvalidArgument), detaches from
  // every WaitSet, waits for other threads' calls to leave, then lets go
  // (or defers to this thread's own call in flight). Idempotent.
  void request_detach(const char* what);
  // Lets go when closing and nothing uses the handle any more.
  void maybe_let_go() noexcept;
  // Closed: "<label>: <what>: <why>".
  [[noreturn]] void raise_closed(const char* what, const char* why = "detached") const;
};

// One call on a handle (GIL held at construction and destruction): raises
// Closed once the handle is detached or closing.
class Use {
 public:
  Use(Guarded& g, const char* what);
  ~Use();
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

 private:
  Guarded& g_;
};

// How long one slice of a blocking wait lasts before the GIL is taken back to
// look for signals (Ctrl-C raises KeyboardInterrupt within about this time)
// and for a detach() from another thread or a signal handler (Closed).
inline constexpr ns kSlice = std::chrono::milliseconds(20);

void check_signals();  // throws nb::python_error when a handler raised

// Runs op(slice_timeout) with the GIL released and g.mu held, in slices, until
// its status is not timeout or the timeout passed. status(r) -> Status.
// Raises Closed when the handle is detached between slices.
template <class Op, class St>
auto sliced(Guarded& g, std::optional<ns> timeout, Op&& op, St&& status) {
  using clock = std::chrono::steady_clock;
  if (g.closing) g.raise_closed("wait");
  if (timeout && timeout->count() == 0) {
    NoGil nogil;
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
      NoGil nogil;
      std::unique_lock lock(g.mu);
      auto r = op(slice);
      if (status(r) != Status::timeout || (timeout && clock::now() >= deadline)) return r;
    }
    check_signals();
    if (g.closing) g.raise_closed("wait", "detached by another thread or a signal handler");
  }
}

// Runs fn() with the GIL released and g.mu held (a short call).
template <class Fn>
auto locked(Guarded& g, Fn&& fn) {
  NoGil nogil;
  std::lock_guard lock(g.mu);
  return fn();
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
