/// \file
/// zipc/log.hpp - what the library does on its own, reported to the application.
///
/// \code
///   zipc::set_log_handler([](zipc::LogLevel level, std::string_view channel, std::string_view message) {
///     std::fprintf(stderr, "[%s] %.*s: %.*s\n", zipc::to_string(level), int(channel.size()), channel.data(),
///                  int(message.size()), message.data());
///   });
///   zipc::set_log_level(zipc::LogLevel::info);
///   // ... recovery of a dead peer's messages now reports itself ...
///   zipc::set_log_handler(nullptr);  // off again
/// \endcode
///
/// Off by default. The environment variable ZIPC_LOG=debug|info|warn|error
/// installs a stderr logger at that level the first time the library logs
/// (a handler set by the program replaces it). The library logs only on rare
/// paths: recovering what a dead peer held (messages, locks, claims), refusing
/// a foreign or corrupt segment, a layout version mismatch. Never per message.
/// Handlers may be called from any thread, concurrently; they must not throw.
#pragma once

#include <functional>
#include <string_view>

namespace zipc {

/// How much the library says; a handler sees messages at the level set by set_log_level and above.
enum class LogLevel : int {
  debug = 0,  ///< everything (the library itself logs nothing below info today)
  info = 1,   ///< what recovery did after a peer died (messages, claims, locks taken back)
  warn = 2,   ///< something refused or settled: a foreign or corrupt segment, a handler that threw
  error = 3,  ///< a request the library could not honour (close() on a read-only topic)
  off = 4,    ///< nothing (a level for set_log_level only)
};

/// The level's name: "debug", "info", "warn", "error", "off" ("?" for a value that is no LogLevel).
const char* to_string(LogLevel level) noexcept;

/// channel: the segment or channel name the event concerns ("" if none).
using LogHandler = std::function<void(LogLevel level, std::string_view channel, std::string_view message)>;

/// Installs handler (nullptr: logging off). Messages below the level set by
/// set_log_level (default info) are not formatted at all.
void set_log_handler(LogHandler handler);
/// Messages below level are dropped before they are formatted (default: info; off silences all).
void set_log_level(LogLevel level) noexcept;
/// The level set by set_log_level.
[[nodiscard]] LogLevel log_level() noexcept;

/// The stderr logger ZIPC_LOG installs: "zipc: warn: <channel>: <message>".
void log_to_stderr(LogLevel level, std::string_view channel, std::string_view message);

namespace detail {
// True when a message at level would reach a handler (cheap: one atomic load).
[[nodiscard]] bool log_enabled(LogLevel level) noexcept;
void log_message(LogLevel level, std::string_view channel, std::string_view message) noexcept;
}  // namespace detail

}  // namespace zipc
