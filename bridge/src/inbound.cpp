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

namespace {

// Calls f(frame index, headers, payload, size) for each local message of a
// core NATS message from frame `from` on: the message itself (count 0), or
// the frames of a batch, as far as the payload really holds them (its
// Zipc-Count and frame sizes come from the network). Stops, returning false,
// when f does.
template <class F>
bool for_each_frame(Headers h, const char* data, std::size_t size, std::uint64_t from, F&& f) {
  if (h.count == 0) return from > 0 || f(std::uint64_t{0}, h, data, size);
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < h.count; ++i) {
    Frame fr;
    if (at > size || size - at < sizeof(Frame)) break;  // (at passes size after an unpadded last frame)
    std::memcpy(&fr, data + at, sizeof(Frame));
    if (size - at - sizeof(Frame) < fr.size) break;
    h.seq = fr.seq, h.ns = fr.origin_ns, h.skip = fr.skip;
    if (i >= from && !f(i, h, data + at + sizeof(Frame), std::size_t{fr.size})) return false;
    at += sizeof(Frame) + (std::size_t{fr.size} + 7) / 8 * 8;
  }
  return true;
}

}  // namespace

bool deliver_core_msg(MappingRuntime& m, natsMsg* msg) {
  const char* data = natsMsg_GetData(msg);
  const auto size = static_cast<std::size_t>(natsMsg_GetDataLength(msg));
  std::lock_guard lock(m.local_mu);
  // Going on with a held message: its frames before held_frame are
  // delivered, and held_frame itself was judged already.
  const bool resuming = msg == m.held_msg;
  const std::uint64_t from = resuming ? m.held_frame : 0;
  m.held_msg = nullptr;
  // One local message; false when it is held.
  const bool done = for_each_frame(read_headers(msg), data, size, from,
                                   [&](std::uint64_t frame, const Headers& h, const char* d, std::size_t n) {
                                     if (!(resuming && frame == from)) {
                                       switch (judge(m, h)) {
                                         case Verdict::loop:
                                           m.counters.loops.fetch_add(1, std::memory_order_relaxed);
                                           return true;
                                         case Verdict::duplicate:
                                           m.counters.duplicates.fetch_add(1, std::memory_order_relaxed);
                                           return true;
                                         case Verdict::deliver: break;
                                       }
                                     }
                                     switch (put_local(m, h, d, n, !m.caller)) {
                                       case Put::ok: m.counters.received.fetch_add(1, std::memory_order_relaxed); break;
                                       case Put::dropped: break;
                                       case Put::full: m.held_msg = msg, m.held_frame = frame; return false;
                                     }
                                     return true;
                                   });
  if (done) natsMsg_Destroy(msg);
  return done;
}

void drop_held(MappingRuntime& m) {
  std::lock_guard lock(m.local_mu);
  if (m.held_msg == nullptr) return;
  std::uint64_t left = 0;  // the frames the message really holds from the held one on
  for_each_frame(read_headers(m.held_msg), natsMsg_GetData(m.held_msg),
                 static_cast<std::size_t>(natsMsg_GetDataLength(m.held_msg)), m.held_frame,
                 [&](std::uint64_t, const Headers&, const char*, std::size_t) { return ++left, true; });
  m.counters.lost.fetch_add(left, std::memory_order_relaxed);
  natsMsg_Destroy(m.held_msg);
  m.held_msg = nullptr;
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
  bool complained = false;
  while ((s = natsConnection_FlushTimeout(link.conn(), 2000)) != NATS_OK && !m.stop->load(std::memory_order_relaxed)) {
    link.set_error("nats: subscription to '" + m.cfg.subject + "' not confirmed yet: " + status_text(s) +
                   (m.caller ? " (threads 'caller': is Bridge::poll() being called?)" : ""));
    complained = true;
  }
  if (complained) link.set_error("");
  return {};
}

}  // namespace zipc::bridge_detail
