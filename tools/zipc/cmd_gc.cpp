// zipc gc: remove abandoned or invalid segments (with progress on a terminal).
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
  Progress progress("gc", all.size());
  int removed = 0;
  std::uint64_t done = 0;
  for (const auto& s : all) {
    progress.update(++done);
    if (s.name.compare(0, o.prefix.size(), o.prefix) != 0) continue;
    if (s.problem == "initializing") continue;  // a live creator is still at work
    const bool abandoned = !s.valid;
    bool orphan = s.valid && !s.creator_alive && o.dead;
    if (orphan && s.kind == zipc::SegmentKind::topic_reader) {
      // A reader seat is reused by the next reader when its first one dies:
      // it is an orphan only while nobody alive sits in it.
      try {
        orphan = zipc::inspect_channel(s.name).alive_count() == 0;
      } catch (const zipc::Error&) {
      }
    }
    if (!abandoned && !orphan) continue;
    progress.finish();
    std::printf("%s %s (%s)\n", o.dry_run ? "would remove" : "removing", s.name.c_str(),
                abandoned ? (s.problem.empty() ? "invalid" : s.problem.c_str()) : "creator dead");
    if (!o.dry_run && zipc::Segment::remove(s.name)) ++removed;
  }
  progress.finish();
  std::printf("gc: %d segment(s) removed\n", removed);
  return kOk;
}

}  // namespace

Command add_gc(CLI::App& root) {
  auto o = std::make_shared<GcOptions>();
  CLI::App* app = root.add_subcommand("gc", "remove abandoned or invalid segments");
  app->footer("Example:\n  zipc gc -n --dead          # list what would go, including segments whose creator died");
  app->add_flag("--dead", o->dead, "also remove valid segments whose creator has died");
  app->add_flag("-n,--dry-run", o->dry_run, "only say what would be removed");
  app->add_option("--match", o->prefix, "only segments whose name starts with this");
  return {app, [o] { return run_gc(*o); }};
}

}  // namespace zipc_tool
