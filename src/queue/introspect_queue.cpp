// Introspection of queue and rpc segments (read-only; see introspect_map.hpp).
#include <algorithm>
#include <cstring>

#include "core/introspect_map.hpp"
#include "layout/queue_layout.hpp"
#include "layout/queue_oversize.hpp"
#include "layout/rpc_layout.hpp"

namespace zipc::detail {

void inspect_queue(const ReadOnlyView& v, ChannelReport& report) {
  using namespace layout;
  if (!v.fits(0, sizeof(QueueControl))) {
    report.problem = "payload too small for a queue's control block";
    return;
  }
  const auto* ctl = v.at<QueueControl>(0);
  const auto& params = report.segment.params;
  const std::uint64_t cap = params[kParamCapacity];
  const std::uint64_t block = params[kParamBlockSize];
  const std::uint64_t parts = params[kParamMaxParticipants];
  const bool pow2 = cap >= 2 && cap <= (1u << 24) && (cap & (cap - 1)) == 0;
  if (ctl->magic != kQueueMagic || !pow2 || block < 8 || block > (16u << 20) || parts < 2 || parts > 65535 ||
      ctl->capacity != cap || ctl->block_size != block || ctl->max_participants != parts ||
      ctl->stride != queue_stride(block) || ctl->cells_offset != queue_cells_offset(parts) ||
      cap > (v.payload_size - std::min(v.payload_size, ctl->cells_offset)) / queue_stride(block)) {
    report.problem = "queue geometry does not validate";
    return;
  }
  const std::uint64_t modes = params[kParamModes];
  add(report.geometry, "block_size", block);
  add(report.geometry, "block_count", cap);
  add(report.geometry, "multi_producer", (modes & kModeMultiProducer) ? 1 : 0);
  add(report.geometry, "multi_consumer", (modes & kModeMultiConsumer) ? 1 : 0);
  add(report.geometry, "max_participants", parts);
  add(report.geometry, "recovery_ns", params[kParamRecoveryNs]);
  if (params[kParamOversize] != 0) add(report.geometry, "oversize_bytes", params[kParamOversize]);
  report.state = peek(ctl->closed) != 0 ? "closed" : "open";

  const std::uint64_t head = peek(ctl->head);
  const std::uint64_t tail = peek(ctl->tail);
  add(report.positions, "head", head);
  add(report.positions, "tail", tail);
  report.backlog = tail >= head ? std::min(tail - head, cap) : 0;

  std::uint64_t sent = peek(ctl->retired_sent), received = peek(ctl->retired_received);
  std::uint64_t full = peek(ctl->retired_full_waits), empty = peek(ctl->retired_empty_waits);
  std::uint64_t sent_bytes = peek(ctl->retired_sent_bytes);
  const auto* recs = v.at<ParticipantRecord>(sizeof(QueueControl));
  for (std::uint64_t i = 0; i < parts; ++i) {
    const ParticipantRecord& r = recs[i];
    const std::uint64_t pid = peek(r.pid);
    if (pid == 0) continue;
    ParticipantReport p;
    const std::uint32_t role = peek(r.role) & 3u;
    static const char* const names[] = {"none", "producer", "consumer", "producer+consumer"};
    p.role = names[role];
    p.process = unpack(pid);
    p.alive = is_alive_packed(pid);
    p.slot = static_cast<std::uint32_t>(i);
    const std::uint64_t s = peek(r.sent), rc = peek(r.received), fw = peek(r.full_waits), ew = peek(r.empty_waits);
    const std::uint64_t sb = peek(r.sent_bytes);
    add(p.fields, "sent", s);
    add(p.fields, "sent_bytes", sb);
    add(p.fields, "received", rc);
    add(p.fields, "full_waits", fw);
    add(p.fields, "empty_waits", ew);
    sent += s;
    sent_bytes += sb;
    received += rc;
    full += fw;
    empty += ew;
    report.participants.push_back(std::move(p));
  }
  report.messages = sent;
  report.messages_known = true;
  report.bytes = sent_bytes;
  report.bytes_known = true;
  report.received = received;
  report.redelivered = peek(ctl->redelivered);
  report.abandoned = peek(ctl->abandoned);
  add(report.counters, "sent", sent);
  add(report.counters, "sent_bytes", sent_bytes);
  add(report.counters, "received", received);
  add(report.counters, "redelivered", report.redelivered);
  add(report.counters, "abandoned", report.abandoned);
  add(report.counters, "full_waits", full);
  add(report.counters, "empty_waits", empty);
  add(report.counters, "backlog", report.backlog);
  report.readable = true;
}

void inspect_rpc(const ReadOnlyView& v, ChannelReport& report) {
  using namespace layout;
  std::uint64_t p[8];
  for (int i = 0; i < 8; ++i) p[i] = report.segment.params[static_cast<std::size_t>(i)];
  RpcGeometry g;
  if (!rpc_geometry(p, &g) || g.total > v.payload_size) {
    report.problem = "rpc geometry does not validate";
    return;
  }
  const auto* ctl = v.at<RpcControl>(0);
  if (ctl->rpc_magic != kRpcMagic) {
    report.problem = "rpc control block has a bad magic";
    return;
  }
  add(report.geometry, "max_clients", g.max_clients);
  add(report.geometry, "inflight_per_client", g.slots_per_client);
  add(report.geometry, "max_request_size", g.max_request);
  add(report.geometry, "max_response_size", g.max_response);
  add(report.geometry, "inline_size", g.req_inline);
  add(report.geometry, "large_blocks", g.block_count);
  report.state = peek(ctl->state) == kRpcClosed ? "closed" : "open";
  // The pool's watermark (clamped: the word is hostile): the blocks with memory behind them.
  add(report.positions, "large_blocks_committed", std::min<std::uint64_t>(peek(ctl->blocks_committed), g.block_count));
  if (const std::uint64_t server = peek(ctl->server); server != 0) {
    ParticipantReport s;
    s.role = "server";
    s.process = unpack(server);
    s.alive = is_alive_packed(server);
    report.participants.push_back(std::move(s));
  }
  std::uint64_t in_flight_total = 0, calls_total = 0, errors_total = 0, bytes_total = 0;
  for (std::uint64_t c = 0; c < g.max_clients; ++c) {
    const auto* rec = v.at<RpcClientRecord>(g.records_offset + c * sizeof(RpcClientRecord));
    // Every record counts, free ones too: its counts are cumulative over
    // every client that held it, so the sum never drops.
    const std::uint64_t calls = peek(rec->calls), errors = peek(rec->errors), bytes = peek(rec->request_bytes);
    calls_total += calls;
    errors_total += errors;
    bytes_total += bytes;
    const std::uint64_t owner = peek(rec->owner);
    if (owner == kOwnerFree || owner == kOwnerDetached || owner == kOwnerReaping) continue;
    std::uint64_t in_flight = 0;
    for (std::uint64_t k = 0; k < g.slots_per_client; ++k) {
      const auto* slot = v.at<RpcSlot>(g.slots_offset + (c * g.slots_per_client + k) * g.slot_stride);
      const std::uint32_t st = peek(slot->state);
      if (st == kSlotRequest || st == kSlotClaimed || st == kSlotResponse) ++in_flight;
    }
    ParticipantReport cl;
    cl.role = "client";
    cl.process = unpack(owner);
    cl.alive = is_alive_packed(owner);
    cl.slot = static_cast<std::uint32_t>(c);
    add(cl.fields, "connects", peek(rec->connects));
    add(cl.fields, "calls", calls);
    add(cl.fields, "errors", errors);
    add(cl.fields, "request_bytes", bytes);
    add(cl.fields, "in_flight", in_flight);
    in_flight_total += in_flight;
    report.participants.push_back(std::move(cl));
  }
  report.backlog = in_flight_total;
  report.in_flight = in_flight_total;
  report.messages = calls_total;
  report.messages_known = true;
  report.bytes = bytes_total;
  report.bytes_known = true;
  report.errors = errors_total;
  add(report.counters, "calls", calls_total);
  add(report.counters, "errors", errors_total);
  add(report.counters, "request_bytes", bytes_total);
  add(report.counters, "in_flight", in_flight_total);
  report.readable = true;
}

}  // namespace zipc::detail
