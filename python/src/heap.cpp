// zipc.Heap: a shared allocator; blocks are offsets, views are memoryviews.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <vector>

#include "common.hpp"
#include "docs.hpp"
#include "zipc/heap.hpp"

namespace zipc::py {
namespace {

struct BlockState : LoanState {
  void finish() noexcept override {}
};

struct PyHeap : Guarded {
  zipc::Heap h;
  std::string name;
  std::vector<std::weak_ptr<LoanState>> states;
  std::string ctx(const char* what) const { return "heap '" + name + "': " + what; }
  void detach() {
    if (closing) return;
    for (auto& w : states)
      if (auto s = w.lock(); s && s->exports > 0)
        raise_kind("invalid_argument", ctx("detach") + ": a view of the heap is still exported");
    for (auto& w : states)
      if (auto s = w.lock()) s->end();
    states.clear();
    request_detach("detach");
  }
  void let_go() noexcept override {
    NoGil nogil;
    std::lock_guard lock(mu);
    h = zipc::Heap();
  }
};

zipc::HeapOptions heap_options(unsigned mode, const std::string& path) {
  zipc::HeapOptions o;
  o.segment.mode = mode;
  o.segment.path = path;
  return o;
}

PyHeap* make(zipc::Heap&& h, const std::string& name) {
  auto* p = new PyHeap();
  p->h = std::move(h);
  p->name = name;
  p->label = "heap '" + name + "'";
  return p;
}

}  // namespace

void init_heap(nb::module_& m) {
  nb::class_<PyHeap>(m, "Heap",
                     "An allocator in shared memory: allocate() and free() blocks by offset (the same in every "
                     "process) and view() their bytes. Make one with Heap.create, Heap.open or "
                     "Heap.open_or_create.")
      .def_static(
          "create",
          [](const std::string& name, std::uint64_t size, unsigned mode, const std::string& path) {
            return make(zipc::Heap::create(name, size, heap_options(mode, path)), name);
          },
          nb::arg("name"), nb::arg("size"), nb::kw_only(), nb::arg("mode") = 0600, nb::arg("path") = "",
          nb::rv_policy::take_ownership,
          "Creates the heap `name`, a shared allocator.\n" ZIPC_PYDOC_NAME
          "size: arena bytes (rounded up to the page size; at least 4096).\n" ZIPC_PYDOC_MODE ZIPC_PYDOC_PATH
          "Raises AlreadyExists, InvalidName, InvalidArgument.")
      .def_static(
          "open",
          [](const std::string& name, const std::string& path) {
            return make(zipc::Heap::open(name, heap_options(0600, path)), name);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("path") = "", nb::rv_policy::take_ownership,
          "Opens the existing heap `name`.\n" ZIPC_PYDOC_NAME ZIPC_PYDOC_PATH "Raises NotFound, WrongKind.")
      .def_static(
          "open_or_create",
          [](const std::string& name, std::uint64_t size, unsigned mode, const std::string& path) {
            return make(zipc::Heap::open_or_create(name, size, heap_options(mode, path)), name);
          },
          nb::arg("name"), nb::arg("size"), nb::kw_only(), nb::arg("mode") = 0600, nb::arg("path") = "",
          nb::rv_policy::take_ownership,
          "Opens the heap `name`, or creates it when absent (race-free).\n" ZIPC_PYDOC_NAME
          "size: arena bytes of a heap it creates (rounded up to the page size; at least 4096).\n" ZIPC_PYDOC_MODE
              ZIPC_PYDOC_PATH "Raises OptionsMismatch when the existing heap has another size.")
      .def_static(
          "remove",
          [](const std::string& name, const std::string& path) {
            zipc::SegmentOptions o;
            o.path = path;
            return zipc::Heap::remove(name, o);
          },
          nb::arg("name"), nb::kw_only(), nb::arg("path") = "",
          "Removes the heap's name (handles keep working); False when absent.\n" ZIPC_PYDOC_NAME ZIPC_PYDOC_REMOVE_PATH)
      .def(
          "allocate",
          [](PyHeap& self, std::size_t size, std::size_t align) {
            Use use(self, "allocate");
            zipc::Allocation a;
            {
              NoGil nogil;
              std::lock_guard lock(self.mu);
              a = self.h.try_allocate(size, align);
            }
            if (a.ptr == nullptr) {
              const char* kind = a.status == HeapStatus::out_of_memory      ? "out_of_memory"
                                 : a.status == HeapStatus::invalid_argument ? "invalid_argument"
                                                                            : "corrupt";
              raise_kind(kind,
                         self.ctx("allocate") + " " + std::to_string(size) + " bytes: " + zipc::to_string(a.status));
            }
            return self.h.offset_of(a.ptr);
          },
          nb::arg("size"), nb::arg("align") = 16,
          "allocate(size, align=16) -> int\n\nAllocates size bytes aligned to align (a power of two up to 4096); "
          "returns the block's offset (the same in every process). Raises OutOfMemory, InvalidArgument (a bad "
          "alignment), Corrupt, Closed once detached.")
      .def(
          "free",
          [](PyHeap& self, std::uint64_t offset) {
            Use use(self, "free");
            void* p = self.h.at<void>(offset);
            HeapStatus s = HeapStatus::foreign_pointer;
            if (p != nullptr) {
              NoGil nogil;
              std::lock_guard lock(self.mu);
              s = self.h.deallocate(p);
            }
            if (s != HeapStatus::ok)
              raise_kind(s == HeapStatus::corrupt ? "corrupt" : "invalid_argument",
                         self.ctx("free") + " offset " + std::to_string(offset) + ": " + zipc::to_string(s));
          },
          nb::arg("offset"),
          "free(offset) -> None\n\nFrees the block at offset. Raises InvalidArgument for an offset that is not an "
          "allocated block, Corrupt, Closed once detached.")
      .def(
          "view",
          [](nb::handle self_obj, std::uint64_t offset, std::size_t size) {
            PyHeap& self = nb::cast<PyHeap&>(self_obj);
            Use use(self, "view");
            if (offset > self.h.arena_size() || size > self.h.arena_size() - offset)
              raise_kind("invalid_argument", self.ctx("view") + ": [" + std::to_string(offset) + ", +" +
                                                 std::to_string(size) + ") is outside the arena");
            auto st = std::make_shared<BlockState>();
            st->ptr = self.h.arena() + offset;
            st->len = size;
            st->readonly = false;
            st->owner = nb::borrow(self_obj);
            self.states.push_back(st);
            return make_view(st);
          },
          nb::arg("offset"), nb::arg("size"), nb::sig("def view(self, offset: int, size: int) -> memoryview"),
          "A writable memoryview of the size heap bytes at offset, valid until detach (which refuses while one is "
          "exported). Raises "
          "InvalidArgument outside the arena, Closed once detached.")
      .def(
          "stats",
          [](PyHeap& self) {
            Use use(self, "stats");
            zipc::HeapStats s = self.h.stats();
            nb::dict d;
            d["size"] = s.size;
            d["free_bytes"] = s.free_bytes;
            d["largest_free_block"] = s.largest_free_block;
            d["allocated_blocks"] = s.allocated_blocks;
            d["repairs"] = s.repairs;
            d["corrupt"] = s.corrupt;
            return d;
          },
          "stats() -> dict\n\nsize, free_bytes, largest_free_block, allocated_blocks, repairs, corrupt. Raises Closed "
          "once detached.")
      .def(
          "check",
          [](PyHeap& self) {
            Use use(self, "check");
            zipc::HeapCheck c = self.h.check();
            return nb::make_tuple(c.ok, c.problem);
          },
          "check() -> (bool, str)\n\nWalks the heap: (ok, the problem found). Raises Closed once detached.")
      .def(
          "detach", [](PyHeap& self) { self.detach(); },
          "detach() -> None\n\nLets go of the mapping; views handed out end. Raises InvalidArgument while a view is "
          "still exported (release it first). Idempotent.")
      .def(
          "__enter__", [](nb::handle self) { return self; },
          "with Heap.create(...) as h: detaches h at the end of the block.")
      .def(
          "__exit__",
          [](PyHeap& self, nb::handle, nb::handle, nb::handle) {
            self.detach();
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(), "Detaches the heap.")
      .def_prop_ro(
          "is_attached", [](PyHeap& self) { return !self.closing; }, "False once detach() was called.")
      .def_prop_ro(
          "name", [](PyHeap& self) { return self.name; }, "The heap's name.")
      .def_prop_ro(
          "arena_size",
          [](PyHeap& self) {
            Use use(self, "arena_size");
            return self.h.arena_size();
          },
          "Bytes in the arena. Raises Closed once detached.");
}

}  // namespace zipc::py
