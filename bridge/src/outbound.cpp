// Outbound: a local topic (reliable subscriber) or queue (consumer) -> NATS.
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

std::string u64s(std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return {buf, r.ptr};
}

// A message read locally, kept until NATS (or JetStream) took it.
struct Pending {
  std::uint64_t seq = 0;
  std::uint64_t origin_ns = 0;
  std::string data;
  std::uint64_t skip = 0;  // sequences skipped on purpose (echoes) just before it
};

natsMsg* make_msg(const MappingRuntime& m, std::uint64_t seq, std::uint64_t ns, const void* data, std::size_t n,
                  std::uint64_t skip = 0, std::uint64_t count = 0) {
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

// Core: one publish; under overflow=block retried until it is buffered.
// Returns false when the message was dropped (counted) or we are stopping.
bool publish_core(MappingRuntime& m, Link& link, const std::atomic<bool>& stop, std::uint64_t seq, std::uint64_t ns,
                  const void* data, std::size_t n, std::uint64_t skip = 0, std::uint64_t count = 0) {
  for (int attempt = 0;; ++attempt) {
    natsMsg* msg = make_msg(m, seq, ns, data, n, skip, count);
    natsStatus s = msg == nullptr ? NATS_NO_MEMORY : natsConnection_PublishMsg(link.conn(), msg);
    natsMsg_Destroy(msg);
    if (s == NATS_OK) return true;
    m.counters.errors.fetch_add(1, std::memory_order_relaxed);
    link.set_error("nats publish on '" + m.cfg.subject + "': " + status_text(s));
    if (m.cfg.overflow == BridgeOverflow::drop) {
      m.counters.lost.fetch_add(count == 0 ? 1 : count, std::memory_order_relaxed);
      return false;
    }
    if (stop.load(std::memory_order_relaxed)) return false;
    std::this_thread::sleep_for(attempt < 10 ? 1ms : 20ms);  // back-pressure: the local reader holds back
  }
}

// JetStream: every message of the batch published with msg id
// origin/channel/seq, then all acks awaited; on any failure the whole batch is
// sent again (the server drops what it already stored). True once acked.
struct BatchAcks {
  std::atomic<int> failed{0};
};
void on_js_error(jsCtx*, jsPubAckErr*, void* closure) {
  static_cast<BatchAcks*>(closure)->failed.fetch_add(1, std::memory_order_relaxed);
}

bool publish_js_batch(MappingRuntime& m, Link& link, jsCtx* js, BatchAcks& acks, const std::vector<Pending>& batch,
                      const std::atomic<bool>& stop) {
  for (int attempt = 0; !stop.load(std::memory_order_relaxed); ++attempt) {
    acks.failed.store(0, std::memory_order_relaxed);
    natsStatus s = NATS_OK;
    for (const auto& p : batch) {
      natsMsg* msg = make_msg(m, p.seq, p.origin_ns, p.data.data(), p.data.size(), p.skip);
      if (msg == nullptr) {
        s = NATS_NO_MEMORY;
        break;
      }
      const std::string id = m.host_id + "/" + m.cfg.channel + "/" + u64s(p.seq);
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MsgId = id.c_str();
      po.MaxWait = 2000;  // an ack lost with a connection fails the message (the batch is resent)
      s = js_PublishMsgAsync(js, &msg, &po);
      if (msg != nullptr) natsMsg_Destroy(msg);  // not taken by the library
      if (s != NATS_OK) break;
    }
    if (s == NATS_OK) {
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MaxWait = 2000;
      s = js_PublishAsyncComplete(js, &po);
    }
    if (s == NATS_OK && acks.failed.load(std::memory_order_relaxed) == 0) return true;
    m.counters.errors.fetch_add(1, std::memory_order_relaxed);
    // Forget what is still awaiting an ack: the whole batch goes again (the
    // server drops duplicates by msg id), and acks lost with a connection
    // must not pile up to MaxPending, where every later publish would stall.
    natsMsgList stale;
    if (js_PublishAsyncGetPendingList(&stale, js) == NATS_OK) natsMsgList_Destroy(&stale);
    link.set_error("jetstream publish on '" + m.cfg.subject + "': " +
                   (s != NATS_OK ? status_text(s) : std::string("a publish was not acknowledged")) + "; resending");
    std::this_thread::sleep_for(std::min(20ms * (attempt + 1), std::chrono::milliseconds(1000)));
  }
  return false;
}

constexpr std::size_t kBatch = 256;

// Core: what is waiting goes out in one batch (one NATS message of frames);
// a message read alone goes out alone, as a plain NATS message.
void topic_core(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  std::uint64_t since_save = 0, skip = 0, first_seq = 0, first_ns = 0, first_skip = 0, count = 0, last_seq = 0;
  std::string batch;
  std::size_t lone_size = 0;  // payload bytes of the first frame
  auto send = [&] {
    if (count == 0) return;
    const bool ok =
        count == 1
            ? publish_core(m, link, stop, first_seq, first_ns, batch.data() + sizeof(Frame), lone_size, first_skip)
            : publish_core(m, link, stop, first_seq, first_ns, batch.data(), batch.size(), first_skip, count);
    if (ok) m.counters.forwarded.fetch_add(count, std::memory_order_relaxed);
    m.counters.out_position.store(last_seq + 1, std::memory_order_relaxed);
    since_save += count;
    if (since_save >= kBatch) save_position(m, last_seq + 1), since_save = 0;
    count = 0;
    batch.clear();
  };
  while (!stop.load(std::memory_order_relaxed)) {
    TopicReadLoan v = count == 0 ? m.subscriber.acquire(50ms) : m.subscriber.try_acquire();
    if (!static_cast<bool>(v)) {
      if (v.status() != Status::timeout && v.status() != Status::empty) {
        m.counters.errors.fetch_add(1, std::memory_order_relaxed);
        std::this_thread::sleep_for(10ms);
      }
      send();
      if (since_save > 0) save_position(m, m.subscriber.next_sequence()), since_save = 0;
      continue;
    }
    if (m.echoes.take(v.sequence())) {  // it came from NATS: never sent back out
      ++skip;
      continue;
    }
    if (count == 0) first_seq = v.sequence(), first_ns = v.publish_ns(), first_skip = skip, lone_size = v.data().size();
    last_seq = v.sequence();
    // Frame it (also the first: if a second one follows, the batch is ready).
    Frame f{static_cast<std::uint32_t>(v.data().size()), static_cast<std::uint32_t>(skip), v.sequence(),
            v.publish_ns()};
    skip = 0;
    const std::size_t at = batch.size();
    batch.resize(at + sizeof(Frame) + (v.data().size() + 7) / 8 * 8);
    std::memcpy(batch.data() + at, &f, sizeof(Frame));
    std::memcpy(batch.data() + at + sizeof(Frame), v.data().data(), v.data().size());
    ++count;
    if (!m.cfg.batch || batch.size() >= m.cfg.batch_bytes || count >= 1024) send();
  }
  send();
  save_position(m, m.subscriber.next_sequence());
}

jsCtx* own_js(Link& link, BatchAcks& acks) {
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 5000;
  jo.PublishAsync.ErrHandler = &on_js_error;
  jo.PublishAsync.ErrHandlerClosure = &acks;
  jo.PublishAsync.MaxPending = 4096;
  jsCtx* js = nullptr;
  if (natsConnection_JetStream(&js, link.conn(), &jo) != NATS_OK) return nullptr;
  return js;
}

void topic_js(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  BatchAcks acks;
  jsCtx* js = own_js(link, acks);
  if (js == nullptr) {
    link.set_error("jetstream: no context for mapping '" + m.cfg.name + "'");
    return;
  }
  std::vector<Pending> batch;
  // Echoes not sent just before the next message: its Zipc-Skip, so that the
  // receiving side tells them from a gap it has to wait for.
  std::uint64_t skip = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    batch.clear();
    while (batch.size() < kBatch) {
      TopicReadLoan v = batch.empty() ? m.subscriber.acquire(50ms) : m.subscriber.try_acquire();
      if (!static_cast<bool>(v)) break;
      if (m.echoes.take(v.sequence())) {
        ++skip;
        continue;
      }
      batch.push_back({v.sequence(), v.publish_ns(),
                       std::string(reinterpret_cast<const char*>(v.data().data()), v.data().size()), skip});
      skip = 0;
    }
    if (batch.empty()) continue;
    if (!publish_js_batch(m, link, js, acks, batch, stop)) break;  // stopping: position stays before the batch
    save_position(m, batch.back().seq + 1);
    m.counters.forwarded.fetch_add(batch.size(), std::memory_order_relaxed);
    m.counters.out_position.store(batch.back().seq + 1, std::memory_order_relaxed);
  }
  jsCtx_Destroy(js);
}

void queue_out(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  const bool jetstream = m.cfg.mode == BridgeMode::jetstream;
  BatchAcks acks;
  jsCtx* js = jetstream ? own_js(link, acks) : nullptr;
  if (jetstream && js == nullptr) {
    link.set_error("jetstream: no context for mapping '" + m.cfg.name + "'");
    return;
  }
  std::uint64_t next = m.out_next;
  std::vector<QueueReadLoan> loans(kBatch);
  std::vector<Pending> batch;
  while (!stop.load(std::memory_order_relaxed)) {
    const std::size_t n = m.queue_out.acquire_batch(loans, 50ms);
    if (n == 0) continue;
    const std::uint64_t ns = realtime_ns();
    bool ok = true;
    if (jetstream) {
      batch.clear();
      for (std::size_t i = 0; i < n; ++i)
        batch.push_back(
            {next + i, ns, std::string(reinterpret_cast<const char*>(loans[i].data().data()), loans[i].size())});
      ok = publish_js_batch(m, link, js, acks, batch, stop);
      if (ok) m.counters.forwarded.fetch_add(n, std::memory_order_relaxed);
    } else {
      for (std::size_t i = 0; i < n; ++i)
        if (publish_core(m, link, stop, next + i, ns, loans[i].data().data(), loans[i].size()))
          m.counters.forwarded.fetch_add(1, std::memory_order_relaxed);
    }
    if (!ok) {  // stopping while JetStream does not answer: these are given up, and counted
      m.counters.lost.fetch_add(n, std::memory_order_relaxed);
      break;
    }
    next += n;
    save_position(m, next);  // before the loans go back (a crash in between: at least once)
    for (std::size_t i = 0; i < n; ++i) loans[i].release();
  }
  for (auto& l : loans)
    if (l) l.release();
  if (js != nullptr) jsCtx_Destroy(js);
}

}  // namespace

void run_outbound(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  if (m.cfg.kind == BridgeKind::queue) return queue_out(m, link, stop);
  if (m.cfg.mode == BridgeMode::jetstream) return topic_js(m, link, stop);
  topic_core(m, link, stop);
}

}  // namespace zipc::bridge_detail
