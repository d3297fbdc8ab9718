// zipc.Topic, Publisher, Subscriber: copy API, loans, iteration.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <vector>

#include "common.hpp"
#include "docs.hpp"
#include "zipc/options.hpp"
#include "zipc/topic.hpp"

namespace zipc::py {
namespace {

struct PyTopic : Guarded {
  zipc::Topic t;
  std::string name;
  void let_go() noexcept override { t = zipc::Topic(); }
};

struct PyPublisher : Guarded {
  zipc::Publisher p;
  std::string name;
  std::string ctx(const char* what) const { return "topic '" + name + "': publisher: " + what; }
  void let_go() noexcept override {
    NoGil nogil;
    std::lock_guard lock(mu);
    p = zipc::Publisher();
  }
};

struct PySubscriber : Guarded {
  zipc::Subscriber s;
  std::string name;
  std::vector<std::byte> buf;  // lossy reads copy here first
  bool view_out = false;       // a read loan holds the subscriber's current record
  std::string ctx(const char* what) const { return "topic '" + name + "': subscriber: " + what; }
  void require_no_loan(const char* what) const {
    if (view_out)
      raise_kind("invalid_argument", ctx(what) + ": a read loan of this subscriber is still held (release it first)");
  }
  void let_go() noexcept override {
    NoGil nogil;
    std::lock_guard lock(mu);
    s = zipc::Subscriber();
  }
};

struct TopicWriteState : LoanState {
  zipc::TopicWriteLoan loan;
  void finish() noexcept override {
    std::lock_guard lock(guard->mu);
    if (loan) loan.abort();
  }
};

struct TopicReadState : LoanState {
  PySubscriber* sub = nullptr;
  std::uint64_t sequence = 0;
  std::uint64_t publish_ns = 0;
  zipc::TopicReadLoan loan;
  void finish() noexcept override {
    std::lock_guard lock(guard->mu);
    if (loan) loan.release();
    sub->view_out = false;
  }
};

struct TopicWriteLoan : LoanBase {
  std::size_t size = 0;
  std::optional<std::uint64_t> sequence;
  TopicWriteState& ws() const { return static_cast<TopicWriteState&>(*st); }
  std::uint64_t commit(std::optional<std::size_t> n) {
    require_active("commit");
    const std::size_t len = n.value_or(size);
    if (len > size)
      raise_kind("too_large", "commit: " + std::to_string(len) + " bytes > the " + std::to_string(size) + " reserved");
    if (!release_views(views) || st->exports > 0) {
      st->end();
      PyErr_SetString(PyExc_BufferError,
                      "commit: a view of the loan is still exported (e.g. a numpy array made from it); "
                      "delete it before the loan ends. The loan is aborted.");
      throw nb::python_error();
    }
    zipc::CommitResult r;
    {
      std::lock_guard lock(st->guard->mu);
      r = ws().loan.commit(len);
    }
    st->end();
    if (!r.ok()) raise_status(r.status, "commit");
    sequence = r.sequence;
    return r.sequence;
  }
};

struct TopicReadLoan : LoanBase {
  std::uint64_t sequence = 0;
  std::uint64_t publish_ns = 0;
};

zipc::From parse_start(nb::handle start) {
  if (PyLong_Check(start.ptr()) && !PyBool_Check(start.ptr())) {
    const unsigned long long v = PyLong_AsUnsignedLongLong(start.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      raise_kind("invalid_argument", ("subscribe: start=" + nb::cast<std::string>(nb::repr(start)) +
                                      ": a sequence number is 0 to 2**64-1 (or 'latest', 'oldest')")
                                         .c_str());
    }
    return zipc::From::sequence(v);
  }
  if (!nb::isinstance<nb::str>(start))
    throw nb::type_error(("subscribe: start: expected 'latest', 'oldest' or a sequence number (int), not " +
                          nb::cast<std::string>(nb::str(start.type().attr("__name__"))))
                             .c_str());
  std::string s = nb::cast<std::string>(start);
  if (s == "latest") return zipc::From::latest();
  if (s == "oldest") return zipc::From::oldest();
  raise_kind("invalid_argument",
             ("subscribe: start: expected 'latest', 'oldest' or a sequence number, not '" + s + "'").c_str());
}

zipc::TopicOptions topic_options(std::uint64_t capacity_bytes, std::uint32_t max_message_size,
                                 std::uint32_t max_subscribers, Multiplicity publishers, nb::handle recovery_time,
                                 WaitStrategy wait, unsigned mode, const std::string& path, bool prefault,
                                 bool streaming_stores) {
  zipc::TopicOptions o;
  o.capacity_bytes = capacity_bytes;
  o.max_message_size = max_message_size;
  o.max_subscribers = max_subscribers;
  o.publishers = publishers;
  o.recovery_time = to_millis(recovery_time, "recovery_time");
  o.wait = wait_options(wait);
  o.segment.mode = mode;
  o.segment.path = path;
  o.segment.prefault = prefault;
  o.streaming_stores = streaming_stores;
  return o;
}

PyTopic* make(zipc::Topic&& t, const std::string& name) {
  auto* p = new PyTopic();
  p->t = std::move(t);
  p->name = name;
  p->label = "topic '" + name + "'";
  return p;
}

struct Got {
  Status status = Status::empty;
  std::uint64_t sequence = 0;
  std::uint64_t publish_ns = 0;
  nb::object data;
};

// The next message as bytes (copy). try_only: empty/timeout -> status returned.
Got next_message(PySubscriber& self, std::optional<ns> t) {
  Use use(self, "recv");
  self.require_no_loan("recv");
  Got g;
  if (self.s.zero_copy()) {
    zipc::TopicReadLoan v = sliced(
        self, t, [&](ns sl) { return self.s.acquire(sl); }, [](const zipc::TopicReadLoan& m) { return m.status(); });
    g.status = v.status();
    if (v) {
      g.sequence = v.sequence();
      g.publish_ns = v.publish_ns();
      g.data = to_bytes(v.data());
      std::lock_guard lock(self.mu);
      v.release();
    }
    return g;
  }
  zipc::ReadResult r = sliced(
      self, t,
      [&](ns sl) {
        for (;;) {
          zipc::ReadResult x = self.s.read(self.buf, sl);
          if (x.status != Status::overrun) return x;  // lost() counted the gap; go on from the oldest
        }
      },
      [](const zipc::ReadResult& x) { return x.status; });
  g.status = r.status;
  if (r.ok()) {
    g.sequence = r.sequence;
    g.publish_ns = r.publish_ns;
    g.data = to_bytes({self.buf.data(), r.size});
  }
  return g;
}

nb::object acquire_impl(nb::handle self_obj, std::optional<ns> t, bool try_only) {
  PySubscriber& self = nb::cast<PySubscriber&>(self_obj);
  Use use(self, "acquire");
  self.require_no_loan("acquire");
  if (!self.s.zero_copy())
    raise_kind("not_supported", self.ctx("acquire") + ": zero-copy reads need a reliable subscriber with write access");
  zipc::TopicReadLoan v = sliced(
      self, t, [&](ns sl) { return self.s.acquire(sl); }, [](const zipc::TopicReadLoan& m) { return m.status(); });
  if (!v) {
    if (try_only && (v.status() == Status::empty || v.status() == Status::timeout)) return nb::none();
    raise_status(v.status(), self.ctx("acquire"));
  }
  auto st = std::make_shared<TopicReadState>();
  st->ptr = const_cast<std::byte*>(v.data().data());
  st->len = v.data().size();
  st->sub = &self;
  auto* l = new TopicReadLoan();
  l->sequence = v.sequence();
  l->publish_ns = v.publish_ns();
  st->loan = std::move(v);
  self.view_out = true;
  st->attach(&self, self_obj);
  l->st = std::move(st);
  return nb::cast(l, nb::rv_policy::take_ownership);
}

nb::object reserve_impl(nb::handle self_obj, std::size_t size, std::optional<ns> t, bool try_only) {
  PyPublisher& self = nb::cast<PyPublisher&>(self_obj);
  Use use(self, "reserve");
  if (self.live_loans > 0)
    raise_kind("invalid_argument", self.ctx("reserve") + ": this publisher already has a loan out");
  zipc::TopicWriteLoan loan = sliced(
      self, t, [&](ns sl) { return self.p.reserve(size, sl); },
      [](const zipc::TopicWriteLoan& l) { return l.status(); });
  if (!loan) {
    if (try_only && (loan.status() == Status::full || loan.status() == Status::timeout)) return nb::none();
    raise_status(loan.status(), self.ctx("reserve"));
  }
  auto st = std::make_shared<TopicWriteState>();
  st->ptr = loan.data().data();
  st->len = loan.data().size();
  st->readonly = false;
  st->loan = std::move(loan);
  st->attach(&self, self_obj);
  auto* l = new TopicWriteLoan();
  l->size = size;
  l->st = std::move(st);
  return nb::cast(l, nb::rv_policy::take_ownership);
}

}  // namespace

zipc::Subscriber* subscriber_of(nb::handle h, Guarded** guard) {
  if (!nb::isinstance<PySubscriber>(h)) return nullptr;
  PySubscriber& sub = nb::cast<PySubscriber&>(h);
  *guard = &sub;
  return &sub.s;
}

void init_topic(nb::module_& m) {
  nb::enum_<Delivery>(m, "Delivery",
                      "Whether publishers wait for a subscriber: reliable (never overwritten: the publisher waits "
                      "for it) or lossy (the publisher never waits; what it misses is counted in lost).")
      .value("reliable", Delivery::reliable)
      .value("lossy", Delivery::lossy);

  nb::class_<TopicWriteLoan>(m, "TopicWriteLoan",
                             "A reserved record in a Topic's log (from Publisher.reserve): fill view(), then "
                             "commit(); use it in a with block, which commits at its end (aborts on an exception). "
                             "Dropped uncommitted, readers skip it.")
      .def(
          "__enter__", [](TopicWriteLoan& l) { return l.view(); }, nb::sig("def __enter__(self) -> memoryview"),
          "The writable memoryview; committed at the end of the with block (aborted on an exception).")
      .def(
          "__exit__",
          [](TopicWriteLoan& l, nb::handle type, nb::handle, nb::handle) {
            if (!l.active()) return false;
            if (type.is_none()) {
              (void)l.commit(std::nullopt);
            } else {
              l.end();
            }
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(),
          "Commits (no exception) or aborts the loan, unless it already ended.")
      .def(
          "view", [](TopicWriteLoan& l) { return l.view(); }, nb::sig("def view(self) -> memoryview"),
          "A writable memoryview of the reserved bytes, released when the loan ends. Raises LoanEnded once the loan "
          "ended.")
      .def("commit", &TopicWriteLoan::commit, nb::arg("size").none() = nb::none(),
           "commit(size=None) -> int\n\nPublishes the first size bytes (default: all reserved); returns the sequence "
           "number. Raises TooLarge past the size reserved, LoanEnded when already committed or aborted, BufferError "
           "when a view is still exported (the loan is then aborted).")
      .def(
          "abort", [](TopicWriteLoan& l) { l.end(); },
          "abort() -> None\n\nDrops the loan unpublished; nothing once it ended.")
      .def_prop_ro(
          "size", [](const TopicWriteLoan& l) { return l.size; }, "The bytes reserved.")
      .def_prop_ro(
          "sequence", [](const TopicWriteLoan& l) { return l.sequence; },
          "The sequence number once committed (None before).")
      .def_prop_ro("active", &TopicWriteLoan::active, "True until the loan is committed or aborted.");

  nb::class_<TopicReadLoan>(m, "TopicReadLoan",
                            "A message of a Topic read in place (from Subscriber.acquire, reliable subscribers): "
                            "view() or tobytes(), then release() (or a with block); publishers are held back from "
                            "its record until then.")
      .def(
          "__enter__", [](TopicReadLoan& l) { return l.view(); }, nb::sig("def __enter__(self) -> memoryview"),
          "The read-only memoryview; released at the end of the with block.")
      .def(
          "__exit__",
          [](TopicReadLoan& l, nb::handle, nb::handle, nb::handle) {
            l.end();
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(), "Releases the loan.")
      .def(
          "view", [](TopicReadLoan& l) { return l.view(); }, nb::sig("def view(self) -> memoryview"),
          "A read-only memoryview of the message, released with the loan. Raises LoanEnded once the loan ended.")
      .def(
          "tobytes",
          [](TopicReadLoan& l) {
            l.require_active("tobytes");
            return to_bytes({l.st->ptr, l.st->len});
          },
          "tobytes() -> bytes\n\nA copy of the message. Raises LoanEnded once the loan ended.")
      .def(
          "release", [](TopicReadLoan& l) { l.end(); },
          "release() -> None\n\nEnds the loan; nothing when already released.")
      .def_prop_ro(
          "size", [](const TopicReadLoan& l) { return l.st ? l.st->len : 0; }, "The message's length in bytes.")
      .def(
          "__len__", [](const TopicReadLoan& l) { return l.st ? l.st->len : 0; }, "The message's length in bytes.")
      .def_prop_ro(
          "sequence", [](const TopicReadLoan& l) { return l.sequence; }, "The message's sequence number.")
      .def_prop_ro(
          "publish_ns", [](const TopicReadLoan& l) { return l.publish_ns; },
          "When it was published (CLOCK_REALTIME nanoseconds).")
      .def_prop_ro("active", &TopicReadLoan::active, "True until the loan is released.");

  nb::class_<PyPublisher>(m, "Publisher",
                          "Appends messages to a Topic (from Topic.publisher()); each gets the next sequence "
                          "number. Used by one thread at a time; detach() gives its slot back.")
      .def(
          "publish",
          [](PyPublisher& self, nb::handle data, nb::handle timeout) {
            Use use(self, "publish");
            InBuf b(data);
            auto r = sliced(
                self, to_timeout(timeout), [&](ns sl) { return self.p.publish(b.span(), sl); },
                [](const zipc::CommitResult& x) { return x.status; });
            if (!r.ok()) raise_status(r.status, self.ctx("publish"));
            return r.sequence;
          },
          nb::arg("data"), nb::arg("timeout").none() = nb::none(),
          nb::sig("def publish(self, data: collections.abc.Buffer, timeout: float | datetime.timedelta | None = None) "
                  "-> int"),
          "Publishes a copy of data (bytes-like); returns its sequence number. Waits while a reliable subscriber holds "
          "the ring full.\ntimeout: seconds (int or float) or datetime.timedelta; None waits forever, 0 tries once; a "
          "negative or NaN timeout raises ValueError.\nRaises Timeout, TooLarge (past max_message_size), Closed when "
          "the topic is closed or once this handle is detached (also by another thread or a signal handler during the "
          "wait).")
      .def(
          "try_publish",
          [](PyPublisher& self, nb::handle data) -> std::optional<std::uint64_t> {
            Use use(self, "try_publish");
            InBuf b(data);
            zipc::CommitResult r;
            {
              NoGil nogil;
              std::lock_guard lock(self.mu);
              r = self.p.try_publish(b.span());
            }
            if (r.status == Status::full) return std::nullopt;
            if (!r.ok()) raise_status(r.status, self.ctx("try_publish"));
            return r.sequence;
          },
          nb::arg("data"), nb::sig("def try_publish(self, data: collections.abc.Buffer) -> int | None"),
          "Publishes a copy of data (bytes-like) without waiting; returns its sequence number, or None when the ring "
          "is full. Raises TooLarge, Closed.")
      .def(
          "reserve",
          [](nb::handle self, std::size_t size, nb::handle timeout) {
            return reserve_impl(self, size, to_timeout(timeout), false);
          },
          nb::arg("size"), nb::kw_only(), nb::arg("timeout").none() = nb::none(),
          nb::sig(
              "def reserve(self, size: int, *, timeout: float | datetime.timedelta | None = None) -> TopicWriteLoan"),
          "Zero copy: size writable bytes, published by commit() or at the end of a with block. One loan per publisher "
          "at a time.\ntimeout: seconds (int or float) or datetime.timedelta; None waits forever, 0 tries once; a "
          "negative or NaN timeout raises ValueError.\nRaises Timeout, TooLarge, InvalidArgument while another loan of "
          "this publisher is out, Closed.")
      .def(
          "try_reserve", [](nb::handle self, std::size_t size) { return reserve_impl(self, size, ns::zero(), true); },
          nb::arg("size"), nb::sig("def try_reserve(self, size: int) -> TopicWriteLoan | None"),
          "reserve() without waiting; None when the ring is full.\nsize: writable bytes (at most max_message_size).\n"
          "Raises TooLarge, InvalidArgument, Closed.")
      .def(
          "flush",
          [](PyPublisher& self) {
            Use use(self, "flush");
            locked(self, [&] { self.p.flush(); });
          },
          "flush() -> None\n\nMakes batched publishes visible now. Raises Closed once detached.")
      .def(
          "detach", [](PyPublisher& self) { self.request_detach("detach"); },
          "detach() -> None\n\nLets go of this publisher; a publish waiting in another thread raises Closed within "
          "about 20 ms. Raises InvalidArgument while its loan is out. Idempotent.")
      .def_prop_ro(
          "is_attached", [](PyPublisher& self) { return !self.closing; }, "False once detach() was called.");

  nb::class_<PySubscriber>(m, "Subscriber",
                           "Reads a Topic's messages in order (from Topic.subscribe()): recv(), acquire(), "
                           "iteration; reliable or lossy. Used by one thread at a time; detach() gives its slot "
                           "back.")
      .def(
          "recv",
          [](PySubscriber& self, nb::handle timeout) {
            Got g = next_message(self, to_timeout(timeout));
            if (g.status != Status::ok) raise_status(g.status, self.ctx("recv"));
            return g.data;
          },
          nb::arg("timeout").none() = nb::none(),
          nb::sig("def recv(self, timeout: float | datetime.timedelta | None = None) -> bytes"),
          "The next message (a copy), waiting for one. A lossy subscriber that was overrun skips to the oldest message "
          "(lost counts the gap).\ntimeout: seconds (int or float) or datetime.timedelta; None waits forever, 0 tries "
          "once; a negative or NaN timeout raises ValueError.\nRaises Timeout, Closed when the topic is closed and "
          "drained or once this handle is detached (also by another thread or a signal handler during the wait), "
          "InvalidArgument while a read loan of it is held.")
      .def(
          "try_recv",
          [](PySubscriber& self) -> nb::object {
            Got g = next_message(self, ns::zero());
            if (g.status == Status::empty || g.status == Status::timeout) return nb::none();
            if (g.status != Status::ok) raise_status(g.status, self.ctx("try_recv"));
            return g.data;
          },
          nb::sig("def try_recv(self) -> bytes | None"),
          "The next message without waiting; None when there is none. Raises Closed.")
      .def(
          "recv_info",
          [](PySubscriber& self, nb::handle timeout) {
            Got g = next_message(self, to_timeout(timeout));
            if (g.status != Status::ok) raise_status(g.status, self.ctx("recv"));
            return nb::make_tuple(g.data, g.sequence, g.publish_ns);
          },
          nb::arg("timeout").none() = nb::none(),
          nb::sig("def recv_info(self, timeout: float | datetime.timedelta | None = None) -> tuple[bytes, int, int]"),
          "(data, sequence, publish_ns) of the next message.\ntimeout: seconds (int or float) or datetime.timedelta; "
          "None waits forever, 0 tries once; a negative or NaN timeout raises ValueError.\nRaises Timeout, Closed.")
      .def(
          "acquire", [](nb::handle self, nb::handle timeout) { return acquire_impl(self, to_timeout(timeout), false); },
          nb::arg("timeout").none() = nb::none(),
          nb::sig("def acquire(self, timeout: float | datetime.timedelta | None = None) -> TopicReadLoan"),
          "Zero copy (reliable subscribers): a read loan of the next message; one at a time.\ntimeout: seconds (int or "
          "float) or datetime.timedelta; None waits forever, 0 tries once; a negative or NaN timeout raises "
          "ValueError.\nRaises Timeout, NotSupported for a lossy subscriber, InvalidArgument while a loan is held, "
          "Closed.")
      .def(
          "try_acquire", [](nb::handle self) { return acquire_impl(self, ns::zero(), true); },
          nb::sig("def try_acquire(self) -> TopicReadLoan | None"),
          "acquire() without waiting; None when there is no message. Raises NotSupported, InvalidArgument, Closed.")
      .def(
          "__iter__", [](nb::handle self) { return self; }, nb::sig("def __iter__(self) -> Subscriber"),
          "Iterating yields every message until the topic is closed and drained.")
      .def(
          "__next__",
          [](PySubscriber& self) {
            Got g = next_message(self, std::nullopt);
            if (g.status == Status::closed) throw nb::stop_iteration();
            if (g.status != Status::ok) raise_status(g.status, self.ctx("recv"));
            return g.data;
          },
          nb::sig("def __next__(self) -> bytes"),
          "The next message; StopIteration once the topic is closed and drained. Raises Closed when detached.")
      .def(
          "detach", [](PySubscriber& self) { self.request_detach("detach"); },
          "detach() -> None\n\nLets go of this subscriber (a reliable one stops holding publishers back). Leaves every "
          "WaitSet it is attached to. A call waiting in another thread (or interrupted by the signal handler calling "
          "detach) raises Closed within about 20 ms. Raises InvalidArgument while its read loan is held. Idempotent.")
      .def_prop_ro(
          "is_attached", [](PySubscriber& self) { return !self.closing; }, "False once detach() was called.")
      .def_prop_ro(
          "lost",
          [](PySubscriber& self) {
            Use use(self, "lost");
            return locked(self, [&] { return self.s.lost(); });
          },
          "Messages a lossy subscriber missed (overrun). Raises Closed once detached.")
      .def_prop_ro(
          "abandoned",
          [](PySubscriber& self) {
            Use use(self, "abandoned");
            return locked(self, [&] { return self.s.abandoned(); });
          },
          "Messages skipped because their publisher died mid-write. Raises Closed once detached.")
      .def_prop_ro(
          "next_sequence",
          [](PySubscriber& self) {
            Use use(self, "next_sequence");
            return locked(self, [&] { return self.s.next_sequence(); });
          },
          "The sequence number of the next message. Raises Closed once detached.")
      .def_prop_ro(
          "delivery",
          [](PySubscriber& self) {
            Use use(self, "delivery");
            return self.s.delivery();
          },
          "Delivery.reliable or Delivery.lossy. Raises Closed once detached.");

  nb::class_<PyTopic>(m, "Topic",
                      "A publish/subscribe log in shared memory: publishers append, every subscriber reads each "
                      "message in order. Make one with Topic.create, Topic.open or Topic.open_or_create, then take "
                      "publisher() and subscribe() from it.")
      .def_static(
          "create",
          [](const std::string& name, std::uint64_t capacity_bytes, std::uint32_t max_message_size,
             std::uint32_t max_subscribers, Multiplicity publishers, nb::handle recovery_time, WaitStrategy wait,
             unsigned mode, const std::string& path, bool prefault, bool streaming_stores, nb::handle type) {
            auto o = topic_options(capacity_bytes, max_message_size, max_subscribers, publishers, recovery_time, wait,
                                   mode, path, prefault, streaming_stores);
            o.segment.type = type_arg(type);
            return make(zipc::Topic::create(name, o), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("capacity_bytes") = 1 << 20, nb::arg("max_message_size") = 1 << 16,
          nb::arg("max_subscribers") = 256, nb::arg("publishers") = Multiplicity::single,
          nb::arg("recovery_time") = 0.2, nb::arg("wait") = WaitStrategy::adaptive, nb::arg("mode") = 0600,
          nb::arg("path") = "", nb::arg("prefault") = false, nb::arg("streaming_stores") = false,
          nb::arg("type").none() = nb::none(), nb::rv_policy::take_ownership,
          "Creates the topic `name`: a ring of capacity_bytes holding messages of up to max_message_size "
          "bytes.\n" ZIPC_PYDOC_NAME
          "capacity_bytes: ring bytes, rounded up to a power of two (at least 4096; default 1 MiB).\n"
          "max_message_size: the largest payload, bytes (the ring holds two records of it; default 64 KiB).\n"
          "max_subscribers: subscriber slots (default 256).\n"
          "publishers: Multiplicity.single (one publisher at a time, the default) or .multi (up to 64 at "
          "once).\n" ZIPC_PYDOC_RECOVERY ZIPC_PYDOC_WAIT ZIPC_PYDOC_MODE ZIPC_PYDOC_PATH ZIPC_PYDOC_PREFAULT
          "streaming_stores: bulk logging: non-temporal copies and commits made visible in batches (see "
          "Publisher.flush).\n" ZIPC_PYDOC_TYPE
          "Raises AlreadyExists, InvalidName, InvalidArgument (naming the option), ValueError for a negative "
          "recovery_time.")
      .def_static(
          "open_or_create",
          [](const std::string& name, std::uint64_t capacity_bytes, std::uint32_t max_message_size,
             std::uint32_t max_subscribers, Multiplicity publishers, nb::handle recovery_time, WaitStrategy wait,
             unsigned mode, const std::string& path, bool prefault, bool streaming_stores, bool accept_existing,
             nb::handle type) {
            auto o = topic_options(capacity_bytes, max_message_size, max_subscribers, publishers, recovery_time, wait,
                                   mode, path, prefault, streaming_stores);
            o.accept_existing = accept_existing;
            o.segment.type = type_arg(type);
            return make(zipc::Topic::open_or_create(name, o), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("capacity_bytes") = 1 << 20, nb::arg("max_message_size") = 1 << 16,
          nb::arg("max_subscribers") = 256, nb::arg("publishers") = Multiplicity::single,
          nb::arg("recovery_time") = 0.2, nb::arg("wait") = WaitStrategy::adaptive, nb::arg("mode") = 0600,
          nb::arg("path") = "", nb::arg("prefault") = false, nb::arg("streaming_stores") = false,
          nb::arg("accept_existing") = false, nb::arg("type").none() = nb::none(), nb::rv_policy::take_ownership,
          "Opens the topic `name`, or creates it with these options when absent (race-free). The arguments are "
          "create's: name, capacity_bytes, max_message_size, max_subscribers, publishers, recovery_time, wait, mode, "
          "path, prefault, streaming_stores, type (see Topic.create).\n" ZIPC_PYDOC_ACCEPT
          "Raises OptionsMismatch, TypeMismatch.")
      .def_static(
          "open",
          [](const std::string& name, nb::handle recovery_time, WaitStrategy wait, const std::string& path,
             bool read_only, nb::handle type) {
            zipc::TopicOptions o;
            o.recovery_time = to_millis(recovery_time, "recovery_time");
            o.wait = wait_options(wait);
            o.segment.path = path;
            o.segment.read_only = read_only;
            o.segment.type = type_arg(type);
            return make(zipc::Topic::open(name, o), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("recovery_time") = 0.2, nb::arg("wait") = WaitStrategy::adaptive,
          nb::arg("path") = "", nb::arg("read_only") = false, nb::arg("type").none() = nb::none(),
          nb::rv_policy::take_ownership,
          "Opens the existing topic `name`; its geometry comes from the segment.\n" ZIPC_PYDOC_NAME ZIPC_PYDOC_RECOVERY
              ZIPC_PYDOC_WAIT ZIPC_PYDOC_PATH
          "read_only: map it read-only (read permission on the file is enough); subscribers then read copies, and "
          "publishers, durable subscribers and close() raise WrongRole.\n" ZIPC_PYDOC_TYPE
          "Raises NotFound, WrongKind, TypeMismatch.")
      .def_prop_ro(
          "type_identity",
          [](PyTopic& self) {
            Use use(self, "type_identity");
            return identity_obj(self.t.segment().type_identity());
          },
          "The TypeIdentity the topic records (None: none). Raises Closed once detached.")
      .def_static(
          "remove",
          [](const std::string& name, const std::string& path) {
            zipc::SegmentOptions o;
            o.path = path;
            return zipc::Topic::remove(name, o);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("path") = "",
          "Removes the topic's name (handles keep working); False when absent.\n" ZIPC_PYDOC_NAME
              ZIPC_PYDOC_REMOVE_PATH)
      .def(
          "publisher",
          [](PyTopic& self) {
            Use use(self, "publisher");
            auto* p = new PyPublisher();
            p->p = self.t.publisher();
            p->name = self.name;
            p->label = "topic '" + self.name + "': publisher";
            return p;
          },
          nb::rv_policy::take_ownership,
          "publisher() -> Publisher\n\nA publisher of this topic (it keeps the mapping after the Topic is detached). "
          "Raises Closed once detached.")
      .def(
          "subscribe",
          [](PyTopic& self, nb::handle start, Delivery delivery, const std::string& durable_name,
             nb::handle durable_grace) {
            Use use(self, "subscribe");
            zipc::SubscribeOptions o;
            o.from = parse_start(start);
            o.delivery = delivery;
            o.durable_name = durable_name;
            o.durable_grace = to_millis(durable_grace, "durable_grace");
            auto* s = new PySubscriber();
            s->s = self.t.subscribe(o);
            s->name = self.name;
            s->label = "topic '" + self.name + "': subscriber";
            if (!s->s.zero_copy()) s->buf.resize(self.t.max_message_size());
            return s;
          },
          nb::kw_only(), nb::arg("start") = "latest", nb::arg("delivery") = Delivery::reliable,
          nb::arg("durable_name") = "", nb::arg("durable_grace") = 10.0, nb::rv_policy::take_ownership,
          nb::sig("def subscribe(self, *, start: str | int = 'latest', delivery: Delivery = Delivery.reliable, "
                  "durable_name: str = '', durable_grace: float | datetime.timedelta = 10.0) -> Subscriber"),
          "A subscriber starting at start: 'latest' (the next message published), 'oldest' (the oldest still in the "
          "ring) or a sequence number (int >= 0). delivery: Delivery.reliable subscribers hold publishers back; "
          "Delivery.lossy ones never do and count what they miss (lost). durable_name keeps the position for "
          "durable_grace seconds after a detach or "
          "death.\nRaises ValueError for a negative, too large or unknown start, TypeError for another type, Busy when "
          "max_subscribers are attached, Closed once detached.")
      .def(
          "close",
          [](PyTopic& self) {
            Use use(self, "close");
            if (self.t.segment().read_only()) {
              throw zipc::Error(zipc::Errc::wrong_role,
                                "topic " + self.name + " was opened read-only: only a writer can close it");
            }
            self.t.close();
          },
          "close() -> None\n\nCloses the topic for everyone: publishes fail with Closed, subscribers drain, then get "
          "Closed. Raises WrongRole for a read-only handle, Closed once detached.")
      .def_prop_ro(
          "closed",
          [](PyTopic& self) {
            Use use(self, "closed");
            return self.t.closed();
          },
          "True once the topic was closed. Raises Closed once detached.")
      .def(
          "detach", [](PyTopic& self) { self.request_detach("detach"); },
          "detach() -> None\n\nLets go of this handle (publishers and subscribers made from it keep theirs). "
          "Idempotent.")
      .def(
          "__enter__", [](nb::handle self) { return self; },
          "with Topic.create(...) as t: detaches t at the end of the block.")
      .def(
          "__exit__",
          [](PyTopic& self, nb::handle, nb::handle, nb::handle) {
            self.request_detach("__exit__");
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(), "Detaches the handle.")
      .def_prop_ro(
          "is_attached", [](PyTopic& self) { return !self.closing; }, "False once detach() was called.")
      .def_prop_ro(
          "name", [](PyTopic& self) { return self.name; }, "The topic's name.")
      .def_prop_ro(
          "capacity_bytes",
          [](PyTopic& self) {
            Use use(self, "capacity_bytes");
            return self.t.capacity_bytes();
          },
          "The topic's capacity_bytes. Raises Closed once detached.")
      .def_prop_ro(
          "max_message_size",
          [](PyTopic& self) {
            Use use(self, "max_message_size");
            return self.t.max_message_size();
          },
          "The topic's max_message_size. Raises Closed once detached.")
      .def_prop_ro(
          "max_subscribers",
          [](PyTopic& self) {
            Use use(self, "max_subscribers");
            return self.t.max_subscribers();
          },
          "The topic's max_subscribers. Raises Closed once detached.")
      .def_prop_ro(
          "next_sequence",
          [](PyTopic& self) {
            Use use(self, "next_sequence");
            return self.t.next_sequence();
          },
          "The topic's next_sequence. Raises Closed once detached.")
      .def_prop_ro(
          "oldest_sequence",
          [](PyTopic& self) {
            Use use(self, "oldest_sequence");
            return self.t.oldest_sequence();
          },
          "The topic's oldest_sequence. Raises Closed once detached.");
}

}  // namespace zipc::py
