// zipc: inspect and manage zipc segments from the shell.
//
//   zipc ls                 every segment in /dev/shm: kind, size, creator, alive?
//   zipc stat NAME          one segment's header and parameters
//   zipc rm NAME...         remove segments by name
//   zipc gc [--dead] [-n] [--match PREFIX]
//                           remove abandoned segments (creator died during init, or
//                           invalid headers); with --dead also those whose creator died
//   zipc create NAME --size BYTES [--mode 0660]   an empty user segment (for tests, ACLs)
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>
#include <zipc/zipc.hpp>

namespace {

std::string human_size(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

std::string when(std::uint64_t realtime_ns) {
  if (realtime_ns == 0) return "-";
  std::time_t t = static_cast<std::time_t>(realtime_ns / 1'000'000'000ull);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string status_of(const zipc::SegmentInfo& s) {
  if (s.valid) return "ok";
  return s.problem.empty() ? "invalid" : s.problem;
}

int cmd_ls() {
  auto all = zipc::Segment::list();
  std::printf("%-32s %-6s %10s %8s %-5s %-19s %s\n", "NAME", "KIND", "SIZE", "CREATOR", "ALIVE", "CREATED", "STATUS");
  for (const auto& s : all) {
    std::printf("%-32s %-6s %10s %8d %-5s %-19s %s\n", s.name.c_str(), zipc::to_string(s.kind),
                human_size(s.size).c_str(), s.creator.pid, s.creator_alive ? "yes" : "no", when(s.created_ns).c_str(),
                status_of(s).c_str());
  }
  std::printf("%zu segment(s)\n", all.size());
  return 0;
}

int cmd_stat(const std::string& name, const std::string& path) {
  zipc::SegmentOptions o;
  o.path = path;
  auto s = zipc::Segment::inspect(name, o);
  std::printf("name:     %s\npath:     %s\nkind:     %s\nsize:     %llu (%s)\n", s.name.c_str(), s.path.c_str(),
              zipc::to_string(s.kind), static_cast<unsigned long long>(s.size), human_size(s.size).c_str());
  std::printf("creator:  pid %d, start time %llu, %s\ncreated:  %s\nstatus:   %s\nparams:  ", s.creator.pid,
              static_cast<unsigned long long>(s.creator.start_time), s.creator_alive ? "alive" : "dead",
              when(s.created_ns).c_str(), status_of(s).c_str());
  for (auto p : s.params) std::printf(" %llu", static_cast<unsigned long long>(p));
  std::printf("\n");
  return s.valid ? 0 : 1;
}

int cmd_rm(const std::vector<std::string>& names) {
  int rc = 0;
  for (const auto& n : names) {
    if (!zipc::Segment::remove(n)) {
      std::fprintf(stderr, "zipc rm: segment '%s': not found\n", n.c_str());
      rc = 1;
    }
  }
  return rc;
}

int cmd_gc(bool dead_too, bool dry_run, const std::string& prefix) {
  int removed = 0;
  for (const auto& s : zipc::Segment::list()) {
    if (s.name.compare(0, prefix.size(), prefix) != 0) continue;
    if (s.problem == "initializing") continue;  // a live creator is still at work
    const bool abandoned = !s.valid;
    const bool orphan = s.valid && !s.creator_alive && dead_too;
    if (!abandoned && !orphan) continue;
    std::printf("%s %s (%s)\n", dry_run ? "would remove" : "removing", s.name.c_str(),
                abandoned ? status_of(s).c_str() : "creator dead");
    if (!dry_run && zipc::Segment::remove(s.name)) ++removed;
  }
  std::printf("gc: %d segment(s) removed\n", removed);
  return 0;
}

int cmd_create(const std::string& name, std::uint64_t size, const std::string& mode) {
  zipc::SegmentOptions o;
  o.mode = static_cast<unsigned>(std::stoul(mode, nullptr, 8));
  zipc::Segment::create(name, {zipc::SegmentKind::user, size, {}}, nullptr, o);
  std::printf("created %s (%s)\n", name.c_str(), human_size(size).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zipc: inspect and manage zipc shared-memory segments"};
  app.require_subcommand(1);
  auto* ls = app.add_subcommand("ls", "list every zipc segment in /dev/shm");
  std::string name, path, mode = "600";
  auto* stat = app.add_subcommand("stat", "show one segment's header");
  stat->add_option("name", name, "segment name")->required();
  stat->add_option("--path", path, "file-backed segment path");
  std::vector<std::string> names;
  auto* rm = app.add_subcommand("rm", "remove segments");
  rm->add_option("names", names, "segment names")->required();
  bool dead = false, dry = false;
  auto* gc = app.add_subcommand("gc", "remove abandoned or invalid segments");
  gc->add_flag("--dead", dead, "also remove valid segments whose creator has died");
  gc->add_flag("-n,--dry-run", dry, "only say what would be removed");
  std::string prefix;
  gc->add_option("--match", prefix, "only segments whose name starts with this");
  std::uint64_t size = 0;
  auto* create = app.add_subcommand("create", "create an empty user segment");
  create->add_option("name", name, "segment name")->required();
  create->add_option("--size", size, "payload bytes")->required();
  create->add_option("--mode", mode, "permission bits, octal (600, 660, 666)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (*ls) return cmd_ls();
    if (*stat) return cmd_stat(name, path);
    if (*rm) return cmd_rm(names);
    if (*gc) return cmd_gc(dead, dry, prefix);
    if (*create) return cmd_create(name, size, mode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zipc: %s\n", e.what());
    return 1;
  }
  return 0;
}
