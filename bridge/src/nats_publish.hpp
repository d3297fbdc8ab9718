// Publishing one bridge message to NATS: the message with its Zipc-* headers,
// the core publish with its back-pressure, and the outbound position file.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "internal.hpp"
#include "link.hpp"

namespace zipc::bridge_detail {

std::string u64s(std::uint64_t v);

// The JetStream outbound natsMsg, kept and refilled from one publish to the
// next as OutMsg's are (a new one only when the payload length changes). Its
// reply subject is `reply_prefix` and the message's Zipc-Seq in
// kReplyTokenDigits digits, written in place into the message's own copy
// (natsMsg_Create copies the reply as it copies the payload; the length stays,
// and natsConnection_PublishMsg reads both when it copies the message into
// the connection's buffer). Each message carries Nats-Msg-Id
// <origin>/<channel>/<seq> for the stream's de-duplication.
class JsOutMsg {
 public:
  explicit JsOutMsg(std::string reply_prefix) : reply_prefix_(std::move(reply_prefix)) {}
  JsOutMsg(const JsOutMsg&) = delete;
  JsOutMsg& operator=(const JsOutMsg&) = delete;
  ~JsOutMsg() { natsMsg_Destroy(msg_); }

  // The message for this payload, reply and headers set; null when the
  // client has no memory for it. Valid until the next fill.
  natsMsg* fill(const MappingRuntime& m, std::uint64_t seq, std::uint64_t ns, const void* data, std::size_t n,
                std::uint64_t skip, const char* msg_id);

 private:
  std::string reply_prefix_;
  natsMsg* msg_ = nullptr;
  std::size_t size_ = 0;   // msg_'s payload length
  bool has_skip_ = false;  // msg_ carries Zipc-Skip
};

// The core outbound natsMsgs, kept and refilled from one publish to the
// next: one for lone messages (reused at the same length) and one for
// batches (reused for any batch up to 1/16 shorter, the rest zeros). The
// payload and the changing headers are written over; Zipc-Origin and
// Zipc-Channel stay. natsConnection_PublishMsg copies a message's payload into
// the connection's buffer before it returns, so the same message can carry
// the next one. What it saves per publish: the allocation of the message (a
// batch is 16 KiB), the making of its header map (the replaced values are
// still allocated), and the hand-off of natsMsg_Destroy to the client's
// collector thread (a lock and a wake-up); docs/guide/bridge.md, "A kept outbound
// message", has the figures.
class OutMsg {
 public:
  OutMsg() = default;
  OutMsg(const OutMsg&) = delete;
  OutMsg& operator=(const OutMsg&) = delete;
  ~OutMsg() {
    lone_.drop();
    batch_.drop();
  }

  // The message for this payload (a batch of `count` frames when count > 0),
  // headers set; null when the client has no memory for it. Valid until the
  // next fill.
  // A batch's message is never longer than `limit` (payload_limit()) unless
  // its frames are.
  natsMsg* fill(const MappingRuntime& m, std::uint64_t seq, std::uint64_t ns, const void* data, std::size_t n,
                std::uint64_t skip, std::uint64_t count, std::size_t limit);

 private:
  struct Kept {
    natsMsg* msg = nullptr;
    std::size_t size = 0;   // msg's payload length
    bool has_skip = false;  // msg carries Zipc-Skip
    void drop() noexcept;
  };
  Kept lone_, batch_;
};

// The largest payload a bridge message may have on this connection: the
// server's max_payload less room for the Zipc-* headers (NATS counts them in).
std::size_t payload_limit(const MappingRuntime& m, const Link& link);

// Counts a local message larger than the server takes (n bytes, its headers
// not counted) lost and names it in the link's error: it can never go out.
void count_too_large(MappingRuntime& m, Link& link, std::uint64_t seq, std::size_t n);

// What publish_core did with a message.
enum class Sent : std::uint8_t {
  sent,       // buffered by the client (or written)
  dropped,    // overflow=drop, or one message larger than the server takes: counted in lost
  held,       // not taken: stopping, or under `once` the client refused it; send it again later
  too_large,  // a batch over the server's max_payload (its headers larger than
              // foreseen, or the limit fell): nothing sent, send its frames alone
};

// Core: one publish; under overflow=block retried until it is buffered
// (`once`: tried once, for a caller's thread that must not wait).
Sent publish_core(MappingRuntime& m, Link& link, OutMsg& out, const std::atomic<bool>& stop, std::uint64_t seq,
                  std::uint64_t ns, const void* data, std::size_t n, std::uint64_t skip, std::uint64_t count,
                  bool once);

// Outbound: the next local sequence to send, kept for a restart, and (a
// JetStream queue) how many sequence numbers just before it were skipped.
void save_position(MappingRuntime& m, std::uint64_t next, std::uint64_t skip = 0);

}  // namespace zipc::bridge_detail
