// zipc rm NAME...: remove channels by name; one in use needs --force.
#include "attached.hpp"
#include "common.hpp"

namespace zipc_tool {
namespace {

struct RmOptions {
  std::vector<std::string> names;
  bool force = false;
};

int run_rm(const RmOptions& o) {
  int rc = kOk;
  const MapIndex maps = o.force ? MapIndex{} : scan_mappings();
  for (const auto& n : o.names) {
    if (!o.force) {
      try {
        const Attachment a = attachment(zipc::inspect_channel(n), maps);
        if (!a.live.empty()) {
          std::fprintf(stderr, "zipc rm: '%s': in use by %s (--force removes it anyway)\n", n.c_str(),
                       join(a.live).c_str());
          rc = kConflict;
          continue;
        }
      } catch (const zipc::Error& e) {
        if (e.errc() != zipc::Errc::not_found) throw;
      }
    }
    if (!zipc::Segment::remove(n)) {
      std::fprintf(stderr, "zipc rm: '%s': not found\n", n.c_str());
      rc = kNotFound;
    }
  }
  return rc;
}

}  // namespace

Command add_rm(CLI::App& root) {
  auto o = std::make_shared<RmOptions>();
  CLI::App* app = root.add_subcommand("rm", "remove channels (mappings stay valid until their users detach)");
  app->footer(
      "Example:\n  zipc rm orders replies     # exit 3 if one of them did not exist, 7 if one is in use\n"
      "  zipc rm orders --force     # even while processes are attached (they keep the old mapping)");
  app->add_option("names", o->names, "channel names")->required();
  app->add_flag("-f,--force", o->force, "remove even while live processes are attached (names them otherwise)");
  return {app, [o] { return run_rm(*o); }};
}

}  // namespace zipc_tool
