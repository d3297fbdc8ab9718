// zipc ls: every channel in /dev/shm, one line each (or --json).
#include "common.hpp"

namespace zipc_tool {
namespace {

struct LsOptions {
  bool json = false;
  std::string prefix;
};

std::string participants_cell(const zipc::ChannelReport& r) {
  if (!r.readable) return "-";
  return std::to_string(r.alive_count()) + "/" + std::to_string(r.dead_count());
}

int run_ls(const LsOptions& o) {
  const std::vector<zipc::ChannelReport> all =
      zipc::inspect_channels([&](std::string_view name) { return name.starts_with(o.prefix); });
  if (o.json) {
    nlohmann::ordered_json j;
    j["schema"] = "zipc.ls/1";
    j["channels"] = nlohmann::ordered_json::array();
    for (const auto& r : all) j["channels"].push_back(report_json(r));
    std::printf("%s\n", j.dump(2).c_str());
    return kOk;
  }
  std::printf("%-28s %-6s %10s %5s %8s %-5s %9s %12s %s\n", "NAME", "KIND", "SIZE", "MODE", "CREATOR", "ALIVE",
              "LIVE/DEAD", "BACKLOG", "STATUS");
  for (const auto& r : all) {
    const zipc::SegmentInfo& s = r.segment;
    std::string status = r.readable ? (r.state.empty() ? "ok" : r.state) : r.problem;
    if (!s.valid) status = s.problem.empty() ? r.problem : s.problem;
    std::printf("%-28s %-6s %10s %5s %8d %-5s %9s %12s %s\n", s.name.c_str(), s.valid ? zipc::to_string(s.kind) : "?",
                human_size(s.size).c_str(), octal_mode(r.mode).c_str(), s.creator.pid, s.creator_alive ? "yes" : "no",
                participants_cell(r).c_str(), r.readable ? std::to_string(r.backlog).c_str() : "-", status.c_str());
  }
  std::printf("%zu segment(s)\n", all.size());
  return kOk;
}

}  // namespace

Command add_ls(CLI::App& root) {
  auto o = std::make_shared<LsOptions>();
  CLI::App* app = root.add_subcommand("ls", "list every zipc channel: kind, size, permissions, participants, backlog");
  app->footer(
      "Example:\n  zipc ls --match orders.   # channels whose names start with 'orders.'\n  zipc ls --json | jq "
      "'.channels[].name'");
  app->add_flag("--json", o->json, "print a zipc.ls/1 JSON document (docs/guide/cli.md)");
  app->add_option("--match", o->prefix, "only channels whose name starts with this");
  return {app, [o] { return run_ls(*o); }};
}

}  // namespace zipc_tool
