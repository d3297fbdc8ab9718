// zipc._zipc: module entry, errors, timeouts.
#include <nanobind/stl/string.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "common.hpp"

namespace zipc::py {
namespace {

PyObject* g_error_types = nullptr;  // dict kind name -> exception class (leaked on purpose)

// The exception kind of an Errc: its enumerator's spelling ("not_found"); "error" (the base
// class) for ok or a value that is no Errc.
const char* errc_kind(Errc e) noexcept {
  const char* name = zipc::errc_name(e);
  return name != nullptr && e != Errc::ok ? name : "error";
}

void register_errors(const nb::dict& types) {
  Py_XDECREF(g_error_types);
  g_error_types = types.ptr();
  Py_INCREF(g_error_types);
}

// Interpreter exit (see NoGil): how many threads released the GIL in NoGil
// and have not taken it back, whether the exit hook ran, and its thread.
std::atomic<int> g_outside{0};
std::atomic<bool> g_exiting{false};
std::atomic<std::thread::id> g_exit_thread{};
std::atomic<int> g_parked{0};

[[noreturn]] void park() noexcept {
  g_parked.fetch_add(1, std::memory_order_relaxed);
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// atexit: from now on other threads park instead of taking the GIL back;
// wait (GIL released, at most 2 s) until none is between release and retake.
void exit_hook() {
  g_exit_thread.store(std::this_thread::get_id(), std::memory_order_relaxed);
  g_exiting.store(true, std::memory_order_seq_cst);  // pairs with the load in ~NoGil
  PyThreadState* st = PyEval_SaveThread();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (g_outside.load(std::memory_order_seq_cst) > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  PyEval_RestoreThread(st);
  // A parked thread keeps its call's objects: not leaks to report.
  if (g_parked.load(std::memory_order_relaxed) > 0 || g_outside.load() > 0) nb::set_leak_warnings(false);
}

}  // namespace

NoGil::NoGil() noexcept {
  g_outside.fetch_add(1, std::memory_order_seq_cst);  // seen by exit_hook before the GIL is free
  state_ = PyEval_SaveThread();
}

NoGil::~NoGil() {
  // Pairs with the store in exit_hook, which then reads g_outside: either it
  // sees this thread outside (and waits for it) or this thread sees g_exiting.
  if (g_exiting.load(std::memory_order_seq_cst) &&
      g_exit_thread.load(std::memory_order_relaxed) != std::this_thread::get_id()) {
    g_outside.fetch_sub(1, std::memory_order_seq_cst);
    park();
  }
  PyEval_RestoreThread(state_);
  g_outside.fetch_sub(1, std::memory_order_seq_cst);  // the GIL is held again: exit_hook may go on
}

Guarded::~Guarded() = default;

void Guarded::raise_closed(const char* what, const char* why) const {
  raise_kind("closed", (label.empty() ? std::string("handle") : label) + ": " + what + ": " + why);
}

void Guarded::maybe_let_go() noexcept {
  if (!closing || gone || !users.empty() || live_loans > 0) return;
  gone = true;
  let_go();
}

void Guarded::request_detach(const char* what) {
  if (closing) return;
  if (live_loans > 0)
    raise_kind("invalid_argument", label + ": " + what + ": " + std::to_string(live_loans) +
                                       " loan(s) of this handle still out (release them first)");
  closing = true;
  while (!waitsets.empty()) waitsets.back()->forget(*this);
  const auto me = std::this_thread::get_id();
  auto others = [&] {
    for (const auto& id : users)
      if (id != me) return true;
    return false;
  };
  while (others()) {  // their waits end within a slice once they see closing
    NoGil nogil;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  maybe_let_go();  // deferred to this thread's own call in flight, if any (a signal handler)
}

Use::Use(Guarded& g, const char* what) : g_(g) {
  if (g.closing) g.raise_closed(what);
  g.users.push_back(std::this_thread::get_id());
}

Use::~Use() {
  for (auto it = g_.users.begin(); it != g_.users.end(); ++it) {
    if (*it == std::this_thread::get_id()) {
      g_.users.erase(it);
      break;
    }
  }
  g_.maybe_let_go();
}

const char* status_kind(Status s) noexcept {
  if (s == Status::empty || s == Status::full) return "timeout";  // a wait ended without its result
  if (s == Status::detached) return "closed";  // the handle let go of the channel: Closed, as for a detached handle
  return s == Status::ok ? "error" : zipc::to_string(s);
}

void raise_kind(const char* kind, const std::string& message) {
  PyObject* type = nullptr;
  if (g_error_types != nullptr) {
    type = PyDict_GetItemString(g_error_types, kind);  // borrowed
    if (type == nullptr) type = PyDict_GetItemString(g_error_types, "error");
  }
  if (type == nullptr) type = PyExc_RuntimeError;
  PyErr_SetString(type, message.c_str());
  throw nb::python_error();
}

void raise_status(Status s, const std::string& what) {
  if (s == Status::timeout || s == Status::empty || s == Status::full)
    raise_kind("timeout", what + ": timed out (" + zipc::to_string(s) + ")");
  raise_kind(status_kind(s), what + ": " + zipc::to_string(s));
}

void check_signals() {
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
}

namespace {
std::string short_repr(nb::handle v) {
  std::string r = nb::cast<std::string>(nb::repr(v));
  return r.size() <= 40 ? r : r.substr(0, 37) + "...";
}
}  // namespace

std::optional<ns> to_timeout(nb::handle t, const char* arg) {
  if (t.is_none()) return std::nullopt;
  double seconds = 0;
  if (PyBool_Check(t.ptr())) {
    throw nb::type_error((std::string(arg) + ": expected seconds (int or float), datetime.timedelta or None, "
                                             "not bool")
                             .c_str());
  } else if (PyFloat_Check(t.ptr())) {
    seconds = PyFloat_AS_DOUBLE(t.ptr());
  } else if (PyLong_Check(t.ptr())) {
    seconds = PyLong_AsDouble(t.ptr());
    if (seconds == -1.0 && PyErr_Occurred()) {  // beyond a double: keep only the sign
      PyErr_Clear();
      const int negative = PyObject_RichCompareBool(t.ptr(), nb::int_(0).ptr(), Py_LT);
      if (negative < 0) throw nb::python_error();
      seconds = negative != 0 ? -1.0 : HUGE_VAL;
    }
  } else if (nb::hasattr(t, "total_seconds")) {
    seconds = nb::cast<double>(t.attr("total_seconds")());
  } else if (PyObject* f = PyNumber_Check(t.ptr()) != 0 ? PyNumber_Float(t.ptr()) : nullptr; f != nullptr) {
    seconds = PyFloat_AS_DOUBLE(f);  // a numpy scalar, a Decimal, a Fraction
    Py_DECREF(f);
  } else {
    PyErr_Clear();
    throw nb::type_error((std::string(arg) + ": expected seconds (int or float), datetime.timedelta or None, not " +
                          nb::cast<std::string>(nb::str(t.type().attr("__name__"))))
                             .c_str());
  }
  if (std::isnan(seconds)) raise_kind("invalid_argument", std::string(arg) + ": NaN is not a duration");
  if (seconds < 0)
    raise_kind("invalid_argument", std::string(arg) + ": " + short_repr(t) + " is negative" +
                                       (std::string_view(arg) == "timeout" ? " (0 tries once, None waits forever)"
                                                                           : " (a duration is >= 0)"));
  if (seconds == 0) return ns::zero();
  if (seconds > 1e9) return std::nullopt;  // effectively forever (inf included)
  return ns(static_cast<std::int64_t>(seconds * 1e9));
}

std::chrono::milliseconds to_millis(nb::handle t, const char* arg) {
  auto v = to_timeout(t, arg);
  if (!v) return std::chrono::milliseconds(std::chrono::hours(24 * 365));
  return std::chrono::duration_cast<std::chrono::milliseconds>(*v);
}

zipc::WaitOptions wait_options(WaitStrategy s) {
  zipc::WaitOptions w;
  w.strategy = s;
  return w;
}

void init_errors(nb::module_& m) {
  m.def("_register_errors", &register_errors, "Internal: the exception class per error kind.");
  m.def("_exit_hook", &exit_hook,
        "Internal (atexit): threads blocked in zipc waits park instead of taking the GIL back at exit.");
  m.def("_errc_names", [] {
    nb::list out;
    for (int i = 0; zipc::errc_name(static_cast<Errc>(i)) != nullptr; ++i) {
      out.append(nb::str(errc_kind(static_cast<Errc>(i))));
    }
    return out;
  });
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const zipc::Error& e) {
      try {
        raise_kind(errc_kind(e.errc()), e.what());
      } catch (nb::python_error& pe) {
        pe.restore();
      }
    }
  });
}

}  // namespace zipc::py

NB_MODULE(_zipc, m) {
  m.doc() = "zipc: zero-copy shared-memory IPC (C++ core; see the zipc package)";
  zipc::py::init_errors(m);
  zipc::py::init_loans(m);
  zipc::py::init_segment(m);
  zipc::py::init_queue(m);
  zipc::py::init_topic(m);
  zipc::py::init_rpc(m);
  zipc::py::init_heap(m);
  zipc::py::init_event_channel(m);
  zipc::py::init_type_identity(m);
  zipc::py::init_waitset(m);
}
