// Outbound: a local topic (reliable subscriber) or queue (consumer) -> NATS;
// JetStream here, core in core_outbound.cpp.
#include <charconv>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core_outbound.hpp"
#include "internal.hpp"
#include "link.hpp"
#include "nats_publish.hpp"

namespace zipc::bridge_detail {
namespace {

using namespace std::chrono_literals;

// A message read locally, kept until NATS (or JetStream) took it.
struct Pending {
  std::uint64_t seq = 0;
  std::uint64_t origin_ns = 0;
  std::string data;
  std::uint64_t skip = 0;  // sequences skipped on purpose (echoes) just before it
};

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
      if (v.data().size() > payload_limit(m, link)) {  // it can never go out: announced as skipped
        count_too_large(m, link, v.sequence(), v.data().size());
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

void queue_js(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  BatchAcks acks;
  jsCtx* js = own_js(link, acks);
  if (js == nullptr) {
    link.set_error("jetstream: no context for mapping '" + m.cfg.name + "'");
    return;
  }
  std::uint64_t next = m.out_next;
  std::vector<QueueReadLoan> loans(kBatch);
  std::vector<Pending> batch;
  // Sequence numbers of messages too large to send just before the next one
  // (kept with the position: those messages are consumed).
  std::uint64_t skip = m.out_skip;
  while (!stop.load(std::memory_order_relaxed)) {
    const std::size_t n = m.queue_out.acquire_batch(loans, 50ms);
    if (n == 0) continue;
    const std::uint64_t ns = realtime_ns();
    batch.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (loans[i].size() > payload_limit(m, link)) {  // it can never go out: announced as skipped
        count_too_large(m, link, next + i, loans[i].size());
        ++skip;
        continue;
      }
      batch.push_back(
          {next + i, ns, std::string(reinterpret_cast<const char*>(loans[i].data().data()), loans[i].size()), skip});
      skip = 0;
    }
    if (!publish_js_batch(m, link, js, acks, batch, stop)) {
      // Stopping while JetStream does not answer: these are given up, and
      // counted; their sequence numbers are not used again (the server may
      // hold some of them, and would take new messages under those ids for
      // duplicates).
      m.counters.lost.fetch_add(batch.size(), std::memory_order_relaxed);
      save_position(m, next + n, skip);
      break;
    }
    m.counters.forwarded.fetch_add(batch.size(), std::memory_order_relaxed);
    next += n;
    save_position(m, next, skip);  // before the loans go back (a crash in between: at least once)
    for (std::size_t i = 0; i < n; ++i) loans[i].release();
  }
  for (auto& l : loans)
    if (l) l.release();
  jsCtx_Destroy(js);
}

}  // namespace

void run_outbound(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  if (m.cfg.mode == BridgeMode::jetstream)
    return m.cfg.kind == BridgeKind::queue ? queue_js(m, link, stop) : topic_js(m, link, stop);
  CoreOutbound out(m, link, stop, /*caller=*/false);
  while (!stop.load(std::memory_order_relaxed)) out.pump(50ms);
  out.finish();
}

}  // namespace zipc::bridge_detail
