// Segment names: validation, name spaces (ZIPC_NAMESPACE), the file each name maps to.
#include "zipc/segment.hpp"

#include <cstdlib>
#include <string>

#include "core/fail.hpp"
#include "platform/file.hpp"
#include "segment/segment_header.hpp"

namespace zipc {

namespace {

constexpr std::size_t kMaxNameSpaceLength = 64;

// Throws invalid_name unless ns is usable as a name space ("" is none).
void validate_name_space(std::string_view ns, std::string_view name) {
  if (ns.size() > kMaxNameSpaceLength) {
    fail(Errc::invalid_name, "segment", name,
         "name space longer than " + std::to_string(kMaxNameSpaceLength) + " characters");
  }
  for (char c : ns) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok)
      fail(Errc::invalid_name, "segment", name,
           "name space '" + std::string(ns) + "': only letters, digits, '_' and '-'");
  }
}

}  // namespace

void Segment::validate_name(std::string_view name) {
  if (name.empty()) fail(Errc::invalid_name, "segment", name, "the name is empty");
  if (name.size() > kMaxNameLength) {
    fail(Errc::invalid_name, "segment", name.substr(0, 32),
         "longer than " + std::to_string(kMaxNameLength) + " characters");
  }
  if (const auto colon = name.find(':'); colon != std::string_view::npos) {
    // "ns:x": a name qualified with its name space.
    if (colon == 0) fail(Errc::invalid_name, "segment", name, "empty name space before ':'");
    validate_name_space(name.substr(0, colon), name);
    name = name.substr(colon + 1);
    if (name.empty()) fail(Errc::invalid_name, "segment", name, "the name after ':' is empty");
  }
  if (name.front() == '.') fail(Errc::invalid_name, "segment", name, "a name may not start with '.'");
  for (char c : name) {
    if (c == '/') fail(Errc::invalid_name, "segment", name, "'/' is not allowed in a name");
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) fail(Errc::invalid_name, "segment", name, "only letters, digits, '_', '-' and '.' are allowed");
  }
}

std::string Segment::name_space_for(const SegmentOptions& options) {
  std::string ns;
  if (options.name_space) {
    ns = *options.name_space;
  } else if (const char* env = std::getenv("ZIPC_NAMESPACE"); env != nullptr) {  // NOLINT(concurrency-mt-unsafe)
    ns = env;
  }
  validate_name_space(ns, "ZIPC_NAMESPACE");
  return ns;
}

std::string Segment::path_for(std::string_view name, const SegmentOptions& options) {
  if (!options.path.empty()) return options.path;
  if (options.memfd) return "memfd:" + std::string(name);
  const std::string ns = name.find(':') == std::string_view::npos ? name_space_for(options) : std::string();
  return std::string(platform::kShmDir) + "/" + detail::kSegmentFilePrefix + (ns.empty() ? "" : ns + ":") +
         std::string(name);
}

}  // namespace zipc
