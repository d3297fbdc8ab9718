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
using namespace std::chrono_literals;

RawHeaders read_raw(natsMsg* msg) {
  RawHeaders r;
  const auto get = [msg](const char* name) -> std::optional<std::string_view> {
    const char* v = nullptr;
    if (natsMsgHeader_Get(msg, name, &v) != NATS_OK || v == nullptr) return std::nullopt;
    return std::string_view(v);
  };
  r.origin = get(kHdrOrigin);
  r.channel = get(kHdrChannel);
  r.seq = get(kHdrSeq);
  r.time = get(kHdrTime);
  r.skip = get(kHdrSkip);
  r.count = get(kHdrCount);
  r.auth = get(kHdrAuth);
  r.status = get(kHdrStatus);
  return r;
}

Reject read_message(MappingRuntime& m, natsMsg* msg, bool batches, Headers* h) {
  const RawHeaders raw = read_raw(msg);
  const char* data = natsMsg_GetData(msg);
  const auto size = static_cast<std::size_t>(natsMsg_GetDataLength(msg));
  const Reject r = check_message(raw, data, size, batches, h);
  if (r != Reject::none || !m.check_in) return r;
  const char* subject = natsMsg_GetSubject(msg);
  const Hmac::Fields f{subject == nullptr ? "" : subject,
                       raw.origin.value_or(""),
                       raw.channel.value_or(""),
                       raw.seq.value_or(""),
                       raw.time.value_or(""),
                       raw.skip.value_or(""),
                       raw.count.value_or(""),
                       data,
                       size};
  return raw.auth && m.check_in->verify(f, *raw.auth) ? Reject::none : Reject::auth;
}

Headers read_headers(natsMsg* msg) {
  Headers h;
  if (check_message(read_raw(msg), natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg)), false,
                    &h) != Reject::none)
    h = Headers{};
  return h;
}

void report(MappingRuntime& m, const std::string& text) {
  const std::uint64_t now = monotonic_ns();
  if (now < m.log_quiet_until_ns) {
    ++m.log_suppressed;
    return;
  }
  m.log_quiet_until_ns = now + 1'000'000'000;
  std::string line = "inbound '" + m.cfg.name + "': " + text;
  if (m.log_suppressed != 0) line += " (and " + std::to_string(m.log_suppressed) + " more in the last second)";
  m.log_suppressed = 0;
  if (m.log != nullptr) m.log->set_error(line);
}

void count_reject(MappingRuntime& m, Reject r, std::string_view detail) {
  std::atomic<std::uint64_t>* c = nullptr;
  switch (r) {
    case Reject::none: return;
    case Reject::status: c = &m.counters.rejected_status; break;
    case Reject::header: c = &m.counters.rejected_header; break;
    case Reject::frame: c = &m.counters.rejected_frame; break;
    case Reject::size: c = &m.counters.rejected_size; break;
    case Reject::auth: c = &m.counters.rejected_auth; break;
  }
  c->fetch_add(1, std::memory_order_relaxed);
  std::string text = std::string("rejected a message: ") + to_string(r);
  if (!detail.empty()) text.append(" (").append(detail).append(")");
  report(m, text);
}

namespace {

// Where a message came from, for a report (bounded: the names are the network's).
std::string from_text(const Headers& h) {
  std::string s = "'";
  s.append(h.origin.substr(0, 64)).append("/").append(h.channel.substr(0, 64)).append("'");
  return s;
}

}  // namespace

// Core: this many consecutive duplicates from an origin resynchronize it.
constexpr std::uint64_t kResyncRun = 1024;

Verdict judge(MappingRuntime& m, const Headers& h) {
  if (!h.origin.empty() && h.origin == m.host_id) return Verdict::loop;
  if (!h.has_seq) return Verdict::deliver;  // not from a bridge: no accounting possible
  bool fresh = false;
  Origins::Entry& e = m.origins.get(h.origin, h.channel, &fresh);
  m.counters.evicted.store(m.origins.evicted(), std::memory_order_relaxed);
  const std::uint64_t window = m.cfg.seq_window;
  auto new_epoch = [&](const char* how, std::uint64_t by) {
    m.counters.epochs.fetch_add(1, std::memory_order_relaxed);
    report(m, "sequence of " + from_text(h) + " jumped " + how + " by " + std::to_string(by) + " to " +
                  std::to_string(h.seq) + " (more than seq_window " + std::to_string(window) +
                  "): a new epoch of that origin, nothing counted lost");
  };
  if (!fresh && h.seq < e.expected) {
    const std::uint64_t behind = e.expected - h.seq;
    // Far behind: the origin started again (a new topic), or a forged
    // message sent the count ahead. With authentication nobody forges, and a
    // message far behind that is not newer than what came is a replay.
    const bool far = behind > window && (!m.check_in || h.ns > e.newest_ns);
    // Core: a live sender behind the count (a forged message within the
    // window sent it ahead) sends duplicates one after the other; a
    // restarted one sends again at most what it sent since its last saved
    // position (256), so a longer run means the count is wrong. (JetStream
    // reads long runs again on purpose: not there.)
    e.dup_run = h.seq == e.dup_next ? e.dup_run + 1 : 1;
    e.dup_next = h.seq + 1;
    const bool run = m.cfg.mode == BridgeMode::core && e.dup_run >= kResyncRun;
    if (!far && !run) return Verdict::duplicate;
    new_epoch(far ? "back" : "back (a live sender behind the count)", behind);
    e.dup_run = 0;
  } else if (!fresh) {
    const std::uint64_t gap = h.seq - e.expected;
    if (gap > window) {
      new_epoch("ahead", gap);
    } else if (gap > h.skip) {
      m.counters.lost.fetch_add(gap - h.skip, std::memory_order_relaxed);
    }
  }
  e.expected = h.seq + 1;  // (h.seq <= kMaxSeq: no wrap)
  e.dup_run = 0;
  if (h.ns > e.newest_ns) e.newest_ns = h.ns;
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
    if (s == Status::too_large) {
      count_reject(m, Reject::size, std::to_string(n) + " bytes");
      return Put::dropped;
    }
    if (s != Status::full && s != Status::timeout) m.counters.errors.fetch_add(1, std::memory_order_relaxed);
    if (!block) m.counters.lost.fetch_add(1, std::memory_order_relaxed);
    return Put::dropped;
  }
}

}  // namespace

bool deliver(MappingRuntime& m, const Headers& h, const char* data, std::size_t n) {
  return put_local(m, h, data, n, true) == Put::ok;
}

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
  Headers headers;
  const Reject r = read_message(m, msg, true, &headers);
  if (r != Reject::none) {
    count_reject(m, r, "");
    natsMsg_Destroy(msg);
    return true;
  }
  const bool done = for_each_frame(headers, data, size, from,
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
  Headers headers;
  if (read_message(m, m.held_msg, true, &headers) == Reject::none)
    for_each_frame(headers, natsMsg_GetData(m.held_msg), static_cast<std::size_t>(natsMsg_GetDataLength(m.held_msg)),
                   m.held_frame, [&](std::uint64_t, const Headers&, const char*, std::size_t) { return ++left, true; });
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
  {
    std::lock_guard lock(m.local_mu);
    m.log = &link;
  }
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
