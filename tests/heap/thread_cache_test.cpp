// The heap's per-thread caches (src/heap/heap_cache.cpp): blocks a thread
// frees come back to it without the allocation lock, a second free is caught,
// and what a thread, a closed mapping or a killed process had cached goes back
// to the heap.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "heap/heap_lock.hpp"
#include "heap_support.hpp"
#include "layout/heap_cache_layout.hpp"
#include "layout/heap_layout.hpp"
#include "zipc/heap.hpp"
#include "zipc/process.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::Heap;
using zipc::HeapStatus;
namespace L = zipc::layout;

namespace thread_cache_test {
namespace {

constexpr std::uint64_t kHeapSize = 16u << 20;  // above kCacheMinArena: caches on

L::CacheSlot* slots(Heap& h) {
  return reinterpret_cast<L::CacheSlot*>(reinterpret_cast<std::byte*>(h.control()) + h.control()->cache_offset);
}

// Slots held by anyone.
int owned_slots(Heap& h) {
  int n = 0;
  for (std::uint32_t i = 0; i < h.control()->cache_slots; ++i) n += slots(h)[i].owner.load() != 0 ? 1 : 0;
  return n;
}

// The slot this process holds (the test's threads hold one each at most).
L::CacheSlot* my_slot(Heap& h) {
  const std::uint64_t me = zipc::pack(zipc::ProcessId::current());
  for (std::uint32_t i = 0; i < h.control()->cache_slots; ++i)
    if (slots(h)[i].owner.load() == me) return &slots(h)[i];
  return nullptr;
}

TEST(HeapThreadCache, SmallHeapsHaveNoTableLargeOnesDo) {
  zipc::test::TempName small("heap"), large("heap");
  auto s = Heap::create(small.str(), 1 << 20);
  EXPECT_EQ(s.control()->cache_magic, 0u);
  void* p = s.allocate(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(s.deallocate(p), HeapStatus::ok);
  auto l = Heap::create(large.str(), kHeapSize);
  EXPECT_EQ(l.control()->cache_magic, L::kCacheMagic);
  EXPECT_EQ(l.control()->cache_slots, L::kCacheMaxSlots);
  EXPECT_EQ(l.control()->cache_offset, L::kArenaOffset + l.arena_size());
}

TEST(HeapThreadCache, AFreedBlockComesBackToItsThreadWhileAnotherProcessHoldsTheLock) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), kHeapSize);
  void* p = sut.allocate(100);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(sut.deallocate(p), HeapStatus::ok);  // listed in this thread's slot
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  auto holder = zipc::test::spawn([&] {
    (void)zipc::detail::owner_lock(sut.control()->alloc_lock);
    const char c = 1;
    if (::write(ready[1], &c, 1) != 1) return 2;
    std::this_thread::sleep_for(3s);  // then exits, which frees the lock for a waiter
    return 0;
  });
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  // Without the cache this would wait for the lock until the holder is gone.
  void* q = sut.allocate(100);
  const std::uint64_t owner_after = sut.control()->alloc_lock.owner.load();
  EXPECT_EQ(q, p) << "the block came from the thread's cache";
  EXPECT_NE(owner_after, 0u) << "the other process still held the allocation lock";
  EXPECT_EQ(sut.deallocate(q), HeapStatus::ok);
  holder.kill(SIGKILL);
  (void)holder.wait();
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_TRUE(sut.check().ok);
}

TEST(HeapThreadCache, ASecondFreeOfACachedBlockIsCaughtFromAnyThread) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), kHeapSize);
  void* p = sut.allocate(200);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(sut.deallocate(p), HeapStatus::ok);
  EXPECT_EQ(sut.deallocate(p), HeapStatus::double_free);
  HeapStatus other = HeapStatus::ok;
  std::thread([&] { other = sut.deallocate(p); }).join();
  EXPECT_EQ(other, HeapStatus::double_free);
  EXPECT_TRUE(sut.check().ok) << sut.check().problem;
}

TEST(HeapThreadCache, BlocksCachedByAKilledProcessGoBackToTheHeap) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), kHeapSize);
  const auto before = sut.stats();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  auto child = zipc::test::spawn([&] {
    std::vector<void*> blocks;
    for (int i = 0; i < 40; ++i) blocks.push_back(sut.allocate(16 + static_cast<std::size_t>(i) * 97));
    for (void* b : blocks)
      if (b == nullptr || sut.deallocate(b) != HeapStatus::ok) return 2;
    const char c = 1;
    if (::write(ready[1], &c, 1) != 1) return 3;
    for (;;) std::this_thread::sleep_for(1s);
  });
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  // Listed in the live child's slot: counted as free, and not in the lists.
  L::CacheSlot* theirs = nullptr;
  for (std::uint32_t i = 0; i < sut.control()->cache_slots; ++i)
    if (slots(sut)[i].owner.load() != 0) theirs = &slots(sut)[i];
  ASSERT_NE(theirs, nullptr);
  EXPECT_GT(theirs->blocks.load(), 0u);
  EXPECT_EQ(sut.stats().free_bytes, before.free_bytes);
  EXPECT_LT(sut.stats().largest_free_block, before.largest_free_block) << "cached blocks are still carved out";
  child.kill(SIGKILL);
  EXPECT_EQ(child.wait().signal, SIGKILL);
  ::close(ready[0]);
  ::close(ready[1]);
  const auto after = sut.stats();  // scans the table: the dead child's slot is emptied
  EXPECT_EQ(owned_slots(sut), 0);
  EXPECT_EQ(after.free_bytes, before.free_bytes);
  EXPECT_EQ(after.allocated_blocks, 0u);
  EXPECT_EQ(after.largest_free_block, before.largest_free_block) << "every block merged back";
  EXPECT_TRUE(sut.check().ok) << sut.check().problem;
}

TEST(HeapThreadCache, ThreadsReturnTheirBlocksWhenTheyExit) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), kHeapSize);
  const auto before = sut.stats();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t + 1);
      std::vector<void*> mine(256, nullptr);
      for (int i = 0; i < zipc::test::scaled(100000); ++i) {
        void*& s = mine[rng() % mine.size()];
        if (s != nullptr) {
          if (sut.deallocate(s) != HeapStatus::ok) failures.fetch_add(1);
          s = nullptr;
        } else {
          s = sut.allocate(16 + rng() % 4096);
          if (s == nullptr)
            failures.fetch_add(1);
          else
            std::memset(s, static_cast<int>(t), 16);
        }
      }
      for (void* s : mine)
        if (s != nullptr && sut.deallocate(s) != HeapStatus::ok) failures.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(owned_slots(sut), 0) << "each thread released its slot at exit";
  const auto after = sut.stats();
  EXPECT_EQ(after.free_bytes, before.free_bytes);
  EXPECT_EQ(after.allocated_blocks, 0u);
  EXPECT_EQ(after.largest_free_block, before.largest_free_block);
  EXPECT_TRUE(sut.check().ok) << sut.check().problem;
}

TEST(HeapThreadCache, ClosingAMappingReturnsWhatItsThreadsCached) {
  zipc::test::TempName name("heap");
  auto first = Heap::create(name.str(), kHeapSize);
  const auto before = first.stats();
  {
    auto second = Heap::open(name.str());
    void* p = second.allocate(300);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(second.deallocate(p), HeapStatus::ok);
    EXPECT_EQ(owned_slots(first), 1);
  }
  EXPECT_EQ(owned_slots(first), 0);
  EXPECT_EQ(first.stats().free_bytes, before.free_bytes);
  EXPECT_EQ(first.stats().largest_free_block, before.largest_free_block);
}

TEST(HeapThreadCache, AForkedChildNeverUsesItsParentsSlot) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), kHeapSize);
  void* p = sut.allocate(500);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(sut.deallocate(p), HeapStatus::ok);  // in the parent's slot
  auto child = zipc::test::spawn([&] {
    void* q = sut.allocate(500);
    if (q == nullptr) return 2;
    if (q == p) return 3;  // taken from the parent's slot: both would own it
    return sut.deallocate(q) == HeapStatus::ok ? 0 : 4;
  });
  EXPECT_EQ(child.wait().exit_code, 0);
  EXPECT_EQ(sut.allocate(500), p) << "still listed in the parent's slot";
  EXPECT_TRUE(sut.check().ok) << sut.check().problem;
}

TEST(HeapThreadCache, ScribbledEntriesAreDroppedNeverFollowed) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), kHeapSize);
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(sut.allocate(64));
  for (void* b : blocks) ASSERT_EQ(sut.deallocate(b), HeapStatus::ok);
  L::CacheSlot* mine = my_slot(sut);
  ASSERT_NE(mine, nullptr);
  // Every listed entry rewritten: misaligned, past the arena, a free block, a live block.
  auto* live = static_cast<unsigned char*>(sut.allocate(4000));
  ASSERT_NE(live, nullptr);
  std::memset(live, 0x5c, 4000);
  const auto live_offset =
      static_cast<std::uint64_t>(reinterpret_cast<std::byte*>(live) - sut.arena()) - L::kHeaderSize;
  const std::uint64_t junk[] = {8, sut.arena_size() * 2, sut.arena_size() - 4096, live_offset};
  int n = 0;
  for (auto& row : mine->entries)
    for (auto& e : row)
      if (e != L::kNil) e = junk[n++ % 4];
  ASSERT_GT(n, 0);
  for (int i = 0; i < 16; ++i) {
    void* q = sut.allocate(64);
    ASSERT_NE(q, nullptr);
    EXPECT_NE(q, static_cast<void*>(live));
    std::memset(q, 0xab, 64);
  }
  for (int i = 0; i < 4000; ++i) ASSERT_EQ(live[i], 0x5c) << "the live block was handed out again, at byte " << i;
  EXPECT_EQ(sut.deallocate(live), HeapStatus::ok);
  EXPECT_TRUE(sut.check().ok) << sut.check().problem;
}

TEST(HeapThreadCache, ATableThatDoesNotFitTheSegmentIsRefusedAtOpen) {
  zipc::test::TempName name("heap");
  {
    auto sut = Heap::create(name.str(), kHeapSize);
    sut.control()->cache_slots = 1000;
  }
  std::string what;
  EXPECT_EQ(zipc::test::errc_of([&] { (void)Heap::open(name.str()); }, &what), Errc::corrupt_header);
  EXPECT_NE(what.find("thread-cache table"), std::string::npos) << what;
}

}  // namespace

}  // namespace thread_cache_test
