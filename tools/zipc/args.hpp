// Strict parsing of every option value the tool takes (docs/guide/cli.md, "Option
// values"): whole numbers, sizes, durations and real numbers, each with its
// allowed range. One mechanism for every subcommand: an option added with
// add_count/add_size/add_duration/add_real is parsed when the command line is
// read, before anything is opened, allocated or waited on; a bad value is a
// CLI::ValidationError naming the flag, the value and the range, which main()
// prints as one line "zipc SUB: ..." with exit code 2.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace zipc_tool {

// A wait: forever, or a number of nanoseconds (0: try once, do not wait).
struct Duration {
  bool forever = false;
  std::uint64_t ns = 0;

  static constexpr Duration infinite() noexcept { return {true, 0}; }
  static constexpr Duration seconds(std::uint64_t s) noexcept { return {false, s * 1'000'000'000ull}; }
  // For library calls: forever is 100 years (no deadline overflows).
  [[nodiscard]] std::chrono::nanoseconds chrono() const noexcept;
  // The deadline now_ns + this (saturating; ~0 for forever).
  [[nodiscard]] std::uint64_t deadline(std::uint64_t now_ns) const noexcept;
  [[nodiscard]] std::string text() const;  // "forever", "500ms", "2s", ...
};

// The parsers; each throws std::invalid_argument whose message says what is
// allowed (the caller adds the flag's name).
std::uint64_t parse_count(std::string_view text, std::uint64_t min, std::uint64_t max);
std::uint64_t parse_size_strict(std::string_view text, std::uint64_t min, std::uint64_t max);
Duration parse_duration(std::string_view text, bool allow_forever, Duration min, Duration max);
double parse_real(std::string_view text, double min, bool min_inclusive, double max);

// Options parsed by the above. The value shown as the default in --help is
// the target's value when the option is added.
CLI::Option* add_count(CLI::App* app, const std::string& name, std::uint64_t& target, std::uint64_t min,
                       std::uint64_t max, const std::string& help);
CLI::Option* add_count32(CLI::App* app, const std::string& name, std::uint32_t& target, std::uint32_t min,
                         std::uint32_t max, const std::string& help);
CLI::Option* add_size(CLI::App* app, const std::string& name, std::uint64_t& target, std::uint64_t min,
                      std::uint64_t max, const std::string& help);
// allow_forever: "forever" is a value; min/max bound the finite ones.
CLI::Option* add_duration(CLI::App* app, const std::string& name, Duration& target, bool allow_forever, Duration min,
                          Duration max, const std::string& help);
CLI::Option* add_real(CLI::App* app, const std::string& name, double& target, double min, bool min_inclusive,
                      double max, const std::string& help);

// "4 MiB", "1536 bytes": exact, for sizes in messages and help.
std::string exact_size(std::uint64_t bytes);

inline constexpr std::uint64_t kNoMax = std::numeric_limits<std::uint64_t>::max();
inline constexpr Duration kMaxDuration = Duration::seconds(365ull * 24 * 3600);  // one year

}  // namespace zipc_tool
