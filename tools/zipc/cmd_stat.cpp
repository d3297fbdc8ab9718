// zipc stat NAME: one channel in full: geometry, positions, counters, participants.
#include "common.hpp"

namespace zipc_tool {
namespace {

struct StatOptions {
  std::string name;
  std::string path;
  bool json = false;
};

void print_fields(const char* title, const zipc::ReportFields& f) {
  if (f.empty()) return;
  std::printf("%-10s", title);
  for (const auto& [k, v] : f) std::printf(" %s=%llu", k.c_str(), static_cast<unsigned long long>(v));
  std::printf("\n");
}

int run_stat(const StatOptions& o) {
  zipc::SegmentOptions so;
  so.path = o.path;
  const zipc::ChannelReport r = zipc::inspect_channel(o.name, so);
  const zipc::SegmentInfo& s = r.segment;
  if (o.json) {
    nlohmann::ordered_json j{{"schema", "zipc.channel/1"}};
    j.update(report_json(r));
    j["resident"] = s.allocated;  // bytes of the segment in memory now (size: what each participant maps)
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("name:      %s\npath:      %s\nkind:      %s\nsize:      %llu (%s)\n", s.name.c_str(), s.path.c_str(),
                s.valid ? zipc::to_string(s.kind) : "?", static_cast<unsigned long long>(s.size),
                human_size(s.size).c_str());
    // resident: the pages someone touched (or all, after prefault): what the
    // channel takes from /dev/shm now, whoever maps it (docs/guide/segment.md, "Memory").
    std::printf("memory:    %s mapped, %s resident\n", human_size(s.size).c_str(), human_size(s.allocated).c_str());
    std::printf("mode:      %s (owner uid %u)\n", octal_mode(r.mode).c_str(), r.owner_uid);
    if (s.type) std::printf("type:      %s\n", zipc::to_string(*s.type).c_str());
    std::printf("creator:   pid %d, %s\ncreated:   %s\n", s.creator.pid, s.creator_alive ? "alive" : "dead",
                when(s.created_ns).c_str());
    std::printf("status:    %s\n", r.readable ? (r.state.empty() ? "ok" : r.state.c_str()) : r.problem.c_str());
    print_fields("geometry:", r.geometry);
    print_fields("positions:", r.positions);
    print_fields("counters:", r.counters);
    if (r.readable && (s.kind == zipc::SegmentKind::topic || s.kind == zipc::SegmentKind::queue ||
                       s.kind == zipc::SegmentKind::rpc || s.kind == zipc::SegmentKind::event)) {
      std::printf("participants: %zu alive, %zu dead\n", r.alive_count(), r.dead_count());
      for (const auto& p : r.participants) {
        std::string role = p.role + (p.mode.empty() ? "" : "(" + p.mode + ")");
        std::printf("  %-22s pid %-8d %-5s slot %-4u", role.c_str(), p.process.pid, p.alive ? "alive" : "DEAD", p.slot);
        for (const auto& [k, v] : p.fields) std::printf(" %s=%llu", k.c_str(), static_cast<unsigned long long>(v));
        std::printf("\n");
      }
    }
  }
  if (!s.valid) return kCorrupt;
  return r.readable ? kOk : kCorrupt;
}

}  // namespace

Command add_stat(CLI::App& root) {
  auto o = std::make_shared<StatOptions>();
  CLI::App* app =
      root.add_subcommand("stat", "show one channel: geometry, memory, positions, counters, participants, lag");
  app->footer(
      "Example:\n  zipc stat orders            # exit 3 if absent, 6 if the segment fails validation\n"
      "  zipc stat orders --json | jq '.participants[] | select(.role==\"subscriber\") | .lag'");
  app->add_option("name", o->name, "channel name")->required();
  app->add_option("--path", o->path, "file-backed segment path");
  app->add_flag("--json", o->json, "print a zipc.channel/1 JSON object (docs/guide/cli.md)");
  return {app, [o] { return run_stat(*o); }};
}

}  // namespace zipc_tool
