#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "heap_support.hpp"
#include "zipc/heap.hpp"
#include "zipc/mutex.hpp"
#include "zipc/stl_allocator.hpp"

using zipc::Heap;
using zipc::RelocatableAllocator;
using zipc::StlAllocator;

namespace containers_test {
namespace {

using String = std::basic_string<char, std::char_traits<char>, StlAllocator<char>>;
using Map = std::map<String, String, std::less<>, StlAllocator<std::pair<const String, String>>>;

template <class Lock>
struct Shared {
  explicit Shared(const StlAllocator<char>& a) : map(a) {}
  Lock lock;
  Map map;
};

constexpr int kKeys = 100;

// Every worker repeatedly erases and re-inserts key_<id>_<k> -> val_<i> (docs/design/reference.md §4).
template <class Lock>
void map_from_processes() {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 8 << 20, zipc::test::fixed_options());
  StlAllocator<char> alloc(heap);
  heap.construct<Shared<Lock>>("shared", alloc);
  const int workers = 3;
  const int iterations = zipc::test::scaled(20000);
  std::vector<zipc::test::Child> kids;
  for (int id = 0; id < workers; ++id) {
    kids.push_back(zipc::test::spawn([&, id] {
      heap.detach();  // drop the mapping fork inherited; open maps at the recorded address
      auto h = Heap::open(name.str());
      auto* s = h.find<Shared<Lock>>("shared");
      if (s == nullptr) return 2;
      StlAllocator<char> a(h);
      for (int i = 0; i < iterations; ++i) {
        String key("key_" + std::to_string(id) + "_" + std::to_string(i % kKeys), a);
        String value("val_" + std::to_string(i), a);
        std::lock_guard g(s->lock);
        s->map.erase(key);
        s->map.emplace(std::move(key), std::move(value));
      }
      return 0;
    }));
  }
  for (auto& k : kids) {
    auto r = k.wait();
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  auto* s = heap.find<Shared<Lock>>("shared");
  ASSERT_EQ(s->map.size(), static_cast<std::size_t>(workers * std::min(kKeys, iterations)));
  for (int id = 0; id < workers; ++id) {
    for (int k = 0; k < std::min(kKeys, iterations); ++k) {
      const int last = (iterations - 1 - k) / kKeys * kKeys + k;  // the last i with i % kKeys == k
      auto it = s->map.find(std::string_view("key_" + std::to_string(id) + "_" + std::to_string(k)));
      ASSERT_NE(it, s->map.end());
      EXPECT_EQ(std::string_view(it->second), "val_" + std::to_string(last));
    }
  }
  const auto before = heap.stats().allocated_blocks;
  EXPECT_GT(before, s->map.size());  // one node each (short strings stay inline)
  heap.destroy<Shared<Lock>>("shared");
  EXPECT_EQ(heap.stats().allocated_blocks, 0u) << "every node and string was freed";
  EXPECT_TRUE(heap.check().ok);
}

}  // namespace

TEST(HeapContainers, ProcessesShareOneStdMapUnderAMutexInFixedMode) {
  map_from_processes<zipc::Mutex>();
}

TEST(HeapContainers, ProcessesShareOneStdMapUnderASpinLockInFixedMode) {
  map_from_processes<zipc::SpinLock>();
}

TEST(HeapContainers, VectorStringDequeAndUnorderedMapBuiltByAChildAreReadAndFreedByTheParent) {
  using Vec = std::vector<String, StlAllocator<String>>;
  using Deque = std::deque<int, StlAllocator<int>>;
  using Hash =
      std::unordered_map<int, String, std::hash<int>, std::equal_to<>, StlAllocator<std::pair<const int, String>>>;
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 4 << 20, zipc::test::fixed_options());
  auto child = zipc::test::spawn([&] {
    heap.detach();  // drop the mapping fork inherited; open maps at the recorded address
    auto h = Heap::open(name.str());
    StlAllocator<char> a(h);
    auto* v = h.construct<Vec>("vec", a);
    auto* d = h.construct<Deque>("deque", a);
    auto* m = h.construct<Hash>("hash", a);
    for (int i = 0; i < 1000; ++i) {
      v->emplace_back("a string long enough to leave the small buffer " + std::to_string(i), a);
      d->push_front(i);
      m->emplace(i, String(std::to_string(i * i), a));
    }
    return 0;
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  auto* v = heap.find<Vec>("vec");
  auto* d = heap.find<Deque>("deque");
  auto* m = heap.find<Hash>("hash");
  ASSERT_TRUE(v && d && m);
  ASSERT_EQ(v->size(), 1000u);
  ASSERT_EQ(d->size(), 1000u);
  ASSERT_EQ(m->size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(std::string_view((*v)[static_cast<std::size_t>(i)]),
              "a string long enough to leave the small buffer " + std::to_string(i));
    EXPECT_EQ((*d)[static_cast<std::size_t>(i)], 999 - i);
    EXPECT_EQ(std::string_view(m->at(i)), std::to_string(i * i));
  }
  heap.destroy<Vec>("vec");
  heap.destroy<Deque>("deque");
  heap.destroy<Hash>("hash");
  EXPECT_EQ(heap.stats().allocated_blocks, 0u);
}

TEST(HeapContainers, StlAllocatorThrowsBadAllocWhenTheHeapIsFull) {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 64 << 10, zipc::test::fixed_options());
  std::vector<char, StlAllocator<char>> v{StlAllocator<char>(heap)};
  EXPECT_THROW(v.resize(1 << 20), std::bad_alloc);
  EXPECT_TRUE(heap.check().ok);
}

// Relocatable mode: the same heap mapped twice in one process (two different
// addresses) stands in for two processes that map it at different places.
TEST(HeapContainers, VectorStringAndDequeWithOffsetPointersReadTheSameFromAnotherMapping) {
  using RString = std::basic_string<char, std::char_traits<char>, RelocatableAllocator<char>>;
  using RVec = std::vector<RString, RelocatableAllocator<RString>>;
  using RDeque = std::deque<std::uint64_t, RelocatableAllocator<std::uint64_t>>;
  zipc::test::TempName name("heap");
  auto first = Heap::create(name.str(), 4 << 20);
  auto second = Heap::open(name.str());
  ASSERT_NE(first.arena(), second.arena()) << "the test needs two different mappings";
  RelocatableAllocator<char> a1(first);
  auto* v = first.construct<RVec>("vec", a1);
  auto* d = first.construct<RDeque>("deque", a1);
  for (int i = 0; i < 500; ++i) {
    v->emplace_back("relocatable string number " + std::to_string(i), a1);
    d->push_back(static_cast<std::uint64_t>(i) * 3);
    d->push_front(static_cast<std::uint64_t>(i));
  }
  // Read and grow through the second mapping.
  auto* v2 = second.find<RVec>("vec");
  auto* d2 = second.find<RDeque>("deque");
  ASSERT_NE(v2, nullptr);
  ASSERT_NE(static_cast<void*>(v2), static_cast<void*>(v));
  ASSERT_EQ(v2->size(), 500u);
  for (int i = 0; i < 500; ++i) {
    EXPECT_EQ(std::string_view((*v2)[static_cast<std::size_t>(i)]), "relocatable string number " + std::to_string(i));
  }
  ASSERT_EQ(d2->size(), 1000u);
  EXPECT_EQ(d2->front(), 499u);
  EXPECT_EQ(d2->back(), 499u * 3);
  RelocatableAllocator<char> a2(second);
  for (int i = 500; i < 1000; ++i) v2->emplace_back("grown through the second mapping " + std::to_string(i), a2);
  ASSERT_EQ(v->size(), 1000u);
  EXPECT_EQ(std::string_view((*v)[999]), "grown through the second mapping 999");
  // Unmap the first: the second still reads everything, then frees it.
  first.detach();
  EXPECT_EQ(std::string_view((*v2)[0]), "relocatable string number 0");
  second.destroy<RVec>("vec");
  second.destroy<RDeque>("deque");
  EXPECT_EQ(second.stats().allocated_blocks, 0u);
  EXPECT_TRUE(second.check().ok);
}

TEST(HeapContainers, OffsetPtrCopiesPointAtTheSameTargetFromAnyAddress) {
  int target[4] = {1, 2, 3, 4};
  zipc::offset_ptr<int> a = &target[1];
  zipc::offset_ptr<int> b = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is under test
  EXPECT_EQ(b.get(), &target[1]);
  EXPECT_EQ(*(b + 1), 3);
  EXPECT_EQ(b - zipc::offset_ptr<int>(&target[0]), 1);
  zipc::offset_ptr<int> null;
  EXPECT_FALSE(null);
  EXPECT_TRUE(null == nullptr);
  zipc::offset_ptr<void> vp = b;
  EXPECT_EQ(static_cast<zipc::offset_ptr<int>>(vp).get(), &target[1]);
}

TEST(HeapContainers, AnAllocatorWhoseHeapWasClosedFailsWithBadAllocInsteadOfCrashing) {
  zipc::test::TempName name("heap");
  auto heap = Heap::create(name.str(), 64 << 10);
  StlAllocator<int> alloc(heap);
  int* p = alloc.allocate(4);
  alloc.deallocate(p, 4);
  heap.detach();
  EXPECT_THROW((void)alloc.allocate(4), std::bad_alloc);
}

TEST(HeapContainers, OpenOrCreateInRelocatableModeSharesOneHeap) {
  zipc::test::TempName name("heap");
  bool created = false;
  auto first = Heap::open_or_create(name.str(), 1 << 16, {}, &created);
  EXPECT_TRUE(created);
  auto second = Heap::open_or_create(name.str(), 1 << 16, {}, &created);
  EXPECT_FALSE(created);
  *first.construct<int>("x", 0) = 41;
  EXPECT_EQ(*second.find<int>("x"), 41);
}

}  // namespace containers_test
