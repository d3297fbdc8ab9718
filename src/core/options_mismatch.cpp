// The options_mismatch check shared by Queue, Topic and Heap open_or_create.
#include "core/options_mismatch.hpp"

#include <string>

#include "zipc/error.hpp"

namespace zipc::detail {

void check_existing_geometry(std::string_view what, bool accept_existing, std::initializer_list<GeometryField> fields) {
  if (accept_existing) return;
  std::string diff;
  for (const GeometryField& f : fields) {
    if (f.asked == f.found) continue;
    if (!diff.empty()) diff += "; ";
    diff += std::string(f.name) + " " + std::to_string(f.asked) + f.unit + " asked, " + std::to_string(f.found) +
            f.unit + " existing";
  }
  if (diff.empty()) return;
  throw Error(Errc::options_mismatch, std::string(what) +
                                          ": open_or_create options disagree with the existing segment: " + diff +
                                          " (set accept_existing to attach with the existing geometry)");
}

}  // namespace zipc::detail
