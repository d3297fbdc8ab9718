// Inbound: NATS (core subscription or JetStream durable pull consumer) -> a
// local topic or queue.
#include <charconv>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "internal.hpp"
#include "link.hpp"

namespace zipc::bridge_detail {
namespace {

using namespace std::chrono_literals;

struct Headers {
  std::string_view origin, channel;
  std::uint64_t seq = 0, ns = 0, skip = 0, count = 0;
  bool has_seq = false;
};

std::uint64_t to_u64(const char* s, bool* ok) {
  std::uint64_t v = 0;
  auto r = std::from_chars(s, s + std::strlen(s), v);
  *ok = r.ec == std::errc();
  return v;
}

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

enum class Verdict { deliver, duplicate, loop };

// Sequence accounting per (origin, channel): a gap beyond what the sender
// skipped on purpose is counted lost exactly, an old sequence is a duplicate.
// Caller holds local_mu.
Verdict judge(MappingRuntime& m, const Headers& h) {
  if (!h.origin.empty() && h.origin == m.host_id) return Verdict::loop;
  if (!h.has_seq) return Verdict::deliver;  // not from a bridge: no accounting possible
  if (m.last == nullptr || h.origin != m.last_origin || h.channel != m.last_channel) {
    std::string key(h.origin);
    key += '\n';
    key += h.channel;
    auto [it, fresh] = m.expected.try_emplace(std::move(key), h.seq);
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

// Publishes one message locally. False when dropped (overflow=drop, counted)
// or the bridge is stopping. Caller holds local_mu.
bool deliver(MappingRuntime& m, const Headers& h, const char* data, std::size_t n) {
  const bool block = m.cfg.overflow == BridgeOverflow::block;
  if (m.cfg.envelope) {
    build_envelope(m.scratch, h.origin, h.channel, h.seq, h.ns);
    m.scratch.append(data, n);
    data = m.scratch.data();
    n = m.scratch.size();
  }
  const auto bytes = std::span(reinterpret_cast<const std::byte*>(data), n);
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
        if (s == Status::full && block) {
          std::this_thread::sleep_for(100us);
          s = Status::timeout;  // retried below
        }
      } else {
        CommitResult r = block ? m.publisher.publish(bytes, 50ms) : m.publisher.try_publish(bytes);
        s = r.status;
      }
    } else {
      s = block ? m.queue_in.send(bytes, 50ms) : m.queue_in.try_send(bytes);
    }
    if (s == Status::ok) return true;
    if (s == Status::timeout && !m.stop->load(std::memory_order_relaxed)) continue;  // back-pressure
    if (s != Status::full && s != Status::timeout) m.counters.errors.fetch_add(1, std::memory_order_relaxed);
    if (!block || s == Status::too_large) m.counters.lost.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
}

void judge_and_deliver(MappingRuntime& m, const Headers& h, const char* data, std::size_t n) {
  switch (judge(m, h)) {
    case Verdict::loop: m.counters.loops.fetch_add(1, std::memory_order_relaxed); break;
    case Verdict::duplicate: m.counters.duplicates.fetch_add(1, std::memory_order_relaxed); break;
    case Verdict::deliver:
      if (deliver(m, h, data, n)) m.counters.received.fetch_add(1, std::memory_order_relaxed);
      break;
  }
}

void on_core_msg(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto& m = *static_cast<MappingRuntime*>(closure);
  Headers h = read_headers(msg);
  const char* data = natsMsg_GetData(msg);
  const auto size = static_cast<std::size_t>(natsMsg_GetDataLength(msg));
  std::lock_guard lock(m.local_mu);
  if (h.count == 0) {
    judge_and_deliver(m, h, data, size);
  } else {  // a batch: frames one after another
    std::size_t at = 0;
    for (std::uint64_t i = 0; i < h.count; ++i) {
      Frame f;
      if (size - at < sizeof(Frame)) break;
      std::memcpy(&f, data + at, sizeof(Frame));
      if (size - at - sizeof(Frame) < f.size) break;
      h.seq = f.seq, h.ns = f.origin_ns, h.skip = f.skip;
      judge_and_deliver(m, h, data + at + sizeof(Frame), f.size);
      at += sizeof(Frame) + (f.size + 7) / 8 * 8;
    }
  }
  natsMsg_Destroy(msg);
}

std::uint64_t local_next(MappingRuntime& m) {
  return m.cfg.kind == BridgeKind::topic ? m.topic.next_sequence() : m.queue_in.stats().sent;
}

// A message's identity across a server restart: origin, channel and sequence headers.
std::string identity(const Headers& h) {
  std::string s(h.origin);
  s += '/';
  s += h.channel;
  s += '/';
  s += std::to_string(h.seq);
  return s;
}

// True when the stream still holds the message `id` at `seq` (or cannot be
// asked: then nothing is assumed to have changed).
bool still_there(MappingRuntime& m, Link& link, std::uint64_t seq, const std::string& id) {
  natsMsg* msg = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  const natsStatus s = js_GetMsg(&msg, link.js(), m.cfg.stream.c_str(), seq, nullptr, &code);
  if (s != NATS_OK) return code != JSNoMessageFoundErr;  // gone: the stream went back past it
  const bool same = identity(read_headers(msg)) == id;
  natsMsg_Destroy(msg);
  return same;
}

// (Re)creates the durable pull consumer so that it delivers from the stream
// sequence after `delivered` (the state file, not the server's ack floor, says
// what reached the local channel). Retries until it works or we stop.
bool subscribe_from(MappingRuntime& m, Link& link, const std::atomic<bool>& stop, std::uint64_t& delivered,
                    const std::string& id, natsSubscription** sub) {
  const std::string& durable = m.cfg.durable;
  for (int attempt = 0; !stop.load(std::memory_order_relaxed); ++attempt) {
    jsErrCode code = static_cast<jsErrCode>(0);
    // A nats-server killed at any instant may come back with fewer messages
    // than it acknowledged (its file store flushes asynchronously), and new
    // messages then take stream sequences we already passed. So the message
    // at `delivered` must still be the one we delivered there (`id`: its
    // origin, channel and sequence headers); when it is not, or is gone, the
    // stream changed under us: deliver it again from its start, and the
    // per-origin sequence check (judge()) drops what we already had.
    if (delivered != 0 && !id.empty() && !still_there(m, link, delivered, id)) {
      link.set_error("jetstream: stream '" + m.cfg.stream + "' no longer holds what was delivered at sequence " +
                     std::to_string(delivered) + " (the server lost acknowledged messages); reading it again");
      delivered = 0;
    }
    js_DeleteConsumer(link.js(), m.cfg.stream.c_str(), durable.c_str(), nullptr, &code);  // absent is fine
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = m.cfg.stream.c_str();
    so.Config.AckPolicy = js_AckExplicit;
    so.Config.DeliverPolicy = delivered == 0 ? js_DeliverAll : js_DeliverByStartSequence;
    so.Config.OptStartSeq = delivered == 0 ? 0 : delivered + 1;
    so.Config.AckWait = 30LL * 1000 * 1000 * 1000;
    so.Config.MaxAckPending = 65536;
    natsStatus s = js_PullSubscribe(sub, link.js(), m.cfg.subject.c_str(), durable.c_str(), nullptr, &so, &code);
    if (s == NATS_OK) return true;
    *sub = nullptr;
    m.counters.errors.fetch_add(1, std::memory_order_relaxed);
    link.set_error("jetstream: cannot create durable consumer '" + durable + "' on stream '" + m.cfg.stream +
                   "': " + status_text(s) + "; retrying");
    std::this_thread::sleep_for(std::min(100ms * (attempt + 1), std::chrono::milliseconds(1000)));
  }
  return false;
}

}  // namespace

std::string start_inbound_core(MappingRuntime& m, Link& link) {
  natsStatus s = natsConnection_Subscribe(&m.core_sub, link.conn(), m.cfg.subject.c_str(), &on_core_msg, &m);
  if (s != NATS_OK) return "nats: cannot subscribe to '" + m.cfg.subject + "': " + status_text(s);
  // Bounded memory: beyond these the client drops (the sequence gaps count it).
  natsSubscription_SetPendingLimits(m.core_sub, link.pending_msgs(), link.pending_bytes());
  natsConnection_FlushTimeout(link.conn(), 2000);  // the server has the interest before we say ready
  return {};
}

// JetStream inbound. Exactly once at the local channel: the state file holds
// {last stream sequence delivered, the one being delivered, the local
// channel's next sequence before it}; after a crash the local channel tells
// whether the one being delivered got there. Acks follow local publishing; a
// redelivery of something delivered is dropped as a duplicate and acked.
void run_inbound_jetstream(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  std::uint64_t delivered = 0;
  if (auto r = m.in_state.read()) delivered = local_next(m) > (*r)[2] ? (*r)[1] : (*r)[0];
  natsSubscription* sub = nullptr;
  // Subscriptions replaced after a reconnect: destroyed when the mapping
  // stops, not while the client may still be resending them on its
  // reconnect thread (destroying one there corrupted the heap in libnats
  // 3.4 about once in thirty server restarts). One per reconnect.
  std::vector<natsSubscription*> retired;
  const auto destroy_all = [&] {
    for (natsSubscription* r : retired) natsSubscription_Destroy(r);
    retired.clear();
    if (sub != nullptr) natsSubscription_Destroy(sub);
    sub = nullptr;
  };
  std::uint64_t seen_reconnects = link.reconnects();
  std::string delivered_id;  // identity() of the message at stream sequence `delivered`, once one was seen
  if (!subscribe_from(m, link, stop, delivered, delivered_id, &sub)) return;
  while (!stop.load(std::memory_order_relaxed)) {
    natsMsgList list{};
    jsErrCode code = static_cast<jsErrCode>(0);
    if (link.reconnects() != seen_reconnects) {
      // A fetch answer may have been lost with the connection: start again
      // right after what was delivered, so that the order stays whole.
      seen_reconnects = link.reconnects();
      retired.push_back(sub);
      sub = nullptr;
      if (!subscribe_from(m, link, stop, delivered, delivered_id, &sub)) {
        destroy_all();
        return;
      }
    }
    natsStatus s = natsSubscription_Fetch(&list, sub, 256, 200, &code);
    if (s != NATS_OK) {
      if (s != NATS_TIMEOUT) {
        m.counters.errors.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::sleep_for(50ms);
      }
      natsMsgList_Destroy(&list);
      continue;
    }
    for (int i = 0; i < list.Count; ++i) {
      natsMsg* msg = list.Msgs[i];
      jsMsgMetaData* meta = nullptr;
      std::uint64_t sseq = 0;
      if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
        sseq = meta->Sequence.Stream;
        jsMsgMetaData_Destroy(meta);
      }
      const Headers h = read_headers(msg);
      if (sseq != 0 && sseq <= delivered) {
        m.counters.duplicates.fetch_add(1, std::memory_order_relaxed);
      } else {
        std::lock_guard lock(m.local_mu);
        const Verdict v = judge(m, h);
        if (v == Verdict::loop) m.counters.loops.fetch_add(1, std::memory_order_relaxed);
        if (v == Verdict::duplicate) m.counters.duplicates.fetch_add(1, std::memory_order_relaxed);
        if (v == Verdict::deliver) {
          m.in_state.write({delivered, sseq, local_next(m), 0});
          if (deliver(m, h, natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg))))
            m.counters.received.fetch_add(1, std::memory_order_relaxed);
          else if (stop.load(std::memory_order_relaxed))
            break;  // not delivered and not acked: redelivered after a restart
        }
        if (v != Verdict::deliver && sseq > delivered) m.in_state.write({sseq, sseq, 0, 0});
        if (sseq > delivered && h.has_seq) delivered_id = identity(h);
        delivered = std::max(delivered, sseq);
      }
      natsMsg_Ack(msg, nullptr);
    }
    natsMsgList_Destroy(&list);
  }
  destroy_all();
}

}  // namespace zipc::bridge_detail
