// c_api/segment.cpp - zipc_segment_list and zipc_segment_remove over zipc::Segment.
#include <vector>

#include "c_api/c_api.hpp"

using namespace zipc::c_api;

extern "C" {

zipc_status_t zipc_segment_list(zipc_segment_fn fn, void* context, size_t* count) {
  if (fn == nullptr) return invalid("zipc_segment_list", "fn is NULL");
  return guard("zipc_segment_list", [&] {
    const std::vector<zipc::SegmentInfo> all = zipc::Segment::list();
    for (const zipc::SegmentInfo& s : all) {
      const zipc_segment_info_t info = {s.name.c_str(),
                                        s.path.c_str(),
                                        static_cast<uint32_t>(s.kind),
                                        static_cast<uint32_t>(s.creator.pid),
                                        s.size,
                                        s.created_ns,
                                        s.creator_alive,
                                        s.valid,
                                        s.problem.c_str()};
      fn(context, &info);
    }
    if (count != nullptr) *count = all.size();
    return ZIPC_OK;
  });
}

zipc_status_t zipc_segment_remove(const char* name, const zipc_segment_options_t* segment) {
  return guard("zipc_segment_remove", [&] {
    zipc_status_t st = ZIPC_OK;
    if (!valid_name("zipc_segment_remove", name, &st)) return st;
    zipc_segment_options_t seg;
    zipc_segment_options_init(&seg);
    if (segment != nullptr) seg = *segment;
    if (zipc::Segment::remove(name, to_cpp(seg))) return ZIPC_OK;
    return fail(ZIPC_NOT_FOUND, std::string("segment '") + name + "': not found");
  });
}

}  // extern "C"
