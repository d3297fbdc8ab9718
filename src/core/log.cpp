// The logging hook (include/zipc/log.hpp).
#include "zipc/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

namespace zipc {
namespace {

struct LogState {
  std::mutex mutex;
  std::shared_ptr<const LogHandler> handler;
  // Effective threshold: kOff while no handler is installed (one load to decide).
  std::atomic<int> threshold{static_cast<int>(LogLevel::off)};
  LogLevel level = LogLevel::info;
  bool env_checked = false;
};

LogState& state() {
  static LogState s;
  return s;
}

bool parse_level(const char* text, LogLevel* out) {
  static const std::pair<const char*, LogLevel> names[] = {
      {"debug", LogLevel::debug},  {"info", LogLevel::info},   {"warn", LogLevel::warn},
      {"warning", LogLevel::warn}, {"error", LogLevel::error}, {"off", LogLevel::off},
  };
  for (const auto& [name, level] : names) {
    if (std::strcmp(text, name) == 0) {
      *out = level;
      return true;
    }
  }
  return false;
}

// Called under the mutex: ZIPC_LOG turns the stderr logger on once, unless
// the program installed its own handler first.
void check_env(LogState& s) {
  if (s.env_checked) return;
  s.env_checked = true;
  // Read once, at load time or the first log call, under our mutex; nothing
  // in the library calls setenv.
  const char* env = std::getenv("ZIPC_LOG");  // NOLINT(concurrency-mt-unsafe)
  LogLevel level = LogLevel::off;
  if (env == nullptr || !parse_level(env, &level) || level == LogLevel::off || s.handler) return;
  s.level = level;
  s.handler = std::make_shared<const LogHandler>(&log_to_stderr);
  s.threshold.store(static_cast<int>(level), std::memory_order_relaxed);  // relaxed: read under the mutex again
}

// Environment checked at load time so the first log_enabled() sees it.
[[maybe_unused]] const bool env_at_load = [] {
  std::lock_guard lock(state().mutex);
  check_env(state());
  return true;
}();

}  // namespace

const char* to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
    case LogLevel::off: return "off";
  }
  return "?";
}

void set_log_handler(LogHandler handler) {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.env_checked = true;  // the program decides from now on
  s.handler = handler ? std::make_shared<const LogHandler>(std::move(handler)) : nullptr;
  s.threshold.store(s.handler ? static_cast<int>(s.level) : static_cast<int>(LogLevel::off),
                    std::memory_order_relaxed);  // relaxed: the handler itself is read under the mutex
}

void set_log_level(LogLevel level) noexcept {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  s.level = level;
  if (s.handler) s.threshold.store(static_cast<int>(level), std::memory_order_relaxed);  // relaxed: as above
}

LogLevel log_level() noexcept {
  LogState& s = state();
  std::lock_guard lock(s.mutex);
  return s.level;
}

void log_to_stderr(LogLevel level, std::string_view channel, std::string_view message) {
  std::string line = "zipc: ";
  line += to_string(level);
  line += ": ";
  if (!channel.empty()) {
    line += channel;
    line += ": ";
  }
  line += message;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

namespace detail {

bool log_enabled(LogLevel level) noexcept {
  // relaxed: a stale answer only delays when logging starts or stops.
  return static_cast<int>(level) >= state().threshold.load(std::memory_order_relaxed);
}

void log_message(LogLevel level, std::string_view channel, std::string_view message) noexcept {
  if (!log_enabled(level)) return;
  std::shared_ptr<const LogHandler> handler;
  {
    std::lock_guard lock(state().mutex);
    handler = state().handler;
  }
  if (!handler) return;
  try {
    (*handler)(level, channel, message);
  } catch (...) {
    // a handler must not throw; the library's recovery goes on regardless
  }
}

}  // namespace detail
}  // namespace zipc
