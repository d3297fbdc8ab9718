// Inbound: a core NATS subscription -> a local topic or queue, and the
// accounting shared with the JetStream path (inbound_js.cpp).
#include <charconv>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "inbound.hpp"
#include "internal.hpp"
#include "link.hpp"

namespace zipc::bridge_detail {
namespace {

using namespace std::chrono_literals;

std::uint64_t to_u64(const char* s, bool* ok) {
  std::uint64_t v = 0;
  auto r = std::from_chars(s, s + std::strlen(s), v);
  *ok = r.ec == std::errc();
  return v;
}

}  // namespace

Headers read_headers(natsMsg* msg) {
  Headers h;
  const char* v = nullptr;
  bool ok = false;
  if (natsMsgHeader_Get(msg, kHdrOrigin, &v) == NATS_OK) h.origin = v;
  if (natsMsgHeader_Get(msg, kHdrChannel, &v) == NATS_OK) h.channel = v;
  if (natsMsgHeader_Get(msg, kHdrSeq, &v) == NATS_OK) h.seq = to_u64(v, &h.has_seq);
  if (natsMsgHeader_Get(msg, kHdrTime, &v) == NATS_OK) h.ns = to_u64(v, &ok);
  if (natsMsgHeader_Get(msg, kHdrSkip, &v) == NATS_OK) h.skip = to_u64(v, &ok);
  if (natsMsgHeader_Get(msg, kHdrCount, &v) == NATS_OK) h.count = to_u64(v, &ok);
  return h;
}

std::string origin_key(const Headers& h) {
  std::string key(h.origin);
  key += '\n';
  key += h.channel;
  return key;
}

Verdict judge(MappingRuntime& m, const Headers& h) {
  if (!h.origin.empty() && h.origin == m.host_id) return Verdict::loop;
  if (!h.has_seq) return Verdict::deliver;  // not from a bridge: no accounting possible
  if (m.last == nullptr || h.origin != m.last_origin || h.channel != m.last_channel) {
    auto [it, fresh] = m.expected.try_emplace(origin_key(h), h.seq);
    m.last_origin = h.origin;
    m.last_channel = h.channel;
    m.last = &it->second;
  }
  std::uint64_t& expected = *m.last;
  if (h.seq < expected) return Verdict::duplicate;
  const std::uint64_t gap = h.seq - expected;
  if (gap > h.skip) m.counters.lost.fetch_add(gap - h.skip, std::memory_order_relaxed);
  expected = h.seq + 1;
  return Verdict::deliver;
}

namespace {

enum class Put : std::uint8_t { ok, dropped, full };

// One message into the local channel. `may_wait` false: a full channel
// under overflow=block is `full` (nothing counted) instead of a wait.
Put put_local(MappingRuntime& m, const Headers& h, const char* data, std::size_t n, bool may_wait) {
  const bool block = m.cfg.overflow == BridgeOverflow::block;
  if (m.cfg.envelope) {
    build_envelope(m.scratch, h.origin, h.channel, h.seq, h.ns);
    m.scratch.append(data, n);
    data = m.scratch.data();
    n = m.scratch.size();
  }
  const auto bytes = std::span(reinterpret_cast<const std::byte*>(data), n);
  const bool wait = block && may_wait;
  for (;;) {
    Status s;
    if (m.cfg.kind == BridgeKind::topic) {
      if (m.cfg.direction == BridgeDirection::both) {
        // Never wait while holding the echo list: our own outbound reader
        // may be what has to move for room to appear.
        {
          auto echo_lock = m.echoes.hold();
          CommitResult r = m.publisher.try_publish(bytes);
          s = r.status;
          if (s == Status::ok) m.echoes.add_held(r.sequence);
        }
        if (s == Status::full && wait) {
          std::this_thread::sleep_for(100us);
          s = Status::timeout;  // retried below
        }
      } else {
        CommitResult r = wait ? m.publisher.publish(bytes, 50ms) : m.publisher.try_publish(bytes);
        s = r.status;
      }
    } else {
      s = wait ? m.queue_in.send(bytes, 50ms) : m.queue_in.try_send(bytes);
    }
    if (s == Status::ok) return Put::ok;
    if (s == Status::timeout && wait && !m.stop->load(std::memory_order_relaxed)) continue;  // back-pressure
    if (block && !may_wait && (s == Status::full || s == Status::timeout)) return Put::full;
    if (s != Status::full && s != Status::timeout) m.counters.errors.fetch_add(1, std::memory_order_relaxed);
    if (!block || s == Status::too_large) m.counters.lost.fetch_add(1, std::memory_order_relaxed);
    return Put::dropped;
  }
}

}  // namespace

bool deliver(MappingRuntime& m, const Headers& h, const char* data, std::size_t n) {
  return put_local(m, h, data, n, true) == Put::ok;
}

bool deliver_core_msg(MappingRuntime& m, natsMsg* msg) {
  Headers h = read_headers(msg);
  const char* data = natsMsg_GetData(msg);
  const auto size = static_cast<std::size_t>(natsMsg_GetDataLength(msg));
  std::lock_guard lock(m.local_mu);
  // Going on with a held message: its frames before held_frame are
  // delivered, and held_frame itself was judged already.
  std::uint64_t from = 0;
  if (msg == m.held_msg) from = m.held_frame, m.held_msg = nullptr;
  // One local message; false when it is held.
  auto one = [&](std::uint64_t frame, const Headers& fh, const char* d, std::size_t n) {
    if (frame != from || m.held_judged == false) {
      switch (judge(m, fh)) {
        case Verdict::loop: m.counters.loops.fetch_add(1, std::memory_order_relaxed); return true;
        case Verdict::duplicate: m.counters.duplicates.fetch_add(1, std::memory_order_relaxed); return true;
        case Verdict::deliver: break;
      }
    }
    m.held_judged = false;
    switch (put_local(m, fh, d, n, !m.caller)) {
      case Put::ok: m.counters.received.fetch_add(1, std::memory_order_relaxed); return true;
      case Put::dropped: return true;
      case Put::full: m.held_msg = msg, m.held_frame = frame, m.held_judged = true; return false;
    }
    return true;
  };
  if (h.count == 0) {
    if (!one(0, h, data, size)) return false;
  } else {  // a batch: frames one after another
    std::size_t at = 0;
    for (std::uint64_t i = 0; i < h.count; ++i) {
      Frame f;
      if (size - at < sizeof(Frame)) break;
      std::memcpy(&f, data + at, sizeof(Frame));
      if (size - at - sizeof(Frame) < f.size) break;
      h.seq = f.seq, h.ns = f.origin_ns, h.skip = f.skip;
      if (i >= from && !one(i, h, data + at + sizeof(Frame), f.size)) return false;
      at += sizeof(Frame) + (f.size + 7) / 8 * 8;
    }
  }
  natsMsg_Destroy(msg);
  return true;
}

void drop_held(MappingRuntime& m) {
  std::lock_guard lock(m.local_mu);
  if (m.held_msg == nullptr) return;
  const Headers h = read_headers(m.held_msg);
  const std::uint64_t frames = h.count == 0 ? 1 : h.count;
  if (frames > m.held_frame) m.counters.lost.fetch_add(frames - m.held_frame, std::memory_order_relaxed);
  natsMsg_Destroy(m.held_msg);
  m.held_msg = nullptr;
  m.held_judged = false;
}

namespace {

void on_core_msg(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  deliver_core_msg(*static_cast<MappingRuntime*>(closure), msg);
}

}  // namespace

std::string start_inbound_core(MappingRuntime& m, Link& link, bool synchronous) {
  natsStatus s = synchronous
                     ? natsConnection_SubscribeSync(&m.core_sub, link.conn(), m.cfg.subject.c_str())
                     : natsConnection_Subscribe(&m.core_sub, link.conn(), m.cfg.subject.c_str(), &on_core_msg, &m);
  if (s != NATS_OK) return "nats: cannot subscribe to '" + m.cfg.subject + "': " + status_text(s);
  // Bounded memory: beyond these the client drops (the sequence gaps count it).
  natsSubscription_SetPendingLimits(m.core_sub, link.pending_msgs(), link.pending_bytes());
  // The server has the interest before we say ready. (Driven by the caller,
  // this flush is written and its answer read by the application's polls.)
  while ((s = natsConnection_FlushTimeout(link.conn(), 2000)) != NATS_OK && !m.stop->load(std::memory_order_relaxed))
    link.set_error("nats: subscription to '" + m.cfg.subject + "' not confirmed yet: " + status_text(s) +
                   (m.caller ? " (threads 'caller': is Bridge::poll() being called?)" : ""));
  link.set_error("");
  return {};
}

}  // namespace zipc::bridge_detail
