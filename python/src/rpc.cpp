// zipc.RpcServer (a Python handler served on several threads, or on the
// caller's thread from a WaitSet or an asyncio loop: serve_pending) and
// zipc.RpcClient (call, call_async/wait).
#include <cxxabi.h>
#include <nanobind/stl/string.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "common.hpp"
#include "docs.hpp"
#include "zipc/rpc.hpp"

namespace zipc::py {
namespace {

struct PyRpcServer;
std::set<PyRpcServer*> g_servers;  // live servers (GIL-protected), stopped at exit

// zipc.RemoteError (the GIL held); an invalid handle when the package is not importable.
nb::handle remote_error_type() {
  static nb::handle cached;  // the class lives as long as the interpreter (leaked on purpose)
  if (!cached.is_valid()) {
    try {
      cached = nb::object(nb::module_::import_("zipc").attr("RemoteError")).release();
    } catch (nb::python_error& e) {
      e.restore();
      PyErr_Clear();
    }
  }
  return cached;
}

// A type's name as Python prints it: "KeyError", "mymodule.MyError".
std::string py_type_name(nb::handle t) {
  const std::string qual = nb::cast<std::string>(nb::str(t.attr("__qualname__")));
  const std::string mod = nb::hasattr(t, "__module__") ? nb::cast<std::string>(nb::str(t.attr("__module__"))) : "";
  return mod.empty() || mod == "builtins" || mod == "__main__" ? qual : mod + "." + qual;
}

// Guarded: a WaitSet may hold the server's address (attach); mu orders the
// WaitSet's use of it with serve_pending's.
struct PyRpcServer : Guarded {
  zipc::RpcServer server;
  std::string name;
  nb::object handler;
  std::vector<std::thread> workers;
  std::atomic<bool> stopping{false};
  // close() began (GIL-protected): it stops the workers, releasing the GIL,
  // before request_detach marks the handle closing; a serve() loop that took
  // the GIL meanwhile must raise Closed, not take the stop for a return.
  bool close_begun = false;
  std::atomic<unsigned> running{0};
  std::atomic<std::uint64_t> served{0};

  PyRpcServer() { g_servers.insert(this); }
  ~PyRpcServer() override {
    g_servers.erase(this);
    stop_workers();
  }
  PyRpcServer(const PyRpcServer&) = delete;
  PyRpcServer& operator=(const PyRpcServer&) = delete;

  // Calls handler for req and answers (the GIL held). A handler that raises
  // ends the call with its exception's type name and message (zipc.RemoteError
  // at the caller), reported here as unraisable unless it is a
  // zipc.RemoteError (a deliberate answer, its code chosen). A result that
  // is neither bytes-like nor None is a TypeError reported here and
  // kRpcBadReply at the caller: never an empty successful reply.
  void handle(zipc::RpcRequest& req, const nb::object& h) {
    try {
      nb::object r = h(to_bytes(req.data()));
      if (!r.is_none()) {
        if (PyObject_CheckBuffer(r.ptr()) == 0) {
          const std::string msg =
              "handler returned " + py_type_name(r.type()) + ", expected a bytes-like object or None";
          answer_error(req, zipc::kRpcBadReply, "TypeError", msg);
          PyErr_SetString(PyExc_TypeError, ("rpc '" + name + "': " + msg).c_str());
          PyErr_WriteUnraisable(h.ptr());
        } else {
          InBuf b(r);
          Status s;
          {
            NoGil nogil;
            s = req.reply(b.span());
          }
          // closed: the server was closed meanwhile (the caller is told Closed).
          if (s != Status::ok && s != Status::closed) raise_status(s, "rpc '" + name + "': reply");
        }
      }
    } catch (nb::python_error& e) {
      nb::handle remote = remote_error_type();
      const bool deliberate = remote.is_valid() && e.matches(remote);
      try {
        nb::handle v = e.value();
        if (deliberate) {
          answer_error(req, nb::cast<std::uint32_t>(v.attr("code")),
                       nb::cast<std::string>(nb::str(v.attr("remote_type"))),
                       nb::cast<std::string>(nb::str(v.attr("remote_message"))));
        } else {
          answer_error(req, zipc::kRpcHandlerFailed, py_type_name(e.type()), nb::cast<std::string>(nb::str(v)));
        }
      } catch (...) {  // a code out of range, a __str__ that raises: the call still ends in an error
        PyErr_Clear();
        answer_error(req, zipc::kRpcHandlerFailed, deliberate ? "RemoteError" : "",
                     "the handler's exception could not be read (code not 0..2**32-1, or str() raised)");
      }
      if (!deliberate) e.discard_as_unraisable(h);
    } catch (abi::__forced_unwind&) {
      // The interpreter is finalizing and this (daemon) thread's handler
      // tried to take the GIL back: Python ends the thread with pthread_exit,
      // whose unwind would reach nanobind's catch-all and crash the process.
      // The thread parks for good instead; the process exit ends it.
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    } catch (const std::exception& e) {
      answer_error(req, zipc::kRpcHandlerFailed, "RuntimeError", e.what());
      PyErr_SetString(PyExc_RuntimeError, e.what());
      PyErr_WriteUnraisable(h.ptr());
    }
    served.fetch_add(1, std::memory_order_relaxed);
  }

  static void answer_error(zipc::RpcRequest& req, std::uint32_t code, const std::string& type,
                           const std::string& message) noexcept {
    NoGil nogil;
    (void)req.fail(code, message, type);  // closed when already answered (a reply that failed)
  }

  // The requests waiting now, at most max, served on the calling thread.
  // Closed once the server is closed, also by another thread (or the
  // handler) between two requests: what was served before is answered.
  unsigned serve_pending(const nb::object& h, unsigned max) {
    Use use(*this, "serve_pending");
    if (!workers.empty())
      raise_kind("invalid_argument", "rpc '" + name + "': serving threads run (start/serve): they take the requests");
    unsigned n = 0;
    while (n < max) {
      if (closing) raise_closed("serve_pending", "closed by another thread or the handler");
      zipc::RpcRequest req;
      {
        NoGil nogil;
        std::lock_guard lock(mu);
        req = server.next(ns::zero());
      }
      if (!req) {
        if (req.status() == Status::timeout) break;
        if (n > 0) break;  // closed or corrupt: told by the next call
        raise_status(req.status(), "rpc '" + name + "': serve_pending");
      }
      handle(req, h);
      ++n;
    }
    return n;
  }

  void worker() {
    while (!stopping.load(std::memory_order_relaxed)) {
      zipc::RpcRequest req = server.next(kSlice);
      if (!req) {
        if (req.status() == Status::closed) break;
        continue;
      }
      nb::gil_scoped_acquire gil;
      handle(req, handler);
    }
    running.fetch_sub(1, std::memory_order_release);  // pairs with the acquire load in serve()
  }

  void start(nb::object h, unsigned threads) {
    if (closing) raise_closed("start", "closed");
    if (!workers.empty() || running.load(std::memory_order_acquire) > 0)
      raise_kind("invalid_argument", "rpc '" + name + "': already serving");
    if (in_waitsets > 0)
      raise_kind("invalid_argument",
                 "rpc '" + name + "': attached to a WaitSet (served with serve_pending): detach it first");
    if (threads == 0 || threads > zipc::kRpcMaxServeThreads)
      raise_kind("invalid_argument", "rpc '" + name + "': threads must be 1.." +
                                         std::to_string(zipc::kRpcMaxServeThreads) + ", got " +
                                         std::to_string(threads));
    handler = std::move(h);
    stopping.store(false);
    running.store(threads);
    for (unsigned i = 0; i < threads; ++i) workers.emplace_back([this] { worker(); });
  }

  // Stops and joins the serving threads (GIL held). The threads are taken out
  // of workers first, so a second caller (another thread's close() while
  // serve() ends) finds none to join. A handler cannot stop its own server's
  // threads (it would join itself): InvalidArgument.
  void stop_workers() {
    stopping.store(true);
    const auto me = std::this_thread::get_id();
    for (const auto& t : workers)
      if (t.get_id() == me)
        raise_kind("invalid_argument", "rpc '" + name + "': stop/close from the server's own handler thread");
    std::vector<std::thread> joining = std::move(workers);
    workers.clear();
    if (joining.empty()) return;
    {
      NoGil nogil;
      for (auto& t : joining) t.join();
    }
    // A handler from __main__ refers to its globals, which may hold this
    // server; kept when start() already gave a new one.
    if (workers.empty()) handler.reset();
  }

  // close()/__exit__: the threads stop, the service closes for everyone
  // (calls in flight end with Closed), then the handle lets go once no other
  // thread uses it (serve_pending/serve in another thread raise Closed).
  void close(const char* what) {
    if (closing) return;
    close_begun = true;
    stop_workers();
    {
      NoGil nogil;
      std::lock_guard lock(mu);
      server.close();
    }
    request_detach(what);
  }

  void let_go() noexcept override {
    try {
      stop_workers();
    } catch (...) {  // only from a handler thread, which cannot be here: let_go runs with no call in flight
      PyErr_Clear();
    }
    NoGil nogil;
    std::lock_guard lock(mu);
    server = zipc::RpcServer();
  }
};

struct PyRpcTicket;

// tickets: the live RpcTickets of this client (GIL-protected). A ticket
// refers to the client's connection, so let_go ends them first.
struct PyRpcClient : Guarded {
  zipc::RpcClient c;
  std::string name;
  std::set<PyRpcTicket*> tickets;
  std::string ctx(const char* what) const { return "rpc '" + name + "': " + what; }
  void let_go() noexcept override;
};

struct PyRpcTicket {
  zipc::RpcTicket t;
  nb::object client_obj;  // keeps the client (and its connection) alive
  PyRpcClient* client = nullptr;
  bool done = false;

  PyRpcTicket() = default;
  PyRpcTicket(const PyRpcTicket&) = delete;
  PyRpcTicket& operator=(const PyRpcTicket&) = delete;
  ~PyRpcTicket() {
    if (client == nullptr) return;
    client->tickets.erase(this);
    if (client->gone) return;  // let_go ended the ticket
    NoGil nogil;
    std::lock_guard lock(client->mu);
    t = zipc::RpcTicket();  // abandons the call: its slot comes back when the answer does
  }
};

void PyRpcClient::let_go() noexcept {
  NoGil nogil;
  std::lock_guard lock(mu);
  for (PyRpcTicket* t : tickets) t->t = zipc::RpcTicket();
  c = zipc::RpcClient();
}

// Text from a peer as str: invalid UTF-8 is replaced, never an error of its own.
nb::object utf8(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (o == nullptr) throw nb::python_error();
  return nb::steal(o);
}

// zipc.RemoteError for a call the handler failed: code, remote_type, remote_message.
[[noreturn]] void raise_remote(PyRpcClient& c, zipc::RpcResponse& r) {
  const std::uint32_t code = r.error_code();
  std::string type(r.error_type());
  std::string message(r.error_message());
  {
    NoGil nogil;
    std::lock_guard lock(c.mu);
    r.release();
  }
  std::string text = c.ctx("call") + ": remote " + (type.empty() ? std::string("error") : type) + " (code " +
                     std::to_string(code) + "): " + message;
  nb::handle cls = remote_error_type();
  if (!cls.is_valid()) raise_kind("remote_error", text);
  nb::object exc = cls(utf8(text), nb::arg("code") = code, nb::arg("remote_type") = utf8(type),
                       nb::arg("remote_message") = utf8(message));
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw nb::python_error();
}

nb::bytes response_bytes(PyRpcClient& c, zipc::RpcResponse& r) {
  if (r.status() == Status::remote_error) raise_remote(c, r);
  if (!r.ok()) raise_status(r.status(), c.ctx("call"));
  nb::bytes out = to_bytes(r.data());
  NoGil nogil;
  std::lock_guard lock(c.mu);
  r.release();
  return out;
}

nb::bytes wait_ticket(PyRpcTicket& t, std::optional<ns> timeout) {
  Use use(*t.client, "wait");
  if (t.done) raise_kind("invalid_argument", t.client->ctx("wait") + ": this ticket was already waited for");
  zipc::RpcResponse r = sliced(
      *t.client, timeout, [&](ns sl) { return t.t.wait(sl); }, [](const zipc::RpcResponse& x) { return x.status(); });
  if (r.status() != Status::timeout) t.done = true;
  return response_bytes(*t.client, r);
}

// threads= as an int in 1..kRpcMaxServeThreads (InvalidArgument, a ValueError, naming the bound).
unsigned thread_count(const PyRpcServer& self, nb::handle threads) {
  if (!PyLong_Check(threads.ptr()) || PyBool_Check(threads.ptr()))
    throw nb::type_error(("rpc '" + self.name + "': threads must be an int").c_str());
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(threads.ptr(), &overflow);
  if (overflow != 0 || n < 1 || n > static_cast<long long>(zipc::kRpcMaxServeThreads)) {
    raise_kind("invalid_argument", "rpc '" + self.name + "': threads must be 1.." +
                                       std::to_string(zipc::kRpcMaxServeThreads) + ", got " +
                                       nb::cast<std::string>(nb::repr(threads)));
  }
  return static_cast<unsigned>(n);
}

}  // namespace

zipc::RpcServer* rpc_server_of(nb::handle h, Guarded** guard) {
  if (!nb::isinstance<PyRpcServer>(h)) return nullptr;
  PyRpcServer& s = nb::cast<PyRpcServer&>(h);
  if (!s.workers.empty())
    raise_kind("invalid_argument", "WaitSet.attach: rpc '" + s.name +
                                       "' is served by threads (start/serve): stop() them, then serve_pending()");
  *guard = &s;
  return &s.server;
}

zipc::RpcClient* rpc_client_of(nb::handle h, Guarded** guard) {
  if (!nb::isinstance<PyRpcClient>(h)) return nullptr;
  PyRpcClient& c = nb::cast<PyRpcClient&>(h);
  *guard = &c;
  return &c.c;
}

void init_rpc(nb::module_& m) {
  m.def("_stop_all_servers", [] {
    for (PyRpcServer* s : std::set<PyRpcServer*>(g_servers)) {
      // A (daemon) thread inside serve_pending at exit keeps its objects: not leaks to report.
      if (!s->users.empty()) nb::set_leak_warnings(false);
      try {
        s->stop_workers();
      } catch (nb::python_error& e) {  // called from a handler thread: that server's threads end with the process
        e.discard_as_unraisable("zipc: stopping an RpcServer at exit");
      }
    }
  });

#define ZIPC_TIMEOUT_DOC                                                                                        \
  "timeout: seconds (int or float) or datetime.timedelta; None waits forever, 0 tries once; a negative or NaN " \
  "timeout raises ValueError, any other type TypeError.\n"

  nb::class_<PyRpcServer>(m, "RpcServer",
                          "A request/response service in shared memory, found by name: RpcServer.create(name), "
                          "then start(handler) on threads, or next() to pull requests. It owns the name; closing "
                          "or detaching it ends the service for its clients.")
      .def_static(
          "create",
          [](const std::string& name, std::uint32_t max_clients, std::uint32_t inflight_per_client,
             std::uint64_t max_request_size, std::uint64_t max_response_size, std::uint64_t inline_size,
             std::uint32_t large_blocks, WaitStrategy wait, unsigned mode, bool replace_stale,
             nb::handle recovery_time) {
            zipc::RpcOptions o;
            o.max_clients = max_clients;
            o.inflight_per_client = inflight_per_client;
            o.max_request_size = max_request_size;
            o.max_response_size = max_response_size;
            o.inline_size = inline_size;
            o.large_blocks = large_blocks;
            o.wait = wait_options(wait);
            o.segment.mode = mode;
            o.replace_stale = replace_stale;
            o.recovery_time = to_millis(recovery_time, "recovery_time");
            auto* s = new PyRpcServer();
            try {
              s->server = zipc::RpcServer::create(name, o);
            } catch (...) {
              delete s;
              throw;
            }
            s->name = name;
            s->label = "rpc '" + name + "'";
            return s;
          },
          nb::arg("name"), nb::kw_only(), nb::arg("max_clients") = 16, nb::arg("inflight_per_client") = 8,
          nb::arg("max_request_size") = 64 << 10, nb::arg("max_response_size") = 64 << 10,
          nb::arg("inline_size") = 4096, nb::arg("large_blocks") = 0, nb::arg("wait") = WaitStrategy::adaptive,
          nb::arg("mode") = 0600, nb::arg("replace_stale") = true, nb::arg("recovery_time") = 0.2,
          nb::rv_policy::take_ownership,
          "Creates the service `name` (a leftover of a dead server is replaced when replace_stale). max_clients "
          "connections, inflight_per_client calls in flight per client, requests up to max_request_size and "
          "responses up to max_response_size bytes (larger than inline_size go through large_blocks pooled "
          "blocks). wait: how the server's threads wait (WaitStrategy; clients wait the same way unless they "
          "choose). mode: permission bits of the segment (0o600: the owner only; clients need read and write). "
          "recovery_time: how often, in seconds, the server looks for dead clients and takes back what they "
          "held.\nRaises AlreadyExists when a live server has the name, InvalidArgument for bad options.")
      .def(
          "start",
          [](PyRpcServer& self, nb::object handler, nb::handle threads) {
            Use use(self, "start");
            self.start(std::move(handler), thread_count(self, threads));
          },
          nb::arg("handler"), nb::arg("threads") = 1,
          "Serves handler(request: bytes) -> bytes-like | None on `threads` threads (an int, 1..256) in the "
          "background, until stop() or close(). A handler that raises answers the call with zipc.RemoteError at "
          "the caller (its type name and message; a zipc.RemoteError raised on purpose keeps its code). Raises "
          "InvalidArgument for threads out of range or while already serving or attached to a WaitSet, TypeError "
          "for a threads that is not an int, Closed once closed.")
      .def(
          "serve",
          [](PyRpcServer& self, nb::object handler, nb::handle threads, nb::handle timeout) {
            Use use(self, "serve");
            auto t = to_timeout(timeout);
            self.start(std::move(handler), thread_count(self, threads));
            const auto deadline =
                t ? std::chrono::steady_clock::now() + *t : std::chrono::steady_clock::time_point::max();
            try {
              for (;;) {
                {
                  NoGil nogil;
                  std::this_thread::sleep_for(kSlice);
                }
                check_signals();
                if (self.closing || self.close_begun)
                  self.raise_closed("serve", "closed by another thread or a signal handler");
                if (self.running.load(std::memory_order_acquire) == 0 || std::chrono::steady_clock::now() >= deadline)
                  break;
              }
            } catch (...) {
              self.stop_workers();
              throw;
            }
            self.stop_workers();
          },
          nb::arg("handler"), nb::arg("threads") = 1, nb::arg("timeout").none() = nb::none(),
          "Serves handler on `threads` threads (1..256) until stop() from another thread, the timeout, or Ctrl-C "
          "(KeyboardInterrupt), then stops them and returns.\n" ZIPC_TIMEOUT_DOC
          "Here the timeout is how long to serve: its end returns normally. Raises Closed when the server is "
          "closed (also by another thread or a signal handler while serving), and what start() raises.")
      .def(
          "serve_pending",
          [](PyRpcServer& self, const nb::object& handler, unsigned max) { return self.serve_pending(handler, max); },
          nb::arg("handler"), nb::arg("max") = 64,
          "Serves the requests waiting now (at most max) with handler on the calling thread, without waiting; "
          "returns how many. For a WaitSet ('rpc_server' ready) or zipc.aio.serve. Raises InvalidArgument while "
          "serving threads run, Closed once the server is closed (also by another thread or the handler: the "
          "requests served before are answered).")
      .def(
          "stop", [](PyRpcServer& self) { self.stop_workers(); },
          "Stops the serving threads, waiting for the calls they handle (the service stays: serve again or "
          "serve_pending). Nothing when none runs. Raises InvalidArgument from a serving thread's handler.")
      .def(
          "close", [](PyRpcServer& self) { self.close("close"); },
          "Stops the serving threads, closes the service for everyone (calls in flight and later ones raise Closed "
          "at the client) and removes its name; a serve() or serve_pending() in another thread raises Closed, and "
          "later calls of this handle raise Closed. Idempotent. Raises InvalidArgument from a serving thread's "
          "handler (use stop() from another thread).")
      .def_prop_ro(
          "is_open", [](PyRpcServer& self) { return !self.closing; }, "False once close() was called.")
      .def(
          "__enter__", [](nb::handle self) { return self; },
          "with RpcServer.create(...) as s: closes s at the end of the block.")
      .def(
          "__exit__",
          [](PyRpcServer& self, nb::handle, nb::handle, nb::handle) {
            self.close("__exit__");
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(), "Closes the server (close()).")
      .def_prop_ro(
          "name", [](PyRpcServer& self) { return self.name; }, "The service's name.")
      .def_prop_ro(
          "served", [](PyRpcServer& self) { return self.served.load(); },
          "Requests handled by this handle (answered, with a reply or an error).")
      .def_prop_ro(
          "connected_clients",
          [](PyRpcServer& self) {
            Use use(self, "connected_clients");
            return self.server.connected_clients();
          },
          "Clients connected now. Raises Closed once closed.")
      .def_prop_ro(
          "reaped_clients",
          [](PyRpcServer& self) {
            Use use(self, "reaped_clients");
            return self.server.reaped_clients();
          },
          "Connections of dead clients taken back so far. Raises Closed once closed.");

  nb::class_<PyRpcTicket>(m, "RpcTicket",
                          "A call in flight (from RpcClient.call_async): wait() for its response once; dropped, the "
                          "call is abandoned.")
      .def(
          "wait", [](PyRpcTicket& t, nb::handle timeout) { return wait_ticket(t, to_timeout(timeout)); },
          nb::arg("timeout").none() = nb::none(),
          "The call's response (bytes), waiting for it.\n" ZIPC_TIMEOUT_DOC
          "Raises Timeout when it did not come in time (the ticket stays valid: wait again), zipc.RemoteError when "
          "the handler failed (.code, .remote_type, .remote_message), InvalidArgument when already waited for, "
          "Closed when the server closed or once the client is detached (also by another thread during the "
          "wait), PeerDead when the server died.")
      .def_prop_ro(
          "ready",
          [](PyRpcTicket& t) {
            Use use(*t.client, "ready");
            return !t.done && t.t.ready();
          },
          "True when the response has arrived (wait() does not block). Raises Closed once the client is detached.");

  nb::class_<PyRpcClient>(m, "RpcClient",
                          "One connection to an Rpc service (RpcClient.connect(name)): call() waits for the "
                          "response, call_async() pipelines. It reconnects by itself to a server restarted under "
                          "the same name. Used by one thread at a time.")
      .def_static(
          "connect",
          [](const std::string& name, nb::handle timeout, WaitStrategy wait) {
            auto t = to_timeout(timeout);
            auto ms = t ? std::chrono::duration_cast<std::chrono::milliseconds>(*t)
                        : std::chrono::milliseconds(std::chrono::hours(24));
            auto* c = new PyRpcClient();
            try {
              NoGil nogil;
              c->c = zipc::RpcClient::connect(name, ms);
              c->c.set_wait(wait_options(wait));
            } catch (...) {
              delete c;
              throw;
            }
            c->name = name;
            c->label = "rpc '" + name + "'";
            return c;
          },
          nb::arg("name"), nb::kw_only(), nb::arg("timeout").none() = 1.0, nb::arg("wait") = WaitStrategy::adaptive,
          nb::rv_policy::take_ownership,
          "Connects to the service `name`, waiting for it to appear and for a free connection.\n" ZIPC_TIMEOUT_DOC
              ZIPC_PYDOC_WAIT
          "Raises NotFound when no server appeared in time, Busy when every connection stayed taken, ValueError for "
          "a negative timeout.")
      .def(
          "call",
          [](PyRpcClient& self, nb::handle data, nb::handle timeout) {
            Use use(self, "call");
            InBuf b(data);
            auto t = to_timeout(timeout);
            zipc::RpcTicket ticket;
            {
              NoGil nogil;
              std::lock_guard lock(self.mu);
              ticket = self.c.call_async(b.span());
            }
            if (!ticket.ok()) raise_status(ticket.status(), self.ctx("call"));
            struct EndTicket {  // the ticket ends under mu, also when the wait raises
              PyRpcClient& c;
              zipc::RpcTicket& t;
              ~EndTicket() {
                NoGil nogil;
                std::lock_guard lock(c.mu);
                t = zipc::RpcTicket();
              }
            } end{self, ticket};
            zipc::RpcResponse r = sliced(
                self, t, [&](ns sl) { return ticket.wait(sl); }, [](const zipc::RpcResponse& x) { return x.status(); });
            return response_bytes(self, r);
          },
          nb::arg("data"), nb::arg("timeout").none() = nb::none(),
          "Sends data (bytes-like, at most max_request_size bytes) and returns the response (bytes).\n" ZIPC_TIMEOUT_DOC
          "Raises Timeout when no response came in time (the call is abandoned), zipc.RemoteError when the handler "
          "failed (.code, .remote_type, .remote_message), TooLarge, Timeout also when inflight_limit calls are "
          "already in flight, "
          "Closed when the server closed or once this client is detached (also by another thread or a signal "
          "handler during the wait), PeerDead when the server died.")
      .def(
          "call_async",
          [](nb::handle self_obj, nb::handle data) {
            PyRpcClient& self = nb::cast<PyRpcClient&>(self_obj);
            Use use(self, "call_async");
            InBuf b(data);
            auto* t = new PyRpcTicket();
            {
              NoGil nogil;
              std::lock_guard lock(self.mu);
              t->t = self.c.call_async(b.span());
            }
            if (!t->t.ok()) {
              Status s = t->t.status();
              delete t;
              raise_status(s, self.ctx("call_async"));
            }
            t->client_obj = nb::borrow(self_obj);
            t->client = &self;
            self.tickets.insert(t);
            return t;
          },
          nb::arg("data"), nb::rv_policy::take_ownership,
          "Sends data (bytes-like) without waiting; returns an RpcTicket to wait on (ticket.wait() or "
          "client.wait(ticket)). Raises TooLarge, Timeout when inflight_limit calls are already in flight, Closed when "
          "the "
          "server closed or this client is detached, PeerDead when the server died.")
      .def(
          "wait",
          [](PyRpcClient& self, PyRpcTicket& t, nb::handle timeout) {
            if (t.client != &self)
              raise_kind("invalid_argument", self.ctx("wait") + ": the ticket is another client's");
            return wait_ticket(t, to_timeout(timeout));
          },
          nb::arg("ticket"), nb::arg("timeout").none() = nb::none(),
          "ticket.wait(timeout): the response of a call_async of this client. Raises InvalidArgument for another "
          "client's ticket, and what RpcTicket.wait raises.")
      .def(
          "detach", [](PyRpcClient& self) { self.request_detach("detach"); },
          "Lets go of this client's connection (the service stays). A call()/wait() of this client in another "
          "thread (or interrupted by a signal handler calling detach) raises Closed within about 20 ms; its "
          "tickets and later calls raise Closed. Leaves every WaitSet it is attached to. Idempotent.")
      .def_prop_ro(
          "is_attached", [](PyRpcClient& self) { return !self.closing; }, "False once detach() was called.")
      .def(
          "__enter__", [](nb::handle self) { return self; },
          "with RpcClient.connect(...) as c: detaches c at the end of the block.")
      .def(
          "__exit__",
          [](PyRpcClient& self, nb::handle, nb::handle, nb::handle) {
            self.request_detach("__exit__");
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(), "Detaches the client.")
      .def_prop_ro(
          "max_request_size",
          [](PyRpcClient& self) {
            Use use(self, "max_request_size");
            return self.c.max_request_size();
          },
          "The largest request the server takes (bytes). Raises Closed once detached.")
      .def_prop_ro(
          "max_response_size",
          [](PyRpcClient& self) {
            Use use(self, "max_response_size");
            return self.c.max_response_size();
          },
          "The largest response the server sends (bytes). Raises Closed once detached.")
      .def_prop_ro(
          "inflight_limit",
          [](PyRpcClient& self) {
            Use use(self, "inflight_limit");
            return self.c.inflight_limit();
          },
          "How many calls may be in flight at once. Raises Closed once detached.")
      .def_prop_ro(
          "reconnects",
          [](PyRpcClient& self) {
            Use use(self, "reconnects");
            return self.c.reconnects();
          },
          "How many times the client reconnected to a restarted server. Raises Closed once detached.")
      .def_prop_ro(
          "name", [](PyRpcClient& self) { return self.name; }, "The service's name.");
#undef ZIPC_TIMEOUT_DOC
}

}  // namespace zipc::py
