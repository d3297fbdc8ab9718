// Inbound JetStream: a durable pull consumer -> a local topic or queue,
// exactly once and in order at the local channel.
//
// The stream is not always in the order of each origin's sequence: when a
// connection breaks under an outbound bridge's batch of asynchronous
// publishes, the messages written into the dying connection are lost while
// the later ones of the batch, buffered by the client during the reconnect,
// reach the restarted server and are stored; the bridge then sends the whole
// batch again and the server stores only the lost ones (the others are
// de-duplicated by message id), after the later ones. So a gap in an origin's
// sequence is first waited for (Reorder below): what follows it is held until
// the missing messages arrive, then they are delivered first and the held
// ones after them. Only a gap not filled within BridgeMapping::reorder_wait
// is counted lost.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "inbound.hpp"
#include "internal.hpp"
#include "link.hpp"

namespace zipc::bridge_detail {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The state record is {position, delivering, local next before, seed, run}:
// every stream message up to `position` reached the local channel; after it
// come, at their places in the stream, the messages at stream sequences
// `delivering`, `delivering` + 1, ... (at most `run` of them; 0 reads as 1, a
// record of an older bridge), each the next local message from `local next
// before` on. So when the local channel moved k past `local next before`
// (k <= run), the first k of them reached it and the position is
// `delivering` + k - 1. One record covers a run of consecutive stream
// messages all delivered (a fetched batch, typically): it is written before
// the first of them, and anything else (a message not delivered, one out of
// its place, a gap in the stream sequence) ends the run and writes a record
// of its own before it is done. `seed` is the stream sequence of the message
// delivered last before this record (0: none): after a restart its origin
// sequence is where that origin's accounting resumes, so that what was
// delivered ahead of its place in the stream (a gap filled, see Reorder) is a
// duplicate. Flags in `seed`: kLateFlag, `delivering` is such a message and
// the position stays; kNoneFlag, nothing is being delivered.
//
// The record, not the consumer's acknowledgements, says where delivery
// resumes after a restart (consume_from() makes the consumer start after
// `position`), and it is written before the messages it covers are
// delivered, which is before their batch is acknowledged (AckAll, once per
// batch). A SIGKILL between any two of these steps: record written, nothing
// delivered (k = 0: the position stays, the run is fetched again); part of
// the run delivered (k of them: resumes after the k-th); all delivered, not
// acknowledged (resumes after the run; the server's redelivery of the
// unacknowledged ones, if the consumer survived, is below the position and
// dropped as a duplicate). Counting k from the local channel needs the
// bridge to be that channel's only publisher, as the one-message record
// before it did; a `both` mapping (local publishers on the same topic)
// keeps runs of one.
constexpr std::uint64_t kLateFlag = 1ULL << 63;
constexpr std::uint64_t kNoneFlag = 1ULL << 62;
constexpr std::uint64_t kSeedMask = kNoneFlag - 1;

// A gap is waited for BridgeMapping::reorder_wait (an outbound bridge sends
// a batch again within seconds), with at most this much held, before it is
// counted lost.
constexpr std::size_t kHoldMsgs = 65536;
constexpr std::size_t kHoldBytes = std::size_t{64} << 20;
// A larger gap is no batch sent again out of order: counted lost at once.
constexpr std::uint64_t kMaxHoldGap = 4096;

std::uint64_t local_next(MappingRuntime& m) {
  return m.cfg.kind == BridgeKind::topic ? m.topic.next_sequence() : m.queue_in.stats().sent;
}

// A message's identity across a server restart: origin, channel and
// sequence headers. Into s, in place (no allocation once s has room).
void identity(const Headers& h, std::string& s) {
  s.assign(h.origin);
  s += '/';
  s += h.channel;
  s += '/';
  char digits[24];
  s.append(digits, std::to_chars(digits, digits + sizeof(digits), h.seq).ptr);
}
std::string identity(const Headers& h) {
  std::string s;
  identity(h, s);
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

// The stream sequence in a JetStream delivery's reply subject
// ($JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<time>.<pending>, or
// with <domain>.<account hash> before the stream and a token after); 0 when
// it is none.
std::uint64_t stream_seq_of(std::string_view reply) {
  constexpr std::string_view kPrefix = "$JS.ACK.";
  if (reply.substr(0, kPrefix.size()) != kPrefix) return 0;
  reply.remove_prefix(kPrefix.size());
  std::string_view tok[12];
  std::size_t n = 0;
  while (n < 12) {
    const std::size_t dot = reply.find('.');
    tok[n++] = reply.substr(0, dot);
    if (dot == std::string_view::npos) break;
    reply.remove_prefix(dot + 1);
  }
  const std::size_t at = n == 7 ? 3 : n >= 9 ? 5 : 12;
  if (at >= n) return 0;
  return parse_decimal(tok[at]).value_or(0);
}

// The pull consumer's messages, read by the bridge itself rather than
// through the client's pull subscription: the client takes a stored message
// that looks like a status message (a status line, an empty body: anyone may
// publish one into the stream) for the server's answer and drops it unacked,
// and enough of those wedge the consumer at its MaxAckPending. Here every
// message with a $JS.ACK reply is a stream message, whatever its headers,
// and is acknowledged (with its batch); only the server's own answers (no such
// reply) are status messages. An asynchronous subscription on an inbox of
// ours: a synchronous one's NextMsg drops "503" messages itself.
class Puller {
 public:
  Puller() = default;
  Puller(const Puller&) = delete;
  Puller& operator=(const Puller&) = delete;
  ~Puller() { close(); }

  std::string open(Link& link, const std::string& stream, const std::string& durable) {
    nc_ = link.conn();
    next_ = "$JS.API.CONSUMER.MSG.NEXT." + stream + "." + durable;
    natsInbox* inbox = nullptr;
    if (natsInbox_Create(&inbox) != NATS_OK) return "jetstream: cannot make an inbox";
    inbox_ = inbox;
    natsInbox_Destroy(inbox);
    // The callback's state is shared with the client's delivery thread,
    // which lets go of it (on_complete) only when it is done for good.
    auto* closure = new std::shared_ptr<Box>(box_);
    natsStatus s = natsConnection_Subscribe(&sub_, nc_, inbox_.c_str(), &Puller::on_msg, closure);
    if (s == NATS_OK) s = natsSubscription_SetOnCompleteCB(sub_, &Puller::on_complete, closure);
    if (s != NATS_OK) {
      if (sub_ == nullptr) delete closure;  // (else left to the client: a few bytes, once)
      natsSubscription_Destroy(sub_);
      sub_ = nullptr;
      return "jetstream: cannot subscribe to the pull inbox: " + status_text(s);
    }
    natsSubscription_SetPendingLimits(sub_, link.pending_msgs(), link.pending_bytes());
    return {};
  }

  void close() {
    if (sub_ != nullptr) {
      natsSubscription_Destroy(sub_);  // (its callback may still run: it sees closed)
      sub_ = nullptr;
    }
    std::lock_guard lock(box_->mu);
    box_->closed = true;
    for (natsMsg* msg : box_->q) natsMsg_Destroy(msg);
    box_->q.clear();
  }

  void discard() {
    ack_reply_.clear();  // (the consumer they belong to is made anew)
    ack_seq_ = 0;
    std::lock_guard lock(box_->mu);
    outstanding_ = false;  // (its requests went with it: the next fetch asks the new one)
    request_left_ = 0;
    for (natsMsg* msg : box_->q) natsMsg_Destroy(msg);
    box_->q.clear();
  }

  // Up to max stream messages: those already here, else waits up to wait
  // for the first ones. A pull request for `max` more goes out when none is
  // outstanding (it brought `max` messages, the server ended it, or it
  // expired) and also when the one outstanding has at most max/2 left to
  // bring: the server has the next request before the bridge has taken the
  // last message of this one (no round trip between batches), and what it
  // sends ahead of the bridge stays under 1.5 batches.
  void fetch(MappingRuntime& m, std::vector<natsMsg*>& out, int max, std::chrono::milliseconds wait) {
    std::unique_lock lock(box_->mu);
    const bool got = take(m, out, max);
    const auto now = Clock::now();
    const bool renew = !outstanding_ || now > request_deadline_;
    if (renew || request_left_ <= max / 2) {
      lock.unlock();
      const std::string req = "{\"batch\":" + std::to_string(max) +
                              ",\"expires\":" + std::to_string(std::chrono::nanoseconds(wait).count()) + "}";
      if (natsConnection_PublishRequest(nc_, next_.c_str(), inbox_.c_str(), req.data(), static_cast<int>(req.size())) !=
          NATS_OK) {
        m.counters.errors.fetch_add(1, std::memory_order_relaxed);
        if (!got) std::this_thread::sleep_for(50ms);
        return;
      }
      lock.lock();
      request_left_ = renew ? max : request_left_ + max;
      outstanding_ = true;
      request_deadline_ = now + wait + 50ms;
    }
    if (got) return;
    const auto deadline = std::min(request_deadline_, now + wait + 50ms);
    while (out.empty() && outstanding_) {
      if (!box_->cv.wait_until(lock, deadline, [this] { return !box_->q.empty(); })) break;
      take(m, out, max);
    }
  }

  // A stream message (at stream sequence sseq) is done with: delivered,
  // held for a reorder, or rejected. The consumer acknowledges all (AckAll):
  // one +ACK of the last message of a fetched batch covers the batch, where
  // one per message was a write per message (messages are handled in stream
  // order, so all before it are done).
  void done(natsMsg* msg, std::uint64_t sseq) {
    if (sseq <= ack_seq_) return;
    const char* reply = natsMsg_GetReply(msg);
    if (reply == nullptr || *reply == '\0') return;
    ack_seq_ = sseq;
    ack_reply_ = reply;
  }
  // Acknowledges what done() saw (up to the highest stream sequence).
  void send_acks() {
    if (ack_reply_.empty()) return;
    natsConnection_PublishString(nc_, ack_reply_.c_str(), "+ACK");
    ack_reply_.clear();
  }

 private:
  static void on_msg(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
    Box& box = **static_cast<std::shared_ptr<Box>*>(closure);
    {
      std::lock_guard lock(box.mu);
      if (!box.closed) {
        box.q.push_back(msg);
        msg = nullptr;
      }
    }
    natsMsg_Destroy(msg);
    box.cv.notify_one();
  }
  static void on_complete(void* closure) { delete static_cast<std::shared_ptr<Box>*>(closure); }

  // Moves the queued stream messages into out (up to max); handles the
  // server's status messages on the way. Under box_->mu. True when out has some.
  bool take(MappingRuntime& m, std::vector<natsMsg*>& out, int max) {
    while (!box_->q.empty() && static_cast<int>(out.size()) < max) {
      natsMsg* msg = box_->q.front();
      box_->q.pop_front();
      const char* reply = natsMsg_GetReply(msg);
      if (reply != nullptr && stream_seq_of(reply) != 0) {
        out.push_back(msg);
        if (request_left_ > 0 && --request_left_ == 0) outstanding_ = false;
        continue;
      }
      // The server speaking: 404 no messages, 408 request expired, 409
      // (e.g. the consumer went away), 100 heartbeat or flow control (its
      // reply wants an empty answer). Anything else on our inbox is not
      // the server's: counted.
      const char* status = nullptr;
      if (natsMsgHeader_Get(msg, kHdrStatus, &status) == NATS_OK && status != nullptr) {
        const std::string_view st(status);
        if (st == "100" && reply != nullptr && *reply != '\0') natsConnection_Publish(nc_, reply, nullptr, 0);
        if (st == "404" || st == "408" || st == "409") {  // (perhaps an older request's)
          outstanding_ = false;
          request_left_ = 0;
        }
        if (st == "409") m.counters.errors.fetch_add(1, std::memory_order_relaxed);
      } else {
        std::lock_guard lock(m.local_mu);
        count_reject(m, Reject::status, "a message on the pull inbox without a stream reply");
      }
      natsMsg_Destroy(msg);
    }
    return !out.empty();
  }

  natsConnection* nc_ = nullptr;
  natsSubscription* sub_ = nullptr;
  std::string inbox_, next_;
  std::string ack_reply_;      // the reply subject of the last message done, not yet acknowledged
  std::uint64_t ack_seq_ = 0;  // its stream sequence
  // What the subscription's callback queues.
  struct Box {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<natsMsg*> q;  // under mu
    bool closed = false;     // under mu: the puller is gone, messages are destroyed
  };
  std::shared_ptr<Box> box_ = std::make_shared<Box>();
  // Under box_->mu: the pull request in flight, what it may still bring, until when.
  bool outstanding_ = false;
  int request_left_ = 0;
  Clock::time_point request_deadline_{};
};

// (Re)creates the durable pull consumer so that it delivers from the stream
// sequence after `delivered` (the state file, not the server's ack floor, says
// what reached the local channel). Retries until it works or we stop.
bool consume_from(MappingRuntime& m, Link& link, const std::atomic<bool>& stop, std::uint64_t& delivered,
                  const std::string& id) {
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
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = durable.c_str();
    cc.AckPolicy = js_AckAll;  // one ack per fetched batch (Puller::done)
    cc.DeliverPolicy = delivered == 0 ? js_DeliverAll : js_DeliverByStartSequence;
    cc.OptStartSeq = delivered == 0 ? 0 : delivered + 1;
    cc.AckWait = 30LL * 1000 * 1000 * 1000;
    cc.MaxAckPending = 65536;
    cc.FilterSubject = m.cfg.subject.c_str();
    jsConsumerInfo* ci = nullptr;
    code = static_cast<jsErrCode>(0);
    const natsStatus s = js_AddConsumer(&ci, link.js(), m.cfg.stream.c_str(), &cc, nullptr, &code);
    if (s == NATS_OK) {
      jsConsumerInfo_Destroy(ci);
      return true;
    }
    m.counters.errors.fetch_add(1, std::memory_order_relaxed);
    link.set_error("jetstream: cannot create durable consumer '" + durable + "' on stream '" + m.cfg.stream +
                   "': " + status_text(s) + "; retrying");
    std::this_thread::sleep_for(std::min(100ms * (attempt + 1), std::chrono::milliseconds(1000)));
  }
  return false;
}

// The stream sequence of a fetched message (0 when it has no metadata).
std::uint64_t stream_seq(natsMsg* msg) {
  const char* reply = natsMsg_GetReply(msg);
  return reply == nullptr ? 0 : stream_seq_of(reply);
}

// One fetched message, owned (destroyed once handled).
struct Item {
  natsMsg* msg = nullptr;
  std::uint64_t sseq = 0;
  Headers h;
  Reject reject = Reject::none;  // why it must not be delivered (counted when it is passed)
  bool acked = false;
  bool done = false;  // delivered ahead of its place in the stream (it filled a gap)
};

// Messages held behind a gap in the sequence of one origin and channel,
// waiting for the missing ones [from, to).
struct Reorder {
  bool active = false;
  std::string origin, channel;
  std::uint64_t from = 0, to = 0;
  std::vector<bool> covered;  // by seq - from: arrived, or skipped on purpose by the sender
  std::uint64_t n_covered = 0;
  std::map<std::uint64_t, std::size_t> late;  // seq -> index in held: the missing ones, arrived
  std::vector<Item> held;                     // in stream order, from the one after the gap
  std::size_t bytes = 0;
  Clock::time_point since;
};

class JsInbound {
 public:
  JsInbound(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) : m_(m), link_(link), stop_(stop) {}
  JsInbound(const JsInbound&) = delete;
  JsInbound& operator=(const JsInbound&) = delete;
  ~JsInbound() {
    drop_reorder();
    for (natsMsg* msg : spent_) natsMsg_Destroy(msg);
  }

  void run();

 private:
  enum class Outcome { handled, stopped };
  Outcome process(Item item);
  Outcome pass_rejected(Item& item);
  void ack(Item& item) {
    if (!item.acked) puller_.done(item.msg, item.sseq);
    item.acked = true;
  }
  Outcome deliver_in_place(Item& item);
  Outcome deliver_late(Item& item);
  Outcome flush(bool filled);
  void hold(Item item);
  bool starts_gap(const Headers& h, std::uint64_t* from, std::uint64_t* to);
  void seed(std::uint64_t sseq);
  void drop_reorder();
  // A record for one message (ends any run).
  void write_state(std::uint64_t delivering, std::uint64_t local_before, std::uint64_t flags) {
    run_next_ = 0;
    m_.in_state.write({position_, delivering, local_before, flags | last_delivered_, 1});
  }
  // Before the in-place delivery of the message at sseq: a record, unless it
  // continues the run the last record covers.
  void cover(std::uint64_t sseq) {
    if (run_next_ != 0 && sseq == run_next_ && run_left_ != 0) return;
    run_left_ =
        m_.cfg.direction == BridgeDirection::both ? 1 : std::max<std::uint64_t>(batch_left_, 1);  // (a held one: 0)
    m_.in_state.write({position_, sseq, local_next(m_), last_delivered_, run_left_});
    run_next_ = sseq;
  }

  MappingRuntime& m_;
  Link& link_;
  const std::atomic<bool>& stop_;
  Puller puller_;
  std::uint64_t position_ = 0;        // every stream message up to here reached the local channel
  std::string position_id_;           // identity() of the message at position_, once one was seen
  std::uint64_t last_delivered_ = 0;  // stream sequence of the message delivered last (0: none)
  Reorder reorder_;
  // The run the last record covers: the stream sequence that continues it
  // (0: none) and how many more it may take. batch_left_: the fetched
  // messages not yet processed, this one included (a run's bound).
  std::uint64_t run_next_ = 0, run_left_ = 0, batch_left_ = 0;
  std::vector<natsMsg*> spent_;  // messages done with in this batch, destroyed after it
};

// Restores the expected origin sequence of the message at stream sequence
// sseq (after a restart the per-origin accounting starts empty).
void JsInbound::seed(std::uint64_t sseq) {
  natsMsg* msg = nullptr;
  jsErrCode code = static_cast<jsErrCode>(0);
  if (js_GetMsg(&msg, link_.js(), m_.cfg.stream.c_str(), sseq, nullptr, &code) != NATS_OK) return;
  const Headers h = read_headers(msg);
  if (h.has_seq && h.origin != m_.host_id) {
    std::lock_guard lock(m_.local_mu);
    bool fresh = false;
    Origins::Entry& e = m_.origins.get(h.origin, h.channel, &fresh);
    e.expected = fresh ? h.seq + 1 : std::max(e.expected, h.seq + 1);
    e.newest_ns = std::max(e.newest_ns, h.ns);
  }
  natsMsg_Destroy(msg);
}

void JsInbound::drop_reorder() {
  for (Item& i : reorder_.held) natsMsg_Destroy(i.msg);
  reorder_ = Reorder{};
}

// True when h opens a gap in its origin's sequence that is not explained by
// the sender's skips and small enough to be a batch sent again out of order.
bool JsInbound::starts_gap(const Headers& h, std::uint64_t* from, std::uint64_t* to) {
  if (!h.has_seq || h.origin == m_.host_id) return false;
  std::lock_guard lock(m_.local_mu);
  const Origins::Entry* e = m_.origins.find(h.origin, h.channel);
  if (e == nullptr || h.seq < e->expected) return false;
  const std::uint64_t gap = h.seq - e->expected;
  // (Beyond seq_window: a new epoch, judge() says, nothing to wait for.)
  if (gap <= h.skip || gap - h.skip > std::min(kMaxHoldGap, m_.cfg.seq_window) || gap > m_.cfg.seq_window) return false;
  *from = e->expected;
  *to = h.seq - h.skip;
  return true;
}

void JsInbound::hold(Item item) {
  Reorder& r = reorder_;
  if (!item.done && item.h.has_seq && item.h.origin == r.origin && item.h.channel == r.channel) {
    // It covers itself and what its sender skipped just before it.
    const std::uint64_t lo = std::max(r.from, item.h.seq - std::min(item.h.skip, item.h.seq));
    const std::uint64_t hi = std::min(r.to, item.h.seq + 1);
    for (std::uint64_t s = lo; s < hi; ++s)
      if (!r.covered[s - r.from]) r.covered[s - r.from] = true, ++r.n_covered;
    if (item.h.seq >= r.from && item.h.seq < r.to) r.late.try_emplace(item.h.seq, r.held.size());
  }
  r.bytes += static_cast<std::size_t>(natsMsg_GetDataLength(item.msg));
  r.held.push_back(item);
}

// (Acks once: a held message is acked when it is held. Where the consumer
// starts after a restart or reconnect comes from the state file, not acks.)

// A rejected message at its place in the stream: counted, acknowledged (never
// delivered again), and the position moved past it.
JsInbound::Outcome JsInbound::pass_rejected(Item& item) {
  {
    std::lock_guard lock(m_.local_mu);
    count_reject(m_, item.reject, "stream sequence " + std::to_string(item.sseq));
  }
  ack(item);
  if (item.sseq > position_) {
    position_ = item.sseq;
    identity(read_headers(item.msg), position_id_);
    write_state(item.sseq, 0, kNoneFlag);
  }
  spent_.push_back(item.msg);
  return Outcome::handled;
}

JsInbound::Outcome JsInbound::process(Item item) {
  if (reorder_.active) {
    ack(item);
    hold(item);
    if (reorder_.n_covered == reorder_.to - reorder_.from) return flush(true);
    return Outcome::handled;
  }
  if (item.done || (item.sseq != 0 && item.sseq <= position_)) {
    if (!item.done) m_.counters.duplicates.fetch_add(1, std::memory_order_relaxed);
    if (item.sseq > position_) {  // a late one, delivered before: its place passed
      position_ = item.sseq;
      if (item.h.has_seq) identity(item.h, position_id_);
    }
    ack(item);
    spent_.push_back(item.msg);
    return Outcome::handled;
  }
  if (item.reject != Reject::none) return pass_rejected(item);
  std::uint64_t from = 0, to = 0;
  if (starts_gap(item.h, &from, &to)) {
    reorder_.active = true;
    reorder_.origin = item.h.origin;
    reorder_.channel = item.h.channel;
    reorder_.from = from;
    reorder_.to = to;
    reorder_.covered.assign(to - from, false);
    reorder_.since = Clock::now();
    ack(item);
    hold(item);
    return Outcome::handled;
  }
  const Outcome o = deliver_in_place(item);
  if (o == Outcome::handled) ack(item);  // not delivered and not acked when stopping
  spent_.push_back(item.msg);
  return o;
}

// A message at its place in the stream: accounted, delivered, the position
// moved past it (the state written first: a crash in between is told apart by
// the local channel's next sequence).
JsInbound::Outcome JsInbound::deliver_in_place(Item& item) {
  std::lock_guard lock(m_.local_mu);
  const Verdict v = judge(m_, item.h);
  if (v == Verdict::loop) m_.counters.loops.fetch_add(1, std::memory_order_relaxed);
  if (v == Verdict::duplicate) m_.counters.duplicates.fetch_add(1, std::memory_order_relaxed);
  if (v == Verdict::deliver) {
    cover(item.sseq);
    if (deliver(m_, item.h, natsMsg_GetData(item.msg), static_cast<std::size_t>(natsMsg_GetDataLength(item.msg)))) {
      m_.counters.received.fetch_add(1, std::memory_order_relaxed);
      last_delivered_ = item.sseq;
      run_next_ = item.sseq + 1;
      --run_left_;
    } else {
      run_next_ = 0;  // it did not land: the next one needs a record of its own
      if (stop_.load(std::memory_order_relaxed)) return Outcome::stopped;  // delivered again after a restart
    }
  }
  if (item.sseq > position_) {
    if (v != Verdict::deliver) {
      position_ = item.sseq;
      write_state(item.sseq, 0, kNoneFlag);
    }
    if (item.h.has_seq) identity(item.h, position_id_);
    position_ = item.sseq;
  }
  return Outcome::handled;
}

// A message that filled a gap, delivered before the held ones it belongs
// before; the position stays (the held ones are not delivered yet).
JsInbound::Outcome JsInbound::deliver_late(Item& item) {
  std::lock_guard lock(m_.local_mu);
  const Verdict v = judge(m_, item.h);
  if (v == Verdict::duplicate) m_.counters.duplicates.fetch_add(1, std::memory_order_relaxed);
  if (v != Verdict::deliver) return Outcome::handled;
  write_state(item.sseq, local_next(m_), kLateFlag);
  if (deliver(m_, item.h, natsMsg_GetData(item.msg), static_cast<std::size_t>(natsMsg_GetDataLength(item.msg)))) {
    m_.counters.received.fetch_add(1, std::memory_order_relaxed);
    last_delivered_ = item.sseq;
  } else if (stop_.load(std::memory_order_relaxed)) {
    return Outcome::stopped;
  }
  return Outcome::handled;
}

// Ends a reorder: the missing messages that arrived first (in sequence
// order), then the held ones in stream order, each through process() again
// (a further gap among them starts a new reorder). When the gap was not
// filled, the first held one (after the gap) is delivered at once and
// judge() counts what is still missing as lost.
JsInbound::Outcome JsInbound::flush(bool filled) {
  Reorder r = std::move(reorder_);
  reorder_ = Reorder{};
  if (!filled) {
    m_.counters.errors.fetch_add(1, std::memory_order_relaxed);
    link_.set_error("jetstream: " + std::to_string(r.to - r.from - r.n_covered) + " messages of '" + r.origin + "/" +
                    r.channel + "' did not arrive in stream '" + m_.cfg.stream + "' within the reorder wait (" +
                    std::to_string(m_.cfg.reorder_wait.count()) + " ms, or 64 MiB held): counted lost");
  }
  Outcome o = Outcome::handled;
  for (const auto& [seq, index] : r.late) {
    Item& item = r.held[index];
    if ((o = deliver_late(item)) == Outcome::stopped) break;
    item.done = true;
  }
  for (std::size_t i = 0; i < r.held.size(); ++i) {
    Item& item = r.held[i];
    if (o == Outcome::stopped) {
      spent_.push_back(item.msg);
    } else if (i == 0 && !filled) {  // the one after the gap: no more waiting, judge() counts it
      o = deliver_in_place(item);
      spent_.push_back(item.msg);
    } else {
      o = process(item);
    }
  }
  return o;
}

void JsInbound::run() {
  std::uint64_t seed_at = 0;
  if (auto r = m_.in_state.read()) {
    const std::uint64_t now = local_next(m_), run = std::max<std::uint64_t>((*r)[4], 1);
    const std::uint64_t landed = now > (*r)[2] ? std::min(now - (*r)[2], run) : 0;  // of the run
    const std::uint64_t flags = (*r)[3] & ~kSeedMask, before = (*r)[3] & kSeedMask;
    if (flags == kNoneFlag || ((*r)[3] == 0 && (*r)[2] == 0)) {  // (the second: an older bridge's record)
      position_ = (*r)[0];
      seed_at = before;
    } else if (flags == kLateFlag) {
      position_ = (*r)[0];
      seed_at = landed != 0 ? (*r)[1] : before;
    } else {
      position_ = landed != 0 ? (*r)[1] + landed - 1 : (*r)[0];
      seed_at = landed != 0 ? position_ : before;
    }
  }
  {
    std::lock_guard lock(m_.local_mu);
    m_.log = &link_;
  }
  for (std::string err; !(err = puller_.open(link_, m_.cfg.stream, m_.cfg.durable)).empty();) {
    m_.counters.errors.fetch_add(1, std::memory_order_relaxed);
    link_.set_error(err + "; retrying");
    for (int i = 0; i < 50; ++i) {
      if (stop_.load(std::memory_order_relaxed)) return;
      std::this_thread::sleep_for(10ms);
    }
  }
  std::uint64_t seen_reconnects = link_.reconnects();
  if (!consume_from(m_, link_, stop_, position_, position_id_)) return;
  if (seed_at != 0) seed(seed_at);  // after a restart: where the last delivered origin's sequence was
  last_delivered_ = seed_at;
  std::vector<natsMsg*> batch;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (link_.reconnects() != seen_reconnects) {
      // A fetch answer may have been lost with the connection: start again
      // right after what was delivered, so that the order stays whole.
      seen_reconnects = link_.reconnects();
      drop_reorder();     // fetched again from the position
      run_next_ = 0;      // (the next delivery writes a record of its own)
      puller_.discard();  // (what the old consumer still sends is passed as already delivered)
      if (!consume_from(m_, link_, stop_, position_, position_id_)) return;
      if (position_ == 0) last_delivered_ = 0;  // the stream went back: read again from its start
    }
    batch.clear();
    puller_.fetch(m_, batch, 256, 200ms);
    Outcome o = Outcome::handled;
    batch_left_ = batch.size();
    for (natsMsg* msg : batch) {
      if (o == Outcome::stopped) {
        spent_.push_back(msg);  // not acked: delivered again after a restart
        continue;
      }
      Item item{msg, stream_seq(msg), Headers{}};
      item.reject = read_message(m_, msg, false, &item.h);
      if (item.reject != Reject::none) item.h = Headers{};
      o = process(item);
      --batch_left_;
    }
    puller_.send_acks();
    // Destroyed together: the client frees messages in a thread of its own,
    // woken by the first of a batch rather than by each.
    for (natsMsg* msg : spent_) natsMsg_Destroy(msg);
    spent_.clear();
    if (o == Outcome::stopped) break;
    const Reorder& r = reorder_;
    if (r.active &&
        (Clock::now() - r.since > m_.cfg.reorder_wait || r.held.size() > kHoldMsgs || r.bytes > kHoldBytes) &&
        flush(false) == Outcome::stopped)
      break;
  }
}

}  // namespace

void run_inbound_jetstream(MappingRuntime& m, Link& link, const std::atomic<bool>& stop) {
  JsInbound(m, link, stop).run();
}

}  // namespace zipc::bridge_detail
