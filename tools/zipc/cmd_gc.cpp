// zipc gc: remove abandoned or invalid segments that nobody uses (with
// progress on a terminal). A segment in use is never removed (attached.hpp).
#include "attached.hpp"
#include "common.hpp"

namespace zipc_tool {
namespace {

struct GcOptions {
  bool dead = false;
  bool dry_run = false;
  std::string prefix;
};

int run_gc(const GcOptions& o) {
  const std::vector<zipc::SegmentInfo> all = zipc::Segment::list();
  const MapIndex maps = scan_mappings();
  Progress progress("gc", all.size());
  int removed = 0;
  std::uint64_t done = 0;
  for (const auto& s : all) {
    progress.update(++done);
    if (s.name.compare(0, o.prefix.size(), o.prefix) != 0) continue;
    if (s.problem == "initializing") continue;  // a live creator is still at work
    std::string why;
    if (!s.valid) {
      why = s.problem.empty() ? "invalid" : s.problem;
    } else if (o.dead && !s.creator_alive) {
      why = "creator dead";
    } else {
      continue;
    }
    zipc::ChannelReport r;
    try {
      r = zipc::inspect_channel(s.name);
    } catch (const zipc::Error& e) {
      if (e.errc() == zipc::Errc::not_found) continue;  // removed meanwhile
      r.segment = s;
    }
    const Attachment a = attachment(r, maps);
    progress.finish();
    if (!a.live.empty()) {
      std::printf("%s %s (%s, but in use by %s)\n", o.dry_run ? "would keep" : "keeping", s.name.c_str(), why.c_str(),
                  join(a.live).c_str());
      continue;
    }
    why += a.records_known ? ", no live participant" : ", no participant records";
    if (a.dead != 0) why += " (" + std::to_string(a.dead) + " dead)";
    why += ", mapped by no process";
    std::printf("%s %s (%s)\n", o.dry_run ? "would remove" : "removing", s.name.c_str(), why.c_str());
    if (!o.dry_run && zipc::Segment::remove(s.name)) ++removed;
  }
  progress.finish();
  if (!o.dry_run) std::printf("gc: %d segment(s) removed\n", removed);
  return kOk;
}

}  // namespace

Command add_gc(CLI::App& root) {
  auto o = std::make_shared<GcOptions>();
  CLI::App* app = root.add_subcommand("gc", "remove abandoned or invalid segments that nobody uses");
  app->footer(
      "Example:\n  zipc gc -n --dead          # what would go, and why (and what stays because it is in use)\n"
      "A segment stays while any live process is attached: a participant recorded in it\n"
      "(publisher, subscriber, queue handle, server, client, listener; pid and start time\n"
      "checked) or a process of this PID namespace that maps it.");
  app->add_flag("--dead", o->dead, "also remove valid segments whose creator has died, when nobody is attached");
  app->add_flag("-n,--dry-run", o->dry_run, "only say what would be removed, and why");
  app->add_option("--match", o->prefix, "only segments whose name starts with this");
  return {app, [o] { return run_gc(*o); }};
}

}  // namespace zipc_tool
