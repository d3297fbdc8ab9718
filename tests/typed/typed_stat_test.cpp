// `zipc stat` shows a typed channel's message type, as text and in its JSON.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

#include "typed_test_types.hpp"
#include "zipc/queue.hpp"
#include "zipc/typed.hpp"
#include "zipc_test.hpp"

namespace typed_stat_test {
namespace {

#ifdef ZIPC_TOOL_EXE
std::string run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) out += buf.data();
  ::pclose(p);
  return out;
}

TEST(TypedStat, ZipcStatShowsTheMessageTypeAndItsJsonCarriesIt) {
  zipc::test::TempName name("ti-stat");
  auto q = zipc::TypedQueue<typed_test::Order>::create(name.str());
  const std::string text = run(std::string(ZIPC_TOOL_EXE) + " stat " + name.str());
  EXPECT_NE(text.find("type:      'typed_test::Order' (24 bytes, align 8"), std::string::npos) << text;
  const std::string json = run(std::string(ZIPC_TOOL_EXE) + " stat --json " + name.str());
  EXPECT_NE(json.find("\"name\": \"typed_test::Order\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"size\": 24"), std::string::npos) << json;
}

TEST(TypedStat, AnUntypedChannelHasANullType) {
  zipc::test::TempName name("ti-stat-bytes");
  auto q = zipc::Queue::create(name.str(), zipc::QueueOptions{});
  const std::string text = run(std::string(ZIPC_TOOL_EXE) + " stat " + name.str());
  EXPECT_EQ(text.find("type:"), std::string::npos) << text;
  EXPECT_NE(text.find("kind:      queue"), std::string::npos) << text;
  const std::string json = run(std::string(ZIPC_TOOL_EXE) + " stat --json " + name.str());
  EXPECT_NE(json.find("\"type\": null"), std::string::npos) << json;
}
#endif

}  // namespace

}  // namespace typed_stat_test
