// Channel reports as Prometheus / OpenMetrics text (metrics.hpp).
#include "metrics.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>

namespace zipc_tool {
namespace {

// One label set plus a value, as a family's sample function adds them.
class MetricsSink {
 public:
  MetricsSink(std::string& out, std::string_view sample_name) : out_(out), sample_name_(sample_name) {}

  // labels: name, value, name, value, ... (names are fixed identifiers).
  void add(std::initializer_list<std::string_view> labels, std::uint64_t value) {
    out_.append(sample_name_);
    char sep = '{';
    bool is_name = true;
    for (std::string_view part : labels) {
      if (is_name) {
        out_.push_back(sep);
        out_.append(part);
        out_.append("=\"");
        sep = ',';
      } else {
        out_.append(escape_label_value(part));
        out_.push_back('"');
      }
      is_name = !is_name;
    }
    if (sep == ',') out_.push_back('}');
    out_.push_back(' ');
    out_.append(std::to_string(value));
    out_.push_back('\n');
  }

 private:
  std::string& out_;
  std::string_view sample_name_;
};

// Context a family's samples use: the report and its two common labels.
struct MetricsChannel {
  const zipc::ChannelReport& report;
  std::string_view channel;
  std::string_view kind;
  [[nodiscard]] bool is(zipc::SegmentKind k) const { return report.readable && report.segment.kind == k; }
};

struct MetricFamily {
  const char* name;  // family name (counters: without "_total")
  bool counter;
  const char* help;
  std::function<void(const MetricsChannel&, MetricsSink&)> samples;
};

const std::vector<MetricFamily>& metric_families() {
  using K = zipc::SegmentKind;
  static const std::vector<MetricFamily> all = {
      {"zipc_channel_readable", false, "1 when the channel's segment was read and validated, 0 when it failed",
       [](const MetricsChannel& c, MetricsSink& s) {
         s.add({"channel", c.channel, "kind", c.kind}, c.report.readable ? 1 : 0);
       }},
      {"zipc_segment_size_bytes", false, "Bytes every participant of the channel maps",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (c.report.segment.valid) s.add({"channel", c.channel, "kind", c.kind}, c.report.segment.size);
       }},
      {"zipc_messages", true,
       "Messages so far: direction out = published (topic), sent (queue), calls (rpc), notifies (event); in = "
       "taken by queue consumers",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (!c.report.readable || !c.report.messages_known) return;
         s.add({"channel", c.channel, "kind", c.kind, "direction", "out"}, c.report.messages);
         if (c.is(K::queue)) s.add({"channel", c.channel, "kind", c.kind, "direction", "in"}, c.report.received);
       }},
      {"zipc_bytes", true, "Payload bytes published (topic), sent (queue) or of rpc requests so far",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (c.report.readable && c.report.bytes_known) {
           s.add({"channel", c.channel, "kind", c.kind, "direction", "out"}, c.report.bytes);
         }
       }},
      {"zipc_backlog_messages", false,
       "Messages waiting: queue = not yet taken, topic = unread by the slowest reliable subscriber",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (c.is(K::queue) || c.is(K::topic)) s.add({"channel", c.channel, "kind", c.kind}, c.report.backlog);
       }},
      {"zipc_lag_messages", false, "Messages published and not yet read by one live topic subscriber",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (!c.is(K::topic)) return;
         for (const zipc::ParticipantReport& p : c.report.participants) {
           if (p.role != "subscriber" || !p.alive) continue;
           const std::uint64_t* lag = zipc::find_field(p.fields, "lag");
           if (lag == nullptr) continue;
           const std::string slot = std::to_string(p.slot);
           const std::string pid = std::to_string(p.process.pid);
           s.add({"channel", c.channel, "kind", c.kind, "subscriber", slot, "pid", pid, "mode", p.mode}, *lag);
         }
       }},
      {"zipc_lost_messages", true, "Topic messages lost by live lossy subscribers (overwritten before read)",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (c.is(K::topic)) s.add({"channel", c.channel, "kind", c.kind}, c.report.lost);
       }},
      {"zipc_redelivered", true, "Queue messages taken back from consumers that died holding them",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (c.is(K::queue)) s.add({"channel", c.channel, "kind", c.kind}, c.report.redelivered);
       }},
      {"zipc_abandoned", true, "Queue blocks reserved and never published (a producer died); topic holes skipped",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (c.is(K::queue) || c.is(K::topic)) s.add({"channel", c.channel, "kind", c.kind}, c.report.abandoned);
       }},
      {"zipc_participants", false, "Participants of the channel by liveness of their process",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (!c.report.readable || !c.report.participants_known) return;
         s.add({"channel", c.channel, "kind", c.kind, "state", "alive"}, c.report.alive_count());
         s.add({"channel", c.channel, "kind", c.kind, "state", "dead"}, c.report.dead_count());
       }},
      {"zipc_rpc_inflight", false, "Rpc calls sent and not yet taken back by their client",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (c.is(K::rpc)) s.add({"channel", c.channel, "kind", c.kind}, c.report.in_flight);
       }},
      {"zipc_rpc_errors", true, "Rpc calls that failed (error answer, dead or closed server)",
       [](const MetricsChannel& c, MetricsSink& s) {
         if (c.is(K::rpc)) s.add({"channel", c.channel, "kind", c.kind}, c.report.errors);
       }},
  };
  return all;
}

// Length of the UTF-8 sequence at s[i], or 0 when it is not one.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  const std::size_t more = (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 0;
  if (more == 0 || i + more >= s.size()) return 0;
  for (std::size_t k = 1; k <= more; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return 0;
  }
  return more + 1;
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size();) {
    const char c = value[i];
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '"') {
      out.append("\\\"");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      const std::size_t n = utf8_sequence_length(value, i);
      if (n == 0) {
        out.push_back('?');
        ++i;
        continue;
      }
      out.append(value.substr(i, n));
      i += n;
      continue;
    }
    ++i;
  }
  return out;
}

NameRegex::NameRegex(const std::string& pattern) {
  auto re = std::make_unique<regex_t>();
  const int rc = regcomp(re.get(), pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    std::array<char, 256> why{};
    regerror(rc, re.get(), why.data(), why.size());
    throw std::invalid_argument(why.data());
  }
  compiled_ = std::shared_ptr<regex_t>(re.release(), [](regex_t* r) {
    regfree(r);
    delete r;  // from make_unique above
  });
}

bool NameRegex::found_in(std::string_view name) const {
  const std::string text(name);  // regexec reads up to a NUL
  return regexec(compiled_.get(), text.c_str(), 0, nullptr, 0) == 0;
}

bool metrics_filter_matches(const MetricsFilter& filter, std::string_view name) {
  if (name.substr(0, filter.prefix.size()) != filter.prefix) return false;
  if (filter.name_space) {
    const std::size_t colon = name.find(':');
    const std::string_view ns = colon == std::string_view::npos ? std::string_view{} : name.substr(0, colon);
    if (ns != *filter.name_space) return false;
  }
  if (filter.regex && !filter.regex->found_in(name)) return false;
  return true;
}

std::vector<zipc::ChannelReport> inspect_matching_channels(const MetricsFilter& filter) {
  return zipc::inspect_channels([&](std::string_view name) { return metrics_filter_matches(filter, name); });
}

const char* metrics_content_type(MetricsFormat format) noexcept {
  return format == MetricsFormat::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                              : "text/plain; version=0.0.4; charset=utf-8";
}

MetricsFormat metrics_format_for_accept(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos ? MetricsFormat::openmetrics
                                                                               : MetricsFormat::prometheus_text;
}

std::vector<std::string> metric_sample_names() {
  std::vector<std::string> names;
  for (const MetricFamily& f : metric_families()) names.push_back(std::string(f.name) + (f.counter ? "_total" : ""));
  return names;
}

std::string render_metrics(const std::vector<zipc::ChannelReport>& reports, const MetricsFilter& filter,
                           MetricsFormat format) {
  std::vector<const zipc::ChannelReport*> shown;
  for (const zipc::ChannelReport& r : reports) {
    if (metrics_filter_matches(filter, r.segment.name)) shown.push_back(&r);
  }
  const bool om = format == MetricsFormat::openmetrics;
  std::string out;
  out.reserve(256 + shown.size() * 1024);
  for (const MetricFamily& f : metric_families()) {
    const std::string sample_name = std::string(f.name) + (f.counter ? "_total" : "");
    // OpenMetrics names the family without "_total"; the 0.0.4 format names the sample.
    const std::string family_name = om ? std::string(f.name) : sample_name;
    out.append("# HELP ").append(family_name).append(" ").append(f.help).append("\n");
    out.append("# TYPE ").append(family_name).append(f.counter ? " counter\n" : " gauge\n");
    MetricsSink sink(out, sample_name);
    for (const zipc::ChannelReport* r : shown) {
      const char* kind = r->segment.valid ? zipc::to_string(r->segment.kind) : "unknown";
      f.samples(MetricsChannel{*r, r->segment.name, kind}, sink);
    }
  }
  if (om) out.append("# EOF\n");
  return out;
}

}  // namespace zipc_tool
