// The channel filter options `zipc metrics` and `zipc exporter` share.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "metrics.hpp"

namespace zipc_tool {

struct MetricsFilterOptions {
  std::string prefix;
  std::string regex;
  std::string name_space;
  bool name_space_set = false;
};

// Adds --match, --regex and --namespace to app.
void add_metrics_filter_options(CLI::App* app, MetricsFilterOptions& o);
// The filter the options describe; an unusable regex or name space is a
// usage error (ToolError, exit 2).
MetricsFilter make_metrics_filter(const MetricsFilterOptions& o);

}  // namespace zipc_tool
