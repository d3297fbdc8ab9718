// Loan buffers: a buffer-protocol exporter over loaned shared memory. Every
// memoryview of a loan is released when the loan ends, so touching it raises
// ValueError; an export that cannot be released (a numpy array still made
// from the view) keeps the loan - and the mapping - alive until it goes, so
// no view can ever read memory that was given back.
#include "common.hpp"

namespace zipc::py {
namespace {

struct Exporter {
  PyObject_HEAD std::shared_ptr<LoanState>* st;
};

PyTypeObject* g_exporter_type = nullptr;
std::byte g_empty[1];

int exporter_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  auto& st = *reinterpret_cast<Exporter*>(self)->st;
  if (st->ended) {
    try {
      raise_kind("loan_ended", "loan ended: its memory was committed or given back");
    } catch (nb::python_error& e) {
      e.restore();
    }
    return -1;
  }
  void* p = st->ptr != nullptr ? static_cast<void*>(st->ptr) : static_cast<void*>(g_empty);
  if (PyBuffer_FillInfo(view, self, p, static_cast<Py_ssize_t>(st->len), st->readonly ? 1 : 0, flags) < 0) return -1;
  ++st->exports;
  return 0;
}

void exporter_releasebuffer(PyObject* self, Py_buffer*) {
  auto& st = *reinterpret_cast<Exporter*>(self)->st;
  if (--st->exports == 0 && st->ended && !st->finished) {
    st->finished = true;
    st->finish();
    if (st->guard != nullptr) {
      --st->guard->live_loans;
      st->guard->maybe_let_go();
    }
  }
}

void exporter_dealloc(PyObject* self) {
  delete reinterpret_cast<Exporter*>(self)->st;
  PyTypeObject* tp = Py_TYPE(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

PyType_Slot exporter_slots[] = {
    {Py_bf_getbuffer, reinterpret_cast<void*>(&exporter_getbuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void*>(&exporter_releasebuffer)},
    {Py_tp_dealloc, reinterpret_cast<void*>(&exporter_dealloc)},
    {Py_tp_doc, const_cast<char*>("The object behind every loan's memoryview (its .obj): exports the loaned shared "
                                  "memory through the buffer protocol, refuses new exports once the loan ended "
                                  "(LoanEnded), and keeps the loan held while an export outlives it. Not made "
                                  "directly.")},
    {0, nullptr},
};
PyType_Spec exporter_spec = {"zipc._zipc.LoanBuffer", sizeof(Exporter), 0, Py_TPFLAGS_DEFAULT, exporter_slots};

}  // namespace

void LoanState::attach(Guarded* g, nb::handle handle_obj) {
  guard = g;
  owner = nb::borrow(handle_obj);
  if (guard != nullptr) ++guard->live_loans;
}

bool LoanState::end() noexcept {
  ended = true;
  if (exports == 0 && !finished) {
    finished = true;
    finish();
    if (guard != nullptr) {
      --guard->live_loans;
      guard->maybe_let_go();
    }
    return true;
  }
  return finished;
}

nb::object make_view(const std::shared_ptr<LoanState>& st) {
  PyObject* obj = PyType_GenericAlloc(g_exporter_type, 0);
  if (obj == nullptr) throw nb::python_error();
  reinterpret_cast<Exporter*>(obj)->st = new std::shared_ptr<LoanState>(st);
  PyObject* mv = PyMemoryView_FromObject(obj);
  Py_DECREF(obj);
  if (mv == nullptr) throw nb::python_error();
  return nb::steal(mv);
}

bool release_views(nb::list& views) {
  bool all = true;
  for (nb::handle v : views) {
    PyObject* r = PyObject_CallMethod(v.ptr(), "release", nullptr);
    if (r == nullptr) {
      PyErr_Clear();  // BufferError: still exported (e.g. a numpy array)
      all = false;
    } else {
      Py_DECREF(r);
    }
  }
  views.clear();
  return all;
}

nb::object LoanBase::view() {
  require_active("view");
  nb::object v = make_view(st);
  views.append(v);
  return v;
}

void LoanBase::require_active(const char* what) const {
  if (!st) raise_kind("invalid_argument", std::string(what) + ": empty loan");
  if (st->ended) raise_kind("loan_ended", std::string(what) + ": the loan already ended");
}

LoanBase::~LoanBase() {
  if (!st || st->ended) return;
  try {
    end();
  } catch (...) {
  }
}

bool LoanBase::end() {
  if (!st || st->ended) return true;
  release_views(views);
  return st->end();
}

void init_loans(nb::module_& m) {
  g_exporter_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&exporter_spec));
  if (g_exporter_type == nullptr) throw nb::python_error();
  m.attr("LoanBuffer") = nb::handle(reinterpret_cast<PyObject*>(g_exporter_type));
}

}  // namespace zipc::py
