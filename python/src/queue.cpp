// zipc.Queue: copy API, loans as context managers, iteration.
#include <nanobind/stl/string.h>

#include <vector>

#include "common.hpp"
#include "docs.hpp"
#include "zipc/queue.hpp"

namespace zipc::py {
namespace {

struct PyQueue : Guarded {
  zipc::Queue q;
  std::string name;

  std::string ctx(const char* what) const { return "queue '" + name + "': " + what; }
  void let_go() noexcept override {
    NoGil nogil;
    std::lock_guard lock(mu);
    q = zipc::Queue();
  }
};

struct WriteState : LoanState {
  zipc::QueueWriteLoan loan;
  void finish() noexcept override {
    std::lock_guard lock(guard->mu);
    if (loan) loan.abort();
  }
};

struct ReadState : LoanState {
  zipc::QueueReadLoan loan;
  void finish() noexcept override {
    std::lock_guard lock(guard->mu);
    if (loan) loan.release();
  }
};

struct QueueWriteLoan : LoanBase {
  std::size_t size = 0;      // bytes the view shows and the default commit length
  std::size_t capacity = 0;  // the block
  WriteState& ws() const { return static_cast<WriteState&>(*st); }

  void commit(std::optional<std::size_t> n) {
    require_active("commit");
    const std::size_t len = n.value_or(size);
    if (len > capacity)
      raise_kind("too_large", "commit: " + std::to_string(len) + " bytes > the block's " + std::to_string(capacity));
    if (!release_views(views) || st->exports > 0) {
      st->end();  // aborted once the export goes
      PyErr_SetString(PyExc_BufferError,
                      "commit: a view of the loan is still exported (e.g. a numpy array made from it); "
                      "delete it before the loan ends. The loan is aborted.");
      throw nb::python_error();
    }
    Status s;
    {
      std::lock_guard lock(st->guard->mu);
      s = ws().loan.commit(len).status;
    }
    st->end();
    if (s != Status::ok) raise_status(s, "commit");
  }
  void abort() { end(); }
};

struct QueueReadLoan : LoanBase {
  void release() { end(); }
};

nb::object make_write_loan(PyQueue& self, nb::handle self_obj, zipc::QueueWriteLoan&& loan,
                           std::optional<std::size_t> size) {
  auto st = std::make_shared<WriteState>();
  st->ptr = loan.data().data();
  st->len = size.value_or(loan.size());
  st->readonly = false;
  auto* l = new QueueWriteLoan();
  l->capacity = loan.size();
  l->size = st->len;
  st->loan = std::move(loan);
  st->attach(&self, self_obj);
  l->st = std::move(st);
  return nb::cast(l, nb::rv_policy::take_ownership);
}

nb::object make_read_loan(PyQueue& self, nb::handle self_obj, zipc::QueueReadLoan&& loan) {
  auto st = std::make_shared<ReadState>();
  st->ptr = const_cast<std::byte*>(loan.data().data());
  st->len = loan.size();
  st->readonly = true;
  st->loan = std::move(loan);
  st->attach(&self, self_obj);
  auto* l = new QueueReadLoan();
  l->st = std::move(st);
  return nb::cast(l, nb::rv_policy::take_ownership);
}

zipc::QueueOptions queue_options(std::size_t block_size, std::size_t block_count, Multiplicity producers,
                                 Multiplicity consumers, std::uint32_t max_participants, nb::handle recovery_time,
                                 WaitStrategy wait, unsigned mode, const std::string& path, bool prefault,
                                 std::size_t oversize_bytes) {
  zipc::QueueOptions o;
  o.oversize_bytes = oversize_bytes;
  o.block_size = block_size;
  o.block_count = block_count;
  o.producers = producers;
  o.consumers = consumers;
  o.max_participants = max_participants;
  o.recovery_time = to_millis(recovery_time);
  o.wait = wait_options(wait);
  o.segment.mode = mode;
  o.segment.path = path;
  o.segment.prefault = prefault;
  return o;
}

PyQueue* make(zipc::Queue&& q, std::string_view name) {
  auto* p = new PyQueue();
  p->q = std::move(q);
  p->name = std::string(name);
  p->label = "queue '" + p->name + "'";
  return p;
}

nb::object recv_impl(PyQueue& self, std::optional<ns> t, bool try_only) {
  Use use(self, "recv");
  zipc::QueueReadLoan loan = sliced(
      self, t, [&](ns s) { return self.q.acquire(s); }, [](const zipc::QueueReadLoan& l) { return l.status(); });
  if (!loan) {
    if (try_only && (loan.status() == Status::empty || loan.status() == Status::timeout)) return nb::none();
    raise_status(loan.status(), self.ctx("recv"));
  }
  nb::bytes out = to_bytes(loan.data());
  std::lock_guard lock(self.mu);
  loan.release();
  return out;
}

}  // namespace

zipc::Queue* queue_of(nb::handle h, Guarded** guard) {
  if (!nb::isinstance<PyQueue>(h)) return nullptr;
  PyQueue& q = nb::cast<PyQueue&>(h);
  *guard = &q;
  return &q.q;
}

void init_queue(nb::module_& m) {
  nb::enum_<Multiplicity>(m, "Multiplicity",
                          "How many producers or consumers (a queue) or publishers (a topic) may be attached at "
                          "once: single (one at a time; another raises Busy) or multi (any number).")
      .value("single", Multiplicity::single)
      .value("multi", Multiplicity::multi);
  nb::enum_<Role>(m, "Role",
                  "What a queue handle does: producer (sends), consumer (receives), both, or none (only close(), "
                  "stats and recover(): a supervisor). Sending without the producer role (receiving without the "
                  "consumer role) raises WrongRole.")
      .value("none", Role::none)
      .value("producer", Role::producer)
      .value("consumer", Role::consumer)
      .value("both", Role::both);
  nb::enum_<WaitStrategy>(m, "WaitStrategy",
                          "How a blocking call waits: busy (spins: lowest latency, burns a CPU), adaptive (spins "
                          "briefly, yields, then sleeps on a futex; the default) or block (sleeps at once: least "
                          "CPU).")
      .value("busy", WaitStrategy::busy_poll)
      .value("adaptive", WaitStrategy::adaptive)
      .value("block", WaitStrategy::block);

  nb::class_<QueueWriteLoan>(m, "QueueWriteLoan",
                             "A reserved block of a Queue (from Queue.reserve): fill view(), then commit(); use it "
                             "in a with block, which commits at its end (aborts on an exception). Dropped "
                             "uncommitted, the block is aborted.")
      .def(
          "__enter__", [](QueueWriteLoan& l) { return l.view(); }, nb::sig("def __enter__(self) -> memoryview"),
          "The writable memoryview; the block is committed at the end of the with block (aborted on an exception).")
      .def(
          "__exit__",
          [](QueueWriteLoan& l, nb::handle type, nb::handle, nb::handle) {
            if (!l.active()) return false;
            if (type.is_none()) {
              l.commit(std::nullopt);
            } else {
              l.abort();
            }
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(),
          "Commits (no exception) or aborts the loan, unless it already ended.")
      .def(
          "view", [](QueueWriteLoan& l) { return l.view(); }, nb::sig("def view(self) -> memoryview"),
          "A writable memoryview of the reserved bytes, released when the loan ends (touching it then raises "
          "ValueError). Raises LoanEnded once the loan ended.")
      .def("commit", &QueueWriteLoan::commit, nb::arg("size") = nb::none(),
           "commit(size=None) -> None\n\nPublishes the first size bytes (default: the size reserved; at most the "
           "block's capacity). Raises TooLarge past the capacity, LoanEnded when already committed or aborted, "
           "BufferError when a view is still exported (a numpy array made from it): the loan is then aborted.")
      .def("abort", &QueueWriteLoan::abort,
           "abort() -> None\n\nGives the block back unpublished; nothing once the loan ended.")
      .def_prop_ro(
          "size", [](const QueueWriteLoan& l) { return l.size; },
          "Bytes the view shows and commit() publishes by default.")
      .def_prop_ro(
          "capacity", [](const QueueWriteLoan& l) { return l.capacity; },
          "The block's size: the most commit() publishes.")
      .def_prop_ro("active", &QueueWriteLoan::active, "True until the loan is committed or aborted.");

  nb::class_<QueueReadLoan>(m, "QueueReadLoan",
                            "A message of a Queue read in place (from Queue.acquire): view() or tobytes(), then "
                            "release() (or a with block); the block returns to the ring when it is released.")
      .def(
          "__enter__", [](QueueReadLoan& l) { return l.view(); }, nb::sig("def __enter__(self) -> memoryview"),
          "The read-only memoryview; the loan is released at the end of the with block.")
      .def(
          "__exit__",
          [](QueueReadLoan& l, nb::handle, nb::handle, nb::handle) {
            l.release();
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(), "Releases the loan.")
      .def(
          "view", [](QueueReadLoan& l) { return l.view(); }, nb::sig("def view(self) -> memoryview"),
          "A read-only memoryview of the message, released with the loan (an export that outlives it, e.g. a numpy "
          "array, keeps the loan held until it goes). Raises LoanEnded once the loan ended.")
      .def(
          "tobytes",
          [](QueueReadLoan& l) {
            l.require_active("tobytes");
            return to_bytes({l.st->ptr, l.st->len});
          },
          "tobytes() -> bytes\n\nA copy of the message. Raises LoanEnded once the loan ended.")
      .def("release", &QueueReadLoan::release,
           "release() -> None\n\nGives the message back (it is consumed); nothing when already released.")
      .def_prop_ro(
          "size", [](const QueueReadLoan& l) { return l.st ? l.st->len : 0; }, "The message's length in bytes.")
      .def(
          "__len__", [](const QueueReadLoan& l) { return l.st ? l.st->len : 0; }, "The message's length in bytes.")
      .def_prop_ro("active", &QueueReadLoan::active, "True until the loan is released.");

  nb::class_<PyQueue>(m, "Queue",
                      "A many-producer, many-consumer FIFO of fixed-size blocks in shared memory. Make one with "
                      "Queue.create, Queue.open or Queue.open_or_create; each handle is one participant, used by one "
                      "thread at a time. Copies (send/recv), zero copy (reserve/acquire), batches, iteration, and "
                      "recovery of what a dead participant held.")
      .def_static(
          "create",
          [](const std::string& name, std::size_t block_size, std::size_t block_count, Multiplicity producers,
             Multiplicity consumers, std::uint32_t max_participants, nb::handle recovery_time, WaitStrategy wait,
             unsigned mode, const std::string& path, bool prefault, Role role, nb::handle type,
             std::size_t oversize_bytes) {
            auto o = queue_options(block_size, block_count, producers, consumers, max_participants, recovery_time, wait,
                                   mode, path, prefault, oversize_bytes);
            o.segment.type = type_arg(type);
            return make(zipc::Queue::create(name, o, role), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("block_size") = 1024, nb::arg("block_count") = 1024,
          nb::arg("producers") = Multiplicity::multi, nb::arg("consumers") = Multiplicity::multi,
          nb::arg("max_participants") = 64, nb::arg("recovery_time") = 0.2, nb::arg("wait") = WaitStrategy::adaptive,
          nb::arg("mode") = 0600, nb::arg("path") = "", nb::arg("prefault") = false, nb::arg("role") = Role::both,
          nb::arg("type").none() = nb::none(), nb::arg("oversize_bytes") = 0, nb::rv_policy::take_ownership,
          "Creates the queue `name`.\n" ZIPC_PYDOC_NAME
          "block_size: bytes per block, a multiple of 8 in [8, 16 MiB] (the largest message without "
          "oversize_bytes).\nblock_count: blocks in the ring, a power of two in [2, 2**24].\n"
          "producers, consumers: Multiplicity.single or .multi (the default) of each role.\n"
          "max_participants: handles attached at once, [2, 65535].\n" ZIPC_PYDOC_RECOVERY ZIPC_PYDOC_WAIT
              ZIPC_PYDOC_MODE ZIPC_PYDOC_PATH ZIPC_PYDOC_PREFAULT
          "role: what this handle does (a Role; default Role.both).\n" ZIPC_PYDOC_TYPE
          "oversize_bytes: a side area for messages larger than a block (0: none; else at least 64 KiB).\n"
          "Raises AlreadyExists, InvalidName, InvalidArgument (a bad size or count, naming it), ValueError for a "
          "negative recovery_time, TypeError for a negative or non-integer size.")
      .def_static(
          "open_or_create",
          [](const std::string& name, std::size_t block_size, std::size_t block_count, Multiplicity producers,
             Multiplicity consumers, std::uint32_t max_participants, nb::handle recovery_time, WaitStrategy wait,
             unsigned mode, const std::string& path, bool prefault, Role role, bool accept_existing, nb::handle type,
             std::size_t oversize_bytes) {
            auto o = queue_options(block_size, block_count, producers, consumers, max_participants, recovery_time, wait,
                                   mode, path, prefault, oversize_bytes);
            o.accept_existing = accept_existing;
            o.segment.type = type_arg(type);
            return make(zipc::Queue::open_or_create(name, o, role), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("block_size") = 1024, nb::arg("block_count") = 1024,
          nb::arg("producers") = Multiplicity::multi, nb::arg("consumers") = Multiplicity::multi,
          nb::arg("max_participants") = 64, nb::arg("recovery_time") = 0.2, nb::arg("wait") = WaitStrategy::adaptive,
          nb::arg("mode") = 0600, nb::arg("path") = "", nb::arg("prefault") = false, nb::arg("role") = Role::both,
          nb::arg("accept_existing") = false, nb::arg("type").none() = nb::none(), nb::arg("oversize_bytes") = 0,
          nb::rv_policy::take_ownership,
          "Opens the queue `name`, or creates it with these options when absent (race-free). The arguments are "
          "create's: name, block_size, block_count, producers, consumers, max_participants, recovery_time, wait, "
          "mode, path, prefault, role, type, oversize_bytes (see Queue.create).\n" ZIPC_PYDOC_ACCEPT
          "Raises OptionsMismatch when an existing queue was made with other options (unless accept_existing), "
          "TypeMismatch for another type=.")
      .def_static(
          "open",
          [](const std::string& name, Role role, WaitStrategy wait, const std::string& path, nb::handle type) {
            zipc::SegmentOptions seg;
            seg.path = path;
            seg.type = type_arg(type);
            return make(zipc::Queue::open(name, role, wait_options(wait), seg), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("role") = Role::both, nb::arg("wait") = WaitStrategy::adaptive,
          nb::arg("path") = "", nb::arg("type").none() = nb::none(), nb::rv_policy::take_ownership,
          "Opens the existing queue `name`; its geometry comes from the segment.\n" ZIPC_PYDOC_NAME
          "role: what this handle does (a Role; default Role.both).\n" ZIPC_PYDOC_WAIT ZIPC_PYDOC_PATH ZIPC_PYDOC_TYPE
          "Raises NotFound, WrongKind, TypeMismatch (type= given and the queue holds another).")
      .def_prop_ro(
          "type_identity",
          [](PyQueue& self) {
            Use use(self, "type_identity");
            return identity_obj(self.q.segment().type_identity());
          },
          "The TypeIdentity the queue records (None: created without type=). Raises Closed once detached.")
      .def_static(
          "remove",
          [](const std::string& name, const std::string& path) {
            zipc::SegmentOptions seg;
            seg.path = path;
            return zipc::Queue::remove(name, seg);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("path") = "",
          "Removes the queue's name (handles keep working); False when absent.\n" ZIPC_PYDOC_NAME
              ZIPC_PYDOC_REMOVE_PATH)
      .def(
          "send",
          [](PyQueue& self, nb::handle data, nb::handle timeout) {
            Use use(self, "send");
            InBuf b(data);
            auto t = to_timeout(timeout);
            Status s = sliced(
                self, t, [&](ns sl) { return self.q.send(b.span(), sl); }, [](Status x) { return x; });
            if (s != Status::ok) raise_status(s, self.ctx("send"));
          },
          nb::arg("data"), nb::arg("timeout").none() = nb::none(),
          nb::sig("def send(self, data: collections.abc.Buffer, timeout: float | datetime.timedelta | None = None) -> "
                  "None"),
          "Copies data (bytes-like, at most block_size bytes, or oversize_bytes) into the queue, waiting for "
          "room.\ntimeout: seconds (int or float) or datetime.timedelta; None waits forever, 0 tries once; a negative "
          "or NaN timeout raises ValueError.\nRaises Timeout when no room came in time, TooLarge, Closed when the "
          "queue is closed or once this handle is detached (also by another thread or a signal handler during the "
          "wait).")
      .def(
          "try_send",
          [](PyQueue& self, nb::handle data) {
            Use use(self, "try_send");
            InBuf b(data);
            Status s;
            {
              NoGil nogil;
              std::lock_guard lock(self.mu);
              s = self.q.try_send(b.span());
            }
            if (s == Status::full) return false;
            if (s != Status::ok) raise_status(s, self.ctx("try_send"));
            return true;
          },
          nb::arg("data"), nb::sig("def try_send(self, data: collections.abc.Buffer) -> bool"),
          "Copies data (bytes-like) in as one message without waiting: False when the queue is full. Raises "
          "TooLarge, Closed.")
      .def(
          "recv", [](PyQueue& self, nb::handle timeout) { return recv_impl(self, to_timeout(timeout), false); },
          nb::arg("timeout").none() = nb::none(),
          nb::sig("def recv(self, timeout: float | datetime.timedelta | None = None) -> bytes"),
          "The next message (a copy), waiting for one.\ntimeout: seconds (int or float) or datetime.timedelta; None "
          "waits forever, 0 tries once; a negative or NaN timeout raises ValueError.\nRaises Timeout when none came in "
          "time, Closed when the queue is closed and drained or once this handle is detached (also by another thread "
          "or a signal handler during the wait).")
      .def(
          "try_recv", [](PyQueue& self) { return recv_impl(self, ns::zero(), true); },
          nb::sig("def try_recv(self) -> bytes | None"),
          "The next message without waiting; None when the queue is empty. Raises Closed once closed and drained or "
          "detached.")
      .def(
          "reserve",
          [](nb::handle self_obj, std::optional<std::size_t> size, nb::handle timeout) {
            PyQueue& self = nb::cast<PyQueue&>(self_obj);
            Use use(self, "reserve");
            const bool big = size && *size > self.q.block_size();
            if (big && self.q.oversize_bytes() == 0)
              raise_kind("too_large", self.ctx("reserve") + ": " + std::to_string(*size) + " bytes > block_size " +
                                          std::to_string(self.q.block_size()));
            auto t = to_timeout(timeout);
            zipc::QueueWriteLoan loan = sliced(
                self, t, [&](ns s) { return big ? self.q.reserve(*size, s) : self.q.reserve(s); },
                [](const zipc::QueueWriteLoan& l) { return l.status(); });
            if (!loan) raise_status(loan.status(), self.ctx("reserve"));
            return make_write_loan(self, self_obj, std::move(loan), size);
          },
          nb::arg("size").none() = nb::none(), nb::kw_only(), nb::arg("timeout").none() = nb::none(),
          nb::sig("def reserve(self, size: int | None = None, *, timeout: float | datetime.timedelta | None = None) -> "
                  "QueueWriteLoan"),
          "Zero copy: a writable block (size bytes shown, default block_size; more needs oversize_bytes), published by "
          "commit() or at the end of a with block, aborted on an exception.\ntimeout: seconds (int or float) or "
          "datetime.timedelta; None waits forever, 0 tries once; a negative or NaN timeout raises ValueError.\nRaises "
          "Timeout, TooLarge, Closed.")
      .def(
          "try_reserve",
          [](nb::handle self_obj, std::optional<std::size_t> size) -> nb::object {
            PyQueue& self = nb::cast<PyQueue&>(self_obj);
            Use use(self, "try_reserve");
            const bool big = size && *size > self.q.block_size();
            if (big && self.q.oversize_bytes() == 0)
              raise_kind("too_large", self.ctx("try_reserve") + ": " + std::to_string(*size) + " bytes > block_size " +
                                          std::to_string(self.q.block_size()));
            zipc::QueueWriteLoan loan = sliced(
                self, ns::zero(), [&](ns s) { return big ? self.q.reserve(*size, s) : self.q.reserve(s); },
                [](const zipc::QueueWriteLoan& l) { return l.status(); });
            if (!loan) {
              if (loan.status() == Status::full || loan.status() == Status::timeout) return nb::none();
              raise_status(loan.status(), self.ctx("try_reserve"));
            }
            return make_write_loan(self, self_obj, std::move(loan), size);
          },
          nb::arg("size").none() = nb::none(),
          nb::sig("def try_reserve(self, size: int | None = None) -> QueueWriteLoan | None"),
          "reserve() without waiting; None when the queue is full.\nsize: bytes the loan shows (default: "
          "block_size; more needs oversize_bytes).\nRaises TooLarge, Closed.")
      .def(
          "acquire",
          [](nb::handle self_obj, nb::handle timeout) {
            PyQueue& self = nb::cast<PyQueue&>(self_obj);
            Use use(self, "acquire");
            auto t = to_timeout(timeout);
            zipc::QueueReadLoan loan = sliced(
                self, t, [&](ns s) { return self.q.acquire(s); },
                [](const zipc::QueueReadLoan& l) { return l.status(); });
            if (!loan) raise_status(loan.status(), self.ctx("acquire"));
            return make_read_loan(self, self_obj, std::move(loan));
          },
          nb::arg("timeout").none() = nb::none(),
          nb::sig("def acquire(self, timeout: float | datetime.timedelta | None = None) -> QueueReadLoan"),
          "Zero copy: a read loan of the next message (a read-only memoryview in a with block), given back by "
          "release(). A consumer that dies holding it has the message redelivered.\ntimeout: seconds (int or float) or "
          "datetime.timedelta; None waits forever, 0 tries once; a negative or NaN timeout raises ValueError.\nRaises "
          "Timeout, Closed (closed and drained, or once this handle is detached (also by another thread or a signal "
          "handler during the wait)).")
      .def(
          "try_acquire",
          [](nb::handle self_obj) -> nb::object {
            PyQueue& self = nb::cast<PyQueue&>(self_obj);
            Use use(self, "try_acquire");
            zipc::QueueReadLoan loan = sliced(
                self, ns::zero(), [&](ns s) { return self.q.acquire(s); },
                [](const zipc::QueueReadLoan& l) { return l.status(); });
            if (!loan) {
              if (loan.status() == Status::empty || loan.status() == Status::timeout) return nb::none();
              raise_status(loan.status(), self.ctx("try_acquire"));
            }
            return make_read_loan(self, self_obj, std::move(loan));
          },
          nb::sig("def try_acquire(self) -> QueueReadLoan | None"),
          "acquire() without waiting; None when the queue is empty. Raises Closed.")
      .def(
          "send_batch",
          [](PyQueue& self, const nb::sequence& msgs, nb::handle timeout) {
            Use use(self, "send_batch");
            std::vector<std::unique_ptr<InBuf>> bufs;
            std::vector<std::span<const std::byte>> spans;
            for (nb::handle m : msgs) {
              bufs.push_back(std::make_unique<InBuf>(m));
              spans.push_back(bufs.back()->span());
            }
            std::size_t sent = 0;
            const Status s = sliced(
                self, to_timeout(timeout),
                [&](ns sl) {
                  Status st = Status::ok;
                  sent += self.q.send_batch(std::span(spans).subspan(sent), sl, &st);
                  if (sent == spans.size()) return Status::ok;
                  return st == Status::ok ? Status::timeout : st;
                },
                [](Status x) { return x; });
            if (sent == 0 && s != Status::ok && !spans.empty()) raise_status(s, self.ctx("send_batch"));
            return sent;
          },
          nb::arg("messages"), nb::arg("timeout").none() = nb::none(),
          nb::sig("def send_batch(self, messages: collections.abc.Sequence[collections.abc.Buffer], timeout: float | "
                  "datetime.timedelta | None = None) -> int"),
          "Sends a prefix of messages (bytes-like each) with one position update and one wake-up; returns how many "
          "were sent (the rest found no room in time).\ntimeout: seconds (int or float) or datetime.timedelta; None "
          "waits forever, 0 tries once; a negative or NaN timeout raises ValueError.\nRaises Timeout when none could "
          "be sent in time, TooLarge, Closed.")
      .def(
          "recv_batch",
          [](PyQueue& self, std::size_t max, nb::handle timeout) {
            Use use(self, "recv_batch");
            if (max == 0) raise_kind("invalid_argument", self.ctx("recv_batch") + ": max: 0 (take at least 1)");
            std::vector<std::string> got;
            const Status s = sliced(
                self, to_timeout(timeout),
                [&](ns sl) {
                  Status st = Status::ok;
                  const std::size_t k = self.q.recv_batch(
                      max, sl,
                      [&](std::span<const std::byte> m) {
                        got.emplace_back(reinterpret_cast<const char*>(m.data()), m.size());
                      },
                      &st);
                  if (k > 0) return Status::ok;
                  return st == Status::ok ? Status::timeout : st;
                },
                [](Status x) { return x; });
            if (got.empty() && s != Status::ok) raise_status(s, self.ctx("recv_batch"));
            nb::list out;
            for (const auto& m : got) out.append(nb::bytes(m.data(), m.size()));
            return out;
          },
          nb::arg("max") = 64, nb::arg("timeout").none() = nb::none(),
          nb::sig(
              "def recv_batch(self, max: int = 64, timeout: float | datetime.timedelta | None = None) -> list[bytes]"),
          "Up to max (>= 1) messages available at once, waiting for the first.\ntimeout: seconds (int or float) or "
          "datetime.timedelta; None waits forever, 0 tries once; a negative or NaN timeout raises ValueError.\nRaises "
          "Timeout when none came in time, InvalidArgument for max=0, Closed.")
      .def(
          "__iter__", [](nb::handle self) { return self; }, nb::sig("def __iter__(self) -> Queue"),
          "Iterating yields every message (recv() without timeout) until the queue is closed and drained.")
      .def(
          "__next__",
          [](PyQueue& self) -> nb::object {
            Use use(self, "recv");
            zipc::QueueReadLoan loan = sliced(
                self, std::nullopt, [&](ns s) { return self.q.acquire(s); },
                [](const zipc::QueueReadLoan& l) { return l.status(); });
            if (!loan) {
              if (loan.status() == Status::closed) throw nb::stop_iteration();
              raise_status(loan.status(), self.ctx("recv"));
            }
            nb::bytes out = to_bytes(loan.data());
            std::lock_guard lock(self.mu);
            loan.release();
            return out;
          },
          nb::sig("def __next__(self) -> bytes"),
          "The next message; StopIteration once the queue is closed and drained. Raises Closed when detached.")
      .def(
          "close",
          [](PyQueue& self) {
            Use use(self, "close");
            NoGil nogil;
            std::lock_guard lock(self.mu);
            self.q.close();
          },
          "close() -> None\n\nCloses the queue for everyone: sends fail with Closed, receivers drain what is there, "
          "then get Closed. Raises Closed when this handle is detached.")
      .def_prop_ro(
          "closed",
          [](PyQueue& self) {
            if (self.closing) return false;
            Use use(self, "closed");
            return self.q.closed();
          },
          "True once the queue was closed (False for a detached handle).")
      .def(
          "detach", [](PyQueue& self) { self.request_detach("detach"); },
          "detach() -> None\n\nLets go of this handle's mapping (the queue stays for others). Leaves every WaitSet it "
          "is attached to. A call of this handle waiting in another thread (or interrupted by the signal handler "
          "calling detach) raises Closed within about 20 ms; later calls raise Closed. Raises InvalidArgument while "
          "loans of this handle are out. Idempotent.")
      .def_prop_ro(
          "is_attached", [](PyQueue& self) { return !self.closing; },
          "False once detach() was called (or the with block ended).")
      .def(
          "__enter__", [](nb::handle self) { return self; },
          "with Queue.create(...) as q: detaches q at the end of the block.")
      .def(
          "__exit__",
          [](PyQueue& self, nb::handle, nb::handle, nb::handle) {
            if (self.live_loans == 0) self.request_detach("__exit__");
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(),
          "Detaches the handle (unless loans of it are still out).")
      .def(
          "stats",
          [](PyQueue& self) {
            Use use(self, "stats");
            zipc::QueueStats s = self.q.stats();
            nb::dict d;
            d["sent"] = s.sent;
            d["received"] = s.received;
            d["full_waits"] = s.full_waits;
            d["empty_waits"] = s.empty_waits;
            d["redelivered"] = s.redelivered;
            d["abandoned"] = s.abandoned;
            return d;
          },
          "stats() -> dict\n\nsent, received, full_waits, empty_waits, redelivered, abandoned. Raises Closed once "
          "detached.")
      .def(
          "recover",
          [](PyQueue& self) {
            Use use(self, "recover");
            NoGil nogil;
            std::lock_guard lock(self.mu);
            return self.q.recover();
          },
          "recover() -> int\n\nRecovers the blocks of dead participants now; returns how many. Raises Closed once "
          "detached.")
      .def_prop_ro(
          "name", [](PyQueue& self) { return self.name; }, "The queue's name.")
      .def_prop_ro(
          "oversize_bytes",
          [](PyQueue& self) {
            Use use(self, "oversize_bytes");
            return self.q.oversize_bytes();
          },
          "The queue's oversize_bytes. Raises Closed once detached.")
      .def_prop_ro(
          "block_size",
          [](PyQueue& self) {
            Use use(self, "block_size");
            return self.q.block_size();
          },
          "The queue's block_size. Raises Closed once detached.")
      .def_prop_ro(
          "block_count",
          [](PyQueue& self) {
            Use use(self, "block_count");
            return self.q.block_count();
          },
          "The queue's block_count. Raises Closed once detached.")
      .def(
          "__len__",
          [](PyQueue& self) {
            Use use(self, "len");
            return self.q.size_approx();
          },
          "Messages in the queue now (approximate). Raises Closed once detached.")
      .def_prop_ro(
          "producers",
          [](PyQueue& self) {
            Use use(self, "producers");
            return self.q.producers();
          },
          "The queue's producers. Raises Closed once detached.")
      .def_prop_ro(
          "consumers",
          [](PyQueue& self) {
            Use use(self, "consumers");
            return self.q.consumers();
          },
          "The queue's consumers. Raises Closed once detached.");
}

}  // namespace zipc::py
