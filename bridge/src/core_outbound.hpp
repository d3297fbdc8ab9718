// Core outbound: a local topic (reliable subscriber) or queue (consumer) ->
// core NATS, one step at a time, so that either the mapping's own thread
// (BridgeThreads::own) or the application's thread in Bridge::poll()
// (BridgeThreads::caller) can drive it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "internal.hpp"
#include "link.hpp"
#include "nats_publish.hpp"

namespace zipc::bridge_detail {

class CoreOutbound {
 public:
  // `caller`: driven by Bridge::poll(): never waits for NATS (a batch the
  // client refuses is held for the next pump).
  CoreOutbound(MappingRuntime& m, Link& link, const std::atomic<bool>& stop, bool caller);
  CoreOutbound(const CoreOutbound&) = delete;
  CoreOutbound& operator=(const CoreOutbound&) = delete;

  // Sends what is held, then reads what the local channel has (waiting up to
  // first_wait for the first message) and sends it, batched. Returns the
  // local messages read.
  std::size_t pump(std::chrono::nanoseconds first_wait);
  // Stopping: a last try to send what is held (what NATS still refuses is
  // counted lost), and the position saved.
  void finish();

  [[nodiscard]] MappingRuntime& mapping() const noexcept { return m_; }

 private:
  std::size_t pump_topic(std::chrono::nanoseconds first_wait);
  std::size_t pump_queue(std::chrono::nanoseconds first_wait);
  bool send_batch();  // false: held (batch_ keeps the frames not sent)
  [[nodiscard]] Frame frame_at(std::size_t at) const noexcept;
  void carry_skips(std::uint64_t skips);  // onto the next frame (a dropped part's echoes)
  bool send_queue_loans();                // false: some held
  void consume_queue_loans();             // the loans read are done with: position saved, then released

  MappingRuntime& m_;
  Link& link_;
  const std::atomic<bool>& stop_;
  const bool caller_;
  OutMsg out_;  // the natsMsg each publish refills
  // Topic: the batch being built, count_ frames.
  std::string batch_;
  std::uint64_t count_ = 0;
  std::uint64_t skip_ = 0;  // echoes skipped since the last frame
  std::uint64_t since_save_ = 0;
  // Queue: loans read, the first not yet sent, and the sequence number of loans_[0].
  std::vector<QueueReadLoan> loans_;
  std::size_t loans_read_ = 0, loans_sent_ = 0;
  std::uint64_t next_ = 0;
};

}  // namespace zipc::bridge_detail
