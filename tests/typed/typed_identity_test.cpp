#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "layout/type_record.hpp"
#include "typed_test_types.hpp"
#include "zipc/typed.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using typed_test::Order;
using typed_test::Quote;
using zipc::Errc;
using zipc::Status;
using zipc::TypedQueue;

namespace typed_identity_test {
namespace {

std::string mismatch_message(const std::function<void()>& open) {
  try {
    open();
  } catch (const zipc::Error& e) {
    if (e.errc() != Errc::type_mismatch) return std::string("wrong errc: ") + e.what();
    return e.what();
  }
  return "no error";
}

TEST(TypeIdentity, TheDefaultNameIsTheCompilersSpellingOfTheType) {
  EXPECT_EQ(zipc::type_name<Order>::value, "typed_test::Order");
  const zipc::TypeIdentity id = zipc::type_identity_of<Order>();
  EXPECT_EQ(id.size, sizeof(Order));
  EXPECT_EQ(id.align, alignof(Order));
  EXPECT_EQ(id.field_count, 3u);
  EXPECT_EQ(id.version, 0u);
}

TEST(TypeIdentity, ASpecialisedNameAndVersionAreUsed) {
  const zipc::TypeIdentity id = zipc::type_identity_of<typed_test::Versioned>();
  EXPECT_EQ(id.name, "test.Versioned");
  EXPECT_EQ(id.version, 3u);
  EXPECT_NE(id.fingerprint, zipc::type_fingerprint("test.Versioned", 8, 8, 1, 2));
  EXPECT_EQ(id.fingerprint, zipc::type_fingerprint("test.Versioned", 8, 8, 1, 3));
}

TEST(TypeIdentity, AnExtraFieldOfTheSameSizeChangesTheFingerprint) {
  static_assert(sizeof(Quote) == sizeof(typed_test::Triple));
  EXPECT_EQ(zipc::type_identity_of<typed_test::Triple>().field_count, 3u);
  EXPECT_NE(zipc::type_fingerprint("X", 16, 8, 2, 0), zipc::type_fingerprint("X", 16, 8, 3, 0));
}

TEST(TypeIdentity, TypesThatCannotLiveInSharedMemoryAreRefused) {
  struct Virtual {
    virtual ~Virtual() = default;
  };
  struct Owning {
    std::string s;
  };
  struct MixedAccess {
    int a;

   private:
    [[maybe_unused]] int b_ = 0;
  };
  static_assert(zipc::ShmMessage<Order>);
  static_assert(!zipc::ShmMessage<Order*>);
  static_assert(!zipc::ShmMessage<Order&>);
  static_assert(!zipc::ShmMessage<int Order::*>);
  static_assert(!zipc::ShmMessage<Virtual>);
  static_assert(!zipc::ShmMessage<Owning>);
  static_assert(!zipc::ShmMessage<MixedAccess>);
  static_assert(!zipc::ShmMessage<int[4]>);
  struct alignas(64) Wide {
    int x;
  };
  static_assert(!zipc::ShmMessage<Wide>);
  SUCCEED();
}

TEST(TypedChannel, OpeningWithAnotherTypeFailsNamingBothTypesAndSizes) {
  zipc::test::TempName name("ti-mismatch");
  auto q = TypedQueue<Order>::create(name.str());
  const std::string what = mismatch_message([&] { (void)TypedQueue<Quote>::open(name.str()); });
  EXPECT_NE(what.find("typed_test::Order' (24 bytes"), std::string::npos) << what;
  EXPECT_NE(what.find("typed_test::Quote' (16 bytes"), std::string::npos) << what;
  EXPECT_NE(what.find(name.str()), std::string::npos) << what;
}

TEST(TypedChannel, OpeningWithTheSameTypeSharesTheQueue) {
  zipc::test::TempName name("ti-same");
  auto a = TypedQueue<Order>::create(name.str());
  auto b = TypedQueue<Order>::open(name.str());
  ASSERT_EQ(a.try_send(Order{3, 4.0, 5}), Status::ok);
  Order out{};
  ASSERT_EQ(b.try_recv(out), Status::ok);
  EXPECT_EQ(out.id, 3u);
}

TEST(TypedChannel, OpenOrCreateChecksTheTypeOfAnExistingQueue) {
  zipc::test::TempName name("ti-ooc");
  bool created = false;
  auto a = TypedQueue<Order>::open_or_create(name.str(), {}, zipc::Role::both, &created);
  EXPECT_TRUE(created);
  auto b = TypedQueue<Order>::open_or_create(name.str(), {}, zipc::Role::both, &created);
  EXPECT_FALSE(created);
  const std::string what = mismatch_message([&] { (void)TypedQueue<Quote>::open_or_create(name.str()); });
  EXPECT_NE(what.find("Quote"), std::string::npos) << what;
}

TEST(TypedChannel, ATypedOpenOfAByteQueueSaysItHoldsNoType) {
  zipc::test::TempName name("ti-untyped");
  auto q = zipc::Queue::create(name.str(), zipc::QueueOptions{});
  const std::string what = mismatch_message([&] { (void)TypedQueue<Order>::open(name.str()); });
  EXPECT_NE(what.find("holds no type"), std::string::npos) << what;
  EXPECT_FALSE(q.segment().type_identity().has_value());
}

TEST(TypedChannel, TheByteApiOpensATypedQueueAndReadsItsIdentity) {
  zipc::test::TempName name("ti-bytes");
  auto typed = TypedQueue<Order>::create(name.str());
  ASSERT_EQ(typed.try_send(Order{8, 9.0, 10}), Status::ok);
  auto raw = zipc::Queue::open(name.str());
  const auto id = raw.segment().type_identity();
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(*id, zipc::type_identity_of<Order>());
  const zipc::SegmentInfo info = zipc::Segment::inspect(name.str());
  ASSERT_TRUE(info.type.has_value());
  EXPECT_EQ(info.type->name, "typed_test::Order");
  EXPECT_EQ(info.type->size, sizeof(Order));
  std::array<std::byte, 64> buf{};
  const zipc::IoResult r = raw.try_recv(buf);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.size, sizeof(Order));
}

TEST(TypedChannel, AScribbledTypeRecordIsACorruptHeaderNotAMismatch) {
  zipc::test::TempName name("ti-scribble");
  auto typed = TypedQueue<Order>::create(name.str());
  std::byte* rec = typed.bytes().segment().base() + zipc::layout::kTypeRecordOffset;
  rec[60] ^= std::byte{0x5a};  // a byte of the name: the checksum no longer matches
  try {
    (void)TypedQueue<Order>::open(name.str());
    ADD_FAILURE() << "opened a segment whose type record fails its checksum";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::corrupt_header) << e.what();
  }
  auto raw = zipc::Queue::open(name.str());  // the byte API does not look at it
  EXPECT_THROW((void)raw.segment().type_identity(), zipc::Error);
  EXPECT_NE(zipc::Segment::inspect(name.str()).problem.find("type record"), std::string::npos);
}

TEST(TypedChannel, AnotherProcessOpeningWithAnotherTypeGetsTypeMismatch) {
  zipc::test::TempName name("ti-xproc");
  auto q = TypedQueue<Order>::create(name.str());
  auto wrong = zipc::test::spawn([&] {
    const std::string what = mismatch_message([&] { (void)TypedQueue<Quote>::open(name.str()); });
    zipc::test::report(what);
    return what.find("Order") != std::string::npos && what.find("Quote") != std::string::npos ? 0 : 1;
  });
  const zipc::test::ChildResult w = wrong.wait();
  EXPECT_EQ(w.exit_code, 0) << w.output;
  EXPECT_NE(w.output.find("type mismatch"), std::string::npos) << w.output;
  auto right = zipc::test::spawn([&] {
    auto mine = TypedQueue<Order>::open(name.str());
    auto loan = mine.reserve(1s);
    if (!loan) return 2;
    loan->id = 77;
    return loan.commit().ok() ? 0 : 3;
  });
  EXPECT_EQ(right.wait().exit_code, 0);
  Order out{};
  ASSERT_EQ(q.recv(out, 1s), Status::ok);
  EXPECT_EQ(out.id, 77u);
}

}  // namespace

namespace {

struct HelperRun {
  int exit_code = -1;
  std::string output;
};

HelperRun run_helper(const std::string& name, const char* type) {
  const std::string cmd = std::string(ZIPC_TYPED_OPEN_HELPER) + " " + name + " " + type + " 2>&1";
  HelperRun r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) r.output += buf;
  const int st = ::pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(TypedChannel, ASeparatelyBuiltProgramOpeningWithAnotherTypeGetsTypeMismatch) {
  zipc::test::TempName name("ti-exec");
  auto q = TypedQueue<Order>::create(name.str());
  const HelperRun wrong = run_helper(name.str(), "quote");
  EXPECT_EQ(wrong.exit_code, 10) << wrong.output;
  EXPECT_NE(wrong.output.find("holds 'typed_test::Order' (24 bytes"), std::string::npos) << wrong.output;
  EXPECT_NE(wrong.output.find("opened as 'typed_test::Quote' (16 bytes"), std::string::npos) << wrong.output;
  const HelperRun right = run_helper(name.str(), "order");
  EXPECT_EQ(right.exit_code, 0) << right.output;
  Order out{};
  EXPECT_EQ(q.recv(out, 1s), Status::ok);
}

}  // namespace

}  // namespace typed_identity_test
