// The bridge's position file (bridge/src/state_file.hpp): one record
// rewritten in place; a file in the older four-number form still reads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "state_file.hpp"

namespace zipc::bridge_detail {
namespace state_file_test {
namespace {

class BridgeStateFile : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    path_ = (std::filesystem::temp_directory_path() /
             ("zipc-state-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)) / "m.in")
                .string();
  }
  void TearDown() override { std::filesystem::remove_all(std::filesystem::path(path_).parent_path()); }
  void write_raw(const void* data, std::size_t n) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(data, 1, n, f), n);
    std::fclose(f);
  }
  std::string path_;
};

TEST_F(BridgeStateFile, ARecordWrittenReadsBackWithAllFiveNumbers) {
  StateFile sut;
  sut.open(path_);
  EXPECT_FALSE(sut.read());
  sut.write({1, 2, 3, 4, 5});
  sut.write({6, 7, 8, 9, 10});  // in place: the last one is what reads
  const auto r = sut.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (StateFile::Record{6, 7, 8, 9, 10}));
  EXPECT_EQ(std::filesystem::file_size(path_), 7 * sizeof(std::uint64_t));
}

TEST_F(BridgeStateFile, AFileInTheOlderFourNumberFormReadsWithTheFifthZero) {
  // magic, four numbers, FNV-1a over them: what a bridge before the fifth wrote.
  std::array<std::uint64_t, 6> raw{0x5A42525053544154ull, 11, 12, 13, 14, 0};
  std::uint64_t h = 1469598103934665603ull;
  for (int i = 1; i <= 4; ++i) h = (h ^ raw[i]) * 1099511628211ull;
  raw[5] = h;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  write_raw(raw.data(), sizeof(raw));
  StateFile sut;
  sut.open(path_);
  const auto r = sut.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (StateFile::Record{11, 12, 13, 14, 0}));
}

TEST_F(BridgeStateFile, AFileWithABadCheckOrTooShortReadsAsNone) {
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  {
    StateFile w;
    w.open(path_);
    w.write({1, 2, 3, 4, 5});
  }
  std::filesystem::resize_file(path_, 3 * sizeof(std::uint64_t));
  StateFile sut;
  sut.open(path_);
  EXPECT_FALSE(sut.read());
  const std::array<std::uint64_t, 7> junk{0x5A42525053544154ull, 1, 2, 3, 4, 5, 6};
  write_raw(junk.data(), sizeof(junk));
  EXPECT_FALSE(sut.read());
}

}  // namespace

}  // namespace state_file_test
}  // namespace zipc::bridge_detail
