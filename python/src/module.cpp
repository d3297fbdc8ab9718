// zipc._zipc: module entry, errors, timeouts.
#include <nanobind/stl/string.h>

#include <cmath>

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

}  // namespace

const char* status_kind(Status s) noexcept {
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
  raise_kind(status_kind(s), what + ": " + zipc::to_string(s));
}

void check_signals() {
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
}

std::optional<ns> to_timeout(nb::handle t) {
  if (t.is_none()) return std::nullopt;
  double seconds = 0;
  if (PyFloat_Check(t.ptr())) {
    seconds = PyFloat_AS_DOUBLE(t.ptr());
  } else if (PyLong_Check(t.ptr())) {
    seconds = static_cast<double>(PyLong_AsLongLong(t.ptr()));
    if (PyErr_Occurred()) throw nb::python_error();
  } else if (nb::hasattr(t, "total_seconds")) {
    seconds = nb::cast<double>(t.attr("total_seconds")());
  } else {
    throw nb::type_error("timeout: expected seconds (float), datetime.timedelta or None");
  }
  if (std::isnan(seconds)) throw nb::value_error("timeout: NaN");
  if (seconds <= 0) return ns::zero();
  if (seconds > 1e9) return std::nullopt;  // effectively forever
  return ns(static_cast<std::int64_t>(seconds * 1e9));
}

std::chrono::milliseconds to_millis(nb::handle t) {
  auto v = to_timeout(t);
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
