#include "nats_publish.hpp"

#include <charconv>
#include <chrono>
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

void save_position(MappingRuntime& m, std::uint64_t next) {
  if (m.out_state.is_open()) m.out_state.write({next, 0, 0, 0});
}

Sent publish_core(MappingRuntime& m, Link& link, const std::atomic<bool>& stop, std::uint64_t seq, std::uint64_t ns,
                  const void* data, std::size_t n, std::uint64_t skip, std::uint64_t count, bool once) {
  for (int attempt = 0;; ++attempt) {
    natsMsg* msg = make_msg(m, seq, ns, data, n, skip, count);
    natsStatus s = msg == nullptr ? NATS_NO_MEMORY : natsConnection_PublishMsg(link.conn(), msg);
    natsMsg_Destroy(msg);
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
