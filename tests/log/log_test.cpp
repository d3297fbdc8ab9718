// The logging hook (zipc/log.hpp): off by default, reports what the library
// does on its own, never per message.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <mutex>
#include <zipc/zipc.hpp>

#include "zipc_test.hpp"

namespace log_test {
namespace {

using zipc::test::TempName;

struct Captured {
  std::mutex m;
  std::vector<std::tuple<zipc::LogLevel, std::string, std::string>> lines;
};

struct HandlerScope {
  explicit HandlerScope(Captured& c) {
    zipc::set_log_level(zipc::LogLevel::debug);
    zipc::set_log_handler([&c](zipc::LogLevel l, std::string_view ch, std::string_view msg) {
      std::lock_guard lock(c.m);
      c.lines.emplace_back(l, std::string(ch), std::string(msg));
    });
  }
  ~HandlerScope() {
    zipc::set_log_handler(nullptr);
    zipc::set_log_level(zipc::LogLevel::info);
  }
};

void corrupt_header_checksum(const std::string& name) {
  const std::string path = zipc::Segment::path_for(name);
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::uint64_t p0 = 0;
  ASSERT_EQ(::pread(fd, &p0, 8, 64), 8);
  p0 ^= 1;  // params[0]: covered by the checksum
  ASSERT_EQ(::pwrite(fd, &p0, 8, 64), 8);
  ::close(fd);
}

TEST(Log, WithoutAHandlerNothingIsEnabled) {
  zipc::set_log_handler(nullptr);
  EXPECT_FALSE(zipc::detail::log_enabled(zipc::LogLevel::error));
}

TEST(Log, RefusingACorruptSegmentIsReportedWithItsNameAndCause) {
  TempName name("log-corrupt");
  { zipc::Topic::create(name.str()); }
  corrupt_header_checksum(name.str());
  Captured c;
  HandlerScope scope(c);
  EXPECT_THROW((void)zipc::Topic::open(name.str()), zipc::Error);
  std::lock_guard lock(c.m);
  ASSERT_EQ(c.lines.size(), 1u);
  EXPECT_EQ(std::get<0>(c.lines[0]), zipc::LogLevel::warn);
  EXPECT_EQ(std::get<1>(c.lines[0]), name.str());
  EXPECT_NE(std::get<2>(c.lines[0]).find("checksum"), std::string::npos) << std::get<2>(c.lines[0]);
}

TEST(Log, MessagesBelowTheLevelAreNotDelivered) {
  TempName name("log-level");
  { zipc::Topic::create(name.str()); }
  corrupt_header_checksum(name.str());
  Captured c;
  HandlerScope scope(c);
  zipc::set_log_level(zipc::LogLevel::error);
  EXPECT_THROW((void)zipc::Topic::open(name.str()), zipc::Error);
  std::lock_guard lock(c.m);
  EXPECT_TRUE(c.lines.empty());
}

TEST(Log, RecoveringADeadConsumersMessageIsReported) {
  TempName name("log-recover");
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 8;
  o.recovery_time = std::chrono::milliseconds(20);
  zipc::Queue q = zipc::Queue::create(name.str(), o, zipc::Role::producer);
  std::array<std::byte, 4> m{};
  ASSERT_EQ(q.try_send(m), zipc::Status::ok);
  zipc::test::Child child = zipc::test::spawn([&] {
    zipc::Queue c = zipc::Queue::open(name.str(), zipc::Role::consumer);
    zipc::QueueReadLoan held = c.try_acquire();  // dies holding it
    if (!held) return 1;
    ::_exit(0);
    return 0;
  });
  ASSERT_TRUE(child.wait().exited);
  Captured c;
  HandlerScope scope(c);
  EXPECT_GE(q.recover(), 1u);
  std::lock_guard lock(c.m);
  ASSERT_FALSE(c.lines.empty());
  EXPECT_EQ(std::get<0>(c.lines[0]), zipc::LogLevel::info);
  EXPECT_EQ(std::get<1>(c.lines[0]), name.str());
  EXPECT_NE(std::get<2>(c.lines[0]).find("dead"), std::string::npos);
}

}  // namespace

}  // namespace log_test
