// Internal pieces of zipc::Bridge shared by its files.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "auth.hpp"
#include "origins.hpp"
#include "state_file.hpp"
#include "wire.hpp"
#include "zipc/bridge.hpp"
#include "zipc/queue.hpp"
#include "zipc/topic.hpp"

namespace zipc::bridge_detail {

// BridgeMapping::batch_bytes's range (the top: NATS's default max_payload).
inline constexpr std::size_t kMinBatchBytes = 1024;
inline constexpr std::size_t kMaxBatchBytes = 1 << 20;

// Counters of one mapping; written by its worker, read by stats() (relaxed:
// each is an independent counter, no other data is published through them).
struct Counters {
  std::atomic<std::uint64_t> forwarded{0}, received{0}, lost{0}, duplicates{0}, loops{0}, errors{0};
  // Inbound: messages not delivered, by wire.hpp's Reject; sequence jumps
  // taken as a new epoch of their origin; origins evicted from the table.
  std::atomic<std::uint64_t> rejected_status{0}, rejected_header{0}, rejected_frame{0}, rejected_size{0},
      rejected_auth{0}, epochs{0}, evicted{0};
  std::atomic<std::uint64_t> out_position{0};  // outbound topic: next local sequence to be sent
};

// Local sequences of records the inbound side put into a topic, so that the
// outbound side of a `both` mapping does not send them back out.
class EchoSet {
 public:
  // The inbound side holds this across publishing and add_held(): the
  // outbound side's take() then cannot look for a record before it is listed.
  [[nodiscard]] std::unique_lock<std::mutex> hold() { return std::unique_lock(mu_); }
  void add_held(std::uint64_t seq) {
    seqs_.push_back(seq);
    if (seqs_.size() > 1u << 20) seqs_.pop_front();  // bounded: older ones were read long ago
  }
  // True (and forgotten) when seq was put there by the inbound side.
  bool take(std::uint64_t seq) {
    std::lock_guard lock(mu_);
    while (!seqs_.empty() && seqs_.front() < seq) seqs_.pop_front();
    if (!seqs_.empty() && seqs_.front() == seq) {
      seqs_.pop_front();
      return true;
    }
    return false;
  }

 private:
  std::mutex mu_;
  std::deque<std::uint64_t> seqs_;
};

class Link;

// One mapping at run time.
struct MappingRuntime {
  BridgeMapping cfg;
  std::string host_id;
  std::string state_dir;
  Counters counters;
  EchoSet echoes;
  Topic topic;  // when kind == topic
  std::thread out_thread, in_thread;
  natsSubscription* core_sub = nullptr;  // inbound core
  std::mutex local_mu;                   // serializes local publishing (callback threads)
  Publisher publisher;                   // inbound into a topic
  Queue queue_in;                        // inbound into a queue (producer)
  Queue queue_out;                       // outbound from a queue (consumer)
  Subscriber subscriber;                 // outbound from a topic (reliable)
  StateFile out_state;                   // outbound: {next sequence to send}
  StateFile in_state;                    // inbound jetstream: {prev delivered, delivering, local next before}
  std::uint64_t start_position = 0;      // outbound topic: where the subscriber started
  std::uint64_t out_next = 0;            // queue outbound: first sequence number to use
  std::uint64_t out_skip = 0;            // queue outbound, JetStream: numbers skipped just before out_next
  // Inbound: next expected Zipc-Seq per origin and channel (under local_mu).
  Origins origins;
  // Inbound: where rejections and epochs are reported (rate-limited), and
  // when last (under local_mu).
  Link* log = nullptr;
  std::uint64_t log_quiet_until_ns = 0, log_suppressed = 0;
  // BridgeMapping::auth_key_file: one per direction (each used by one thread).
  std::unique_ptr<Hmac> sign_out, check_in;
  std::string scratch;  // envelope building
  // Driven by Bridge::poll() (BridgeThreads::caller): an inbound message
  // that found the local channel full waits here (under local_mu), from
  // frame held_frame on (that one already judged), never the caller.
  bool caller = false;
  natsMsg* held_msg = nullptr;
  std::uint64_t held_frame = 0;
  std::atomic<bool>* stop = nullptr;  // the bridge's stop flag (callbacks read it)
};

// Opens (or creates) the local channel ends a mapping needs. Throws zipc::Error.
void open_local(MappingRuntime& m);

// Builds the envelope prefix for a message into out (resized); returns header bytes.
std::size_t build_envelope(std::string& out, std::string_view origin, std::string_view channel, std::uint64_t seq,
                           std::uint64_t origin_ns);

// Workers. They run until stop is set; reconnects are handled by the client.
void run_outbound(MappingRuntime& m, Link& link, const std::atomic<bool>& stop);
void run_outbound_jetstream(MappingRuntime& m, Link& link, const std::atomic<bool>& stop);
void run_inbound_jetstream(MappingRuntime& m, Link& link, const std::atomic<bool>& stop);
// Core inbound is a subscription: asynchronous (a callback in the client's
// delivery thread) or, on a connection read by a ReadLoop, synchronous
// (drained by the loop). Returns the error text or "".
std::string start_inbound_core(MappingRuntime& m, Link& link, bool synchronous);

std::uint64_t realtime_ns() noexcept;
std::uint64_t monotonic_ns() noexcept;

// Counts a message not delivered for reason r and reports it, at most once a
// second per mapping (the others summed into the next report). Caller holds local_mu.
void count_reject(MappingRuntime& m, Reject r, std::string_view detail);
// Reports an inbound event (an epoch) the same rate-limited way. Caller holds local_mu.
void report(MappingRuntime& m, const std::string& text);
std::string status_text(natsStatus s);

}  // namespace zipc::bridge_detail
