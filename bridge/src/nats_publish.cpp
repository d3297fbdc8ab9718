#include "nats_publish.hpp"

#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

namespace zipc::bridge_detail {

using namespace std::chrono_literals;

std::string u64s(std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return {buf, r.ptr};
}

natsMsg* make_msg(const MappingRuntime& m, std::uint64_t seq, std::uint64_t ns, const void* data, std::size_t n,
                  std::uint64_t skip, std::uint64_t count) {
  natsMsg* msg = nullptr;
  if (natsMsg_Create(&msg, m.cfg.subject.c_str(), nullptr, static_cast<const char*>(data), static_cast<int>(n)) !=
      NATS_OK)
    return nullptr;
  const std::string seq_s = u64s(seq), ns_s = u64s(ns);
  if (natsMsgHeader_Set(msg, kHdrOrigin, m.host_id.c_str()) != NATS_OK ||
      natsMsgHeader_Set(msg, kHdrChannel, m.cfg.channel.c_str()) != NATS_OK ||
      natsMsgHeader_Set(msg, kHdrSeq, seq_s.c_str()) != NATS_OK ||
      natsMsgHeader_Set(msg, kHdrTime, ns_s.c_str()) != NATS_OK ||
      (skip != 0 && natsMsgHeader_Set(msg, kHdrSkip, u64s(skip).c_str()) != NATS_OK) ||
      (count != 0 && natsMsgHeader_Set(msg, kHdrCount, u64s(count).c_str()) != NATS_OK)) {
    natsMsg_Destroy(msg);
    return nullptr;
  }
  return msg;
}

void OutMsg::drop() noexcept {
  natsMsg_Destroy(msg_);
  msg_ = nullptr;
}

natsMsg* OutMsg::fill(const MappingRuntime& m, std::uint64_t seq, std::uint64_t ns, const void* data, std::size_t n,
                      std::uint64_t skip, std::uint64_t count) {
  if (msg_ == nullptr || size_ != n) {
    drop();
    // No payload given: the client allocates n bytes and copies nothing.
    if (natsMsg_Create(&msg_, m.cfg.subject.c_str(), nullptr, nullptr, static_cast<int>(n)) != NATS_OK) {
      msg_ = nullptr;
      return nullptr;
    }
    size_ = n;
    has_skip_ = has_count_ = false;
    if (natsMsgHeader_Set(msg_, kHdrOrigin, m.host_id.c_str()) != NATS_OK ||
        natsMsgHeader_Set(msg_, kHdrChannel, m.cfg.channel.c_str()) != NATS_OK) {
      drop();
      return nullptr;
    }
  }
  // The payload is the message's own allocation (natsMsg_Create above), not
  // shared with the client once a publish has returned.
  if (n != 0) std::memcpy(const_cast<char*>(natsMsg_GetData(msg_)), data, n);
  bool ok = natsMsgHeader_Set(msg_, kHdrSeq, u64s(seq).c_str()) == NATS_OK &&
            natsMsgHeader_Set(msg_, kHdrTime, u64s(ns).c_str()) == NATS_OK;
  if (ok && (skip != 0 || has_skip_)) {
    ok = skip != 0 ? natsMsgHeader_Set(msg_, kHdrSkip, u64s(skip).c_str()) == NATS_OK
                   : natsMsgHeader_Delete(msg_, kHdrSkip) == NATS_OK;
    has_skip_ = skip != 0;
  }
  if (ok && (count != 0 || has_count_)) {
    ok = count != 0 ? natsMsgHeader_Set(msg_, kHdrCount, u64s(count).c_str()) == NATS_OK
                    : natsMsgHeader_Delete(msg_, kHdrCount) == NATS_OK;
    has_count_ = count != 0;
  }
  if (!ok) drop();
  return msg_;
}

void save_position(MappingRuntime& m, std::uint64_t next) {
  if (m.out_state.is_open()) m.out_state.write({next, 0, 0, 0});
}

Sent publish_core(MappingRuntime& m, Link& link, OutMsg& out, const std::atomic<bool>& stop, std::uint64_t seq,
                  std::uint64_t ns, const void* data, std::size_t n, std::uint64_t skip, std::uint64_t count,
                  bool once) {
  for (int attempt = 0;; ++attempt) {
    natsMsg* msg = out.fill(m, seq, ns, data, n, skip, count);
    const natsStatus s = msg == nullptr ? NATS_NO_MEMORY : natsConnection_PublishMsg(link.conn(), msg);
    if (s == NATS_OK) return Sent::sent;
    m.counters.errors.fetch_add(1, std::memory_order_relaxed);
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
