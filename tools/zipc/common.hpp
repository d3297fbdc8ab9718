// Shared pieces of the zipc tool: exit codes, one-line errors, formatting,
// output buffering and terminal progress.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>
#include <zipc/zipc.hpp>

namespace zipc_tool {

// Exit codes (docs/guide/cli.md). Distinct per cause so scripts can branch.
enum Exit : int {
  kOk = 0,
  kFailure = 1,     // anything else (the message says what)
  kUsage = 2,       // invalid usage or option value
  kNotFound = 3,    // no such channel / file / command
  kPermission = 4,  // permission denied
  kTimeout = 5,     // a wait ran out (e.g. sub --timeout before --count)
  kCorrupt = 6,     // a segment or file failed validation
  kConflict = 7,    // exists already, busy, wrong kind
  kClosed = 8,      // the channel was closed or its peer died
  kIo = 9,          // reading or writing a file / stdio failed
  kRemote = 10,     // an Rpc handler failed the call (its code and message are printed)
};

// A failure with its exit code; main() prints "zipc SUB: what" once.
class ToolError : public std::runtime_error {
 public:
  ToolError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

[[noreturn]] void fail(int code, std::string_view object, std::string_view cause);
int exit_code_for(zipc::Errc e) noexcept;
int exit_code_for(zipc::Status s) noexcept;

// One subcommand: registers itself on the app; run() is called when chosen.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
using Registrar = Command (*)(CLI::App& root);
// Every built-in subcommand, in help order (defined in main.cpp).
const std::vector<Registrar>& registrars();

std::string human_size(std::uint64_t bytes);
std::string human_rate(double per_second);
std::string when(std::uint64_t realtime_ns);
std::string octal_mode(std::uint32_t mode);
std::uint64_t now_realtime_ns();
std::uint64_t now_monotonic_ns();
bool stderr_is_terminal();
bool stdout_is_terminal();
std::string hex(std::span<const std::byte> data);
bool is_utf8_text(std::span<const std::byte> data);

// Stdout in large blocks: one write per ~1 MiB instead of per message.
class OutBuffer {
 public:
  explicit OutBuffer(std::FILE* f, std::size_t capacity = 1 << 20);
  ~OutBuffer();
  void append(const void* data, std::size_t n);
  void append(std::string_view s) { append(s.data(), s.size()); }
  void put(char c) {
    if (used_ == buf_.size()) flush();
    buf_[used_++] = c;
  }
  void flush();
  [[nodiscard]] std::size_t pending() const noexcept { return used_; }

 private:
  std::FILE* file_;
  std::vector<char> buf_;
  std::size_t used_ = 0;
};

// "what: 42% (n/total)" on stderr when it is a terminal, at most 5 times a second.
class Progress {
 public:
  Progress(std::string what, std::uint64_t total);
  ~Progress();
  void update(std::uint64_t done);
  void finish();

 private:
  std::string what_;
  std::uint64_t total_;
  std::uint64_t last_ns_ = 0;
  bool active_;
  bool shown_ = false;
};

// Set by SIGINT/SIGTERM (installed by install_stop_handler): long-running
// commands stop cleanly and flush.
bool stop_requested() noexcept;
void install_stop_handler();
// Sleeps until the monotonic clock reaches due_ns (now_monotonic_ns), in
// slices of at most 20 ms: returns false at once when a stop was requested.
bool pause_until(std::uint64_t due_ns) noexcept;

// A segment's kind, or SegmentKind::any if it does not exist.
zipc::SegmentKind kind_of(const std::string& name);

// JSON of a report (the "zipc.channel/1" object of docs/guide/cli.md).
nlohmann::ordered_json report_json(const zipc::ChannelReport& r);

}  // namespace zipc_tool
