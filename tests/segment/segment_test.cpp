#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "layout/segment_header.hpp"
#include "zipc/segment.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::Segment;
using zipc::SegmentKind;
using zipc::SegmentSpec;

namespace segment_test {
namespace {

SegmentSpec spec(std::uint64_t size = 4096, SegmentKind kind = SegmentKind::user) {
  SegmentSpec s;
  s.kind = kind;
  s.payload_size = size;
  s.params[0] = 42;
  return s;
}

void fill_pattern(std::byte* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(i * 7 + 1);
}

Errc open_errc(const std::string& name, SegmentKind kind = SegmentKind::user, const zipc::SegmentOptions& o = {}) {
  try {
    Segment::open(name, kind, o);
  } catch (const zipc::Error& e) {
    return e.errc();
  }
  return Errc::ok;
}

// Rewrites bytes of a segment file in place, as a hostile peer would.
void poke(const std::string& path, std::size_t offset, const void* data, std::size_t n) {
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, data, n, static_cast<off_t>(offset)), static_cast<ssize_t>(n));
  ::close(fd);
}

}  // namespace

TEST(Segment, CreatedSegmentIsSeenByOpenerWithItsPayloadAndParams) {
  zipc::test::TempName name("seg");
  auto sut = Segment::create(name.str(), spec(10000), fill_pattern);
  EXPECT_TRUE(sut.created_here());
  EXPECT_GE(sut.payload_size(), 10000u);
  auto other = Segment::open(name.str(), SegmentKind::user);
  EXPECT_FALSE(other.created_here());
  EXPECT_EQ(other.params()[0], 42u);
  EXPECT_EQ(other.creator(), zipc::ProcessId::current());
  ASSERT_EQ(other.payload_size(), sut.payload_size());
  EXPECT_EQ(std::memcmp(other.payload(), sut.payload(), 10000), 0);
  sut.payload()[5] = std::byte{0xAB};
  EXPECT_EQ(other.payload()[5], std::byte{0xAB});
}

TEST(Segment, CreateTwiceFailsWithAlreadyExists) {
  zipc::test::TempName name("seg");
  auto sut = Segment::create(name.str(), spec(), nullptr);
  try {
    Segment::create(name.str(), spec(), nullptr);
    FAIL() << "second create succeeded";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::already_exists);
    EXPECT_NE(std::string(e.what()).find(name.str()), std::string::npos) << e.what();
  }
}

TEST(Segment, OpenOfMissingSegmentFailsWithNotFoundNamingIt) {
  zipc::test::TempName name("missing");
  try {
    Segment::open(name.str(), SegmentKind::user);
    FAIL();
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::not_found);
    EXPECT_NE(std::string(e.what()).find(name.str()), std::string::npos);
  }
}

TEST(Segment, InvalidNamesAreRejectedWithAReason) {
  for (const std::string& bad : {std::string(), std::string("a/b"), std::string(".hidden"), std::string(300, 'x'),
                                 std::string("sp ace"), std::string("semi;colon")}) {
    try {
      Segment::create(bad, spec(), nullptr);
      FAIL() << "accepted '" << bad << "'";
    } catch (const zipc::Error& e) {
      EXPECT_EQ(e.errc(), Errc::invalid_name) << bad;
    }
  }
}

TEST(Segment, OpenAsAnotherKindFailsWithWrongKind) {
  zipc::test::TempName name("seg");
  auto sut = Segment::create(name.str(), spec(4096, SegmentKind::queue), nullptr);
  EXPECT_EQ(open_errc(name.str(), SegmentKind::topic), Errc::wrong_kind);
  EXPECT_EQ(open_errc(name.str(), SegmentKind::any), Errc::ok);
}

TEST(Segment, ForeignFileFailsWithBadMagic) {
  zipc::test::TempName name("seg");
  auto sut = Segment::create(name.str(), spec(), nullptr);
  const char junk[8] = {'n', 'o', 't', 'z', 'i', 'p', 'c', '!'};
  poke(Segment::path_for(name.str()), 0, junk, sizeof junk);
  EXPECT_EQ(open_errc(name.str()), Errc::bad_magic);
}

TEST(Segment, OtherLayoutVersionFailsWithVersionMismatch) {
  zipc::test::TempName name("seg");
  auto sut = Segment::create(name.str(), spec(), nullptr);
  const std::uint32_t v = zipc::layout::kLayoutVersion + 1;
  poke(Segment::path_for(name.str()), offsetof(zipc::layout::SegmentHeader, layout_version), &v, sizeof v);
  try {
    Segment::open(name.str(), SegmentKind::user);
    FAIL();
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), Errc::version_mismatch);
    EXPECT_NE(std::string(e.what()).find("version"), std::string::npos);
  }
}

TEST(Segment, FlippedParameterFailsWithCorruptHeader) {
  zipc::test::TempName name("seg");
  auto sut = Segment::create(name.str(), spec(), nullptr);
  const std::uint64_t p = 43;
  poke(Segment::path_for(name.str()), offsetof(zipc::layout::SegmentHeader, params), &p, sizeof p);
  EXPECT_EQ(open_errc(name.str()), Errc::corrupt_header);
}

TEST(Segment, ShortenedFileFailsWithTruncated) {
  zipc::test::TempName name("seg");
  auto sut = Segment::create(name.str(), spec(1 << 16), nullptr);
  ASSERT_EQ(::truncate(Segment::path_for(name.str()).c_str(), 8192), 0);
  EXPECT_EQ(open_errc(name.str()), Errc::truncated);
  ASSERT_EQ(::truncate(Segment::path_for(name.str()).c_str(), 100), 0);
  EXPECT_EQ(open_errc(name.str()), Errc::truncated);
}

TEST(Segment, ModeIsHonouredAndOtherUidIsDenied) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch uid";
  zipc::test::TempName name("seg");
  auto sut = Segment::create(name.str(), spec(), nullptr);
  struct stat st;
  ASSERT_EQ(::stat(Segment::path_for(name.str()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto child = zipc::test::spawn([&] {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 2;
    return open_errc(name.str()) == Errc::permission_denied ? 0 : 1;
  });
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(Segment, EveryoneModeLetsOtherUidOpen) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch uid";
  zipc::test::TempName name("seg");
  zipc::SegmentOptions o;
  o.mode = zipc::mode::everyone;
  auto sut = Segment::create(name.str(), spec(), nullptr, o);
  struct stat st;
  ASSERT_EQ(::stat(Segment::path_for(name.str()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  auto child = zipc::test::spawn([&] {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 2;
    return open_errc(name.str()) == Errc::ok ? 0 : 1;
  });
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(Segment, OpenWaitsForACreatorStillInitializing) {
  zipc::test::TempName name("seg");
  std::atomic<bool> in_init{false};
  std::thread creator([&] {
    auto s = Segment::create(name.str(), spec(), [&](std::byte* p, std::size_t) {
      in_init = true;
      std::this_thread::sleep_for(100ms);
      p[0] = std::byte{7};
    });
    std::this_thread::sleep_for(200ms);
  });
  while (!in_init) std::this_thread::yield();
  zipc::SegmentOptions o;
  o.open_timeout = 5000ms;
  auto sut = Segment::open(name.str(), SegmentKind::user, o);
  EXPECT_EQ(sut.payload()[0], std::byte{7});
  creator.join();
}

TEST(Segment, OpenGivesUpWithInitTimeoutWhileCreatorIsStuck) {
  zipc::test::TempName name("seg");
  std::atomic<bool> in_init{false}, release{false};
  std::thread creator([&] {
    auto s = Segment::create(name.str(), spec(), [&](std::byte*, std::size_t) {
      in_init = true;
      while (!release) std::this_thread::sleep_for(1ms);
    });
  });
  while (!in_init) std::this_thread::yield();
  zipc::SegmentOptions o;
  o.open_timeout = 50ms;
  EXPECT_EQ(open_errc(name.str(), SegmentKind::user, o), Errc::init_timeout);
  release = true;
  creator.join();
}

TEST(Segment, CreatorKilledDuringInitIsReportedAndReclaimed) {
  zipc::test::TempName name("seg");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto child = zipc::test::spawn([&] {
    Segment::create(name.str(), spec(), [&](std::byte*, std::size_t) {
      char c = 'x';
      (void)!::write(fds[1], &c, 1);
      for (;;) ::pause();  // killed here, mid-initialization
    });
    return 0;
  });
  char c;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  ::close(fds[0]);
  ::close(fds[1]);
  child.kill(SIGKILL);
  child.wait();
  EXPECT_EQ(open_errc(name.str()), Errc::creator_died);
  bool created = false;
  auto sut = Segment::open_or_create(name.str(), spec(), fill_pattern, {}, &created);
  EXPECT_TRUE(created);
  EXPECT_EQ(sut.payload()[1], std::byte{8});
  EXPECT_EQ(open_errc(name.str()), Errc::ok);
}

TEST(Segment, InitThatThrowsLeavesNoSegmentBehind) {
  zipc::test::TempName name("seg");
  EXPECT_THROW(Segment::create(name.str(), spec(), [](std::byte*, std::size_t) { throw std::runtime_error("no"); }),
               std::runtime_error);
  EXPECT_EQ(open_errc(name.str()), Errc::not_found);
}

TEST(Segment, OpenOrCreateRacedByManyProcessesCreatesExactlyOnce) {
  const int processes = 8;
  const int rounds = static_cast<int>(100 * zipc::test::stress_scale());
  for (int round = 0; round < rounds; ++round) {
    zipc::test::TempName name("race");
    std::vector<zipc::test::Child> children;
    for (int i = 0; i < processes; ++i) {
      children.push_back(zipc::test::spawn([&] {
        bool created = false;
        auto s = Segment::open_or_create(name.str(), spec(), fill_pattern, {}, &created);
        // Every process must see the creator's finished payload.
        for (std::size_t k = 0; k < 4096; ++k) {
          if (s.payload()[k] != static_cast<std::byte>(k * 7 + 1)) return 3;
        }
        return created ? 10 : 11;
      }));
    }
    int creators = 0;
    for (auto& c : children) {
      auto r = c.wait();
      ASSERT_TRUE(r.exited) << r.output;
      ASSERT_TRUE(r.exit_code == 10 || r.exit_code == 11) << "exit " << r.exit_code << " " << r.output;
      creators += r.exit_code == 10;
    }
    ASSERT_EQ(creators, 1) << "round " << round;
  }
}

TEST(Segment, FileBackedSegmentKeepsItsContentAfterReopen) {
  zipc::test::TempName name("file", /*file_backed=*/true);
  {
    auto s = Segment::create(name.str(), spec(8192), fill_pattern, name.options());
    s.payload()[3] = std::byte{99};
    s.sync();
  }
  auto sut = Segment::open(name.str(), SegmentKind::user, name.options());
  EXPECT_EQ(sut.payload()[3], std::byte{99});
  EXPECT_EQ(sut.payload()[4], std::byte{29});
  EXPECT_EQ(sut.path(), name.path());
}

TEST(Segment, ListShowsOurSegmentWithKindCreatorAndLiveness) {
  zipc::test::TempName name("list");
  auto s = Segment::create(name.str(), spec(4096, SegmentKind::topic), nullptr);
  bool found = false;
  for (const auto& info : Segment::list()) {
    if (info.name != name.str()) continue;
    found = true;
    EXPECT_TRUE(info.valid) << info.problem;
    EXPECT_EQ(info.kind, SegmentKind::topic);
    EXPECT_EQ(info.creator, zipc::ProcessId::current());
    EXPECT_TRUE(info.creator_alive);
    EXPECT_GE(info.size, 4096u + 4096u);
  }
  EXPECT_TRUE(found);
}

TEST(Segment, InspectReportsDeadCreator) {
  zipc::test::TempName name("dead");
  auto child = zipc::test::spawn([&] {
    Segment::create(name.str(), spec(), nullptr);
    return 0;
  });
  ASSERT_EQ(child.wait().exit_code, 0);
  auto info = Segment::inspect(name.str());
  EXPECT_TRUE(info.valid);
  EXPECT_FALSE(info.creator_alive);
}

TEST(Segment, FixedAddressThatIsTakenFailsWithAddressUnavailable) {
  zipc::test::TempName name("fixed");
  auto first = Segment::create(name.str(), spec(), nullptr);
  zipc::SegmentOptions o;
  o.fixed_address = first.base();  // already mapped by `first`
  EXPECT_EQ(open_errc(name.str(), SegmentKind::user, o), Errc::address_unavailable);
}

TEST(Segment, PrefaultAndHugePagePreferenceStillOpen) {
  zipc::test::TempName name("opts");
  zipc::SegmentOptions o;
  o.prefault = true;
  o.huge_pages = zipc::HugePages::prefer;
  auto sut = Segment::create(name.str(), spec(1 << 21), fill_pattern, o);
  EXPECT_EQ(sut.payload()[0], std::byte{1});
}

TEST(Segment, RemoveReportsWhetherItExisted) {
  zipc::test::TempName name("rm");
  { auto s = Segment::create(name.str(), spec(), nullptr); }
  EXPECT_TRUE(Segment::remove(name.str()));
  EXPECT_FALSE(Segment::remove(name.str()));
}

}  // namespace segment_test
