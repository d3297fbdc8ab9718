#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "heap_support.hpp"
#include "layout/heap_layout.hpp"
#include "zipc/heap.hpp"

using zipc::Heap;
using zipc::HeapStatus;

// A peer that scribbles anywhere in the heap (control block, lock words,
// block headers, free-list links, named entries) may make calls fail with
// corrupt; it must never make one crash, hang, or hand out memory outside the
// arena. ASan builds also catch any read or write outside the mapping.
TEST(HeapHostile, RandomScribblesNeverMakeACallCrashHangOrLeaveTheArena) {
  const auto seed = zipc::test::test_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int rounds = zipc::test::scaled(150);
  int corrupt_seen = 0;
  for (int round = 0; round < rounds; ++round) {
    zipc::test::TempName name("heap");
    auto sut = Heap::create(name.str(), 256 << 10);
    const auto arena = reinterpret_cast<std::uintptr_t>(sut.arena());
    const auto arena_end = arena + sut.arena_size();
    std::vector<void*> mine;
    for (int i = 0; i < 60; ++i) {
      if (void* p = sut.allocate(1 + rng() % 3000)) mine.push_back(p);
    }
    *sut.construct<std::uint64_t>("n", 7) += 1;
    for (std::size_t i = 0; i < mine.size(); i += 3) (void)sut.deallocate(mine[i]);

    // Scribble: aligned 8-byte words, in the control block or the arena.
    auto* control = reinterpret_cast<unsigned char*>(sut.control());
    const int hits = 1 + static_cast<int>(rng() % 6);
    for (int h = 0; h < hits; ++h) {
      std::uint64_t junk = rng();
      if (rng() % 4 == 0) junk &= 0xffff;  // small values look like plausible offsets
      unsigned char* at;
      if (rng() % 2 == 0) {
        at = control + (rng() % (sizeof(zipc::layout::HeapControl) / 8)) * 8;
      } else {
        at = reinterpret_cast<unsigned char*>(sut.arena()) + (rng() % (sut.arena_size() / 8)) * 8;
      }
      std::memcpy(at, &junk, 8);
    }

    for (int op = 0; op < 200; ++op) {
      switch (rng() % 5) {
        case 0:
        case 1: {
          const std::size_t n = 1 + rng() % 5000;
          auto a = sut.try_allocate(n, std::size_t{16} << (rng() % 3));
          if (a.ptr != nullptr) {
            const auto p = reinterpret_cast<std::uintptr_t>(a.ptr);
            ASSERT_GE(p, arena);
            ASSERT_LE(p + n, arena_end) << "handed out memory past the arena";
            std::memset(a.ptr, 0xcd, n);
            mine.push_back(a.ptr);
          } else if (a.status == HeapStatus::corrupt) {
            ++corrupt_seen;
          }
          break;
        }
        case 2:
          if (!mine.empty()) {
            const std::size_t i = rng() % mine.size();
            (void)sut.deallocate(mine[i]);
            mine[i] = mine.back();
            mine.pop_back();
          }
          break;
        case 3: (void)sut.stats(); break;
        default: try { (void)sut.find<std::uint64_t>("n");
          } catch (const zipc::Error&) {
            // a damaged directory is reported, not followed
          }
          (void)sut.check();
          break;
      }
    }
  }
  std::printf("%d calls answered corrupt across %d scribbled heaps\n", corrupt_seen, rounds);
}
