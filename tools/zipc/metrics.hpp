// Channel reports as Prometheus metrics: the text `zipc exporter` serves on
// /metrics, in the OpenMetrics 1.0 format or the older Prometheus text format
// 0.0.4 (docs/guide/operations.md lists the metrics).
#pragma once

#include <regex.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zipc/introspect.hpp>

namespace zipc_tool {

// A POSIX extended regex (regcomp), searched for anywhere in a name. Not
// std::regex: gcc 12 at -O1 under ASan warns inside <regex>, and -Werror
// makes that a build failure. Copies share the compiled pattern, which
// regexec only reads, so threads may search at once.
class NameRegex {
 public:
  // Throws std::invalid_argument with regerror's words when `pattern` is
  // not a regex.
  explicit NameRegex(const std::string& pattern);
  [[nodiscard]] bool found_in(std::string_view name) const;

 private:
  std::shared_ptr<regex_t> compiled_;  // freed with regfree
};

// Which channels a scrape shows. Every set part must match.
struct MetricsFilter {
  std::string prefix;                     // the name starts with this (as `zipc ls --match`)
  std::optional<NameRegex> regex;         // the name contains a match of this
  std::optional<std::string> name_space;  // the channel lives in this name space ("ns:" names)
};

// True when the channel named `name` (as zipc::inspect_channels lists it) passes.
[[nodiscard]] bool metrics_filter_matches(const MetricsFilter& filter, std::string_view name);

enum class MetricsFormat {
  openmetrics,      // application/openmetrics-text; version=1.0.0 (ends with "# EOF")
  prometheus_text,  // text/plain; version=0.0.4
};

// The Content-Type header of a format.
[[nodiscard]] const char* metrics_content_type(MetricsFormat format) noexcept;

// The reports of the channels that pass the filter (zipc::inspect_channels,
// with the filter applied before a segment is mapped): one removed meanwhile
// is left out, one that cannot be read is reported with its problem.
[[nodiscard]] std::vector<zipc::ChannelReport> inspect_matching_channels(const MetricsFilter& filter);

// The format a scraper asks for with its Accept header: OpenMetrics when it
// names application/openmetrics-text, else the Prometheus text format.
[[nodiscard]] MetricsFormat metrics_format_for_accept(std::string_view accept);

// Every metric family name served (counters with their "_total" sample name),
// in the order they are rendered.
[[nodiscard]] std::vector<std::string> metric_sample_names();

// The metrics of the reports that pass the filter. A report that is not
// readable yields only zipc_channel_readable 0 (and its segment size when the
// header is valid). Every family is written with HELP and TYPE, even without
// samples, so the set of names does not depend on the channels present.
[[nodiscard]] std::string render_metrics(const std::vector<zipc::ChannelReport>& reports, const MetricsFilter& filter,
                                         MetricsFormat format);

// A label value escaped for both formats: backslash, double quote and newline
// escaped; bytes that are not UTF-8 replaced by '?'.
[[nodiscard]] std::string escape_label_value(std::string_view value);

}  // namespace zipc_tool
