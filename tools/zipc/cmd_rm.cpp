// zipc rm NAME...: remove channels by name.
#include "common.hpp"

namespace zipc_tool {
namespace {

int run_rm(const std::vector<std::string>& names) {
  int rc = kOk;
  for (const auto& n : names) {
    if (!zipc::Segment::remove(n)) {
      std::fprintf(stderr, "zipc rm: '%s': not found\n", n.c_str());
      rc = kNotFound;
    }
  }
  return rc;
}

}  // namespace

Command add_rm(CLI::App& root) {
  auto names = std::make_shared<std::vector<std::string>>();
  CLI::App* app = root.add_subcommand("rm", "remove channels (mappings stay valid until their users detach)");
  app->footer("Example:\n  zipc rm orders replies     # exit 3 if one of them did not exist");
  app->add_option("names", *names, "channel names")->required();
  return {app, [names] { return run_rm(*names); }};
}

}  // namespace zipc_tool
