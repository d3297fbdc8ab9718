// JetStream outbound: a local topic (reliable subscriber) or queue (consumer)
// -> a JetStream stream, exactly once.
//
// Each message is published with the msg id origin/channel/sequence (the
// stream keeps one copy of an id within its duplicate window) and many are in
// flight at once, as a JetStream client publishing asynchronously has them.
// The bridge publishes them itself, a core publish with a reply subject on an
// inbox of its own (<inbox>.<sequence>), and reads the stream's
// acknowledgements there (pub_ack.hpp: anything else on the inbox is counted
// and ignored); the position (and, for a queue, the consumption of its
// messages) advances over the acknowledged prefix only. When a publish fails,
// is refused or is not acknowledged in time, every message not yet
// acknowledged is sent again, in order; the stream drops the copies it
// already holds.
#include <nats/nats.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "internal.hpp"
#include "link.hpp"
#include "nats_publish.hpp"
#include "pub_ack.hpp"
#include "wire.hpp"

namespace zipc::bridge_detail {
namespace {

using namespace std::chrono_literals;

// In flight at most: messages and bytes.
constexpr std::size_t kWindow = 2048;
constexpr std::size_t kWindowBytes = std::size_t{16} << 20;
// Read from the local channel between two looks at the acknowledgements.
constexpr std::size_t kReadBatch = 256;
// An acknowledgement not here after this long fails its message (a
// connection lost with it): the unacknowledged messages go again.
constexpr std::int64_t kAckWaitMs = 2000;
// Replies waiting to be read, at most (more are dropped by the client, and
// their messages time out and go again): room for every genuine one, and a
// bound on what a flood of forged ones holds.
constexpr int kReplyMsgs = 4 * static_cast<int>(kWindow);
constexpr int kReplyBytes = 8 << 20;

// A local message on its way: kept until the stream acknowledged it.
struct Entry {
  std::uint64_t seq = 0;
  std::uint64_t origin_ns = 0;
  std::uint64_t skip = 0;     // sequences skipped on purpose just before it (Zipc-Skip)
  std::uint64_t sent_ns = 0;  // monotonic: when it was published last
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
    if (m.cfg.kind == BridgeKind::queue) {
      next_ = m.out_next;
      skip_ = retired_skip_ = m.out_skip;
      loans_.resize(kReadBatch);
    }
  }
  JsOutbound(const JsOutbound&) = delete;
  JsOutbound& operator=(const JsOutbound&) = delete;
  ~JsOutbound() {
    if (sub_ != nullptr) natsSubscription_Destroy(sub_);  // (the replies it still holds go with it)
  }

  void run() {
    for (std::string err; !(err = open_inbox()).empty();) {
      m_.counters.errors.fetch_add(1, std::memory_order_relaxed);
      link_.set_error(err + "; retrying");
      for (int i = 0; i < 50; ++i) {
        if (stop_.load(std::memory_order_relaxed)) return;
        std::this_thread::sleep_for(10ms);
      }
    }
    while (!stop_.load(std::memory_order_relaxed)) {
      take_replies(0ms);
      check_ack_wait();
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
      // The local channel has nothing more: what the connection holds goes
      // out at once (the link is buffered: many publishes share a write).
      // A full window leaves it to the client's flusher (within 1 ms) and
      // the full buffer: enough is in flight, and a flush is a round trip
      // to the server that this thread would wait for.
      if (room && unflushed_) {
        link_.flush(200ms);
        unflushed_ = false;
      }
      if (!window_.empty()) take_replies(room ? 1ms : 50ms);
    }
    finish();
  }

 private:
  [[nodiscard]] bool is_queue() const noexcept { return m_.cfg.kind == BridgeKind::queue; }

  // The reply inbox: a synchronous subscription read by this thread (no
  // hand-off to a delivery thread of the client's).
  std::string open_inbox() {
    natsInbox* inbox = nullptr;
    if (natsInbox_Create(&inbox) != NATS_OK) return "jetstream: cannot make an inbox";
    const std::string prefix = std::string(inbox) + ".";
    natsInbox_Destroy(inbox);
    const natsStatus s = natsConnection_SubscribeSync(&sub_, link_.conn(), (prefix + "*").c_str());
    if (s != NATS_OK) {
      if (sub_ != nullptr) natsSubscription_Destroy(sub_);
      sub_ = nullptr;
      return "jetstream: cannot subscribe to the acknowledgement inbox: " + status_text(s);
    }
    natsSubscription_SetPendingLimits(sub_, kReplyMsgs, kReplyBytes);
    reply_prefix_ = prefix;
    out_.emplace(prefix);
    return {};
  }

  std::size_t read(std::chrono::milliseconds wait) { return is_queue() ? read_queue(wait) : read_topic(wait); }

  std::size_t read_topic(std::chrono::milliseconds wait) {
    std::size_t n = 0;
    while (n < kReadBatch && window_.size() < kWindow && bytes_ < kWindowBytes) {
      TopicReadLoan v = n == 0 && wait > 0ms ? m_.subscriber.acquire(wait) : m_.subscriber.try_acquire();
      if (!static_cast<bool>(v)) break;
      if (n++ == 0) now_ns_ = monotonic_ns();
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
    now_ns_ = monotonic_ns();
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

  bool publish(Entry& e) {
    // origin/channel/seq, built in place: no allocation per message.
    id_.resize(id_prefix_len_);
    char digits[24];
    id_.append(digits, std::to_chars(digits, digits + sizeof(digits), e.seq).ptr);
    natsMsg* msg = out_->fill(m_, e.seq, e.origin_ns, e.data.data(), e.data.size(), e.skip, id_.c_str());
    if (msg == nullptr || natsConnection_PublishMsg(link_.conn(), msg) != NATS_OK) return false;
    e.sent_ns = now_ns_;
    ++owed_;
    highest_sent_ = std::max(highest_sent_, e.seq);
    return true;
  }

  // Reads the replies that arrived (waiting up to `wait` for the first one),
  // then retires the acknowledged prefix.
  void take_replies(std::chrono::milliseconds wait) {
    // (At most what may wait at once: a flood of replies does not keep this thread here.)
    std::int64_t w = wait.count();
    for (int taken = 0; taken < kReplyMsgs; ++taken, w = 0) {
      natsMsg* msg = nullptr;
      int pending = 0;
      // (Nothing waiting and no wait: no call that records a timeout as the thread's last error.)
      if (w == 0 && natsSubscription_GetPending(sub_, &pending, nullptr) == NATS_OK && pending == 0) break;
      const natsStatus s = natsSubscription_NextMsg(&msg, sub_, w);
      if (s == NATS_OK) {
        on_reply(msg);
        spent_.push_back(msg);
      } else if (s == NATS_NO_RESPONDERS) {
        // A publish found no stream listening (the client took the status
        // message): which one is not known, so all not acknowledged go again.
        owed_ -= owed_ != 0 ? 1 : 0;
        failed_ = true;
        refused_ = "no stream listens on the subject";
      } else if (s == NATS_SLOW_CONSUMER) {
        // Replies were dropped (more than kReplyMsgs waiting: a flood of
        // forged ones): their messages time out and go again.
        reject("too many replies waiting; some were dropped");
      } else {
        break;  // timeout, or the connection closed (stopping)
      }
    }
    // Destroyed together: the client frees messages in a thread of its own,
    // woken by the first of them, not by each.
    for (natsMsg* msg : spent_) natsMsg_Destroy(msg);
    spent_.clear();
    retire();
  }

  // One reply on the inbox: the acknowledgement of the message whose
  // sequence its subject names, or the stream refusing it, or not ours.
  void on_reply(natsMsg* msg) {
    owed_ -= owed_ != 0 ? 1 : 0;
    const char* subject = natsMsg_GetSubject(msg);
    const auto seq = reply_token(subject == nullptr ? "" : subject, reply_prefix_);
    if (!seq) return reject("its subject names no message");  // (its body is not read)
    const std::string_view body(natsMsg_GetData(msg), static_cast<std::size_t>(natsMsg_GetDataLength(msg)));
    const PubAck a = parse_pub_ack(body, m_.cfg.stream);
    if (a.kind == PubAck::Kind::malformed) return reject(a.problem);
    if (*seq > highest_sent_) return reject("for a message not published");
    Entry* e = find(*seq);
    // Not in the window or acknowledged already: a reply to an earlier copy
    // of a message sent again (or its repetition by someone): nothing to do.
    if (e == nullptr || e->acked || !e->sent) return;
    if (a.kind == PubAck::Kind::error) {
      failed_ = true;
      refused_ = a.description;
      return;
    }
    e->acked = true;
    attempt_ = 0;
  }

  // A reply that is not an acknowledgement: counted, named (at most once a
  // second), and otherwise ignored.
  void reject(const char* why) {
    m_.counters.errors.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t now = monotonic_ns();
    if (now < reject_quiet_until_ns_) return;
    reject_quiet_until_ns_ = now + 1'000'000'000;
    link_.set_error("jetstream publish on '" + m_.cfg.subject +
                    "': ignored a reply on the acknowledgement inbox that is no acknowledgement (" + why + ")");
  }

  // The oldest message in flight (the window's first: the acknowledged
  // prefix is retired) not acknowledged within kAckWaitMs fails.
  void check_ack_wait() {
    if (failed_ || window_.empty()) return;
    const Entry& e = window_.front();
    if (e.sent && !e.acked && monotonic_ns() - e.sent_ns > static_cast<std::uint64_t>(kAckWaitMs) * 1'000'000)
      failed_ = true;
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
    std::string text = "jetstream publish on '" + m_.cfg.subject + "': a publish failed";
    text += refused_.empty() ? " or was not acknowledged" : " (the stream said: " + refused_ + ")";
    link_.set_error(text + "; resending " + u64s(unacked) + " messages");
    refused_.clear();
    drain(kAckWaitMs);
    failed_ = false;  // (late failures of what is about to be sent again)
    const auto pause = std::min(20ms * (attempt_ + 1), std::chrono::milliseconds(1000));
    ++attempt_;
    for (auto slept = 0ms; slept < pause && !stop_.load(std::memory_order_relaxed); slept += 10ms)
      std::this_thread::sleep_for(10ms);
    if (stop_.load(std::memory_order_relaxed)) return;
    now_ns_ = monotonic_ns();
    for (Entry& e : window_)
      if (e.sent && !e.acked && !publish(e)) {
        failed_ = true;
        break;
      }
    unflushed_ = true;
  }

  // Waits up to wait_ms for the replies still owed while messages are not
  // acknowledged, then forgets the rest (whatever comes later is a late
  // reply: an acknowledgement still counts, a refusal of a message that
  // went again is ignored).
  void drain(std::int64_t wait_ms) {
    if (unflushed_) link_.flush(200ms);
    const std::uint64_t until = monotonic_ns() + static_cast<std::uint64_t>(wait_ms) * 1'000'000;
    while (owed_ != 0 && std::any_of(window_.begin(), window_.end(), [](const Entry& e) { return !e.acked; })) {
      const std::uint64_t now = monotonic_ns();
      if (now >= until) break;
      take_replies(std::chrono::milliseconds(std::min<std::uint64_t>((until - now) / 1'000'000 + 1, 50)));
    }
    owed_ = 0;
  }

  // Stopping: what is in flight gets its acknowledgements (for a while).
  // A topic's position stays before the first message not acknowledged (it
  // is read and sent again at the next start). A queue's messages not
  // acknowledged are given up and counted: their sequence numbers are not
  // used again (the stream may hold some of them, and would take new
  // messages under those ids for duplicates).
  void finish() {
    if (!window_.empty()) drain(kAckWaitMs);
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
  natsSubscription* sub_ = nullptr;  // on <inbox>.*
  std::string reply_prefix_;         // <inbox>.
  std::optional<JsOutMsg> out_;      // (made with the inbox)
  std::deque<Entry> window_;         // in sequence order
  std::size_t bytes_ = 0;            // of the window's payloads
  bool failed_ = false;              // a publish failed, was refused or not acknowledged: recover()
  std::string refused_;              // what the stream said when it refused one
  bool unflushed_ = false;           // published since the last flush
  int attempt_ = 0;                  // recoveries since the last acknowledgement
  std::uint64_t now_ns_ = 0;         // monotonic, taken once per batch read (the publish time)
  std::uint64_t owed_ = 0;           // replies not yet read for what was published (drain())
  std::uint64_t highest_sent_ = 0;   // the largest sequence published: a reply beyond it is forged
  std::uint64_t reject_quiet_until_ns_ = 0;
  std::uint64_t skip_ = 0;  // echoes and too-large messages before the next one sent
  // A queue: the next sequence number, and the too-large messages just
  // before the position (kept with it, announced by the next message).
  std::uint64_t next_ = 0, retired_skip_ = 0;
  std::vector<QueueReadLoan> loans_, done_;
  std::vector<natsMsg*> spent_;  // take_replies()'s replies read, to destroy
};

}  // namespace

void run_outbound_jetstream(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  JsOutbound out(m, link, stop);
  out.run();
}

}  // namespace zipc::bridge_detail
