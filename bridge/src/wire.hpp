// What a bridge message looks like on the wire, and the strict reading of
// one that arrives from NATS (docs/guide/bridge.md, "What travels" and "What the
// receiving bridge rejects"). No NATS client here: the libFuzzer target
// (tests/fuzz/bridge_inbound_fuzz.cpp) runs the same code on raw bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace zipc::bridge_detail {

// NATS header names the bridge writes and reads.
inline constexpr const char* kHdrOrigin = "Zipc-Origin";
inline constexpr const char* kHdrChannel = "Zipc-Channel";
inline constexpr const char* kHdrSeq = "Zipc-Seq";
inline constexpr const char* kHdrTime = "Zipc-Time";
// Sequences the sender skipped on purpose (echoes) just before this message.
inline constexpr const char* kHdrSkip = "Zipc-Skip";
// A batch (core mode): this many frames in the payload, Zipc-Seq is the first.
inline constexpr const char* kHdrCount = "Zipc-Count";
// HMAC-SHA-256 of the message (BridgeMapping::auth_key_file), lower-case hex.
inline constexpr const char* kHdrAuth = "Zipc-Auth";
// JetStream's de-duplication id, <origin>/<channel>/<Zipc-Seq> on a bridge's messages.
inline constexpr const char* kHdrMsgId = "Nats-Msg-Id";
// The header the NATS client makes of a status line ("NATS/1.0 503").
inline constexpr const char* kHdrStatus = "Status";

// One message inside a batch payload, followed by size bytes and zero padding
// to a multiple of 8.
struct Frame {
  std::uint32_t size;
  std::uint32_t skip;  // as Zipc-Skip
  std::uint64_t seq;
  std::uint64_t origin_ns;
};
static_assert(sizeof(Frame) == 24, "a batch frame header is 24 bytes on every platform");

// Limits a received message is held to.
inline constexpr std::uint64_t kMaxFrames = 1024;                       // frames in one batch
inline constexpr std::uint64_t kMaxSeq = (std::uint64_t{1} << 63) - 1;  // Zipc-Seq and frame sequences
inline constexpr std::size_t kMaxName = 255;                            // Zipc-Origin / Zipc-Channel bytes

// Why a received message was not delivered (each has a counter, BridgeStats).
enum class Reject : std::uint8_t {
  none,
  status,  // a NATS status/control message (status line, empty body), not data
  header,  // a Zipc-* header missing, malformed or out of range
  frame,   // a batch whose frames do not match its payload
  size,    // larger than the local channel takes
  auth,    // the mapping authenticates and the Zipc-Auth does not match
};
const char* to_string(Reject r) noexcept;

// The header values of one message as they arrived (absent: nullopt).
struct RawHeaders {
  std::optional<std::string_view> origin, channel, seq, time, skip, count, auth, status;
};

// The bridge headers of one message, checked.
struct Headers {
  std::string_view origin, channel;
  std::uint64_t seq = 0, ns = 0, skip = 0, count = 0;
  bool has_seq = false;  // false: not from a bridge (no Zipc-* header at all): no accounting
};

// A plain decimal u64: digits only, at least one, no sign, no blanks, no
// trailing bytes, no overflow.
std::optional<std::uint64_t> parse_decimal(std::string_view s) noexcept;

// Checks a message's headers and, for a batch, that its Zipc-Count frames
// lie within its payload (each frame whole, sequences increasing, the first
// one the message's Zipc-Seq). `batches`: core mode (JetStream messages are
// never batched). Fills `out` when it returns Reject::none.
Reject check_message(const RawHeaders& raw, const char* data, std::size_t size, bool batches, Headers* out) noexcept;

// Calls f(frame index, headers, payload, size) for each local message of a
// message check_message() accepted, from frame `from` on: the message itself
// (count 0), or the frames of a batch. Stops, returning false, when f does.
template <class F>
bool for_each_frame(Headers h, const char* data, std::size_t size, std::uint64_t from, F&& f) {
  if (h.count == 0) return from > 0 || f(std::uint64_t{0}, h, data, size);
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < h.count; ++i) {
    Frame fr;
    if (at > size || size - at < sizeof(Frame)) return true;  // (checked already: never)
    std::memcpy(&fr, data + at, sizeof(Frame));
    if (size - at - sizeof(Frame) < fr.size) return true;
    h.seq = fr.seq, h.ns = fr.origin_ns, h.skip = fr.skip;
    if (i >= from && !f(i, h, data + at + sizeof(Frame), std::size_t{fr.size})) return false;
    at += sizeof(Frame) + (std::size_t{fr.size} + 7) / 8 * 8;
  }
  return true;
}

}  // namespace zipc::bridge_detail
