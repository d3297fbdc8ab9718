// Setup calls speak one language: open_or_create refuses options that
// disagree with an existing segment (Errc::options_mismatch naming both
// values) unless accept_existing; every segment kind carries a layout
// version; zipc::version() reports the library's version.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>

#include "layout/rpc_layout.hpp"
#include "zipc/heap.hpp"
#include "zipc/queue.hpp"
#include "zipc/rpc.hpp"
#include "zipc/topic.hpp"
#include "zipc/version.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Errc;

namespace setup_test {
namespace {

// Runs fn, which must throw zipc::Error with errc; returns its message.
template <class Fn>
std::string error_of(Fn&& fn, Errc errc) {
  try {
    fn();
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), errc) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no zipc::Error thrown";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

zipc::QueueOptions queue_geometry(std::size_t blocks, std::size_t block_size) {
  zipc::QueueOptions o;
  o.block_count = blocks;
  o.block_size = block_size;
  return o;
}

TEST(OpenOrCreate, QueueWithAnotherGeometryFailsNamingBothValues) {
  zipc::test::TempName name("api");
  auto first = zipc::Queue::open_or_create(name.str(), queue_geometry(8, 64));
  const std::string msg =
      error_of([&] { (void)zipc::Queue::open_or_create(name.str(), queue_geometry(16, 64)); }, Errc::options_mismatch);
  EXPECT_TRUE(contains(msg, "block_count 16 asked, 8 existing")) << msg;
  EXPECT_FALSE(contains(msg, "block_size")) << msg;  // only what differs
  EXPECT_TRUE(contains(msg, name.str())) << msg;
}

TEST(OpenOrCreate, QueueWithTheSameGeometryOpensTheExistingOne) {
  zipc::test::TempName name("api");
  auto first = zipc::Queue::open_or_create(name.str(), queue_geometry(8, 64));
  bool created = true;
  auto second = zipc::Queue::open_or_create(name.str(), queue_geometry(8, 64), zipc::Role::both, &created);
  EXPECT_FALSE(created);
  EXPECT_EQ(second.block_count(), 8u);
}

TEST(OpenOrCreate, QueueAcceptExistingAttachesWithTheExistingGeometry) {
  zipc::test::TempName name("api");
  auto first = zipc::Queue::open_or_create(name.str(), queue_geometry(8, 64));
  zipc::QueueOptions other = queue_geometry(16, 128);
  other.accept_existing = true;
  bool created = true;
  auto second = zipc::Queue::open_or_create(name.str(), other, zipc::Role::both, &created);
  EXPECT_FALSE(created);
  EXPECT_EQ(second.block_count(), 8u);
  EXPECT_EQ(second.block_size(), 64u);
  const std::array<std::byte, 64> msg{};
  EXPECT_EQ(second.try_send(msg), zipc::Status::ok);
}

TEST(OpenOrCreate, TopicWithAnotherGeometryFailsUnlessAcceptExisting) {
  zipc::test::TempName name("api");
  zipc::TopicOptions o;
  o.capacity_bytes = 8192;
  o.max_message_size = 256;
  auto first = zipc::Topic::open_or_create(name.str(), o);
  zipc::TopicOptions bigger = o;
  bigger.capacity_bytes = 16384;
  bigger.max_message_size = 512;
  const std::string msg =
      error_of([&] { (void)zipc::Topic::open_or_create(name.str(), bigger); }, Errc::options_mismatch);
  EXPECT_TRUE(contains(msg, "capacity_bytes 16384 bytes asked, 8192 bytes existing")) << msg;
  EXPECT_TRUE(contains(msg, "max_message_size 512 bytes asked, 256 bytes existing")) << msg;
  zipc::TopicOptions rounded = o;
  rounded.capacity_bytes = 8000;  // rounds up to the existing 8192: the same geometry
  EXPECT_NO_THROW((void)zipc::Topic::open_or_create(name.str(), rounded));
  bigger.accept_existing = true;
  auto second = zipc::Topic::open_or_create(name.str(), bigger);
  EXPECT_EQ(second.capacity_bytes(), 8192u);
  EXPECT_EQ(second.max_message_size(), 256u);
}

TEST(OpenOrCreate, HeapOfAnotherSizeFailsUnlessAcceptExisting) {
  zipc::test::TempName name("api");
  auto first = zipc::Heap::open_or_create(name.str(), 1 << 16);
  const std::string msg =
      error_of([&] { (void)zipc::Heap::open_or_create(name.str(), 1 << 17); }, Errc::options_mismatch);
  EXPECT_TRUE(contains(msg, "131072 bytes asked, 65536 bytes existing")) << msg;
  zipc::HeapOptions accept;
  accept.accept_existing = true;
  auto second = zipc::Heap::open_or_create(name.str(), 1 << 17, accept);
  EXPECT_EQ(second.arena_size(), first.arena_size());
}

TEST(LayoutVersion, RpcConnectRefusesAnotherLayoutVersionNamingBoth) {
  zipc::test::TempName name("api");
  auto server = zipc::RpcServer::create(name.str(), {});
  auto seg = zipc::Segment::open(name.str(), zipc::SegmentKind::rpc);
  auto* control = reinterpret_cast<zipc::layout::RpcControl*>(seg.payload());
  ASSERT_EQ(control->layout_version, zipc::layout::kRpcLayoutVersion);
  control->layout_version = 99;  // as a future zipc would have written it
  const std::string msg = error_of([&] { (void)zipc::RpcClient::connect(name.str(), 100ms); }, Errc::version_mismatch);
  EXPECT_TRUE(contains(msg, "rpc layout version 99")) << msg;
  EXPECT_TRUE(contains(msg, "reads version " + std::to_string(zipc::layout::kRpcLayoutVersion))) << msg;
  control->layout_version = zipc::layout::kRpcLayoutVersion;
  EXPECT_NO_THROW((void)zipc::RpcClient::connect(name.str(), 1s));
}

TEST(Version, RuntimeVersionMatchesTheHeaderMacros) {
  const std::string expected = std::to_string(ZIPC_VERSION_MAJOR) + "." + std::to_string(ZIPC_VERSION_MINOR) + "." +
                               std::to_string(ZIPC_VERSION_PATCH);
  EXPECT_EQ(expected, ZIPC_VERSION_STRING);
  EXPECT_STREQ(zipc::version(), ZIPC_VERSION_STRING);
  EXPECT_EQ(ZIPC_VERSION, ZIPC_VERSION_MAJOR * 10000 + ZIPC_VERSION_MINOR * 100 + ZIPC_VERSION_PATCH);
}

}  // namespace

}  // namespace setup_test
