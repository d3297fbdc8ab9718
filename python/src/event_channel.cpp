// zipc.EventChannel, zipc.Listener, zipc.Notifier over zipc/event_channel.hpp.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "common.hpp"
#include "docs.hpp"
#include "zipc/event_channel.hpp"

namespace zipc::py {

namespace {

struct PyEventChannel : Guarded {
  zipc::EventChannel c;
  std::string name;
};

struct PyListener : Guarded {
  zipc::Listener l;
  std::string name;
  void let_go() noexcept override {
    NoGil nogil;
    std::lock_guard lock(mu);
    l.detach();
  }
};

struct PyNotifier : Guarded {
  zipc::Notifier n;
  std::string name;
};

zipc::EventChannelOptions options(std::uint32_t max_event_id, std::uint32_t max_listeners, unsigned mode,
                                  const std::string& path) {
  zipc::EventChannelOptions o;
  o.max_event_id = max_event_id;
  o.max_listeners = max_listeners;
  o.segment.mode = mode;
  o.segment.path = path;
  return o;
}

PyEventChannel* make(zipc::EventChannel c, const std::string& name) {
  auto* p = new PyEventChannel();
  p->c = std::move(c);
  p->name = name;
  p->label = "event channel '" + name + "'";
  return p;
}

std::vector<std::uint32_t> take(PyListener& self, std::optional<ns> timeout) {
  Use use(self, "wait");
  std::vector<std::uint32_t> out;
  sliced(
      self, timeout,
      [&](ns slice) {
        auto got = slice.count() == 0 ? self.l.try_wait() : self.l.wait(slice);
        out.assign(got.begin(), got.end());
        return out.empty() ? Status::timeout : Status::ok;
      },
      [](Status s) { return s; });
  return out;
}

}  // namespace

zipc::Listener* listener_of(nb::handle h, Guarded** guard) {
  if (!nb::isinstance<PyListener>(h)) return nullptr;
  PyListener& l = nb::cast<PyListener&>(h);
  *guard = &l;
  return &l.l;
}

void init_event_channel(nb::module_& m) {
  nb::class_<PyListener>(m, "Listener",
                         "Wakes when notifiers signal ids; learns each id once per take (notifications coalesce).")
      .def(
          "try_wait", [](PyListener& self) { return take(self, ns::zero()); },
          "try_wait() -> list[int]\n\nThe ids notified since the last take, ascending; [] when none. Raises Closed "
          "once detached.")
      .def(
          "wait", [](PyListener& self, nb::handle timeout) { return take(self, to_timeout(timeout)); },
          nb::arg("timeout") = nb::none(),
          nb::sig("def wait(self, timeout: float | datetime.timedelta | None = None) -> list[int]"),
          "Waits for a notification; returns the ids notified (ascending), or [] when the time ran out (a readiness "
          "wait, like select).\ntimeout: seconds (int or float) or datetime.timedelta; None waits forever, 0 tries "
          "once; a negative or NaN timeout raises ValueError.\nRaises Closed once this handle is detached (also by "
          "another thread or a signal handler during the wait).")
      .def_prop_ro(
          "received",
          [](PyListener& self) {
            Use use(self, "received");
            return locked(self, [&] { return self.l.received(); });
          },
          "Notifications taken so far. Raises Closed once detached.")
      .def(
          "detach", [](PyListener& self) { self.request_detach("detach"); },
          "detach() -> None\n\nLeaves the channel (and every WaitSet it is attached to); a wait in another thread "
          "raises Closed within about 20 ms. Idempotent.")
      .def_prop_ro(
          "is_attached", [](PyListener& self) { return !self.closing; }, "False once detach() was called.")
      .def(
          "__enter__", [](nb::handle self) { return self; },
          "with channel.listener() as l: detaches l at the end of the block.")
      .def(
          "__exit__", [](PyListener& self, const nb::args&) { self.request_detach("__exit__"); },
          "Detaches the listener.");

  nb::class_<PyNotifier>(m, "Notifier", "Signals ids to every listener attached now.")
      .def(
          "notify",
          [](PyNotifier& self, std::uint32_t id) {
            const Status s = self.n.notify(id);
            if (s != Status::ok) raise_status(s, "event channel '" + self.name + "': notify " + std::to_string(id));
            return self.n.last_reach();
          },
          nb::arg("id"),
          "notify(id) -> int\n\nMarks id (0..max_event_id) pending for every attached listener and wakes them; returns "
          "how many. Raises TooLarge past max_event_id.");

  nb::class_<PyEventChannel>(m, "EventChannel", "A named notification channel (ids, no payload).")
      .def_static(
          "create",
          [](const std::string& name, std::uint32_t max_event_id, std::uint32_t max_listeners, unsigned mode,
             const std::string& path) {
            return make(zipc::EventChannel::create(name, options(max_event_id, max_listeners, mode, path)), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("max_event_id") = 255, nb::arg("max_listeners") = 16,
          nb::arg("mode") = 0600, nb::arg("path") = "", nb::rv_policy::take_ownership,
          "Creates the event channel `name`.\n" ZIPC_PYDOC_NAME
          "max_event_id: ids 0..max_event_id may be notified (at most 65535).\nmax_listeners: listener slots "
          "(1..1024).\n" ZIPC_PYDOC_MODE ZIPC_PYDOC_PATH "Raises AlreadyExists, InvalidName, InvalidArgument.")
      .def_static(
          "open_or_create",
          [](const std::string& name, std::uint32_t max_event_id, std::uint32_t max_listeners, unsigned mode,
             const std::string& path, bool accept_existing) {
            auto o = options(max_event_id, max_listeners, mode, path);
            o.accept_existing = accept_existing;
            return make(zipc::EventChannel::open_or_create(name, o), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("max_event_id") = 255, nb::arg("max_listeners") = 16,
          nb::arg("mode") = 0600, nb::arg("path") = "", nb::arg("accept_existing") = false,
          nb::rv_policy::take_ownership,
          "Opens the event channel `name`, or creates it when absent (race-free). The arguments are create's: "
          "name, max_event_id, max_listeners, mode, path (see EventChannel.create).\n" ZIPC_PYDOC_ACCEPT
          "Raises OptionsMismatch.")
      .def_static(
          "open",
          [](const std::string& name, const std::string& path) {
            zipc::EventChannelOptions o;
            o.segment.path = path;
            return make(zipc::EventChannel::open(name, o), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("path") = "", nb::rv_policy::take_ownership,
          "Opens the existing event channel `name`.\n" ZIPC_PYDOC_NAME ZIPC_PYDOC_PATH "Raises NotFound, WrongKind.")
      .def_static(
          "remove",
          [](const std::string& name, const std::string& path) {
            zipc::SegmentOptions o;
            o.path = path;
            return zipc::EventChannel::remove(name, o);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("path") = "",
          "Removes the channel's name (handles keep working); False when absent.\n" ZIPC_PYDOC_NAME
              ZIPC_PYDOC_REMOVE_PATH)
      .def(
          "listener",
          [](PyEventChannel& self) {
            Use use(self, "listener");
            auto* l = new PyListener();
            l->l = self.c.listener();
            l->name = self.name;
            l->label = "event channel '" + self.name + "': listener";
            return l;
          },
          nb::rv_policy::take_ownership,
          "listener() -> Listener\n\nA new listener. Raises Busy when max_listeners are attached.")
      .def(
          "notifier",
          [](PyEventChannel& self) {
            Use use(self, "notifier");
            auto* n = new PyNotifier();
            n->n = self.c.notifier();
            n->name = self.name;
            n->label = "event channel '" + self.name + "': notifier";
            return n;
          },
          nb::rv_policy::take_ownership, "notifier() -> Notifier\n\nA notifier of this channel.")
      .def_prop_ro(
          "max_event_id", [](PyEventChannel& self) { return self.c.max_event_id(); }, "The largest id notify() takes.")
      .def_prop_ro(
          "max_listeners", [](PyEventChannel& self) { return self.c.max_listeners(); },
          "How many listeners may be attached at once.")
      .def_prop_ro(
          "notifications", [](PyEventChannel& self) { return self.c.notifications(); },
          "Notifications sent on the channel so far.")
      .def(
          "__enter__", [](nb::handle self) { return self; },
          "with EventChannel.create(...) as c: (nothing to do at the end).")
      .def(
          "__exit__", [](PyEventChannel&, const nb::args&) {}, "Nothing: listeners and notifiers keep the mapping.");
}

}  // namespace zipc::py
