#include <gtest/gtest.h>

#include "heap_support.hpp"
#include "zipc/heap.hpp"

using zipc::Errc;
using zipc::Heap;

namespace named_test {
namespace {
struct Point {
  int x, y;
  Point(int a, int b) : x(a), y(b) {}
};
struct Counted {
  static inline int destroyed = 0;
  ~Counted() { ++destroyed; }
};
struct Throws {
  Throws() { throw std::runtime_error("no"); }
};

}  // namespace

TEST(HeapNames, ConstructedObjectIsFoundByNameInAnotherProcess) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  Point* p = sut.construct<Point>("origin", 3, 4);
  ASSERT_NE(p, nullptr);
  auto child = zipc::test::spawn([&] {
    auto heap = Heap::open(name.str());
    Point* q = heap.find<Point>("origin");
    return q != nullptr && q->x == 3 && q->y == 4 ? 0 : 1;
  });
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(HeapNames, ConstructingATakenNameFailsAndFindOrConstructReturnsTheExistingObject) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  Point* p = sut.construct<Point>("p", 1, 2);
  EXPECT_EQ(zipc::test::errc_of([&] { sut.construct<Point>("p", 5, 6); }), Errc::already_exists);
  EXPECT_EQ(sut.find_or_construct<Point>("p", 7, 8), p);
  EXPECT_EQ(p->x, 1);
}

TEST(HeapNames, FindingWithTheWrongTypeIsAWrongKindError) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  sut.construct<int>("n", 1);
  EXPECT_EQ(zipc::test::errc_of([&] { (void)sut.find<double>("n"); }), Errc::wrong_kind);
  EXPECT_EQ(sut.find<int>("absent"), nullptr);
}

TEST(HeapNames, DestroyRunsTheDestructorAndFreesTheMemory) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  const auto before = sut.stats().allocated_blocks;
  sut.construct<Counted>("c");
  sut.construct<int>("other", 5);
  Counted::destroyed = 0;
  EXPECT_TRUE(sut.destroy<Counted>("c"));
  EXPECT_EQ(Counted::destroyed, 1);
  EXPECT_FALSE(sut.destroy<Counted>("c"));
  EXPECT_EQ(sut.find<Counted>("c"), nullptr);
  EXPECT_EQ(*sut.find<int>("other"), 5);
  EXPECT_TRUE(sut.destroy<int>("other"));
  EXPECT_EQ(sut.stats().allocated_blocks, before);
}

TEST(HeapNames, AThrowingConstructorLeavesNoEntryAndNoLeak) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  EXPECT_THROW(sut.construct<Throws>("t"), std::runtime_error);
  EXPECT_EQ(sut.find<Throws>("t"), nullptr);
  EXPECT_EQ(sut.stats().allocated_blocks, 0u);
}

TEST(HeapNames, ObjectsTooLargeForTheHeapAreOutOfMemory) {
  zipc::test::TempName name("heap");
  auto sut = Heap::create(name.str(), 1 << 16);
  struct Big {
    char bytes[1 << 17];
  };
  EXPECT_EQ(zipc::test::errc_of([&] { sut.construct<Big>("big"); }), Errc::out_of_memory);
}

}  // namespace named_test
