// Strict option values (args.hpp).
#include "args.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace zipc_tool {
namespace {

constexpr std::uint64_t kNsPerS = 1'000'000'000ull;

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A whole decimal number, no sign, no spaces; false on anything else or overflow.
bool decimal(std::string_view s, std::uint64_t* out) {
  if (!all_digits(s)) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out, 10);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

std::string quoted(std::string_view s) {
  std::string q = "'";
  q.append(s.substr(0, 64));
  if (s.size() > 64) q += "...";
  q += "'";
  return q;
}

std::string format_real(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

[[noreturn]] void bad(std::string_view text, const std::string& expected) {
  throw std::invalid_argument(quoted(text) + " is not " + expected);
}

template <class Parse>
CLI::Option* add_parsed(CLI::App* app, const std::string& name, const std::string& help, std::string default_text,
                        const char* type, Parse parse) {
  CLI::Option* opt = app->add_option_function<std::string>(
      name,
      [name, parse](const std::string& text) {
        try {
          parse(text);
        } catch (const std::invalid_argument& e) {
          throw CLI::ValidationError(name, e.what());
        }
      },
      help);
  opt->default_str(std::move(default_text))->type_name(type);
  return opt;
}

}  // namespace

std::chrono::nanoseconds Duration::chrono() const noexcept {
  constexpr std::uint64_t kCentury = 100ull * 365 * 24 * 3600 * kNsPerS;
  return std::chrono::nanoseconds(static_cast<std::int64_t>(forever || ns > kCentury ? kCentury : ns));
}

std::uint64_t Duration::deadline(std::uint64_t now_ns) const noexcept {
  if (forever || ns > ~0ull - now_ns) return ~0ull;
  return now_ns + ns;
}

std::string Duration::text() const {
  if (forever) return "forever";
  struct Unit {
    std::uint64_t ns;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{24 * 3600 * kNsPerS, "d"}, {3600 * kNsPerS, "h"},
                                    {60 * kNsPerS, "m"},        {kNsPerS, "s"},
                                    {1'000'000, "ms"},          {1'000, "us"}};
  for (const Unit& u : kUnits) {
    if (ns != 0 && ns % u.ns == 0) return std::to_string(ns / u.ns) + u.name;
  }
  return ns == 0 ? "0" : std::to_string(ns) + "ns";
}

std::string exact_size(std::uint64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  std::string best = std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  std::uint64_t v = bytes;
  for (const char* u : units) {
    if (v == 0 || v % 1024 != 0) break;
    v /= 1024;
    best = std::to_string(v) + " " + u;
  }
  return best;
}

std::uint64_t parse_count(std::string_view text, std::uint64_t min, std::uint64_t max) {
  std::uint64_t v = 0;
  if (!decimal(text, &v) || v < min || v > max) {
    bad(text, max == kNoMax ? "a whole number of at least " + std::to_string(min)
                            : "a whole number from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return v;
}

std::uint64_t parse_size_strict(std::string_view text, std::uint64_t min, std::uint64_t max) {
  const std::string expected =
      "a size from " + exact_size(min) + " to " + exact_size(max) + " (bytes, or with a unit: 64KiB, 4MiB, 1GiB)";
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::uint64_t v = 0;
  if (!decimal(text.substr(0, digits), &v)) bad(text, expected);
  const std::string_view unit = text.substr(digits);
  unsigned shift = 0;
  if (unit.empty() || unit == "B") {
  } else if (unit == "K" || unit == "k" || unit == "KiB") {
    shift = 10;
  } else if (unit == "M" || unit == "MiB") {
    shift = 20;
  } else if (unit == "G" || unit == "GiB") {
    shift = 30;
  } else if (unit == "T" || unit == "TiB") {
    shift = 40;
  } else {
    bad(text, expected);
  }
  if (v > (kNoMax >> shift)) bad(text, expected);  // would wrap
  v <<= shift;
  if (v < min || v > max) bad(text, expected);
  return v;
}

Duration parse_duration(std::string_view text, bool allow_forever, Duration min, Duration max) {
  const std::string expected = std::string("a duration from ") + min.text() + " to " + max.text() +
                               (allow_forever ? " or forever" : "") + " (e.g. 500ms, 2s, 1m; a bare number is seconds)";
  if (text == "forever") {
    if (!allow_forever) bad(text, expected);
    return Duration::infinite();
  }
  // digits [. digits] [unit]: no sign, exponent, nan or inf.
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  const std::string_view whole = text.substr(0, i);
  std::string_view frac;
  if (i < text.size() && text[i] == '.') {
    const std::size_t start = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    frac = text.substr(start, i - start);
    if (frac.empty()) bad(text, expected);
  }
  if (whole.empty() && frac.empty()) bad(text, expected);
  const std::string_view unit = text.substr(i);
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "s") {
    scale = kNsPerS;
  } else if (unit == "ns") {
    scale = 1;
  } else if (unit == "us") {
    scale = 1'000;
  } else if (unit == "ms") {
    scale = 1'000'000;
  } else if (unit == "m" || unit == "min") {
    scale = 60 * kNsPerS;
  } else if (unit == "h") {
    scale = 3600 * kNsPerS;
  } else if (unit == "d") {
    scale = 24 * 3600 * kNsPerS;
  } else {
    bad(text, expected);
  }
  const long double value = std::strtold(std::string(text.substr(0, i)).c_str(), nullptr) * scale;
  if (!(value >= static_cast<long double>(min.ns)) || value > static_cast<long double>(max.ns)) bad(text, expected);
  return Duration{false, static_cast<std::uint64_t>(std::llround(value))};
}

double parse_real(std::string_view text, double min, bool min_inclusive, double max) {
  const std::string expected = std::string("a number ") + (min_inclusive ? "from " : "greater than ") +
                               format_real(min) + (min_inclusive ? " to " : " and at most ") + format_real(max);
  // Digits, '.', and an exponent only: no sign, spaces, hex, nan or inf.
  if (text.empty() || !((text[0] >= '0' && text[0] <= '9') || text[0] == '.')) bad(text, expected);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool sign_of_exponent = (c == '+' || c == '-') && (text[i - 1] == 'e' || text[i - 1] == 'E');
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || sign_of_exponent)) bad(text, expected);
  }
  const std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) bad(text, expected);
  if (v < min || (!min_inclusive && v == min) || v > max) bad(text, expected);
  return v;
}

CLI::Option* add_count(CLI::App* app, const std::string& name, std::uint64_t& target, std::uint64_t min,
                       std::uint64_t max, const std::string& help) {
  return add_parsed(app, name, help, std::to_string(target), "N",
                    [&target, min, max](const std::string& t) { target = parse_count(t, min, max); });
}

CLI::Option* add_count32(CLI::App* app, const std::string& name, std::uint32_t& target, std::uint32_t min,
                         std::uint32_t max, const std::string& help) {
  return add_parsed(app, name, help, std::to_string(target), "N", [&target, min, max](const std::string& t) {
    target = static_cast<std::uint32_t>(parse_count(t, min, max));
  });
}

CLI::Option* add_size(CLI::App* app, const std::string& name, std::uint64_t& target, std::uint64_t min,
                      std::uint64_t max, const std::string& help) {
  std::string shown = exact_size(target);
  std::erase(shown, ' ');
  return add_parsed(app, name, help, shown, "SIZE",
                    [&target, min, max](const std::string& t) { target = parse_size_strict(t, min, max); });
}

CLI::Option* add_duration(CLI::App* app, const std::string& name, Duration& target, bool allow_forever, Duration min,
                          Duration max, const std::string& help) {
  return add_parsed(app, name, help, target.text(), "DURATION",
                    [&target, allow_forever, min, max](const std::string& t) {
                      target = parse_duration(t, allow_forever, min, max);
                    });
}

CLI::Option* add_real(CLI::App* app, const std::string& name, double& target, double min, bool min_inclusive,
                      double max, const std::string& help) {
  return add_parsed(
      app, name, help, format_real(target), "NUMBER",
      [&target, min, min_inclusive, max](const std::string& t) { target = parse_real(t, min, min_inclusive, max); });
}

}  // namespace zipc_tool
