// The strict reading of a JetStream publish acknowledgement as it arrives on
// the outbound bridge's reply inbox (docs/guide/bridge.md, "Guarantees per
// mode"). Anyone who learns the inbox can publish there: nothing here trusts
// the bytes, and no NATS client is involved (tests run it on raw bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zipc::bridge_detail {

// Reply bodies longer than this are not acknowledgements (the server's are
// under 200 bytes; an error's description is short).
inline constexpr std::size_t kMaxPubAckBytes = 1024;
// The reply token: the message's Zipc-Seq, zero-padded to this many digits
// (so that the kept outbound message's reply keeps its length).
inline constexpr std::size_t kReplyTokenDigits = 20;

struct PubAck {
  enum class Kind : std::uint8_t {
    stored,     // {"stream":<ours>,"seq":N}: the stream holds it at N
    duplicate,  // the same with "duplicate":true: it held the msg id already
    error,      // {"error":{...}}: the stream refused it (sent again)
    malformed,  // anything else: not an acknowledgement (counted, ignored)
  };
  Kind kind = Kind::malformed;
  std::uint64_t stream_seq = 0;  // stored, duplicate
  const char* problem = "";      // malformed: what is wrong
  std::string description;       // error: the server's (at most 120 printable bytes)
};

// Reads a reply body for a publish into `stream`. Accepted: a JSON object
// with "stream" equal to `stream`, "seq" an integer from 1 to 2^63-1,
// "duplicate" (optional) a boolean, and any other members ("domain", fields
// of later servers); or an object with an "error" member. Nothing else.
PubAck parse_pub_ack(std::string_view body, std::string_view stream) noexcept;

// The Zipc-Seq a reply subject names: subject is `prefix` followed by
// exactly kReplyTokenDigits decimal digits (at most 2^63-1); nullopt otherwise.
std::optional<std::uint64_t> reply_token(std::string_view subject, std::string_view prefix) noexcept;

// Writes v as kReplyTokenDigits digits, zero-padded, at out.
void write_reply_token(char* out, std::uint64_t v) noexcept;

}  // namespace zipc::bridge_detail
