// The shared-memory layout of an Rpc segment (kind SegmentKind::rpc).
//
// Geometry lives in the segment header's params (covered by its checksum):
//   params[0] max_clients      params[1] slots per client (requests in flight)
//   params[2] max_request      params[3] max_response
//   params[4] request inline   params[5] response inline (bytes carried inside a slot)
//   params[6] block_count      params[7] block_size | wait strategy << 56
// Both sides derive every offset below from those eight numbers with
// rpc_geometry(); nothing positional is read back from the shared area.
//
// Payload (offsets from the payload start; C = max_clients, K = slots per client):
//
//   0        RpcControl (256 B)
//            line 0: rpc_magic u64 | server u64 (packed ProcessId) | state u32 |
//                    layout_version u32 (kRpcLayoutVersion; checked first by connect) |
//                    blocks_committed u32 (the pool's watermark: blocks
//                    [0, blocks_committed) have memory; see below)
//            line 1: server_event (Event: server threads sleep here; clients notify)
//   256      RpcClientRecord[C] (128 B each)
//            owner u64 (packed ProcessId, 0 free, 1 detached, 2 reaping) |
//            connects u32 | response_event (Event: this client sleeps here) |
//            calls u64 | errors u64 | request_bytes u64 (zipc top's rates; written
//            only by the client holding the record, cumulative over every
//            client that held it: a sum over the records never drops)
//   A        RpcSlot[C*K] (slot_stride bytes each; client c owns slots c*K .. c*K+K-1)
//            +0   state u32 (free/request/claimed/response) | result u32
//            +8   call_id u64        (client writes with the request)
//            +16  req_len u64 | +24 req_block u32 | +28 resp_block u32
//            +32  resp_len u64 | +40 reply_call_id u64 (server echoes call_id)
//            +48  error_code u32 | +52 error_type_len u32 (result kResultError only:
//                 the response bytes are the error's type name, error_type_len
//                 bytes, then its message; both bounded by resp_len)
//            +128 request inline bytes  (req_inline, rounded to 128)
//            +128+R response inline bytes (resp_inline, rounded to 128)
//   B        block_owner u64[block_count]  (0 free, else client index + 1)
//   D        blocks[block_count] of block_size bytes (page aligned)
//
// A payload larger than its inline area lives in one block; the slot carries
// the block index. Every index and length read from here is validated against
// the geometry before use.
//
// Memory: create writes only RpcControl (the records are zero: free); a
// client initializes its own slots when it connects; blocks are taken
// lowest index first, so the pool's pages ever touched are those of the
// most blocks held at once (docs/guide/rpc.md, "Memory").
//
// The pool is mapped whole but committed on demand: create checks room for
// the fixed part and rpc_initial_blocks() blocks and sets blocks_committed
// to that; a side that finds no free block below the watermark fallocates
// the next range of blocks (doubling) and raises the watermark with a CAS
// (only upwards). Every process also fallocates (idempotent) any range it
// has not committed itself before touching a block in it, so a hostile
// watermark can cost memory (bounded by the mapping) but never a SIGBUS
// (docs/design/rpc.md, "Large payloads").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "zipc/event.hpp"

namespace zipc::layout {

inline constexpr std::uint64_t kRpcMagic = 0x31435052'5049535aull;  // "ZSIPRPC1"
// Bumped whenever anything in this file changes meaning; connect refuses
// another version (Errc::version_mismatch naming both).
// 2: a response may be a handler's error (kResultError, error_code, error_type_len).
// 3: the block pool grows on demand (RpcControl::blocks_committed).
inline constexpr std::uint32_t kRpcLayoutVersion = 3;
inline constexpr std::uint32_t kRpcRunning = 1;
inline constexpr std::uint32_t kRpcClosed = 2;

// RpcClientRecord::owner values besides a packed ProcessId (pid 0, never a real id).
inline constexpr std::uint64_t kOwnerFree = 0;
inline constexpr std::uint64_t kOwnerDetached = 1;  // client left with work still claimed
inline constexpr std::uint64_t kOwnerReaping = 2;   // the server is recovering the record

// RpcSlot::state.
inline constexpr std::uint32_t kSlotFree = 0;      // the client may fill it
inline constexpr std::uint32_t kSlotRequest = 1;   // request published; a server thread may claim
inline constexpr std::uint32_t kSlotClaimed = 2;   // one server thread owns it
inline constexpr std::uint32_t kSlotResponse = 3;  // response published; the client reads it

// RpcSlot::result: why the server answered as it did.
inline constexpr std::uint32_t kResultOk = 0;
inline constexpr std::uint32_t kResultTooLarge = 1;  // the handler's reply was over max_response
inline constexpr std::uint32_t kResultNoMemory = 2;  // no free block for a large reply
inline constexpr std::uint32_t kResultCorrupt = 3;   // the request failed validation
inline constexpr std::uint32_t kResultError = 4;     // the handler failed: error_code, type and message

inline constexpr std::uint32_t kNoBlock = 0xffffffffu;

struct RpcControl {
  std::uint64_t rpc_magic;
  std::atomic<std::uint64_t> server;  // packed ProcessId of the serving process
  std::atomic<std::uint32_t> state;   // kRpcRunning / kRpcClosed
  std::uint32_t layout_version;       // kRpcLayoutVersion; written once by the creator
  // Blocks [0, blocks_committed) have memory behind them (fallocated, or
  // room-checked by create); only raised, by CAS. Read clamped to block_count.
  std::atomic<std::uint32_t> blocks_committed;
  std::uint8_t pad0[128 - 28];
  Event server_event;
  std::uint8_t pad1[128 - sizeof(Event)];
};

struct RpcClientRecord {
  std::atomic<std::uint64_t> owner;
  std::atomic<std::uint32_t> connects;  // bumped on every connect (diagnostics)
  std::uint32_t pad0;
  Event response_event;
  // Statistics of the record's holder (one client, one thread at a time:
  // relaxed load + store, never an RMW); the owner CAS hands them over.
  std::atomic<std::uint64_t> calls;          // requests sent
  std::atomic<std::uint64_t> errors;         // calls answered with an error, or failed by a dead/closed server
  std::atomic<std::uint64_t> request_bytes;  // payload bytes of the requests sent
  std::uint8_t pad1[128 - 16 - sizeof(Event) - 24];
};

struct RpcSlot {
  std::atomic<std::uint32_t> state;
  std::atomic<std::uint32_t> result;
  std::atomic<std::uint64_t> call_id;
  std::atomic<std::uint64_t> req_len;
  std::atomic<std::uint32_t> req_block;
  std::atomic<std::uint32_t> resp_block;
  std::atomic<std::uint64_t> resp_len;
  std::atomic<std::uint64_t> reply_call_id;
  std::atomic<std::uint32_t> error_code;      // kResultError: the handler's code
  std::atomic<std::uint32_t> error_type_len;  // kResultError: bytes of type name before the message
  std::uint8_t pad[128 - 56];
  // followed by the request and response inline areas
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared uint64_t atomics are lock-free (a lock would be private to one process)");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "shared uint32_t atomics are lock-free (a lock would be private to one process)");
static_assert(sizeof(RpcControl) == 256, "RpcControl is 256 bytes (the diagram above)");
static_assert(offsetof(RpcControl, server) == 8, "RpcControl::server at byte 8 (the diagram above)");
static_assert(offsetof(RpcControl, state) == 16, "RpcControl::state at byte 16 (the diagram above)");
static_assert(offsetof(RpcControl, layout_version) == 20, "layout_version sits right after state in line 0");
static_assert(offsetof(RpcControl, blocks_committed) == 24,
              "RpcControl::blocks_committed at byte 24 (the diagram above)");
static_assert(offsetof(RpcControl, server_event) == 128, "RpcControl::server_event at byte 128 (the diagram above)");
static_assert(sizeof(RpcClientRecord) == 128, "RpcClientRecord is 128 bytes (the diagram above)");
static_assert(offsetof(RpcClientRecord, response_event) == 16,
              "RpcClientRecord::response_event at byte 16 (the diagram above)");
static_assert(offsetof(RpcClientRecord, calls) == 24,
              "the call counters take former padding (segments made before read 0; layout version unchanged)");
static_assert(offsetof(RpcClientRecord, request_bytes) == 40, "request_bytes follows calls and errors");
static_assert(sizeof(RpcSlot) == 128, "RpcSlot is 128 bytes (the diagram above)");
static_assert(offsetof(RpcSlot, call_id) == 8, "RpcSlot::call_id at byte 8 (the diagram above)");
static_assert(offsetof(RpcSlot, req_len) == 16, "RpcSlot::req_len at byte 16 (the diagram above)");
static_assert(offsetof(RpcSlot, req_block) == 24, "RpcSlot::req_block at byte 24 (the diagram above)");
static_assert(offsetof(RpcSlot, resp_block) == 28, "RpcSlot::resp_block at byte 28 (the diagram above)");
static_assert(offsetof(RpcSlot, resp_len) == 32, "RpcSlot::resp_len at byte 32 (the diagram above)");
static_assert(offsetof(RpcSlot, reply_call_id) == 40, "RpcSlot::reply_call_id at byte 40 (the diagram above)");
static_assert(offsetof(RpcSlot, error_code) == 48, "RpcSlot::error_code at byte 48 (the diagram above)");
static_assert(offsetof(RpcSlot, error_type_len) == 52, "RpcSlot::error_type_len at byte 52 (the diagram above)");

// Offsets derived from the params; computed identically by both sides.
struct RpcGeometry {
  std::uint64_t max_clients = 0;
  std::uint64_t slots_per_client = 0;
  std::uint64_t max_request = 0;
  std::uint64_t max_response = 0;
  std::uint64_t req_inline = 0;
  std::uint64_t resp_inline = 0;
  std::uint64_t block_count = 0;
  std::uint64_t block_size = 0;
  std::uint32_t wait = 0;
  std::uint64_t records_offset = 0;
  std::uint64_t slots_offset = 0;
  std::uint64_t slot_stride = 0;
  std::uint64_t owners_offset = 0;
  std::uint64_t blocks_offset = 0;
  std::uint64_t total = 0;  // bytes of payload needed
};

inline constexpr std::uint64_t kRpcMaxClients = 4096;
inline constexpr std::uint64_t kRpcMaxSlots = 1024;
inline constexpr std::uint64_t kRpcMaxMessage = std::uint64_t{1} << 40;
inline constexpr std::uint64_t kRpcMaxBlocks = 1u << 20;
// Block bytes create commits (at least 2 blocks, at most all): a default
// server (64 KiB blocks) then fits in 2 MiB, one for 1 MiB calls in 8 MiB.
inline constexpr std::uint64_t kRpcInitialPoolBytes = 512u << 10;

inline constexpr std::uint64_t rpc_round(std::uint64_t v, std::uint64_t to) noexcept {
  return (v + to - 1) / to * to;
}

// False when the params are out of range or the sizes overflow.
inline bool rpc_geometry(const std::uint64_t (&p)[8], RpcGeometry* g) noexcept {
  RpcGeometry r;
  r.max_clients = p[0];
  r.slots_per_client = p[1];
  r.max_request = p[2];
  r.max_response = p[3];
  r.req_inline = p[4];
  r.resp_inline = p[5];
  r.block_count = p[6];
  r.block_size = p[7] & ((std::uint64_t{1} << 56) - 1);
  r.wait = static_cast<std::uint32_t>(p[7] >> 56);
  if (r.max_clients == 0 || r.max_clients > kRpcMaxClients) return false;
  if (r.slots_per_client == 0 || r.slots_per_client > kRpcMaxSlots) return false;
  if (r.max_request > kRpcMaxMessage || r.max_response > kRpcMaxMessage) return false;
  if (r.req_inline > r.max_request || r.resp_inline > r.max_response) return false;
  if (r.req_inline > (1u << 24) || r.resp_inline > (1u << 24)) return false;
  if (r.block_count > kRpcMaxBlocks || r.block_size > kRpcMaxMessage || r.block_size % 4096 != 0) return false;
  if (r.wait > 2) return false;
  const bool need_blocks = r.max_request > r.req_inline || r.max_response > r.resp_inline;
  if (need_blocks) {
    if (r.block_count == 0) return false;
    const std::uint64_t largest = r.max_request > r.max_response ? r.max_request : r.max_response;
    if (r.block_size < largest) return false;
  }
  r.records_offset = sizeof(RpcControl);
  r.slots_offset = r.records_offset + r.max_clients * sizeof(RpcClientRecord);
  r.slot_stride = sizeof(RpcSlot) + rpc_round(r.req_inline, 128) + rpc_round(r.resp_inline, 128);
  const std::uint64_t slots = r.max_clients * r.slots_per_client;
  r.owners_offset = r.slots_offset + slots * r.slot_stride;
  r.blocks_offset = rpc_round(r.owners_offset + r.block_count * 8, 4096);
  // Bounded above: block_count * block_size <= 2^20 * 2^40 fits in 64 bits.
  r.total = r.blocks_offset + r.block_count * r.block_size;
  if (r.total > (std::uint64_t{1} << 46)) return false;
  *g = r;
  return true;
}

// Blocks committed at create; both sides compute it from the geometry.
inline constexpr std::uint64_t rpc_initial_blocks(const RpcGeometry& g) noexcept {
  if (g.block_count == 0) return 0;
  const std::uint64_t want = g.block_size == 0 ? 2 : kRpcInitialPoolBytes / g.block_size;
  const std::uint64_t at_least_two = want < 2 ? 2 : want;
  return at_least_two < g.block_count ? at_least_two : g.block_count;
}

// Payload bytes up to the end of block `blocks` (the fixed part when 0).
inline constexpr std::uint64_t rpc_committed_bytes(const RpcGeometry& g, std::uint64_t blocks) noexcept {
  return g.blocks_offset + blocks * g.block_size;
}

// Shared-memory structs: standard layout (offsetof and the diagram above mean what they say)
// and trivially copyable (no constructor or destructor runs on bytes another process maps).
static_assert(std::is_standard_layout_v<RpcControl>, "RpcControl is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<RpcControl>, "RpcControl is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<RpcClientRecord>, "RpcClientRecord is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<RpcClientRecord>, "RpcClientRecord is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<RpcSlot>, "RpcSlot is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<RpcSlot>, "RpcSlot is shared memory: trivially copyable");

}  // namespace zipc::layout
