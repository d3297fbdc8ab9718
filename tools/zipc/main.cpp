// zipc: see, poke, record and replay zipc channels from the shell.
//
// One file per subcommand (cmd_*.cpp); each registers itself with CLI11.
// `zipc X args...` with X not built in runs `zipc-X args...` found next to
// this binary or on PATH (git-style external subcommands, e.g. zipc-bridge).
// Exit codes: common.hpp / docs/guide/cli.md.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "common.hpp"

namespace zipc_tool {
Command add_ls(CLI::App& root);
Command add_stat(CLI::App& root);
Command add_top(CLI::App& root);
Command add_pub(CLI::App& root);
Command add_sub(CLI::App& root);
Command add_call(CLI::App& root);
Command add_serve(CLI::App& root);
Command add_record(CLI::App& root);
Command add_replay(CLI::App& root);
Command add_rm(CLI::App& root);
Command add_gc(CLI::App& root);
Command add_create(CLI::App& root);
Command add_bench(CLI::App& root);
Command add_metrics(CLI::App& root);
Command add_exporter(CLI::App& root);

const std::vector<Registrar>& registrars() {
  static const std::vector<Registrar> all = {add_ls,   add_stat,   add_top,    add_pub,     add_sub,
                                             add_call, add_serve,  add_record, add_replay,  add_rm,
                                             add_gc,   add_create, add_bench,  add_metrics, add_exporter};
  return all;
}
}  // namespace zipc_tool

namespace {

using namespace zipc_tool;

// Where an external subcommand lives: next to this binary first, then PATH.
std::string find_external(const std::string& sub) {
  const std::string file = "zipc-" + sub;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto candidate = self.parent_path() / file;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      std::string dir(rest.substr(0, colon));
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
      if (dir.empty()) dir = ".";
      std::string candidate = dir;
      candidate.append("/").append(file);
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return {};
}

// CLI11 messages may hold a newline; an error is one line.
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

int run_external(int argc, char** argv) {
  const std::string sub = argv[1];
  const std::string exe = find_external(sub);
  if (exe.empty()) {
    std::fprintf(stderr, "zipc: '%s': not a zipc command (no zipc-%s next to zipc or on PATH); see zipc --help\n",
                 sub.c_str(), sub.c_str());
    return kNotFound;
  }
  std::vector<char*> args;
  std::string arg0 = "zipc-" + sub;
  args.push_back(arg0.data());
  for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(exe.c_str(), args.data());
  std::fprintf(stderr, "zipc: '%s': cannot run %s: %s\n", sub.c_str(), exe.c_str(), std::strerror(errno));
  return kFailure;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "zipc: inspect, poke, record and replay zipc shared-memory channels.\n"
      "  zipc ls; zipc stat NAME; zipc top; seq 10 | zipc pub NAME --create; zipc sub NAME\n"
      "  Unknown subcommands X run zipc-X (next to zipc, or on PATH). ZIPC_LOG=info prints\n"
      "  what the library recovers or refuses. Exit codes: 0 ok, 1 failure, 2 usage, 3 not found,\n"
      "  4 permission, 5 timeout, 6 corrupt, 7 conflict (exists/busy/wrong kind), 8 closed/peer dead, 9 I/O."};
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();  // every --help shows each option's default
  app.set_version_flag("--version", std::string("zipc ") + "0.1.0");
  std::vector<Command> commands;
  for (Registrar r : registrars()) commands.push_back(r(app));
  if (argc >= 2 && argv[1][0] != '-') {
    bool builtin = false;
    for (const auto& c : commands) builtin = builtin || c.app->check_name(argv[1]);
    if (!builtin) return run_external(argc, argv);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kOk : kUsage;  // --help, --version
    // A usage error: one line naming the subcommand (argv[1] when it is one).
    std::string sub;
    for (const auto& c : commands) {
      if (argc >= 2 && c.app->check_name(argv[1])) sub = c.app->get_name();
    }
    std::fprintf(stderr, "zipc%s%s: %s (see zipc%s%s --help)\n", sub.empty() ? "" : " ", sub.c_str(),
                 one_line(e.what()).c_str(), sub.empty() ? "" : " ", sub.c_str());
    return kUsage;
  }
  for (const auto& c : commands) {
    if (!c.app->parsed()) continue;
    const std::string sub = c.app->get_name();
    try {
      return c.run();
    } catch (const ToolError& e) {
      std::fprintf(stderr, "zipc %s: %s\n", sub.c_str(), e.what());
      return e.code();
    } catch (const zipc::Error& e) {
      std::fprintf(stderr, "zipc %s: %s\n", sub.c_str(), e.what());
      return exit_code_for(e.errc());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "zipc %s: %s\n", sub.c_str(), e.what());
      return kFailure;
    }
  }
  return kUsage;
}
