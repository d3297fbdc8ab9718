// Shared-memory layout of a topic (the payload of a SegmentKind::topic segment).
//
//  payload offset                  size              what
//  0                               128               TopicConfig    (immutable after init)
//  128                             128               PublisherLine  (hot: written by the committing publisher)
//  256                             128               EventLine      (futex events: data, space, commit)
//  384                             128               AdminLine      (subscriber generation, recovery lock, stats)
//  512                             128 * kMaxPubs    PublisherSlot[kMaxPublishers]
//  pub_end                         128 * max_subs    SubscriberSlot[max_subscribers]
//  ring_offset (4096-aligned)      capacity          byte ring of records (capacity a power of two)
//
// A record in the ring (8-byte aligned, never split by the wrap):
//
//  +0   u32 size        payload bytes (for padding / holes: body bytes after this header)
//  +4   u16 kind        RecordKind
//  +6   u16 slack       data records: extra bytes (< 32, multiple of 8) after the padded payload;
//                       abandoned records: bits 32-47 of the body length (hole_body_bytes)
//  +8   u64 sequence    dense message number (data records only)
//  +16  u64 publish_ns  CLOCK_REALTIME at commit
//  +24  u64 position    the record's own 64-bit log position: a validation tag
//  +32  payload ...     padded to a multiple of 8
//
// When fewer than kRecordHeaderSize bytes remain before the end of the ring,
// they are implicit padding: readers skip to the next lap without reading them.
// Positions are monotonic 64-bit byte counters; index = position & (capacity-1).
//
// Invariants (docs/design/topic.md): oldest <= every live reliable subscriber's
// position <= cursor <= tail <= oldest + capacity; records in [oldest, cursor)
// are committed and intact; [cursor, tail) is claimed by publishers.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/round_up.hpp"
#include "zipc/event.hpp"

namespace zipc::layout {

inline constexpr std::uint64_t kTopicMagic = 0x3143504f54435049ull;  // "IPCTOPC1"
// 2: SubscriberSlot names durable subscribers; AdminLine holds the closed flag.
inline constexpr std::uint32_t kTopicLayoutVersion = 2;
inline constexpr std::uint32_t kMaxPublishers = 64;
inline constexpr std::uint32_t kMaxSubscribersLimit = 1u << 16;
inline constexpr std::uint64_t kRecordHeaderSize = 32;
inline constexpr std::uint64_t kRecordAlign = 8;
inline constexpr std::uint64_t kMinCapacity = 4096;
inline constexpr std::uint64_t kMaxCapacity = 1ull << 40;
inline constexpr std::uint32_t kMaxMessageLimit = 1u << 30;

enum class RecordKind : std::uint16_t {
  data = 1,
  padding = 2,    // fills the end of the ring before a wrap
  abandoned = 3,  // a hole left by a publisher that died between claim and commit
  aborted = 4,    // a loan given up by its (live) publisher
};

enum class PublisherMode : std::uint32_t { single = 1, multi = 2 };
enum class SubscriberMode : std::uint32_t { free = 0, reliable = 1, lossy = 2 };

struct RecordHeader {
  std::uint32_t size;
  std::uint16_t kind;
  std::uint16_t slack;
  std::uint64_t sequence;
  std::uint64_t publish_ns;
  std::uint64_t position;
};
static_assert(sizeof(RecordHeader) == kRecordHeaderSize, "RecordHeader is kRecordHeaderSize bytes (the diagram above)");
static_assert(offsetof(RecordHeader, sequence) == 8, "RecordHeader::sequence at byte 8 (the diagram above)");
static_assert(offsetof(RecordHeader, position) == 24, "RecordHeader::position at byte 24 (the diagram above)");

// Written once by the creator before the segment is marked ready.
struct TopicConfig {
  std::uint64_t magic;
  std::uint32_t layout_version;
  std::uint32_t publisher_mode;  // PublisherMode
  std::uint64_t capacity;        // ring bytes, a power of two
  std::uint32_t max_message;     // payload bytes
  std::uint32_t max_subscribers;
  std::uint64_t ring_offset;  // from the payload start
  std::uint64_t sub_offset;   // SubscriberSlot[0]
  std::uint8_t reserved[80];
};
static_assert(sizeof(TopicConfig) == 128, "TopicConfig is 128 bytes (the diagram above)");
static_assert(offsetof(TopicConfig, ring_offset) == 32, "TopicConfig::ring_offset at byte 32 (the diagram above)");

// The only line a publisher writes per message besides the record itself.
struct alignas(128) PublisherLine {
  // Claim frontier: bytes below it are claimed. Single mode: plain store by the
  // one publisher; multi mode: CAS by claimants.
  std::atomic<std::uint64_t> tail;
  // Commit frontier: every record below it is complete. Stored with release
  // after the records (and next_sequence); readers load it with acquire.
  std::atomic<std::uint64_t> cursor;
  // Sequence of the next data record to commit. Written by the commit-token
  // holder (the publisher whose claim starts at cursor) before cursor.
  std::atomic<std::uint64_t> next_sequence;
  // Records below oldest may be overwritten. Raised (never lowered) by
  // publishers making room; lossy readers re-check it after copying.
  std::atomic<std::uint64_t> oldest;
  // Highest position a publisher announced it is about to raise oldest to
  // (seq_cst, Dekker with joining reliable subscribers; see docs).
  std::atomic<std::uint64_t> drop_intent;
  // Even when (cursor, next_sequence) are consistent; odd while a commit
  // rewrites them. Lets joiners read the pair without a lock.
  std::atomic<std::uint64_t> commit_version;
  std::uint8_t reserved[80];
};
static_assert(sizeof(PublisherLine) == 128, "PublisherLine is 128 bytes (the diagram above)");

struct alignas(128) EventLine {
  Event data;    // readers sleep here for new records
  Event space;   // publishers sleep here for room (reliable readers notify)
  Event commit;  // multi mode: publishers wait for the commit token
  std::uint8_t reserved[104];
};
static_assert(sizeof(EventLine) == 128, "EventLine is 128 bytes (the diagram above)");

struct alignas(128) AdminLine {
  std::atomic<std::uint64_t> subscriber_generation;  // bumped by every reliable join
  std::atomic<std::uint64_t> recovery_owner;         // packed ProcessId of the recoverer, 0 = free
  std::atomic<std::uint64_t> abandoned_total;        // holes made by recovery
  std::atomic<std::uint64_t> single_publisher;       // single mode: packed ProcessId of the publisher
  // Shared stall clock of the commit frontier (src/core/recovery_wait.hpp), keyed
  // by the cursor. Zero: no stall seen yet (also in older segments).
  std::atomic<std::uint64_t> stall_cursor;
  // Topic::close(): 1 once closed, never reset (persists in a file-backed topic).
  std::atomic<std::uint64_t> closed;
  // Serializes durable subscribers (re)attaching: a packed ProcessId, 0 =
  // free, taken over when its holder is dead. Publishers never take it.
  std::atomic<std::uint64_t> durable_lock;
  std::uint8_t reserved[72];
};
static_assert(sizeof(AdminLine) == 128, "the admin line is one 128-byte line");
static_assert(offsetof(AdminLine, stall_cursor) == 32, "the stall clock takes former padding (layout unchanged)");
static_assert(offsetof(AdminLine, closed) == 40, "the closed flag follows the stall clock");

struct alignas(128) PublisherSlot {
  std::atomic<std::uint64_t> owner;   // packed ProcessId, 0 = free
  std::atomic<std::uint64_t> intent;  // multi mode: tail value this publisher CASes from (written before the CAS)
  // Statistics for `zipc top` (docs/guide/cli.md): messages and payload bytes
  // committed through this slot, cumulative over every publisher that held it
  // (single mode: slot 0). Written only by the slot's current publisher, in
  // this line it already owns; relaxed, never reset. Zero in segments made
  // before these fields existed (the bytes were reserved, zero-filled).
  std::atomic<std::uint64_t> messages;
  std::atomic<std::uint64_t> bytes;
  std::uint8_t reserved[96];
};
static_assert(sizeof(PublisherSlot) == 128, "a publisher slot is one 128-byte line");
static_assert(offsetof(PublisherSlot, messages) == 16, "the statistics follow owner and intent");

// Durable subscribers (docs/design/topic.md, "Durable subscribers"): owner values
// that are no process (pid bits 0, so never alive). Orphan: the subscriber
// detached or died and its position is still held (the grace runs from
// dead_since). Parked: the grace ran out, the position no longer holds the
// publisher back; `sequence` keeps the next unread sequence for the restart.
inline constexpr std::uint64_t kOrphanOwner = 0xD0D0'0000'0000'0000ull;
inline constexpr std::uint64_t kParkedOwner = 0xDA4C'0000'0000'0000ull;
inline constexpr std::size_t kDurableNameBytes = 48;  // NUL-padded; names are 1..47 bytes

struct alignas(128) SubscriberSlot {
  std::atomic<std::uint64_t> owner;     // packed ProcessId, 0 = free (or kOrphanOwner / kParkedOwner)
  std::atomic<std::uint32_t> mode;      // SubscriberMode
  std::atomic<std::uint32_t> durable;   // 1: a named durable slot (name, grace_ns and dead_since valid)
  std::atomic<std::uint64_t> position;  // reliable: everything below was read
  // Statistics for `zipc top` / `zipc stat` (docs/guide/cli.md), written only by the
  // slot's subscriber, relaxed; reset when a subscriber takes the slot.
  // sequence: reliable: the next sequence to read, stored just before position
  // (so lag = next_sequence - sequence); lossy: stored when it was lapped.
  // lost: lossy: messages missed so far, stored when it was lapped.
  std::atomic<std::uint64_t> sequence;
  std::atomic<std::uint64_t> lost;
  // Durable slots only. dead_since: CLOCK_MONOTONIC ns when the owner was
  // first seen dead (or detached), 0 while live; grace_ns: how long the
  // position is held after that; name: the durable name (written by the
  // attacher under AdminLine::durable_lock, read by attachers under it).
  std::atomic<std::uint64_t> dead_since;
  std::atomic<std::uint64_t> grace_ns;
  char name[kDurableNameBytes];
  // Read-only reliable subscribers (docs/design/topic.md): k + 1 when a publisher
  // took this slot on behalf of the read-only reader at seat k (its position
  // lives in the seat segment, owner is the reader's id); 0 otherwise. Every
  // claimer stores it before the mode. Zero in older segments (reserved bytes).
  std::atomic<std::uint32_t> proxy;
  std::uint32_t reserved0;
  std::uint8_t reserved[16];
};
static_assert(sizeof(SubscriberSlot) == 128, "a subscriber slot is one 128-byte line");
static_assert(offsetof(SubscriberSlot, durable) == 12, "the durable flag takes the former reserved0 word");
static_assert(offsetof(SubscriberSlot, dead_since) == 40, "the durable fields follow the statistics");
static_assert(offsetof(SubscriberSlot, name) == 56, "the durable name follows dead_since and grace_ns");
static_assert(offsetof(SubscriberSlot, proxy) == 104, "the proxy index follows the durable name");
static_assert(offsetof(SubscriberSlot, position) == 16, "SubscriberSlot::position at byte 16 (the diagram above)");
static_assert(offsetof(SubscriberSlot, sequence) == 24, "the statistics follow position");

struct TopicControl {
  TopicConfig config;
  PublisherLine pub;
  EventLine events;
  AdminLine admin;
  PublisherSlot publishers[kMaxPublishers];
  // SubscriberSlot[max_subscribers] follows at config.sub_offset.
};
static_assert(offsetof(TopicControl, pub) == 128, "TopicControl::pub at byte 128 (the diagram above)");
static_assert(offsetof(TopicControl, events) == 256, "TopicControl::events at byte 256 (the diagram above)");
static_assert(offsetof(TopicControl, admin) == 384, "TopicControl::admin at byte 384 (the diagram above)");
static_assert(offsetof(TopicControl, publishers) == 512, "TopicControl::publishers at byte 512 (the diagram above)");
static_assert(sizeof(TopicControl) == 512 + 128 * kMaxPublishers,
              "TopicControl is 512 + 128 * kMaxPublishers bytes (the diagram above)");

static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared uint64_t atomics are lock-free (a lock would be private to one process)");
static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "shared uint32_t atomics are lock-free (a lock would be private to one process)");

// Bytes a data record of `size` payload bytes occupies.
inline constexpr std::uint64_t record_bytes(std::uint64_t size) noexcept {
  return round_up(kRecordHeaderSize + size, kRecordAlign);
}

// An abandoned record (a hole made by recovery) may span several claims,
// more than 32 bits of bytes in a big ring: its body length is
// size + (slack << 32). (Other kinds keep slack for the padding of a data record.)
inline constexpr std::uint64_t hole_body_bytes(const RecordHeader& h) noexcept {
  return h.size | (static_cast<std::uint64_t>(h.slack) << 32);
}
inline constexpr void set_hole_body_bytes(RecordHeader& h, std::uint64_t body) noexcept {
  h.size = static_cast<std::uint32_t>(body);
  h.slack = static_cast<std::uint16_t>(body >> 32);
}
static_assert(kMaxCapacity <= (1ull << 48), "a hole's body length must fit size + (slack << 32)");
inline constexpr std::uint64_t sub_table_offset() noexcept {
  return sizeof(TopicControl);
}
inline constexpr std::uint64_t ring_table_offset(std::uint32_t max_subscribers) noexcept {
  return round_up(sub_table_offset() + std::uint64_t{max_subscribers} * sizeof(SubscriberSlot), 4096);
}

// Shared-memory structs: standard layout (offsetof and the diagram above mean what they say)
// and trivially copyable (no constructor or destructor runs on bytes another process maps).
static_assert(std::is_standard_layout_v<RecordHeader>, "RecordHeader is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<RecordHeader>, "RecordHeader is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<TopicConfig>, "TopicConfig is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<TopicConfig>, "TopicConfig is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<PublisherLine>, "PublisherLine is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<PublisherLine>, "PublisherLine is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<EventLine>, "EventLine is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<EventLine>, "EventLine is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<AdminLine>, "AdminLine is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<AdminLine>, "AdminLine is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<PublisherSlot>, "PublisherSlot is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<PublisherSlot>, "PublisherSlot is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<SubscriberSlot>, "SubscriberSlot is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<SubscriberSlot>, "SubscriberSlot is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<TopicControl>, "TopicControl is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<TopicControl>, "TopicControl is shared memory: trivially copyable");

}  // namespace zipc::layout
