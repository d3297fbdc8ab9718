// zipc top: a live table of every channel's rates, backlog, lag and losses.
#include <algorithm>
#include <map>

#include "args.hpp"
#include "common.hpp"

namespace zipc_tool {
namespace {

struct TopOptions {
  Duration interval = Duration::seconds(1);
  bool once = false;
  bool json = false;
  std::string sort = "msgs";
  std::uint64_t iterations = 0;
  std::string prefix;
};

struct Sample {
  std::uint64_t messages = 0, bytes = 0, lost = 0, redelivered = 0, abandoned = 0, errors = 0;
};

struct Row {
  std::string name, kind;
  bool readable = false;
  bool rates = false;                      // a previous sample exists
  double msgs = 0, bytes = 0, errors = 0;  // per second (errors: rpc calls that failed)
  bool bytes_known = false;
  bool is_rpc = false;
  std::uint64_t in_flight = 0;  // rpc: calls out now
  std::uint64_t backlog = 0, max_lag = 0, lost = 0, redelivered = 0, abandoned = 0;
  std::size_t alive = 0, dead = 0;
  std::string problem;
};

std::uint64_t delta(std::uint64_t now, std::uint64_t before) {
  return now >= before ? now - before : 0;  // a counter that left with its participant
}

std::vector<Row> make_rows(const std::vector<zipc::ChannelReport>& reports, std::map<std::string, Sample>& prev,
                           double dt) {
  std::vector<Row> rows;
  std::map<std::string, Sample> next;
  for (const auto& r : reports) {
    Row row;
    row.name = r.segment.name;
    row.kind = r.segment.valid ? zipc::to_string(r.segment.kind) : "?";
    row.readable = r.readable;
    row.problem = r.problem;
    row.backlog = r.backlog;
    row.max_lag = r.max_lag;
    row.alive = r.alive_count();
    row.dead = r.dead_count();
    row.bytes_known = r.bytes_known;
    row.is_rpc = r.segment.valid && r.segment.kind == zipc::SegmentKind::rpc;
    row.in_flight = r.in_flight;
    const Sample s{r.messages, r.bytes, r.lost, r.redelivered, r.abandoned, r.errors};
    if (auto it = prev.find(row.name); it != prev.end() && dt > 0 && r.readable) {
      row.rates = true;
      row.msgs = static_cast<double>(delta(s.messages, it->second.messages)) / dt;
      row.bytes = static_cast<double>(delta(s.bytes, it->second.bytes)) / dt;
      row.errors = static_cast<double>(delta(s.errors, it->second.errors)) / dt;
      row.lost = delta(s.lost, it->second.lost);
      row.redelivered = delta(s.redelivered, it->second.redelivered);
      row.abandoned = delta(s.abandoned, it->second.abandoned);
    }
    next[row.name] = s;
    rows.push_back(std::move(row));
  }
  prev = std::move(next);
  return rows;
}

void sort_rows(std::vector<Row>& rows, const std::string& key) {
  auto by = [&](auto f) {
    std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return f(a) > f(b); });
  };
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.name < b.name; });
  if (key == "msgs") by([](const Row& r) { return r.msgs; });
  if (key == "bytes") by([](const Row& r) { return r.bytes; });
  if (key == "backlog") by([](const Row& r) { return static_cast<double>(r.backlog); });
  if (key == "lag") by([](const Row& r) { return static_cast<double>(r.max_lag); });
  if (key == "lost") by([](const Row& r) { return static_cast<double>(r.lost); });
  if (key == "dead") by([](const Row& r) { return static_cast<double>(r.dead); });
  if (key == "errors") by([](const Row& r) { return r.errors; });
}

void print_table(const std::vector<Row>& rows, const TopOptions& o, bool clear) {
  std::string out;
  if (clear) out += "\033[H\033[2J";
  char line[512];
  std::snprintf(line, sizeof line, "zipc top - %s - %zu channel(s) - every %s - sorted by %s (^C quits)\n\n",
                when(now_realtime_ns()).c_str(), rows.size(), o.interval.text().c_str(), o.sort.c_str());
  out += line;
  std::snprintf(line, sizeof line, "%-28s %-6s %10s %11s %9s %9s %8s %8s %8s %8s %8s %5s %4s\n", "NAME", "KIND",
                "MSG/S", "BYTES/S", "BACKLOG", "MAX_LAG", "LOST", "REDELIV", "ABANDON", "ERR/S", "INFLIGHT", "ALIVE",
                "DEAD");
  out += line;
  for (const Row& r : rows) {
    if (!r.readable) {
      std::snprintf(line, sizeof line, "%-28s %-6s %s\n", r.name.c_str(), r.kind.c_str(),
                    r.problem.empty() ? "-" : r.problem.c_str());
      out += line;
      continue;
    }
    const std::string msgs = r.rates ? human_rate(r.msgs) : "-";
    const std::string bytes = r.rates && r.bytes_known ? human_size(static_cast<std::uint64_t>(r.bytes)) : "-";
    // Rpc only: failed calls per second and calls out now (MSG/S counts calls).
    const std::string errors = !r.is_rpc ? "-" : r.rates ? human_rate(r.errors) : "-";
    const std::string in_flight = r.is_rpc ? std::to_string(r.in_flight) : "-";
    std::snprintf(line, sizeof line, "%-28s %-6s %10s %11s %9llu %9llu %8llu %8llu %8llu %8s %8s %5zu %4zu\n",
                  r.name.c_str(), r.kind.c_str(), msgs.c_str(), bytes.c_str(),
                  static_cast<unsigned long long>(r.backlog), static_cast<unsigned long long>(r.max_lag),
                  static_cast<unsigned long long>(r.lost), static_cast<unsigned long long>(r.redelivered),
                  static_cast<unsigned long long>(r.abandoned), errors.c_str(), in_flight.c_str(), r.alive, r.dead);
    out += line;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

void print_json(const std::vector<Row>& rows, double dt) {
  nlohmann::ordered_json j;
  j["schema"] = "zipc.top/1";
  j["time_ns"] = now_realtime_ns();
  j["interval_s"] = dt;
  j["channels"] = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    nlohmann::ordered_json c;
    c["name"] = r.name;
    c["kind"] = r.kind;
    c["readable"] = r.readable;
    if (!r.readable) c["problem"] = r.problem;
    c["msgs_per_s"] = r.rates ? nlohmann::ordered_json(r.msgs) : nlohmann::ordered_json();
    c["bytes_per_s"] = r.rates && r.bytes_known ? nlohmann::ordered_json(r.bytes) : nlohmann::ordered_json();
    c["backlog"] = r.backlog;
    c["max_lag"] = r.max_lag;
    c["lost"] = r.lost;
    c["redelivered"] = r.redelivered;
    c["abandoned"] = r.abandoned;
    if (r.is_rpc) {
      c["errors_per_s"] = r.rates ? nlohmann::ordered_json(r.errors) : nlohmann::ordered_json();
      c["in_flight"] = r.in_flight;
    }
    c["alive"] = r.alive;
    c["dead"] = r.dead;
    j["channels"].push_back(std::move(c));
  }
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
}

std::vector<zipc::ChannelReport> gather(const std::string& prefix) {
  return zipc::inspect_channels([&](std::string_view name) { return name.starts_with(prefix); });
}

int run_top(const TopOptions& o) {
  install_stop_handler();
  std::map<std::string, Sample> prev;
  std::uint64_t last = now_monotonic_ns();
  make_rows(gather(o.prefix), prev, 0);
  const bool clear = !o.json && !o.once && stdout_is_terminal();
  for (std::uint64_t i = 0; !stop_requested(); ++i) {
    if (!pause_until(o.interval.deadline(last))) break;
    const std::uint64_t now = now_monotonic_ns();
    const double dt = static_cast<double>(now - last) / 1e9;
    last = now;
    std::vector<Row> rows = make_rows(gather(o.prefix), prev, dt);
    sort_rows(rows, o.sort);
    if (o.json) {
      print_json(rows, dt);
    } else {
      print_table(rows, o, clear);
    }
    if (o.once || (o.iterations != 0 && i + 1 >= o.iterations)) break;
  }
  return kOk;
}

}  // namespace

Command add_top(CLI::App& root) {
  auto o = std::make_shared<TopOptions>();
  CLI::App* app =
      root.add_subcommand("top", "a live table of every channel: rates, backlog, lag, losses, participants");
  app->footer(
      "Example:\n  zipc top --interval 500ms --sort lag\n"
      "  zipc top --once --json | jq '.channels[] | {name, msgs_per_s}'\n"
      "Rates are exact: they come from per-participant counters in the segments. LOST, REDELIV and\n"
      "ABANDON count what happened during the last interval. For an Rpc, MSG/S is calls/s, BYTES/S\n"
      "request bytes/s, ERR/S failed calls/s and INFLIGHT the calls out now.");
  add_duration(app, "--interval", o->interval, false, Duration{false, 1'000'000}, Duration::seconds(24 * 3600),
               "time between refreshes (e.g. 500ms, 2s; a bare number is seconds)");
  app->add_flag("--once", o->once, "print one table (measured over one interval) and exit");
  app->add_flag("--json", o->json, "one zipc.top/1 JSON object per line and interval");
  app->add_option("--sort", o->sort, "msgs | bytes | backlog | lag | lost | dead | errors | name")
      ->check(CLI::IsMember({"msgs", "bytes", "backlog", "lag", "lost", "dead", "errors", "name"}));
  add_count(app, "-n,--iterations", o->iterations, 0, kNoMax, "exit after N refreshes (0: until ^C)");
  app->add_option("--match", o->prefix, "only channels whose name starts with this");
  return {app, [o] { return run_top(*o); }};
}

}  // namespace zipc_tool
