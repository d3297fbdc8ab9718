// zipc.WaitSet: wait on many subscribers, queue consumers, fds and intervals
// at once; its readiness fd lets asyncio (zipc.aio) wait through the event
// loop's add_reader instead of a thread per channel.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <poll.h>

#include <map>
#include <utility>
#include <vector>

#include "common.hpp"
#include "zipc/rpc.hpp"
#include "zipc/waitset.hpp"

namespace zipc::py {
namespace {

const char* kind_name(ReadyKind k) noexcept {
  switch (k) {
    case ReadyKind::queue: return "queue";
    case ReadyKind::subscriber: return "subscriber";
    case ReadyKind::fd: return "fd";
    case ReadyKind::deadline: return "deadline";
    case ReadyKind::interval: return "interval";
    case ReadyKind::queue_room: return "queue_room";
    case ReadyKind::rpc_server: return "rpc_server";
    case ReadyKind::rpc_client: return "rpc_client";
    case ReadyKind::listener: return "listener";
  }
  return "unknown";
}

struct PyWaitSet : Guarded, WaitSetLink {
  zipc::WaitSet ws;
  // The Python objects attached: kept alive (the C++ WaitSet holds their
  // address) and told so (their detach() first detaches them from here).
  struct Held {
    nb::object obj;
    Guarded* guard = nullptr;
  };
  std::map<std::uint64_t, Held> held;

  PyWaitSet() { label = "WaitSet"; }
  PyWaitSet(const PyWaitSet&) = delete;
  PyWaitSet& operator=(const PyWaitSet&) = delete;
  ~PyWaitSet() override {
    for (auto& [id, h] : held) unlink(h.guard);
  }

  void unlink(Guarded* g) noexcept {
    if (g == nullptr) return;
    for (auto it = g->waitsets.begin(); it != g->waitsets.end(); ++it) {
      if (*it == this) {
        g->waitsets.erase(it);
        break;
      }
    }
    g->in_waitsets = static_cast<int>(g->waitsets.size());
  }

  void link(Guarded* g, std::uint64_t id, nb::handle endpoint) {
    g->waitsets.push_back(this);
    g->in_waitsets = static_cast<int>(g->waitsets.size());
    held[id] = Held{nb::borrow(endpoint), g};
  }

  // Every id of this WaitSet (GIL held; a wait in another thread ends its slice first).
  void let_go() noexcept override {
    {
      NoGil nogil;
      std::lock_guard lock(mu);
      for (auto& [id, h] : held) (void)ws.detach(id);
    }
    auto gone_held = std::move(held);
    held.clear();
    for (auto& [id, h] : gone_held) unlink(h.guard);
  }

  // The endpoint detaches from its channel: this WaitSet lets go of it first.
  void forget(Guarded& endpoint) override {
    std::vector<std::uint64_t> ids;
    for (auto& [id, h] : held)
      if (h.guard == &endpoint) ids.push_back(id);
    {
      NoGil nogil;
      std::lock_guard lock(mu);
      for (auto id : ids) (void)ws.detach(id);
    }
    for (auto id : ids) {
      auto it = held.find(id);
      if (it == held.end()) continue;
      nb::object keep = std::move(it->second.obj);  // dropped after the erase
      held.erase(it);
    }
    // Every link to this WaitSet goes (request_detach loops until none is left).
    std::erase(endpoint.waitsets, static_cast<WaitSetLink*>(this));
    endpoint.in_waitsets = static_cast<int>(endpoint.waitsets.size());
  }

  std::uint64_t attach(nb::handle endpoint) {
    Use self_use(*this, "attach");
    Guarded* guard = nullptr;
    std::uint64_t id = 0;
    zipc::Subscriber* s = subscriber_of(endpoint, &guard);
    zipc::Queue* q = s == nullptr ? queue_of(endpoint, &guard) : nullptr;
    zipc::RpcClient* c = s == nullptr && q == nullptr ? rpc_client_of(endpoint, &guard) : nullptr;
    zipc::Listener* l = s == nullptr && q == nullptr && c == nullptr ? listener_of(endpoint, &guard) : nullptr;
    zipc::RpcServer* sv =
        s == nullptr && q == nullptr && c == nullptr && l == nullptr ? rpc_server_of(endpoint, &guard) : nullptr;
    if (s == nullptr && q == nullptr && c == nullptr && l == nullptr && sv == nullptr)
      throw nb::type_error(("WaitSet.attach: endpoint: expected a Subscriber, a Queue opened as a consumer, an "
                            "RpcClient, an RpcServer or a Listener, not " +
                            nb::cast<std::string>(nb::str(endpoint.type().attr("__name__"))))
                               .c_str());
    Use endpoint_use(*guard, "WaitSet.attach");
    {
      NoGil nogil;  // a wait() in another thread holds mu without the GIL
      std::lock_guard lock(mu);
      std::lock_guard endpoint_lock(guard->mu);
      id = s != nullptr    ? ws.attach(*s)
           : q != nullptr  ? ws.attach(*q)
           : c != nullptr  ? ws.attach(*c)
           : sv != nullptr ? ws.attach(*sv)
                           : ws.attach(*l);
    }
    link(guard, id, endpoint);
    return id;
  }

  std::uint64_t attach_room(nb::handle endpoint) {
    Use self_use(*this, "attach_room");
    Guarded* guard = nullptr;
    zipc::Queue* q = queue_of(endpoint, &guard);
    if (q == nullptr)
      throw nb::type_error(("WaitSet.attach_room: queue: expected a Queue opened as a producer, not " +
                            nb::cast<std::string>(nb::str(endpoint.type().attr("__name__"))))
                               .c_str());
    Use endpoint_use(*guard, "WaitSet.attach_room");
    std::uint64_t id = 0;
    {
      NoGil nogil;
      std::lock_guard lock(mu);
      std::lock_guard endpoint_lock(guard->mu);
      id = ws.attach_room(*q);
    }
    link(guard, id, endpoint);
    return id;
  }

  bool detach(std::uint64_t id) {
    Use use(*this, "detach");
    const bool known = locked(*this, [&] { return ws.detach(id); });
    if (auto it = held.find(id); it != held.end()) {
      nb::object keep = std::move(it->second.obj);
      Guarded* g = it->second.guard;
      held.erase(it);
      unlink(g);
    }
    return known;
  }

  std::vector<std::pair<std::uint64_t, const char*>> wait(std::optional<ns> timeout) {
    Use use(*this, "wait");
    std::vector<std::pair<std::uint64_t, const char*>> out;
    auto op = [&](ns slice) {
      out.clear();
      for (const Ready& r : ws.wait(slice)) out.emplace_back(r.id, kind_name(r.kind));
      return out.empty() ? Status::timeout : Status::ok;
    };
    (void)sliced(*this, timeout, op, [](Status s) { return s; });
    return out;
  }
};

}  // namespace

void init_waitset(nb::module_& m) {
  nb::class_<PyWaitSet>(m, "WaitSet",
                        "Waits on many channels at once (level-triggered). Use it and the endpoints attached to "
                        "it from one thread (an asyncio loop, for instance).")
      .def(nb::init<>(), "An empty WaitSet (io_uring futex waits where the kernel has them, else a polling fallback).")
      .def("attach", &PyWaitSet::attach, nb::arg("endpoint"),
           nb::sig("def attach(self, endpoint: Subscriber | Queue | RpcClient | RpcServer | Listener) -> int"),
           "Attaches a Subscriber, a Queue opened as a consumer, an RpcClient, an RpcServer (serve it with "
           "serve_pending) or a Listener; returns its id. The endpoint is kept alive while attached; its detach() "
           "detaches it from here first. Raises TypeError for anything else, InvalidArgument for a producer-only "
           "Queue, Closed for a detached endpoint or a closed WaitSet.")
      .def(
          "attach_fd",
          [](PyWaitSet& self, int fd, std::uint32_t events) {
            Use use(self, "attach_fd");
            if (fd < 0)
              raise_kind("invalid_argument", ("WaitSet.attach_fd: fd: " + std::to_string(fd) + " is negative").c_str());
            std::uint64_t id = 0;
            {
              NoGil nogil;
              std::lock_guard lock(self.mu);
              id = self.ws.attach_fd(fd, events);
            }
            self.held[id] = PyWaitSet::Held{};
            return id;
          },
          nb::arg("fd"), nb::arg("events") = static_cast<std::uint32_t>(POLLIN),
          "attach_fd(fd, events=POLLIN) -> int\n\nAttaches a plain file descriptor (poll(2) events); returns its id. "
          "Raises ValueError for a negative fd, Closed once closed.")
      .def(
          "attach_interval",
          [](PyWaitSet& self, nb::handle period) {
            Use use(self, "attach_interval");
            const auto p = to_timeout(period, "period");
            if (!p || p->count() <= 0)
              raise_kind("invalid_argument", "WaitSet.attach_interval: period: a positive, finite number of seconds");
            std::uint64_t id = 0;
            {
              NoGil nogil;
              std::lock_guard lock(self.mu);
              id = self.ws.attach_interval(*p);
            }
            self.held[id] = PyWaitSet::Held{};
            return id;
          },
          nb::arg("period"), nb::sig("def attach_interval(self, period: float | datetime.timedelta) -> int"),
          "Reported once per period (seconds or timedelta, > 0); returns its id. Raises ValueError for a zero, "
          "negative or NaN period, Closed once closed.")
      .def(
          "attach_room", &PyWaitSet::attach_room, nb::arg("queue"),
          nb::sig("def attach_room(self, queue: Queue) -> int"),
          "Attaches queue, a Queue producer waiting for room (kind 'queue_room'); returns its id. Raises TypeError for "
          "another object, InvalidArgument for a consumer-only Queue, Closed.")
      .def("detach", &PyWaitSet::detach, nb::arg("id"),
           "detach(id) -> bool\n\nDetaches one attachment; False for an unknown id. Raises Closed once closed.")
      .def(
          "wait", [](PyWaitSet& self, nb::handle timeout) { return self.wait(to_timeout(timeout)); },
          nb::arg("timeout").none() = nb::none(),
          nb::sig("def wait(self, timeout: float | datetime.timedelta | None = None) -> list[tuple[int, str]]"),
          "[(id, kind), ...] of what is ready (level-triggered), or [] when the time ran out (a readiness wait, like "
          "select). 0 polls (and arms the readiness fd).\ntimeout: seconds (int or float) or datetime.timedelta; None "
          "waits forever, 0 tries once; a negative or NaN timeout raises ValueError.\nRaises Closed once closed (also "
          "by another thread during the wait).")
      .def(
          "stop",
          [](PyWaitSet& self) {
            Use use(self, "stop");
            self.ws.stop();
          },
          "stop() -> None\n\nMakes a wait() in progress return early (from any thread). Raises Closed once closed.")
      .def_prop_ro(
          "readiness_fd",
          [](PyWaitSet& self) {
            Use use(self, "readiness_fd");
            return self.ws.readiness_fd();
          },
          "A file descriptor readable while wait(0) would report something; without io_uring futex waits (kernel < "
          "6.7) also every fallback nap (1 ms). Raises Closed once closed.")
      .def_prop_ro(
          "uses_io_uring",
          [](PyWaitSet& self) {
            Use use(self, "uses_io_uring");
            return self.ws.uses_io_uring();
          },
          "True when io_uring futex waits are in use (kernel 6.7+). Raises Closed once closed.")
      .def(
          "__len__",
          [](PyWaitSet& self) {
            if (self.closing) return std::size_t{0};
            Use use(self, "len");
            return locked(self, [&] { return self.ws.size(); });
          },
          "How many attachments (0 once closed).")
      .def(
          "close", [](PyWaitSet& self) { self.request_detach("close"); },
          "close() -> None\n\nDetaches everything and closes the WaitSet: a wait in another thread raises Closed "
          "within about 20 ms, later calls raise Closed. Idempotent.");
}

}  // namespace zipc::py
