// Byte layout of a zipc heap segment (SegmentKind::heap).
//
// Segment header params (checksummed by the segment header):
//   params[0] = kHeapMagic, params[1] = AddressMode (0 any, 1 fixed),
//   params[2] = fixed address (0 for any), params[3] = arena size
//
// Payload (at segment offset 4096):
//  offset  size   field
//  0       8      magic          "ZIPCHEAP" (kHeapMagic); all-zero memory never validates
//  8       4      version        kHeapVersion
//  12      4      address_mode   0 any, 1 fixed
//  16      8      fixed_address  mapping base every process must use (fixed), else 0
//  24      8      arena_offset   from the payload start (kArenaOffset)
//  32      8      arena_size     bytes of the arena, sentinel included
//  40      8      salt           random per heap; mixed into every block header check
//  48      4      state          atomic: kStateHealthy / kStateCorrupt
//  52      4      reserved
//  56      8      directory_head arena offset of the first named-object entry, kNil = none
//  64      16     alloc_lock     OwnerLock: guards everything from free_bytes on
//                   64 owner   u64 zipc::pack(ProcessId) of the holder, 0 = free
//                   72 wake    Event: seq (u32 futex word, bumped by unlock when
//                                  someone sleeps), waiters (u32, sleepers)
//  80      48     reserved
//  128     16     names_lock     OwnerLock guarding the named-object directory
//  144     8      names_version  atomic: odd while a writer changes the directory, then
//                                 bumped to the next even value (readers without the lock
//                                 retry a walk that saw it change)
//  152     40     reserved
//  192     8      free_bytes     sum of free block sizes (headers included)
//  200     8      live_count     allocated blocks
//  208     8      fl_bitmap      bit f: some list of first level f is non-empty
//  216     8      repairs        times a dead holder's heap was walked and rebuilt
//  224     160    sl_bitmap[40]  u32; bit s: heads[f][s] non-empty
//  384     5120   heads[40][16]  u64 arena offset of the first free block, kNil = empty
//  5504    8      cache_offset   payload offset of the thread-cache table (the bytes
//                                 after the arena); meaningful when cache_magic is set
//  5512    4      cache_slots    CacheSlots in the table (<= kCacheMaxSlots)
//  5516    4      cache_magic    kCacheMagic: this heap has thread caches; 0: none (heaps
//                                 below kCacheMinArena, and heaps made before caches)
//  5520    8      cache_limit    bytes of blocks one slot may hold
//  5528 .. 8191   reserved
//  8192 ..        arena (page aligned, so alignment up to 4096 holds in every mapping)
//  8192 + arena_size .. the thread-cache table, when cache_magic is set (page aligned):
//                 cache_slots CacheSlots (src/layout/heap_cache_layout.hpp)
//
// Arena: a physical sequence of blocks, then a 16-byte sentinel header.
//  block at arena offset o (16-aligned), size S (multiple of 16, >= 32):
//   o+0   8   prev_size   size of the physically previous block; meaningful when prev_free
//   o+8   8   word        bits 0 free, 1 prev_free, 2 poison (a header swallowed by a
//                         merge), bits 4..47 size, bits 48..63 check =
//                         hash(o, size|flags, salt): a stray or stale header fails it
//   o+16  ..  payload (allocated) | next_free u64, prev_free u64 (free; arena offsets)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "zipc/event.hpp"

namespace zipc::layout {

inline constexpr std::uint64_t kHeapMagic = 0x504145484350495aull;  // "ZIPCHEAP"
inline constexpr std::uint32_t kHeapVersion = 1;
inline constexpr std::uint32_t kStateHealthy = 0x4f4b4159u;
inline constexpr std::uint32_t kStateCorrupt = 0x42414421u;
inline constexpr std::uint64_t kArenaOffset = 8192;
inline constexpr std::uint64_t kNil = ~std::uint64_t{0};

inline constexpr unsigned kAlignLog2 = 4;
inline constexpr std::uint64_t kAlign = 1u << kAlignLog2;  // block granularity and default alignment
inline constexpr std::uint64_t kHeaderSize = 16;
inline constexpr std::uint64_t kMinBlock = 32;  // header + two free-list links
inline constexpr std::uint64_t kMaxAlign = 4096;
inline constexpr unsigned kSlLog2 = 4;
inline constexpr unsigned kSlCount = 1u << kSlLog2;
inline constexpr unsigned kFlShift = kSlLog2 + kAlignLog2;  // sizes below 256 share first level 0
inline constexpr unsigned kFlCount = 40;                    // sizes below 2^47
inline constexpr std::uint64_t kMaxArena = std::uint64_t{1} << 46;

inline constexpr std::uint64_t kFlagFree = 1;
inline constexpr std::uint64_t kFlagPrevFree = 2;
inline constexpr std::uint64_t kFlagPoison = 4;
inline constexpr std::uint64_t kFlagMask = 0xf;
inline constexpr std::uint64_t kBlockSizeMask = 0x0000fffffffffff0ull;

struct BlockHeader {
  std::uint64_t prev_size;
  std::uint64_t word;
};
static_assert(sizeof(BlockHeader) == kHeaderSize, "BlockHeader is kHeaderSize bytes (the diagram above)");

// A lock that records its holder's identity (pid + start time), so waiters
// can tell a dead holder from a slow one. See src/heap/heap_lock.hpp.
struct OwnerLock {
  std::atomic<std::uint64_t> owner;
  Event wake;  // zipc::Event's wait protocol (docs/design/overview.md, "Waiting")
};
static_assert(sizeof(OwnerLock) == 16, "OwnerLock is 16 bytes (the diagram above)");
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "shared uint64_t atomics are lock-free (a lock would be private to one process)");

struct FreeLinks {
  std::uint64_t next;
  std::uint64_t prev;
};

struct HeapControl {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t address_mode;
  std::uint64_t fixed_address;
  std::uint64_t arena_offset;
  std::uint64_t arena_size;
  std::uint64_t salt;
  std::atomic<std::uint32_t> state;
  std::uint32_t reserved0;
  std::uint64_t directory_head;
  OwnerLock alloc_lock;
  std::uint8_t reserved1[48];
  OwnerLock names_lock;
  std::atomic<std::uint64_t> names_version;
  std::uint8_t reserved2[40];
  std::uint64_t free_bytes;
  std::uint64_t live_count;
  std::uint64_t fl_bitmap;
  std::uint64_t repairs;
  std::uint32_t sl_bitmap[kFlCount];
  std::uint64_t heads[kFlCount][kSlCount];
  std::uint64_t cache_offset;
  std::uint32_t cache_slots;
  std::uint32_t cache_magic;
  std::uint64_t cache_limit;
};

static_assert(std::atomic<std::uint32_t>::is_always_lock_free,
              "shared uint32_t atomics are lock-free (a lock would be private to one process)");
static_assert(offsetof(HeapControl, state) == 48, "HeapControl::state at byte 48 (the diagram above)");
static_assert(offsetof(HeapControl, directory_head) == 56,
              "HeapControl::directory_head at byte 56 (the diagram above)");
static_assert(offsetof(HeapControl, alloc_lock) == 64, "HeapControl::alloc_lock at byte 64 (the diagram above)");
static_assert(offsetof(HeapControl, names_lock) == 128, "HeapControl::names_lock at byte 128 (the diagram above)");
static_assert(offsetof(HeapControl, names_version) == 144,
              "HeapControl::names_version at byte 144 (the diagram above)");
static_assert(offsetof(HeapControl, free_bytes) == 192, "HeapControl::free_bytes at byte 192 (the diagram above)");
static_assert(offsetof(HeapControl, sl_bitmap) == 224, "HeapControl::sl_bitmap at byte 224 (the diagram above)");
static_assert(offsetof(HeapControl, heads) == 384, "HeapControl::heads at byte 384 (the diagram above)");
static_assert(offsetof(HeapControl, cache_offset) == 5504,
              "HeapControl::cache_offset at byte 5504 (the diagram above)");
static_assert(offsetof(HeapControl, cache_magic) == 5516, "HeapControl::cache_magic at byte 5516 (the diagram above)");
static_assert(sizeof(HeapControl) == 5528, "HeapControl is 5528 bytes (the diagram above)");
static_assert(sizeof(HeapControl) <= kArenaOffset, "HeapControl ends before kArenaOffset");

// A named object: one allocation holding this entry, the name, then the object.
//  0   8   next          arena offset of the next entry (kNil ends the list)
//  8   8   object_offset arena offset of the object
//  16  8   type_hash     FNV-1a of the type's name in this compiler
//  24  8   object_size   sizeof(T) * count
//  32  4   name_length
//  36  4   check         low 32 bits of hash(entry fields)
//  40  ..  name bytes, then the object at its alignment
struct NameEntry {
  std::uint64_t next;
  std::uint64_t object_offset;
  std::uint64_t type_hash;
  std::uint64_t object_size;
  std::uint32_t name_length;
  std::uint32_t check;
};
static_assert(sizeof(NameEntry) == 40, "NameEntry is 40 bytes (the diagram above)");

// Shared-memory structs: standard layout (offsetof and the diagram above mean what they say)
// and trivially copyable (no constructor or destructor runs on bytes another process maps).
static_assert(std::is_standard_layout_v<BlockHeader>, "BlockHeader is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<BlockHeader>, "BlockHeader is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<OwnerLock>, "OwnerLock is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<OwnerLock>, "OwnerLock is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<FreeLinks>, "FreeLinks is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<FreeLinks>, "FreeLinks is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<HeapControl>, "HeapControl is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<HeapControl>, "HeapControl is shared memory: trivially copyable");
static_assert(std::is_standard_layout_v<NameEntry>, "NameEntry is shared memory: standard layout");
static_assert(std::is_trivially_copyable_v<NameEntry>, "NameEntry is shared memory: trivially copyable");

}  // namespace zipc::layout
