#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "heap_support.hpp"
#include "layout/heap_layout.hpp"
#include "zipc/heap.hpp"

using zipc::Heap;
using zipc::HeapStatus;

namespace allocator_test {
namespace {

struct Live {
  std::size_t size;
  unsigned char fill;
};

// Every live block keeps its own pattern and overlaps no other.
void expect_intact(const std::map<std::uintptr_t, Live>& live) {
  std::uintptr_t end = 0;
  for (const auto& [addr, b] : live) {
    ASSERT_GE(addr, end) << "blocks overlap";
    end = addr + b.size;
    const auto* p = reinterpret_cast<const unsigned char*>(addr);
    for (std::size_t i = 0; i < b.size; i += 7) ASSERT_EQ(p[i], b.fill) << "block contents changed";
  }
}

}  // namespace

TEST(HeapAllocator, RandomAllocateAndFreeAgreesWithAShadowModel) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 20);
  const auto seed = zipc::test::test_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::map<std::uintptr_t, Live> live;
  const int ops = zipc::test::scaled(40000);
  for (int i = 0; i < ops; ++i) {
    const bool do_alloc = live.empty() || rng() % 100 < 55;
    if (do_alloc) {
      const std::size_t size = rng() % 4 == 0 ? rng() % 8192 : 1 + rng() % 200;
      const std::size_t align = std::size_t{1} << (rng() % 13);
      auto a = sut.try_allocate(size, align);
      if (a.ptr == nullptr) {
        ASSERT_EQ(a.status, HeapStatus::out_of_memory);
        // Exhaustion only when the request cannot fit the largest block.
        ASSERT_GT(size + align, sut.stats().largest_free_block / 2);
        continue;
      }
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(a.ptr) % std::max<std::size_t>(align, 16), 0u);
      ASSERT_NE(sut.offset_of(a.ptr), Heap::kNoOffset);
      const auto fill = static_cast<unsigned char>(rng());
      std::memset(a.ptr, fill, size);
      auto [it, inserted] = live.emplace(reinterpret_cast<std::uintptr_t>(a.ptr), Live{size, fill});
      ASSERT_TRUE(inserted) << "the same address handed out twice";
      if (it != live.begin()) {
        ASSERT_LE(std::prev(it)->first + std::prev(it)->second.size, it->first);
      }
      if (std::next(it) != live.end()) {
        ASSERT_LE(it->first + size, std::next(it)->first);
      }
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      const auto* p = reinterpret_cast<const unsigned char*>(it->first);
      for (std::size_t k = 0; k < it->second.size; k += 5) ASSERT_EQ(p[k], it->second.fill);
      ASSERT_EQ(sut.deallocate(reinterpret_cast<void*>(it->first)), HeapStatus::ok);
      live.erase(it);
    }
    if (i % 2000 == 0) {
      auto check = sut.check();
      ASSERT_TRUE(check.ok) << check.problem;
      ASSERT_EQ(sut.stats().allocated_blocks, live.size());
      expect_intact(live);
    }
  }
  expect_intact(live);
  for (const auto& [addr, b] : live) ASSERT_EQ(sut.deallocate(reinterpret_cast<void*>(addr)), HeapStatus::ok);
  auto check = sut.check();
  ASSERT_TRUE(check.ok) << check.problem;
  EXPECT_EQ(check.free_blocks, 1u) << "everything freed coalesces back into one block";
  auto stats = sut.stats();
  EXPECT_EQ(stats.allocated_blocks, 0u);
  EXPECT_EQ(stats.free_bytes, sut.arena_size() - zipc::layout::kHeaderSize);
}

TEST(HeapAllocator, EveryAlignmentUpTo4096IsHonoured) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 20);
  std::vector<void*> blocks;
  for (std::size_t align = 1; align <= 4096; align *= 2) {
    for (std::size_t size : {1u, 17u, 100u, 5000u}) {
      void* p = sut.allocate(size, align);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << "align " << align;
      std::memset(p, 0xab, size);
      blocks.push_back(p);
    }
  }
  auto check = sut.check();
  EXPECT_TRUE(check.ok) << check.problem;
  for (void* p : blocks) EXPECT_EQ(sut.deallocate(p), HeapStatus::ok);
  EXPECT_EQ(sut.check().free_blocks, 1u);
}

TEST(HeapAllocator, BadAlignmentIsAnInvalidArgument) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  EXPECT_EQ(sut.try_allocate(10, 24).status, HeapStatus::invalid_argument);
  EXPECT_EQ(sut.try_allocate(10, 8192).status, HeapStatus::invalid_argument);
}

TEST(HeapAllocator, ExhaustionReturnsOutOfMemoryAndFreeingMakesRoomAgain) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 64 * 1024);
  std::vector<void*> blocks;
  for (;;) {
    auto a = sut.try_allocate(1000);
    if (a.ptr == nullptr) {
      EXPECT_EQ(a.status, HeapStatus::out_of_memory);
      break;
    }
    blocks.push_back(a.ptr);
  }
  EXPECT_GT(blocks.size(), 50u);
  EXPECT_EQ(sut.try_allocate(1u << 20).status, HeapStatus::out_of_memory);
  EXPECT_EQ(sut.try_allocate(SIZE_MAX).status, HeapStatus::out_of_memory);
  EXPECT_EQ(sut.deallocate(blocks.back()), HeapStatus::ok);
  blocks.pop_back();
  EXPECT_NE(sut.allocate(1000), nullptr);
  EXPECT_TRUE(sut.check().ok);
}

TEST(HeapAllocator, DoubleFreeIsReportedWhetherOrNotTheBlockWasMerged) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  void* a = sut.allocate(100);
  void* b = sut.allocate(100);
  void* c = sut.allocate(100);
  ASSERT_EQ(sut.deallocate(b), HeapStatus::ok);
  EXPECT_EQ(sut.deallocate(b), HeapStatus::double_free);  // b is a free block of its own
  ASSERT_EQ(sut.deallocate(c), HeapStatus::ok);           // c merges into b
  EXPECT_EQ(sut.deallocate(c), HeapStatus::double_free);  // c's header was poisoned by the merge
  ASSERT_EQ(sut.deallocate(a), HeapStatus::ok);
  EXPECT_EQ(sut.deallocate(a), HeapStatus::double_free);
  auto check = sut.check();
  EXPECT_TRUE(check.ok) << check.problem;
  EXPECT_EQ(sut.stats().allocated_blocks, 0u);
}

TEST(HeapAllocator, PointersFromOutsideTheHeapAreRejected) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  int local = 0;
  EXPECT_EQ(sut.deallocate(&local), HeapStatus::foreign_pointer);
  auto* p = static_cast<char*>(sut.allocate(256));
  EXPECT_EQ(sut.deallocate(p + 3), HeapStatus::foreign_pointer);  // cannot be a block start
  EXPECT_EQ(sut.deallocate(p + 64), HeapStatus::corrupt_header);  // inside a block, no header there
  EXPECT_EQ(sut.deallocate(nullptr), HeapStatus::ok);
  EXPECT_EQ(sut.deallocate(p), HeapStatus::ok);
  EXPECT_TRUE(sut.check().ok);
}

TEST(HeapAllocator, AnOverwrittenBlockHeaderIsDetected) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  auto* a = static_cast<char*>(sut.allocate(64));
  auto* b = static_cast<char*>(sut.allocate(64));
  std::memset(a, 0x5a, 64 + 16 + 8);  // overflow a into b's header
  EXPECT_EQ(sut.deallocate(b), HeapStatus::corrupt_header);
  auto check = sut.check();
  EXPECT_FALSE(check.ok);
  EXPECT_NE(check.problem.find("fails its check"), std::string::npos) << check.problem;
}

TEST(HeapAllocator, ADamagedFreeListMarksTheHeapCorruptInsteadOfHandingOutBadMemory) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  auto* c = sut.control();
  // A hostile peer points a free list head outside the arena.
  for (auto& row : c->heads)
    for (auto& h : row)
      if (h != zipc::layout::kNil) h = sut.arena_size() * 4;
  auto a = sut.try_allocate(100);
  EXPECT_EQ(a.ptr, nullptr);
  EXPECT_EQ(a.status, HeapStatus::corrupt);
  EXPECT_TRUE(sut.stats().corrupt);
  EXPECT_EQ(sut.try_allocate(10).status, HeapStatus::corrupt);
}

TEST(HeapAllocator, AllZeroMemoryIsNotTakenForAHeap) {
  zipc::test::TempName name("heap");
  zipc::SegmentSpec spec;
  spec.kind = zipc::SegmentKind::heap;
  spec.payload_size = 1 << 16;
  zipc::Segment::create(name.str(), spec, nullptr).detach();
  try {
    Heap::open(name.str());
    FAIL() << "opened an all-zero heap";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::corrupt_header);
  }
}

TEST(HeapAllocator, OffsetsRoundTripAndAtChecksBounds) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  auto* p = static_cast<std::uint64_t*>(sut.allocate(sizeof(std::uint64_t)));
  *p = 42;
  const auto off = sut.offset_of(p);
  ASSERT_NE(off, Heap::kNoOffset);
  auto other = Heap::open(name.str());
  EXPECT_EQ(*other.at<std::uint64_t>(off), 42u);
  EXPECT_EQ(other.at<std::uint64_t>(sut.arena_size() - 4), nullptr);
  EXPECT_EQ(other.at<std::uint64_t>(off + 1), nullptr) << "misaligned";
  EXPECT_EQ(other.at<char>(Heap::kNoOffset), nullptr);
  int local = 0;
  EXPECT_EQ(sut.offset_of(&local), Heap::kNoOffset);
}

TEST(HeapAllocator, StatsReportSizeFreeBytesLargestBlockAndCount) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 20);
  auto before = sut.stats();
  EXPECT_EQ(before.size, 1u << 20);
  EXPECT_EQ(before.allocated_blocks, 0u);
  EXPECT_GE(before.largest_free_block, (1u << 20) - 64);
  void* p = sut.allocate(1000);
  auto after = sut.stats();
  EXPECT_EQ(after.allocated_blocks, 1u);
  EXPECT_LE(after.free_bytes, before.free_bytes - 1000);
  EXPECT_FALSE(after.corrupt);
  (void)sut.deallocate(p);
}

TEST(HeapAllocator, ManyThreadsAllocateAndFreeAtOnce) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 4 << 20);
  const int per_thread = zipc::test::scaled(20000);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::pair<unsigned char*, std::size_t>> mine;
      for (int i = 0; i < per_thread; ++i) {
        if (mine.size() < 64 && (mine.empty() || rng() % 2 == 0)) {
          std::size_t n = 1 + rng() % 2000;
          auto* p = static_cast<unsigned char*>(sut.allocate(n));
          if (p == nullptr) continue;
          std::memset(p, t + 1, n);
          mine.emplace_back(p, n);
        } else {
          auto [p, n] = mine.back();
          mine.pop_back();
          if (p[0] != t + 1 || p[n - 1] != t + 1) ++errors;
          if (sut.deallocate(p) != HeapStatus::ok) ++errors;
        }
      }
      for (auto [p, n] : mine) (void)sut.deallocate(p);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  auto check = sut.check();
  EXPECT_TRUE(check.ok) << check.problem;
  EXPECT_EQ(check.free_blocks, 1u);
}

TEST(HeapAllocator, ProcessesAllocateAndFreeInOneHeapAtOnce) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 4 << 20);
  const int per_child = zipc::test::scaled(20000);
  std::vector<zipc::test::Child> children;
  for (int k = 0; k < 3; ++k) {
    children.push_back(zipc::test::spawn([&, k] {
      auto heap = Heap::open(name.str());
      std::mt19937 rng(static_cast<unsigned>(k));
      std::vector<std::pair<unsigned char*, std::size_t>> mine;
      for (int i = 0; i < per_child; ++i) {
        if (mine.size() < 64 && (mine.empty() || rng() % 2 == 0)) {
          std::size_t n = 1 + rng() % 2000;
          auto* p = static_cast<unsigned char*>(heap.allocate(n));
          if (p == nullptr) continue;
          std::memset(p, k + 1, n);
          mine.emplace_back(p, n);
        } else {
          auto [p, n] = mine.back();
          mine.pop_back();
          if (p[0] != k + 1 || p[n - 1] != k + 1) return 2;
          if (heap.deallocate(p) != HeapStatus::ok) return 3;
        }
      }
      for (auto [p, n] : mine) (void)heap.deallocate(p);
      return 0;
    }));
  }
  for (auto& c : children) {
    auto r = c.wait();
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  auto check = sut.check();
  EXPECT_TRUE(check.ok) << check.problem;
  EXPECT_EQ(sut.stats().allocated_blocks, 0u);
}

// Taking a free block rewrites the next block's header (its prev_free flag
// and signature). A scribble there must be reported, not re-signed into a
// header that then passes every check.
TEST(HeapAllocator, AScribbledHeaderAfterAFreeBlockIsNotResignedByTheAllocationThatTakesIt) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  void* a = sut.allocate(64);
  auto* b = static_cast<char*>(sut.allocate(64));
  auto* c = static_cast<char*>(sut.allocate(64));
  ASSERT_TRUE(a && b && c);
  ASSERT_EQ(sut.deallocate(b), HeapStatus::ok);  // b is free; c's header says "previous free"
  std::uint64_t word;
  std::memcpy(&word, c - 8, 8);
  word ^= std::uint64_t{1} << 20;  // a peer flips a size bit in c's header word
  std::memcpy(c - 8, &word, 8);
  const auto r = sut.try_allocate(64);  // takes b back
  EXPECT_EQ(r.status, HeapStatus::corrupt);
  EXPECT_EQ(r.ptr, nullptr);
  EXPECT_FALSE(sut.check().ok);
}

}  // namespace allocator_test
