// JetStream outbound: a local topic (reliable subscriber) or queue (consumer)
// -> a JetStream stream, exactly once.
//
// Each message is published with the msg id origin/channel/sequence (the
// stream keeps one copy of an id within its duplicate window) and many are in
// flight at once, as a JetStream client publishing asynchronously has them:
// the client's ack handler reports each message, and the position (and, for a
// queue, the consumption of its messages) advances over the acknowledged
// prefix only. When a publish fails or is not acknowledged in time, every
// message not yet acknowledged is sent again, in order; the stream drops the
// copies it already holds.
#include <nats/nats.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "internal.hpp"
#include "link.hpp"
#include "nats_publish.hpp"
#include "wire.hpp"

namespace zipc::bridge_detail {
namespace {

using namespace std::chrono_literals;

// In flight at most: messages and bytes. The client's own cap (MaxPending)
// is twice the first, so a publish never stalls inside the client.
constexpr std::size_t kWindow = 2048;
constexpr std::size_t kWindowBytes = std::size_t{16} << 20;
// Read from the local channel between two looks at the acknowledgements.
constexpr std::size_t kReadBatch = 256;
// An acknowledgement not here after this long fails its message (a
// connection lost with it): the unacknowledged messages go again.
constexpr std::int64_t kAckWaitMs = 2000;

// What the client's ack handler reports, read by the mapping's thread.
struct AckBox {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::uint64_t> acked, failed;  // Zipc-Seq of each, under mu
};

std::uint64_t seq_of(natsMsg* msg) {
  const char* v = nullptr;
  std::uint64_t seq = 0;
  if (natsMsgHeader_Get(msg, kHdrSeq, &v) == NATS_OK && v != nullptr) std::from_chars(v, v + std::strlen(v), seq);
  return seq;
}

// On the client's thread, once for every message published (it owns msg).
void on_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
  auto& box = *static_cast<AckBox*>(closure);
  const std::uint64_t seq = seq_of(msg);
  natsMsg_Destroy(msg);
  {
    std::lock_guard lock(box.mu);
    (pa != nullptr && pae == nullptr ? box.acked : box.failed).push_back(seq);
  }
  box.cv.notify_one();
}

// A local message on its way: kept until the stream acknowledged it.
struct Entry {
  std::uint64_t seq = 0;
  std::uint64_t origin_ns = 0;
  std::uint64_t skip = 0;  // sequences skipped on purpose just before it (Zipc-Skip)
  std::string data;
  QueueReadLoan loan;  // a queue's message: consumed when the entry retires
  bool sent = true;    // false: larger than the server takes, never sent (counted lost)
  bool acked = false;
  bool given_up = false;  // stopping without its acknowledgement (counted lost)
};

class JsOutbound {
 public:
  JsOutbound(MappingRuntime& m, Link& link, const std::atomic<bool>& stop)
      : m_(m), link_(link), stop_(stop), id_(m.host_id + "/" + m.cfg.channel + "/"), id_prefix_len_(id_.size()) {
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = 5000;
    jo.PublishAsync.AckHandler = &on_ack;
    jo.PublishAsync.AckHandlerClosure = &box_;
    jo.PublishAsync.MaxPending = static_cast<std::int64_t>(2 * kWindow);
    if (natsConnection_JetStream(&js_, link.conn(), &jo) != NATS_OK) js_ = nullptr;
    if (m.cfg.kind == BridgeKind::queue) {
      next_ = m.out_next;
      skip_ = retired_skip_ = m.out_skip;
      loans_.resize(kReadBatch);
    }
  }
  JsOutbound(const JsOutbound&) = delete;
  JsOutbound& operator=(const JsOutbound&) = delete;
  ~JsOutbound() {
    if (js_ == nullptr) return;
    forget_pending();
    // The client takes a message out of its pending map before it calls
    // on_ack and counts it done only after on_ack returned: with the map
    // emptied, this waits for the calls still running, which use box_.
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = kAckWaitMs;
    js_PublishAsyncComplete(js_, &po);
    jsCtx_Destroy(js_);
  }

  void run() {
    if (js_ == nullptr) {
      link_.set_error("jetstream: no context for mapping '" + m_.cfg.name + "'");
      return;
    }
    while (!stop_.load(std::memory_order_relaxed)) {
      settle();
      if (failed_) {
        recover();
        continue;
      }
      const bool room = window_.size() < kWindow && bytes_ < kWindowBytes;
      // An empty window: wait for local messages. Else look, and wait for
      // acknowledgements when there is nothing new.
      const std::size_t got = room ? read(window_.empty() ? 50ms : 0ms) : 0;
      unflushed_ = unflushed_ || got != 0;
      if (got != 0) continue;
      // Nothing more to send now: what the connection holds goes out at
      // once (the link is buffered: many publishes share a write).
      if (unflushed_) link_.flush(200ms);
      unflushed_ = false;
      if (!window_.empty()) wait_acks(room ? 1ms : 50ms);
    }
    finish();
  }

 private:
  [[nodiscard]] bool is_queue() const noexcept { return m_.cfg.kind == BridgeKind::queue; }

  std::size_t read(std::chrono::milliseconds wait) { return is_queue() ? read_queue(wait) : read_topic(wait); }

  std::size_t read_topic(std::chrono::milliseconds wait) {
    std::size_t n = 0;
    while (n < kReadBatch && window_.size() < kWindow && bytes_ < kWindowBytes) {
      TopicReadLoan v = n == 0 && wait > 0ms ? m_.subscriber.acquire(wait) : m_.subscriber.try_acquire();
      if (!static_cast<bool>(v)) break;
      ++n;
      if (m_.echoes.take(v.sequence())) {  // announced as skipped with the next one
        ++skip_;
        continue;
      }
      if (v.data().size() > payload_limit(m_, link_)) {  // it can never go out: announced as skipped
        count_too_large(m_, link_, v.sequence(), v.data().size());
        ++skip_;
        continue;
      }
      Entry e;
      e.seq = v.sequence();
      e.origin_ns = v.publish_ns();
      e.skip = skip_;
      e.data.assign(reinterpret_cast<const char*>(v.data().data()), v.data().size());
      add(std::move(e));
      skip_ = 0;
      if (failed_) break;
    }
    return n;
  }

  std::size_t read_queue(std::chrono::milliseconds wait) {
    const std::size_t want = std::min(kReadBatch, kWindow - window_.size());
    const std::size_t n = m_.queue_out.acquire_batch(std::span(loans_.data(), want), wait);
    const std::uint64_t ns = realtime_ns();
    for (std::size_t i = 0; i < n; ++i) {
      QueueReadLoan& l = loans_[i];
      if (l.size() > payload_limit(m_, link_)) {  // it can never go out: announced as skipped
        count_too_large(m_, link_, next_, l.size());
        Entry e;
        e.seq = next_++;
        e.origin_ns = ns;
        e.loan = std::move(l);
        e.sent = false;
        e.acked = true;
        window_.push_back(std::move(e));
        ++skip_;
        continue;
      }
      Entry e;
      e.seq = next_++;
      e.origin_ns = ns;
      e.skip = skip_;
      e.data.assign(reinterpret_cast<const char*>(l.data().data()), l.size());
      e.loan = std::move(l);
      skip_ = 0;
      add(std::move(e));  // (after a failed publish, the rest still join the window: resent with it)
    }
    return n;
  }

  // Into the window, and published unless an earlier publish failed (then
  // recover() sends it with the others).
  void add(Entry e) {
    bytes_ += e.data.size();
    window_.push_back(std::move(e));
    if (!failed_ && !publish(window_.back())) failed_ = true;
  }

  bool publish(const Entry& e) {
    natsMsg* msg = make_msg(m_, e.seq, e.origin_ns, e.data.data(), e.data.size(), e.skip);
    if (msg == nullptr) return false;
    // origin/channel/seq, built in place: no allocation per message.
    id_.resize(id_prefix_len_);
    char digits[24];
    id_.append(digits, std::to_chars(digits, digits + sizeof(digits), e.seq).ptr);
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MsgId = id_.c_str();
    po.MaxWait = kAckWaitMs;
    const natsStatus s = js_PublishMsgAsync(js_, &msg, &po);
    if (msg != nullptr) natsMsg_Destroy(msg);  // not taken by the client
    return s == NATS_OK;
  }

  void wait_acks(std::chrono::milliseconds wait) {
    std::unique_lock lock(box_.mu);
    box_.cv.wait_for(lock, wait, [this] { return !box_.acked.empty() || !box_.failed.empty(); });
  }

  // Takes what the ack handler reported: marks the entries acknowledged (a
  // failure sets failed_), then retires the acknowledged prefix.
  void settle() {
    {
      std::lock_guard lock(box_.mu);
      acked_.swap(box_.acked);
      failed_seqs_.swap(box_.failed);
    }
    if (!acked_.empty()) attempt_ = 0;
    for (const std::uint64_t seq : acked_)
      if (Entry* e = find(seq)) e->acked = true;
    for (const std::uint64_t seq : failed_seqs_)
      if (const Entry* e = find(seq); e != nullptr && !e->acked) failed_ = true;
    acked_.clear();
    failed_seqs_.clear();
    retire();
  }

  // The entry of sequence seq in the window (kept in sequence order), if there.
  Entry* find(std::uint64_t seq) {
    auto it = std::lower_bound(window_.begin(), window_.end(), seq,
                               [](const Entry& e, std::uint64_t s) { return e.seq < s; });
    return it != window_.end() && it->seq == seq ? &*it : nullptr;
  }

  // The acknowledged prefix leaves the window: the position saved past it,
  // then (a queue) its messages consumed: a crash in between sends them
  // again, and the stream drops the copies.
  void retire() {
    std::size_t sent = 0;
    std::uint64_t position = 0;
    done_.clear();
    while (!window_.empty() && window_.front().acked) {
      Entry& e = window_.front();
      position = e.seq + 1;
      retired_skip_ = e.sent ? 0 : retired_skip_ + 1;
      sent += e.sent && !e.given_up ? 1 : 0;
      bytes_ -= e.data.size();
      if (e.loan) done_.push_back(std::move(e.loan));
      window_.pop_front();
    }
    if (position == 0) return;
    save_position(m_, position, is_queue() ? retired_skip_ : 0);
    for (auto& l : done_) l.release();
    m_.counters.forwarded.fetch_add(sent, std::memory_order_relaxed);
    if (!is_queue()) m_.counters.out_position.store(position, std::memory_order_relaxed);
  }

  // After a failure: waits for the acknowledgements still coming, then sends
  // again, in order, every message not acknowledged.
  void recover() {
    m_.counters.errors.fetch_add(1, std::memory_order_relaxed);
    const std::size_t unacked = static_cast<std::size_t>(
        std::count_if(window_.begin(), window_.end(), [](const Entry& e) { return !e.acked; }));
    link_.set_error("jetstream publish on '" + m_.cfg.subject +
                    "': a publish failed or was not acknowledged; resending " + u64s(unacked) + " messages");
    drain(kAckWaitMs);
    failed_ = false;
    settle();
    failed_ = false;  // (late failures of what is about to be sent again)
    const auto pause = std::min(20ms * (attempt_ + 1), std::chrono::milliseconds(1000));
    ++attempt_;
    for (auto slept = 0ms; slept < pause && !stop_.load(std::memory_order_relaxed); slept += 10ms)
      std::this_thread::sleep_for(10ms);
    if (stop_.load(std::memory_order_relaxed)) return;
    for (const Entry& e : window_)
      if (e.sent && !e.acked && !publish(e)) {
        failed_ = true;
        break;
      }
    unflushed_ = true;
  }

  // Waits up to wait_ms for the acknowledgements of what is in flight, then
  // forgets whatever the client still waits for (it would not call back).
  void drain(std::int64_t wait_ms) {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = wait_ms;
    js_PublishAsyncComplete(js_, &po);
    forget_pending();
  }

  void forget_pending() {
    natsMsgList stale;
    if (js_PublishAsyncGetPendingList(&stale, js_) == NATS_OK) natsMsgList_Destroy(&stale);
  }

  // Stopping: what is in flight gets its acknowledgements (for a while).
  // A topic's position stays before the first message not acknowledged (it
  // is read and sent again at the next start). A queue's messages not
  // acknowledged are given up and counted: their sequence numbers are not
  // used again (the stream may hold some of them, and would take new
  // messages under those ids for duplicates).
  void finish() {
    if (!window_.empty()) {
      drain(kAckWaitMs);
      settle();
    }
    if (!is_queue() || window_.empty()) return;
    std::uint64_t lost = 0;
    for (Entry& e : window_) {
      e.given_up = !e.acked;
      lost += e.given_up ? 1 : 0;
      e.acked = true;
    }
    m_.counters.lost.fetch_add(lost, std::memory_order_relaxed);
    retire();
  }

  MappingRuntime& m_;
  Link& link_;
  const std::atomic<bool>& stop_;
  std::string id_;                   // the msg id being published: origin/channel/ then the sequence
  const std::size_t id_prefix_len_;  // origin/channel/
  jsCtx* js_ = nullptr;
  AckBox box_;
  std::deque<Entry> window_;  // in sequence order
  std::size_t bytes_ = 0;     // of the window's payloads
  bool failed_ = false;       // a publish failed or was not acknowledged: recover()
  bool unflushed_ = false;    // published since the last flush
  int attempt_ = 0;           // recoveries since the last acknowledgement
  std::uint64_t skip_ = 0;    // echoes and too-large messages before the next one sent
  // A queue: the next sequence number, and the too-large messages just
  // before the position (kept with it, announced by the next message).
  std::uint64_t next_ = 0, retired_skip_ = 0;
  std::vector<QueueReadLoan> loans_, done_;
  std::vector<std::uint64_t> acked_, failed_seqs_;  // settle()'s scratch
};

}  // namespace

void run_outbound_jetstream(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  JsOutbound out(m, link, stop);
  out.run();
}

}  // namespace zipc::bridge_detail
