/// \file
/// zipc/introspect.hpp - what a channel looks like right now, read from its
/// segment without joining it (what `zipc ls`, `zipc stat` and `zipc top` show).
///
/// \code
///   zipc::ChannelReport r = zipc::inspect_channel("jobs");
///   // r.segment.kind == SegmentKind::queue, r.backlog: messages waiting,
///   // r.messages: sent so far (exact, from per-participant counters),
///   // r.participants: pid, role, alive, counters of each handle
///   for (const zipc::ChannelReport& c : zipc::inspect_channels()) (void)c.backlog;
/// \endcode
///
/// The segment is mapped read-only and never written: inspecting a channel
/// does not register as a participant and cannot disturb it. Every field read
/// from shared memory is validated before it is used; a segment that fails
/// validation yields readable == false and a problem, never a crash. Values
/// are read without locks while the channel runs: each is exact, the set is a
/// snapshot taken over a few microseconds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "zipc/process.hpp"
#include "zipc/segment.hpp"

namespace zipc {

/// One named number of a report (what `zipc inspect` prints as key = value).
struct ReportField {
  std::string key;          ///< the number's name
  std::uint64_t value = 0;  ///< its value
};
/// Named numbers, in the order the kind reports them.
using ReportFields = std::vector<ReportField>;

/// One participant of a channel (a record in its segment), as inspect_channel reads it.
struct ParticipantReport {
  /// "publisher", "subscriber", "producer", "consumer", "producer+consumer",
  /// "none" (a queue handle without a role), "server", "client", "listener"
  /// (an event channel's).
  std::string role;
  std::string mode;        ///< topic subscribers: "reliable" / "lossy"; else ""
  ProcessId process;       ///< the process that holds the record
  bool alive = false;      ///< that process still runs (the liveness check recovery uses)
  std::uint32_t slot = 0;  ///< index of its record in the segment
  /// topic publisher: messages, bytes; subscriber: position, sequence, lag,
  /// lag_bytes, lost; queue handle: sent, sent_bytes, received, full_waits,
  /// empty_waits; rpc client: connects, calls, errors, request_bytes, in_flight;
  /// event listener: pending (ids notified, not yet taken), received, sleeping
  /// (registered sleepers: a blocked wait() or a WaitSet).
  ReportFields fields;
};

/// What inspect_channel reads of one segment, without attaching to it: header facts, geometry, positions, counters and
/// participants (what `zipc inspect` and `zipc top` print).
struct ChannelReport {
  SegmentInfo segment;          ///< header facts (kind, creator, size, ...)
  std::uint32_t mode = 0;       ///< permission bits of the file
  std::uint32_t owner_uid = 0;  ///< owner of the file
  bool readable = false;        ///< the kind's state was read and validated
  std::string problem;          ///< why not
  std::string state;            ///< "open" or "closed" (queue, rpc); "" otherwise
  ReportFields geometry;        ///< the kind's sizes and modes
  ReportFields positions;       ///< ring positions / sequences
  ReportFields counters;        ///< cumulative counters of the channel
  // Summaries every kind fills in when it can (zipc top):
  std::uint64_t messages = 0;     ///< published / sent / rpc calls so far
  bool messages_known = false;    ///< messages is filled in
  std::uint64_t bytes = 0;        ///< payload bytes published / sent / of rpc requests so far
  bool bytes_known = false;       ///< bytes is filled in
  std::uint64_t received = 0;     ///< queue: taken by consumers
  std::uint64_t backlog = 0;      ///< queue: waiting; topic: unread by the slowest reliable subscriber
  std::uint64_t max_lag = 0;      ///< topic: largest lag of any subscriber (messages)
  std::uint64_t lost = 0;         ///< topic: lost by lossy subscribers (live ones)
  std::uint64_t redelivered = 0;  ///< queue: messages taken back from consumers that died holding them
  std::uint64_t abandoned = 0;  ///< queue: blocks reserved and never published (a producer died); topic: holes skipped
  std::uint64_t errors = 0;     ///< rpc: calls that failed (error answer, dead or closed server)
  std::uint64_t in_flight = 0;  ///< rpc: calls sent and not yet taken back by their client
  std::vector<ParticipantReport> participants;  ///< every participant (see participants_known)
  /// The kind keeps a record per participant (topic, queue, rpc, topic reader
  /// seat, event channel) and they were read: participants holds every
  /// publisher, subscriber, producer/consumer handle, server, client and
  /// listener, each judged alive by the liveness token recovery uses (pid and
  /// start time; PID-namespace safe). A Topic handle that neither publishes nor
  /// subscribes has no record. False for heap, user and bench segments.
  bool participants_known = false;

  /// Participants judged alive.
  [[nodiscard]] std::size_t alive_count() const noexcept;
  /// Participants judged dead.
  [[nodiscard]] std::size_t dead_count() const noexcept;
};

/// Reads one channel. Throws zipc::Error: not_found, permission_denied,
/// invalid_name. A segment that is not valid is still reported (readable false).
[[nodiscard]] ChannelReport inspect_channel(std::string_view name, const SegmentOptions& options = {});
/// Every zipc segment in /dev/shm; one that vanished meanwhile is left out,
/// one that cannot be read is reported with its problem.
[[nodiscard]] std::vector<ChannelReport> inspect_channels();
/// The same for the segments whose listed name (with its name space, "ns:x")
/// `only` accepts; the others are not opened.
[[nodiscard]] std::vector<ChannelReport> inspect_channels(const std::function<bool(std::string_view name)>& only);

/// A field by key, or nullptr.
[[nodiscard]] const std::uint64_t* find_field(const ReportFields& fields, std::string_view key) noexcept;

}  // namespace zipc
