// The figures from docs/design/reference.md: the authors' own numbers on the
// authors' hardware, shown beside ours, never mixed with them.
#pragma once

#include <string>
#include <vector>

namespace zipc::bench {

struct ReferenceFigure {
  std::string section;                  // "§3"
  std::string workload;                 // row workload it describes (prefix match)
  std::size_t size;                     // 0: any size
  std::vector<std::string> transports;  // rows it sits beside; empty: zipc rows
  std::string metric;                   // "msgs_per_s", "gbytes_per_s", "rt_per_s", or "" (qualitative)
  double value;                         // in metric units (0 when qualitative)
  std::string text;                     // as printed: "157,151 msgs/s (author's figure, author's hardware)"
};

const std::vector<ReferenceFigure>& reference_figures();

}  // namespace zipc::bench
