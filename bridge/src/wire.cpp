// The strict reading of a message from NATS (wire.hpp).
#include "wire.hpp"

#include <charconv>

namespace zipc::bridge_detail {

const char* to_string(Reject r) noexcept {
  switch (r) {
    case Reject::none: return "none";
    case Reject::status: return "a NATS status message";
    case Reject::header: return "a bad Zipc header";
    case Reject::frame: return "batch frames that do not match the payload";
    case Reject::size: return "larger than the local channel takes";
    case Reject::auth: return "failed authentication";
  }
  return "?";
}

std::optional<std::uint64_t> parse_decimal(std::string_view s) noexcept {
  if (s.empty() || s.size() > 20) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;  // overflow
  return v;
}

namespace {

bool name_ok(std::string_view s) noexcept {
  if (s.empty() || s.size() > kMaxName) return false;
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

// The frames of a batch: exactly `count` whole frames within the payload
// (the last one may lack its padding; zeros may follow), sequences
// increasing from `first`, each skip within its sequence.
bool frames_ok(const char* data, std::size_t size, std::uint64_t count, std::uint64_t first) noexcept {
  std::size_t at = 0;
  std::uint64_t prev = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (at > size || size - at < sizeof(Frame)) return false;
    Frame fr;
    std::memcpy(&fr, data + at, sizeof(Frame));
    if (size - at - sizeof(Frame) < fr.size) return false;
    if (fr.seq > kMaxSeq || fr.skip > fr.seq) return false;
    if (i == 0 ? fr.seq != first : fr.seq <= prev) return false;
    prev = fr.seq;
    at += sizeof(Frame) + (std::size_t{fr.size} + 7) / 8 * 8;
  }
  return true;
}

}  // namespace

Reject check_message(const RawHeaders& raw, const char* data, std::size_t size, bool batches, Headers* out) noexcept {
  // A status line with an empty body is the NATS protocol talking (no
  // responders, no messages, heartbeats...), never a message to deliver.
  if (raw.status && size == 0) return Reject::status;
  Headers h;
  const bool any = raw.origin || raw.channel || raw.seq || raw.time || raw.skip || raw.count;
  if (!any) {
    *out = h;  // not from a bridge: delivered as it is, without accounting
    return Reject::none;
  }
  if (!raw.origin || !raw.channel || !raw.seq || !name_ok(*raw.origin) || !name_ok(*raw.channel)) return Reject::header;
  const auto seq = parse_decimal(*raw.seq);
  if (!seq || *seq > kMaxSeq) return Reject::header;
  h.origin = *raw.origin;
  h.channel = *raw.channel;
  h.seq = *seq;
  h.has_seq = true;
  if (raw.time) {
    const auto v = parse_decimal(*raw.time);
    if (!v) return Reject::header;
    h.ns = *v;
  }
  if (raw.skip) {
    const auto v = parse_decimal(*raw.skip);
    if (!v || *v > h.seq) return Reject::header;  // nothing was skipped before sequence 0
    h.skip = *v;
  }
  if (raw.count) {
    const auto v = parse_decimal(*raw.count);
    if (!batches || !v || *v == 0 || *v > kMaxFrames) return Reject::header;
    h.count = *v;
    if (!frames_ok(data, size, h.count, h.seq)) return Reject::frame;
  }
  *out = h;
  return Reject::none;
}

}  // namespace zipc::bridge_detail
