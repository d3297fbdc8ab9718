// zipc metrics: one scrape of every channel's metrics on stdout, the text
// `zipc exporter` serves on /metrics.
#include <cctype>
#include <cerrno>
#include <cstring>

#include "common.hpp"
#include "metrics_options.hpp"

namespace zipc_tool {

void add_metrics_filter_options(CLI::App* app, MetricsFilterOptions& o) {
  app->add_option("--match", o.prefix, "only channels whose name starts with this");
  app->add_option("--regex", o.regex, "only channels whose name contains a match of this POSIX extended regex");
  app->add_option("--namespace", o.name_space, "only channels of this name space (\"\": those of none)")
      ->each([&o](const std::string&) { o.name_space_set = true; });
}

MetricsFilter make_metrics_filter(const MetricsFilterOptions& o) {
  MetricsFilter f;
  f.prefix = o.prefix;
  if (!o.regex.empty()) {
    try {
      f.regex.emplace(o.regex);
    } catch (const std::invalid_argument& e) {
      fail(kUsage, o.regex, std::string("--regex: not a regex: ") + e.what());
    }
  }
  if (o.name_space_set) {
    for (const char c : o.name_space) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '-') {
        fail(kUsage, o.name_space, "--namespace: a name space holds only letters, digits, '_' and '-'");
      }
    }
    f.name_space = o.name_space;
  }
  return f;
}

namespace {

struct MetricsCmdOptions {
  MetricsFilterOptions filter;
  std::string format = "openmetrics";
  bool names = false;
};

int run_metrics(const MetricsCmdOptions& o) {
  if (o.names) {
    for (const std::string& n : metric_sample_names()) std::printf("%s\n", n.c_str());
    return kOk;
  }
  const MetricsFilter filter = make_metrics_filter(o.filter);
  const MetricsFormat format = o.format == "openmetrics" ? MetricsFormat::openmetrics : MetricsFormat::prometheus_text;
  const std::string text = render_metrics(inspect_matching_channels(filter), filter, format);
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    fail(kIo, "stdout", std::strerror(errno));
  }
  return kOk;
}

}  // namespace

Command add_metrics(CLI::App& root) {
  auto o = std::make_shared<MetricsCmdOptions>();
  CLI::App* app = root.add_subcommand(
      "metrics", "print every channel's Prometheus metrics once (what zipc exporter serves on /metrics)");
  app->footer(
      "Example:\n  zipc metrics --match orders.          # OpenMetrics text of channels 'orders.*'\n"
      "  zipc metrics --format prometheus       # the Prometheus text format 0.0.4\n"
      "Read-only: no channel is joined or written. Metrics: docs/guide/operations.md.");
  add_metrics_filter_options(app, o->filter);
  app->add_option("--format", o->format, "openmetrics | prometheus")
      ->check(CLI::IsMember({"openmetrics", "prometheus"}));
  app->add_flag("--names", o->names, "print the name of every metric served, one a line, and exit");
  return {app, [o] { return run_metrics(*o); }};
}

}  // namespace zipc_tool
