// zipc.segments(), zipc.remove_segment(), zipc.SegmentInfo.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "zipc/segment.hpp"

namespace zipc::py {

void init_segment(nb::module_& m) {
  nb::class_<SegmentInfo>(m, "SegmentInfo")
      .def_ro("name", &SegmentInfo::name)
      .def_ro("path", &SegmentInfo::path)
      .def_prop_ro("kind", [](const SegmentInfo& i) { return std::string(zipc::to_string(i.kind)); })
      .def_ro("size", &SegmentInfo::size)
      .def_prop_ro("creator_pid", [](const SegmentInfo& i) { return i.creator.pid; })
      .def_ro("creator_alive", &SegmentInfo::creator_alive)
      .def_ro("created_ns", &SegmentInfo::created_ns)
      .def_ro("valid", &SegmentInfo::valid)
      .def_ro("problem", &SegmentInfo::problem)
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
      "remove_segment(name, *, path='') -> bool\n\nRemoves a segment's name (mappings stay valid); False when absent.");
}

}  // namespace zipc::py
