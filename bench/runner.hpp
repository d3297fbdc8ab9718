// Runs one workload over one transport in real, forked processes.
//
// The parent creates the channels, forks one process per role, pins each to
// its CPU, releases them together once every end is open, and waits (with a
// hard timeout). Workers write every payload byte and check every byte they
// receive; a wrong byte, a message out of order or a broken channel makes the
// run an error. Latency samples and counters come back through anonymous
// shared memory made before the fork.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport.hpp"

namespace zipc::bench {

enum class Shape {
  round_trip,  // process 0 sends a request on channel 0, process 1 answers on channel 1
  stream,      // process 0 sends on channel 0; processes 1..R receive (broadcast or one)
  many,        // processes 0..S-1 send, S..S+R-1 receive, each message once
};

struct RunConfig {
  Shape shape = Shape::round_trip;
  std::size_t size = 64;   // payload bytes, >= kMinMessage
  int senders = 1;         // many: senders
  int receivers = 1;       // stream / many: receivers
  bool broadcast = false;  // stream: every receiver gets every message
  Wait wait = Wait::block;
  std::vector<int> cpus;            // CPU per process (index = process); empty: unpinned
  std::uint64_t iterations = 1000;  // round trips, or messages per sender
  std::uint64_t warmup = 100;
  double budget_s = 0.5;    // stop measuring after this long (the row says how many were done)
  double rate = 0;          // stream: offered msgs/s (latency from the intended send time); 0 = flat out
  double timeout_s = 20;    // hard limit: the workers are killed and the run is an error
  std::string tag = "run";  // part of the channel names
};

struct RunResult {
  bool ok = false;
  std::string error;
  std::vector<std::uint64_t> latencies_ns;  // round trips, or one-way (send time to receipt)
  std::uint64_t sent = 0;       // messages sent by all senders in the measured phase (round trips for round_trip)
  std::uint64_t delivered = 0;  // messages received by all receivers in the measured phase
  std::uint64_t lost = 0;       // sent but never seen (sum over receivers for broadcast)
  double seconds = 0;           // measured phase, wall time
};

int process_count(const RunConfig& c);
RunResult run_workload(Transport& t, const RunConfig& c);

}  // namespace zipc::bench
