// zipc.segments(), zipc.remove_segment(), zipc.SegmentInfo.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "docs.hpp"
#include "zipc/segment.hpp"

namespace zipc::py {

void init_segment(nb::module_& m) {
  nb::class_<SegmentInfo>(m, "SegmentInfo", "One segment's header facts, as segments() reads them (without attaching).")
      .def_ro("name", &SegmentInfo::name, "The segment's name.")
      .def_ro("path", &SegmentInfo::path, "Its file.")
      .def_prop_ro(
          "kind", [](const SegmentInfo& i) { return std::string(zipc::to_string(i.kind)); },
          "What it holds: 'queue', 'topic', 'rpc', 'heap', 'event', ...")
      .def_ro("size", &SegmentInfo::size, "Bytes every participant maps.")
      .def_prop_ro(
          "creator_pid", [](const SegmentInfo& i) { return i.creator.pid; }, "The pid of the process that created it.")
      .def_ro("creator_alive", &SegmentInfo::creator_alive, "True while that process runs.")
      .def_ro("created_ns", &SegmentInfo::created_ns, "When it was created, ns since the epoch (CLOCK_REALTIME).")
      .def_ro("valid", &SegmentInfo::valid, "True when its header validated.")
      .def_ro("problem", &SegmentInfo::problem, "Why it is not valid ('' when valid).")
      .def("__repr__", [](const SegmentInfo& i) {
        return "SegmentInfo(name='" + i.name + "', kind='" + zipc::to_string(i.kind) +
               "', size=" + std::to_string(i.size) + ", valid=" + (i.valid ? "True" : "False") + ")";
      });
  m.def(
      "segments",
      [] {
        NoGil nogil;
        return zipc::Segment::list();
      },
      "segments() -> list[SegmentInfo]\n\nEvery zipc segment in /dev/shm.");
  m.def(
      "remove_segment",
      [](const std::string& name, const std::string& path) {
        zipc::SegmentOptions o;
        o.path = path;
        return zipc::Segment::remove(name, o);
      },
      nb::arg("name"), nb::kw_only(), nb::arg("path") = "",
      "remove_segment(name, *, path='') -> bool\n\nRemoves a segment's name, whatever it holds (mappings stay "
      "valid); False when absent.\n" ZIPC_PYDOC_NAME ZIPC_PYDOC_REMOVE_PATH);
}

}  // namespace zipc::py
