// Read-only heap readers: a heap opened with SegmentOptions::read_only is
// mapped PROT_READ. Such a reader finds named objects without the directory
// lock (taking it is a write), retrying a walk that a writer's change
// overlapped; everything that writes is refused by name; a write through what
// it found faults in its own process only.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "layout/heap_layout.hpp"
#include "zipc/heap.hpp"
#include "zipc/process.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::Heap;

namespace read_only_heap_test {
namespace {

struct Quote {
  std::uint64_t id;
  std::uint64_t price;
  std::uint64_t check;  // id ^ price ^ magic: a torn or wrong object fails it
};
constexpr std::uint64_t kMagic = 0x5eed5eed5eed5eedull;

zipc::HeapOptions read_only() {
  zipc::HeapOptions o;
  o.segment.read_only = true;
  return o;
}

}  // namespace

TEST(ReadOnlyHeap, AReaderInAnotherProcessFindsWhatTheWriterBuiltAndIsRefusedEveryWrite) {
  zipc::test::TempName name("roheap");
  auto heap = Heap::create(name.str(), 1 << 16);
  heap.construct<Quote>("ibm", Quote{7, 140, 7 ^ 140 ^ kMagic});
  auto reader = zipc::test::spawn([&] {
    auto h = Heap::open(name.str(), read_only());
    if (!h.read_only()) return 2;
    const Quote* q = h.find<Quote>("ibm");
    if (q == nullptr || q->id != 7 || q->price != 140 || q->check != (7 ^ 140 ^ kMagic)) return 3;
    if (h.find<Quote>("absent") != nullptr) return 4;
    if (zipc::test::errc_of([&] { (void)h.find<int>("ibm"); }) != Errc::wrong_kind) return 5;
    std::string why;
    if (zipc::test::errc_of([&] { h.construct<int>("n", 1); }, &why) != Errc::wrong_role) return 6;
    if (why.find(name.str()) == std::string::npos || why.find("read-only") == std::string::npos) {
      zipc::test::report(why);
      return 7;
    }
    if (zipc::test::errc_of([&] { (void)h.destroy<Quote>("ibm"); }) != Errc::wrong_role) return 8;
    if (h.try_allocate(64).status != zipc::HeapStatus::invalid_argument) return 9;
    if (h.deallocate(const_cast<Quote*>(q)) != zipc::HeapStatus::invalid_argument) return 10;
    if (h.check().ok || h.stats().allocated_blocks != 0) return 11;
    return 0;
  });
  auto res = reader.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;
  EXPECT_TRUE(heap.check().ok) << heap.check().problem;
}

TEST(ReadOnlyHeap, AReaderThatWritesThroughWhatItFoundFaultsAloneAndTheWriterCarriesOn) {
  zipc::test::TempName name("roheapw");
  auto heap = Heap::create(name.str(), 1 << 16);
  Quote* mine = heap.construct<Quote>("ibm", Quote{7, 140, 7 ^ 140 ^ kMagic});
  auto hostile = zipc::test::spawn([&] {
    auto h = Heap::open(name.str(), read_only());
    auto* q = h.find<Quote>("ibm");
    if (q == nullptr) return 2;
    zipc::test::default_segv_action();
    q->price = 0;  // faults: the mapping is PROT_READ
    return 0;
  });
  auto res = hostile.wait();
  EXPECT_EQ(res.signal, SIGSEGV) << "exit " << res.exit_code << ": " << res.output;
  EXPECT_EQ(mine->price, 140u);
  EXPECT_NE(heap.construct<Quote>("aapl", Quote{8, 190, 8 ^ 190 ^ kMagic}), nullptr);
  EXPECT_TRUE(heap.destroy<Quote>("ibm"));
  EXPECT_TRUE(heap.check().ok) << heap.check().problem;
}

// A writer keeps building and destroying named objects (so freed entries are
// reused under the reader's feet) while a read-only reader looks up a stable
// object and the changing ones: it never sees a damaged directory or a wrong
// object, and always finds the stable one.
TEST(ReadOnlyHeap, AReaderFindsObjectsCorrectlyWhileAWriterChurnsTheDirectory) {
  zipc::test::TempName name("roheapchurn");
  auto heap = Heap::create(name.str(), 1 << 20);
  heap.construct<Quote>("anchor", Quote{1, 100, 1 ^ 100 ^ kMagic});
  const int lookups = static_cast<int>(20000 * zipc::test::stress_scale());
  auto reader = zipc::test::spawn([&] {
    auto h = Heap::open(name.str(), read_only());
    // Start once the writer churns.
    for (auto until = std::chrono::steady_clock::now() + 10s; h.find<Quote>("q0") == nullptr;) {
      if (std::chrono::steady_clock::now() > until) return 4;
    }
    int churn_found = 0;
    for (int i = 0; i < lookups; ++i) {
      const Quote* a = h.find<Quote>("anchor");
      if (a == nullptr || a->check != (a->id ^ a->price ^ kMagic) || a->id != 1) return 2;
      // A churned object may be destroyed right after find returns (as with
      // the lock); what find returned must still be a pointer into the arena.
      const auto* q = h.find<Quote>("q" + std::to_string(i % 64));
      if (q != nullptr) {
        ++churn_found;
        const auto* lo = reinterpret_cast<const std::byte*>(q);
        if (lo < h.arena() || lo + sizeof(Quote) > h.arena() + h.arena_size()) return 3;
      }
    }
    zipc::test::report("churned objects found: " + std::to_string(churn_found));
    return 0;
  });
  std::atomic<bool> stop{false};
  std::uint64_t changes = 0;
  std::thread writer([&] {
    for (int round = 0; !stop.load(); ++round) {
      for (int k = 0; k < 64; ++k) {
        const std::string n = "q" + std::to_string(k);
        const auto id = static_cast<std::uint64_t>(k);
        if ((round + k) % 2 == 0) {
          (void)heap.find_or_construct<Quote>(n, Quote{id, 5, id ^ 5 ^ kMagic});
        } else {
          (void)heap.destroy<Quote>(n);
        }
        ++changes;
      }
    }
  });
  auto res = reader.wait();
  stop.store(true);
  writer.join();
  EXPECT_EQ(res.exit_code, 0) << res.output;
  EXPECT_GT(changes, 0u);
  std::printf("%s; %llu directory changes meanwhile\n", res.output.c_str(), static_cast<unsigned long long>(changes));
  EXPECT_TRUE(heap.check().ok) << heap.check().problem;
}

// A writer that dies inside a change leaves names_version odd: the reader
// waits for a live holder (and gives up with busy after its bound), and takes
// the directory as it is once the holder is dead (the list is whole).
TEST(ReadOnlyHeap, AWriterDeadInsideAChangeDoesNotStallAReaderAndALiveOneMakesItWaitBoundedly) {
  zipc::test::TempName name("roheapdead");
  auto heap = Heap::create(name.str(), 1 << 16);
  heap.construct<Quote>("ibm", Quote{7, 140, 7 ^ 140 ^ kMagic});
  zipc::layout::HeapControl* c = heap.control();
  const std::uint64_t even = c->names_version.load();
  ASSERT_EQ(even % 2, 0u);

  // A live holder mid-change: this process.
  c->names_version.store(even + 1);
  c->names_lock.owner.store(zipc::pack(zipc::ProcessId::current()));
  auto waits = zipc::test::spawn([&] {
    auto h = Heap::open(name.str(), read_only());
    std::string why;
    const Errc e = zipc::test::errc_of([&] { (void)h.find<Quote>("ibm"); }, &why);
    zipc::test::report(why);
    return e == Errc::busy ? 0 : 2;
  });
  auto res = waits.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;

  // The holder died: a child that exits at once leaves its id behind.
  auto grab = zipc::test::spawn([&] {
    c->names_lock.owner.store(zipc::pack(zipc::ProcessId::current()));  // shared mapping: the parent sees it
    return 0;
  });
  (void)grab.wait();
  const std::uint64_t dead = c->names_lock.owner.load();
  ASSERT_FALSE(zipc::is_alive_packed(dead));
  auto finds = zipc::test::spawn([&] {
    auto h = Heap::open(name.str(), read_only());
    const Quote* q = h.find<Quote>("ibm");
    return q != nullptr && q->price == 140 ? 0 : 2;
  });
  auto res2 = finds.wait();
  EXPECT_EQ(res2.exit_code, 0) << res2.output;

  // The next writer takes the dead holder's lock and moves the version on.
  EXPECT_NE(heap.construct<int>("after", 1), nullptr);
  EXPECT_EQ(c->names_version.load() % 2, 0u);
  EXPECT_TRUE(heap.check().ok) << heap.check().problem;
}

}  // namespace read_only_heap_test
