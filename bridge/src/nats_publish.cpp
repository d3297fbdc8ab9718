#include "nats_publish.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

#include "pub_ack.hpp"

namespace zipc::bridge_detail {

using namespace std::chrono_literals;

std::string u64s(std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return {buf, r.ptr};
}

namespace {

// A number as a C string on the stack: a header value without an allocation.
class Decimal {
 public:
  explicit Decimal(std::uint64_t v) noexcept { *std::to_chars(buf_, buf_ + sizeof(buf_) - 1, v).ptr = '\0'; }
  [[nodiscard]] const char* c_str() const noexcept { return buf_; }

 private:
  char buf_[24];
};

// Adds Zipc-Auth when the mapping signs (BridgeMapping::auth_key_file).
bool sign(const MappingRuntime& m, natsMsg* msg, const Decimal& seq, const Decimal& ns, std::uint64_t skip,
          std::uint64_t count, const char* data, std::size_t n) {
  if (!m.sign_out) return true;
  const Decimal skip_s(skip), count_s(count);
  const Hmac::Fields f{m.cfg.subject,
                       m.host_id,
                       m.cfg.channel,
                       seq.c_str(),
                       ns.c_str(),
                       skip != 0 ? std::string_view(skip_s.c_str()) : std::string_view(),
                       count != 0 ? std::string_view(count_s.c_str()) : std::string_view(),
                       data,
                       n};
  Hmac::Hex hex;
  return m.sign_out->sign(f, &hex) && natsMsgHeader_Set(msg, kHdrAuth, hex.data()) == NATS_OK;
}

}  // namespace

natsMsg* JsOutMsg::fill(const MappingRuntime& m, std::uint64_t seq, std::uint64_t ns, const void* data, std::size_t n,
                        std::uint64_t skip, const char* msg_id) {
  if (msg_ == nullptr || size_ != n) {
    natsMsg_Destroy(msg_);
    msg_ = nullptr;
    std::string reply = reply_prefix_;
    reply.append(kReplyTokenDigits, '0');
    natsMsg* msg = nullptr;
    // No payload given: the client allocates the bytes and copies nothing.
    if (natsMsg_Create(&msg, m.cfg.subject.c_str(), reply.c_str(), nullptr, static_cast<int>(n)) != NATS_OK)
      return nullptr;
    const char* r = natsMsg_GetReply(msg);
    if (r == nullptr || reply != r || natsMsgHeader_Set(msg, kHdrOrigin, m.host_id.c_str()) != NATS_OK ||
        natsMsgHeader_Set(msg, kHdrChannel, m.cfg.channel.c_str()) != NATS_OK) {
      natsMsg_Destroy(msg);
      return nullptr;
    }
    msg_ = msg;
    size_ = n;
    has_skip_ = false;
  }
  // The payload and the reply are the message's own allocation (natsMsg_Create
  // above), not shared with the client once a publish has returned.
  auto* payload = const_cast<char*>(natsMsg_GetData(msg_));
  if (n != 0) std::memcpy(payload, data, n);
  write_reply_token(const_cast<char*>(natsMsg_GetReply(msg_)) + reply_prefix_.size(), seq);
  const Decimal seq_s(seq), ns_s(ns);
  bool ok = natsMsgHeader_Set(msg_, kHdrSeq, seq_s.c_str()) == NATS_OK &&
            natsMsgHeader_Set(msg_, kHdrTime, ns_s.c_str()) == NATS_OK &&
            natsMsgHeader_Set(msg_, kHdrMsgId, msg_id) == NATS_OK;
  if (ok && (skip != 0 || has_skip_)) {
    ok = skip != 0 ? natsMsgHeader_Set(msg_, kHdrSkip, Decimal(skip).c_str()) == NATS_OK
                   : natsMsgHeader_Delete(msg_, kHdrSkip) == NATS_OK;
    has_skip_ = skip != 0;
  }
  ok = ok && sign(m, msg_, seq_s, ns_s, skip, 0, payload, n);
  if (!ok) msg_ = nullptr;  // only out of memory; not destroyed, as OutMsg::fill explains
  return msg_;
}

void OutMsg::Kept::drop() noexcept {
  natsMsg_Destroy(msg);
  msg = nullptr;
}

natsMsg* OutMsg::fill(const MappingRuntime& m, std::uint64_t seq, std::uint64_t ns, const void* data, std::size_t n,
                      std::uint64_t skip, std::uint64_t count, std::size_t limit) {
  Kept& k = count != 0 ? batch_ : lone_;
  // A batch may go out in a message up to 1/16 longer than its frames (the
  // receiver walks Zipc-Count frames and ignores the zeros after them), so
  // batches of varying length share one message; a lone message is exact.
  const bool fits =
      k.msg != nullptr && (k.size == n || (count != 0 && n < k.size && k.size - n <= k.size / 16 && k.size <= limit));
  if (!fits) {
    // A batch that found a kept message too short or too long: room above
    // it for the next ones (within the limit). The first of each kind, and
    // a lone message: its own length.
    const std::size_t size = count != 0 && k.msg != nullptr ? std::max(n, std::min((n + n / 16) / 8 * 8, limit)) : n;
    k.drop();
    // No payload given: the client allocates the bytes and copies nothing.
    if (natsMsg_Create(&k.msg, m.cfg.subject.c_str(), nullptr, nullptr, static_cast<int>(size)) != NATS_OK) {
      k.msg = nullptr;
      return nullptr;
    }
    k.size = size;
    k.has_skip = false;
    if (natsMsgHeader_Set(k.msg, kHdrOrigin, m.host_id.c_str()) != NATS_OK ||
        natsMsgHeader_Set(k.msg, kHdrChannel, m.cfg.channel.c_str()) != NATS_OK) {
      k.drop();
      return nullptr;
    }
  }
  // The payload is the message's own allocation (natsMsg_Create above), not
  // shared with the client once a publish has returned.
  auto* payload = const_cast<char*>(natsMsg_GetData(k.msg));
  if (n != 0) std::memcpy(payload, data, n);
  if (k.size > n) std::memset(payload + n, 0, k.size - n);
  const Decimal seq_s(seq), ns_s(ns);
  bool ok = natsMsgHeader_Set(k.msg, kHdrSeq, seq_s.c_str()) == NATS_OK &&
            natsMsgHeader_Set(k.msg, kHdrTime, ns_s.c_str()) == NATS_OK &&
            (count == 0 || natsMsgHeader_Set(k.msg, kHdrCount, Decimal(count).c_str()) == NATS_OK);
  if (ok && (skip != 0 || k.has_skip)) {
    ok = skip != 0 ? natsMsgHeader_Set(k.msg, kHdrSkip, Decimal(skip).c_str()) == NATS_OK
                   : natsMsgHeader_Delete(k.msg, kHdrSkip) == NATS_OK;
    k.has_skip = skip != 0;
  }
  // Over the whole payload, the zeros after a batch's frames included.
  ok = ok && sign(m, k.msg, seq_s, ns_s, skip, count, payload, k.size);
  if (!ok) {
    // Only out of memory. Not destroyed: a failed natsMsgHeader_Set on a key
    // already there (libnats 3.4.1, natsStrHash_SetEx) frees the new value
    // while the map still holds it, so destroying the message would free it
    // twice. Left to the process, as the client's own failure.
    k.msg = nullptr;
  }
  return k.msg;
}

std::size_t payload_limit(const MappingRuntime& m, const Link& link) {
  // What NATS counts besides the payload: the header block ("NATS/1.0",
  // Zipc-Origin and Zipc-Channel with their values, four numbers, Zipc-Auth's
  // 64 hex digits; for JetStream Nats-Msg-Id, origin/channel/sequence again).
  const auto room = static_cast<std::int64_t>(512 + 96 + 2 * (m.host_id.size() + m.cfg.channel.size()));
  const std::int64_t max = link.max_payload();
  return max > room ? static_cast<std::size_t>(max - room) : 0;
}

void count_too_large(MappingRuntime& m, Link& link, std::uint64_t seq, std::size_t n) {
  m.counters.lost.fetch_add(1, std::memory_order_relaxed);
  link.set_error("nats publish on '" + m.cfg.subject + "': message " + u64s(seq) + " (" + u64s(n) +
                 " bytes) with its headers is over the NATS server's max_payload (" +
                 u64s(static_cast<std::uint64_t>(link.max_payload())) + " bytes): dropped, counted lost");
}

void save_position(MappingRuntime& m, std::uint64_t next, std::uint64_t skip) {
  if (m.out_state.is_open()) m.out_state.write({next, skip, 0, 0});
}

Sent publish_core(MappingRuntime& m, Link& link, OutMsg& out, const std::atomic<bool>& stop, std::uint64_t seq,
                  std::uint64_t ns, const void* data, std::size_t n, std::uint64_t skip, std::uint64_t count,
                  bool once) {
  for (int attempt = 0;; ++attempt) {
    natsMsg* msg = out.fill(m, seq, ns, data, n, skip, count, count != 0 ? payload_limit(m, link) : n);
    const natsStatus s = msg == nullptr ? NATS_NO_MEMORY : natsConnection_PublishMsg(link.conn(), msg);
    if (s == NATS_OK) return Sent::sent;
    m.counters.errors.fetch_add(1, std::memory_order_relaxed);
    if (s == NATS_MAX_PAYLOAD) {
      if (count != 0) return Sent::too_large;  // the caller sends its frames one by one
      count_too_large(m, link, seq, n);
      return Sent::dropped;
    }
    link.set_error("nats publish on '" + m.cfg.subject + "': " + status_text(s));
    if (m.cfg.overflow == BridgeOverflow::drop) {
      m.counters.lost.fetch_add(count == 0 ? 1 : count, std::memory_order_relaxed);
      return Sent::dropped;
    }
    if (once || stop.load(std::memory_order_relaxed)) return Sent::held;
    std::this_thread::sleep_for(attempt < 10 ? 1ms : 20ms);  // back-pressure: the local reader holds back
  }
}

}  // namespace zipc::bridge_detail
