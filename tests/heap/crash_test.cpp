#include <gtest/gtest.h>
#include <sys/mman.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "heap/heap_lock.hpp"
#include "heap_support.hpp"
#include "layout/heap_layout.hpp"
#include "zipc/heap.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::Heap;
using zipc::HeapStatus;

namespace crash_test {
namespace {

// Allocates and frees until killed; writes one byte to ready_fd once busy.
int churn_forever(Heap& heap, unsigned seed, int ready_fd) {
  std::mt19937 rng(seed);
  std::vector<void*> mine;
  for (std::uint64_t n = 0;; ++n) {
    if (n == 100) {
      const char c = 1;
      if (::write(ready_fd, &c, 1) != 1) return 4;
    }
    if (mine.size() < 200 && (mine.empty() || rng() % 2 == 0)) {
      if (void* p = heap.allocate(16 + rng() % 4096, std::size_t{16} << (rng() % 3))) mine.push_back(p);
    } else {
      const std::size_t i = rng() % mine.size();
      if (heap.deallocate(mine[i]) != HeapStatus::ok) return 3;
      mine[i] = mine.back();
      mine.pop_back();
    }
  }
}

}  // namespace

TEST(HeapCrash, ProcessesKilledInsideTheAllocatorNeverBlockOthersNorCorruptTheHeap) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 8 << 20);
  const int rounds = std::max(zipc::test::scaled(40), 15);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  for (int round = 0; round < rounds; ++round) {
    std::vector<zipc::test::Child> kids;
    for (unsigned k = 0; k < 2; ++k) {
      kids.push_back(
          zipc::test::spawn([&, k] { return churn_forever(sut, static_cast<unsigned>(round) * 7 + k, ready[1]); }));
    }
    for (std::size_t k = 0; k < kids.size(); ++k) {
      char c;
      ASSERT_EQ(::read(ready[0], &c, 1), 1);
    }
    for (auto& kid : kids) zipc::test::kill_after_random_delay(kid, 100us, 3ms);
    for (auto& kid : kids) {
      auto r = kid.wait();
      ASSERT_EQ(r.signal, SIGKILL) << "a child stopped by itself: " << r.output;
    }
    // The survivor is never blocked, and every block is where it should be.
    void* p = sut.allocate(100);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(sut.deallocate(p), HeapStatus::ok);
    auto check = sut.check();
    ASSERT_TRUE(check.ok) << "round " << round << ": " << check.problem;
  }
  ::close(ready[0]);
  ::close(ready[1]);
  std::printf("heap repaired after %llu deaths inside the allocator in %d rounds\n",
              static_cast<unsigned long long>(sut.stats().repairs), rounds);
}

TEST(HeapCrash, ADeathHalfWayThroughASplitIsRepairedByTheNextCaller) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  void* keep = sut.allocate(64);
  auto child = zipc::test::spawn([&] {
    auto* c = sut.control();
    (void)zipc::detail::owner_lock(c->alloc_lock);
    // Scramble what repair rebuilds (lists, bitmaps, counters), as a death
    // between the steps of a split would, then die holding the lock.
    for (auto& row : c->heads)
      for (auto& h : row) h = zipc::layout::kNil;
    c->fl_bitmap = 0;
    c->free_bytes = 12345;
    ::_exit(0);
    return 0;
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  void* p = sut.allocate(1000);
  ASSERT_NE(p, nullptr) << "the free lists were rebuilt from the block walk";
  auto check = sut.check();
  EXPECT_TRUE(check.ok) << check.problem;
  EXPECT_EQ(sut.stats().repairs, 1u);
  EXPECT_EQ(sut.deallocate(p), HeapStatus::ok);
  EXPECT_EQ(sut.deallocate(keep), HeapStatus::ok);
  EXPECT_EQ(sut.check().free_blocks, 1u);
}

TEST(HeapCrash, ADeathThatLeavesABrokenBlockChainMarksTheHeapCorrupt) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  auto* p = static_cast<unsigned char*>(sut.allocate(64));
  auto child = zipc::test::spawn([&] {
    (void)zipc::detail::owner_lock(sut.control()->alloc_lock);
    std::memset(p - 8, 0xee, 8);  // a header the walk cannot trust
    ::_exit(0);
    return 0;
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  auto a = sut.try_allocate(10);
  EXPECT_EQ(a.ptr, nullptr);
  EXPECT_EQ(a.status, HeapStatus::corrupt);
  EXPECT_TRUE(sut.stats().corrupt);
  EXPECT_EQ(sut.deallocate(p), HeapStatus::corrupt);
  EXPECT_FALSE(sut.check().ok);
}

TEST(HeapFixedAddress, EveryProcessMapsAFixedHeapAtTheRecordedAddress) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16, zipc::test::fixed_options());
  void* base = sut.base_address();
  auto child = zipc::test::spawn([&] {
    sut.detach();
    auto h = Heap::open(name.str());
    return h.base_address() == base && h.address_mode() == zipc::AddressMode::fixed ? 0 : 1;
  });
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(HeapFixedAddress, OpeningWhereTheAddressIsTakenFailsWithAddressUnavailable) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16, zipc::test::fixed_options());
  void* base = sut.base_address();
  const std::size_t size = sut.segment().mapped_size();
  sut.detach();
  // Something else now lives at the heap's address.
  void* squatter = ::mmap(base, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(squatter, base);
  try {
    Heap::open(name.str());
    FAIL() << "opened a fixed heap somewhere else";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::address_unavailable);
    EXPECT_NE(std::string(e.what()).find("fixed address"), std::string::npos) << e.what();
  }
  ::munmap(squatter, 4096);
  EXPECT_EQ(Heap::open(name.str()).base_address(), base);
  (void)size;
}

TEST(HeapFixedAddress, CreateAtAGivenAddressUsesItOrFailsWhenItIsTaken) {
  zipc::test::TempName name("heap");
  zipc::test::TempName other("heap");
  auto first = Heap::create(name.str(), 1 << 16, zipc::test::fixed_options());
  auto options = zipc::test::fixed_options();
  options.address = first.base_address();
  EXPECT_EQ(zipc::test::errc_of([&] { Heap::create(other.str(), 1 << 16, options); }), Errc::address_unavailable);
  const auto wanted = first.base_address();
  first.detach();
  auto second = Heap::create(other.str(), 1 << 16, options);
  EXPECT_EQ(second.base_address(), wanted);
  options.address = reinterpret_cast<void*>(0x1001);
  EXPECT_EQ(zipc::test::errc_of([&] { Heap::create("x", 1 << 16, options); }), Errc::invalid_argument);
}

TEST(HeapFixedAddress, OpenOrCreateByManyProcessesEndsWithOneHeap) {
  zipc::test::TempName name("heap");
  std::vector<zipc::test::Child> kids;
  for (int k = 0; k < 4; ++k) {
    kids.push_back(zipc::test::spawn([&] {
      auto h = Heap::open_or_create(name.str(), 1 << 16, zipc::test::fixed_options());
      auto* n = h.find_or_construct<std::atomic<int>>("n", 0);
      n->fetch_add(1);
      return 0;
    }));
  }
  for (auto& k : kids) EXPECT_EQ(k.wait().exit_code, 0);
  auto sut = Heap::open(name.str());
  EXPECT_EQ(sut.find<std::atomic<int>>("n")->load(), 4);
}

}  // namespace crash_test
