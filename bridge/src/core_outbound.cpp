#include "core_outbound.hpp"

#include <cstring>
#include <thread>

#include "nats_publish.hpp"

namespace zipc::bridge_detail {

using namespace std::chrono_literals;

namespace {
constexpr std::size_t kQueueBatch = 256;   // loans read at once
constexpr std::uint64_t kSaveEvery = 256;  // messages between position writes while busy
}  // namespace

CoreOutbound::CoreOutbound(MappingRuntime& m, Link& link, const std::atomic<bool>& stop, bool caller)
    : m_(m), link_(link), stop_(stop), caller_(caller) {
  if (m.cfg.kind == BridgeKind::queue) {
    loans_.resize(kQueueBatch);
    next_ = m.out_next;
  }
}

std::size_t CoreOutbound::pump(std::chrono::nanoseconds first_wait) {
  return m_.cfg.kind == BridgeKind::queue ? pump_queue(first_wait) : pump_topic(first_wait);
}

Frame CoreOutbound::frame_at(std::size_t at) const noexcept {
  Frame f;
  std::memcpy(&f, batch_.data() + at, sizeof(Frame));
  return f;
}

// The batch goes out in NATS messages of at most the server's payload limit
// (one, unless batch_bytes is near it): each the frames that fit, at least
// one; a lone frame goes out plain.
bool CoreOutbound::send_batch() {
  std::size_t limit = payload_limit(m_, link_);
  while (count_ > 0) {
    const Frame first = frame_at(0);
    std::size_t bytes = 0;
    std::uint64_t frames = 0, last_seq = first.seq, skips = 0;
    while (frames < count_ && bytes < batch_.size()) {
      const Frame f = frame_at(bytes);
      const std::size_t framed = sizeof(Frame) + (std::size_t{f.size} + 7) / 8 * 8;
      if (frames > 0 && bytes + framed > limit) break;
      bytes += framed, ++frames, last_seq = f.seq, skips += f.skip;
    }
    const Sent r = frames == 1 ? publish_core(m_, link_, out_, stop_, first.seq, first.origin_ns,
                                              batch_.data() + sizeof(Frame), first.size, first.skip, 0, caller_)
                               : publish_core(m_, link_, out_, stop_, first.seq, first.origin_ns, batch_.data(), bytes,
                                              first.skip, frames, caller_);
    if (r == Sent::held) return false;
    if (r == Sent::too_large) {  // over the server's limit after all: the rest of the batch frame by frame
      limit = 0;
      continue;
    }
    if (r == Sent::sent) m_.counters.forwarded.fetch_add(frames, std::memory_order_relaxed);
    m_.counters.out_position.store(last_seq + 1, std::memory_order_relaxed);
    since_save_ += frames;
    if (since_save_ >= kSaveEvery) save_position(m_, last_seq + 1), since_save_ = 0;
    count_ -= frames;
    batch_.erase(0, bytes);
    // Dropped: the echoes its frames announced as skipped are announced by
    // the next frame, so that the receiver counts only the dropped ones lost.
    if (r == Sent::dropped && skips > 0) carry_skips(skips);
  }
  return true;
}

void CoreOutbound::carry_skips(std::uint64_t skips) {
  if (count_ == 0) {
    skip_ += skips;  // the next frame read takes them
    return;
  }
  Frame f = frame_at(0);
  f.skip = static_cast<std::uint32_t>(f.skip + skips);
  std::memcpy(batch_.data(), &f, sizeof(Frame));
}

std::size_t CoreOutbound::pump_topic(std::chrono::nanoseconds first_wait) {
  if (!send_batch()) return 0;  // NATS still refuses what is held: read no more
  std::size_t read = 0;
  for (;;) {
    TopicReadLoan v =
        read == 0 && first_wait.count() > 0 ? m_.subscriber.acquire(first_wait) : m_.subscriber.try_acquire();
    if (!static_cast<bool>(v)) {
      if (v.status() != Status::timeout && v.status() != Status::empty) {
        m_.counters.errors.fetch_add(1, std::memory_order_relaxed);
        if (!caller_) std::this_thread::sleep_for(10ms);
      }
      // Nothing more waiting: out with it, and the position saved while idle.
      if (send_batch() && since_save_ > 0 && count_ == 0) {
        save_position(m_, m_.subscriber.next_sequence());
        since_save_ = 0;
      }
      return read;
    }
    ++read;
    if (m_.echoes.take(v.sequence())) {  // it came from NATS: never sent back out
      ++skip_;
      continue;
    }
    // Frame it (also the first: if a second one follows, the batch is ready).
    Frame f{static_cast<std::uint32_t>(v.data().size()), static_cast<std::uint32_t>(skip_), v.sequence(),
            v.publish_ns()};
    skip_ = 0;
    const std::size_t at = batch_.size();
    batch_.resize(at + sizeof(Frame) + (v.data().size() + 7) / 8 * 8);
    std::memcpy(batch_.data() + at, &f, sizeof(Frame));
    std::memcpy(batch_.data() + at + sizeof(Frame), v.data().data(), v.data().size());
    ++count_;
    if (!m_.cfg.batch || batch_.size() >= m_.cfg.batch_bytes || count_ >= kMaxFrames) {
      if (!send_batch()) return read;  // held: the next pump sends it first
    }
    if (stop_.load(std::memory_order_relaxed)) return read;
  }
}

bool CoreOutbound::send_queue_loans() {
  const std::uint64_t ns = realtime_ns();
  for (; loans_sent_ < loans_read_; ++loans_sent_) {
    QueueReadLoan& l = loans_[loans_sent_];
    const Sent r =
        publish_core(m_, link_, out_, stop_, next_ + loans_sent_, ns, l.data().data(), l.size(), 0, 0, caller_);
    if (r == Sent::held) return false;
    if (r == Sent::sent) m_.counters.forwarded.fetch_add(1, std::memory_order_relaxed);
  }
  consume_queue_loans();
  return true;
}

void CoreOutbound::consume_queue_loans() {
  next_ += loans_read_;
  save_position(m_, next_);  // before the loans go back (a crash in between: at least once)
  for (std::size_t i = 0; i < loans_read_; ++i) loans_[i].release();
  loans_read_ = loans_sent_ = 0;
}

std::size_t CoreOutbound::pump_queue(std::chrono::nanoseconds first_wait) {
  if (!send_queue_loans()) return 0;
  loans_read_ = m_.queue_out.acquire_batch(loans_, first_wait);
  const std::size_t read = loans_read_;
  send_queue_loans();
  return read;
}

void CoreOutbound::finish() {
  if (m_.cfg.kind == BridgeKind::queue) {
    if (!send_queue_loans()) {  // stopping while NATS does not take them: given up, and counted
      m_.counters.lost.fetch_add(loans_read_ - loans_sent_, std::memory_order_relaxed);
      consume_queue_loans();
    }
    return;
  }
  if (!send_batch()) {
    // Not taken: the saved position stays before it, so a restart sends it again.
    save_position(m_, frame_at(0).seq);
    return;
  }
  save_position(m_, m_.subscriber.next_sequence());
}

}  // namespace zipc::bridge_detail
