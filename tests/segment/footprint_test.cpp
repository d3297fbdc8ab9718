// Memory a segment costs: reserved at create, touched by use, committed only
// with prefault; a create that does not fit its file system fails naming the
// sizes (docs/guide/segment.md, "Memory").
//
// The cases that need a small /dev/shm run in a forked child that mounts a
// tmpfs of a chosen size over /dev/shm in a mount namespace of its own
// (unshare: root, or an unprivileged user namespace). Where neither is
// allowed they skip.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>

#include <regex.h>
#include <array>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>

#include "small_shm.hpp"
#include "zipc/queue.hpp"
#include "zipc/segment.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Errc;
using zipc::Segment;

namespace footprint_test {
namespace {

using zipc::test::with_small_shm;

constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kGoal = 2 * kMiB;  // resident goal of a default queue or topic

// Bytes of shared memory this process has mapped in (RssShmem).
std::uint64_t rss_shmem() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "RssShmem:") {
      std::uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
    in.ignore(4096, '\n');
  }
  return 0;
}

// In a child that must die of SIGBUS: the kernel's default action, set with
// the raw system call (the sanitizers intercept sigaction to report faults).
void default_sigbus_action() noexcept {
  struct {
    void* handler = nullptr;  // SIG_DFL
    unsigned long flags = 0;
    void* restorer = nullptr;
    unsigned long mask = 0;
  } action;
  (void)::syscall(SYS_rt_sigaction, SIGBUS, &action, nullptr, sizeof action.mask);
}

// Whether all of text matches the POSIX extended regular expression ere.
// (POSIX regex, not std::regex: gcc 12 at -O1 under ASan warns inside <regex>.)
bool full_match(const std::string& text, const std::string& ere) {
  regex_t re;
  if (regcomp(&re, ("^(" + ere + ")$").c_str(), REG_EXTENDED | REG_NOSUB) != 0) return false;
  const bool matched = regexec(&re, text.c_str(), 0, nullptr, 0) == 0;
  regfree(&re);
  return matched;
}

// The error message of f, or "" when it throws no out_of_memory.
std::string out_of_memory_message(const std::function<void()>& f) {
  std::string what;
  return zipc::test::errc_of(f, &what) == Errc::out_of_memory ? what : std::string();
}

zipc::SegmentSpec user_spec(std::uint64_t payload) {
  zipc::SegmentSpec s;
  s.kind = zipc::SegmentKind::user;
  s.payload_size = payload;
  return s;
}

}  // namespace

TEST(Footprint, TopicThatDoesNotFitInDevShmFailsNamingTheSizeAskedAndTheRoomLeft) {
  with_small_shm("1m", [] {
    zipc::TopicOptions o;
    o.capacity_bytes = 4 * kMiB;
    const std::string why = out_of_memory_message([&] { (void)zipc::Topic::create("too-big", o); });
    zipc::test::report(why);
    if (!full_match(
            why,
            R"(topic 'too-big': .*needs 4\.[0-9] MiB of shared memory, /dev/shm has (1\.0 MiB|[0-9.]+ KiB) free.*)")) {
      return 1;
    }
    return zipc::test::errc_of([] { (void)Segment::inspect("too-big"); }) == Errc::not_found ? 0 : 2;  // no leftover
  });
}

TEST(Footprint, TopicJustOverTheRoomLeftGivesBothSizesInBytesWhenTheyWouldRoundAlike) {
  with_small_shm("64m", [] {  // Docker's default /dev/shm and a 64 MiB ring: the control block does not fit
    zipc::TopicOptions o;
    o.capacity_bytes = 64 * kMiB;
    const std::string why = out_of_memory_message([&] { (void)zipc::Topic::create("frames", o); });
    zipc::test::report(why);
    return full_match(why, R"(.*needs 6715[0-9]{4} bytes of shared memory, /dev/shm has 67108864 bytes free.*)") ? 0
                                                                                                                 : 1;
  });
}

TEST(Footprint, CreateThatFitsInASmallDevShmSucceedsWithoutTakingItsRoom) {
  with_small_shm("1m", [] {
    zipc::TopicOptions o;
    o.capacity_bytes = 512 << 10;
    o.max_message_size = 1024;
    auto a = zipc::Topic::create("fits-a", o);
    auto b = zipc::Topic::create("fits-b", o);  // a's 512 KiB are reserved, not taken
    return Segment::inspect("fits-a").allocated < 128 * 1024 ? 0 : 1;
  });
}

TEST(Footprint, FileBackedSegmentOnASmallFileSystemFailsNamingItsDirectory) {
  with_small_shm("1m", [] {
    zipc::SegmentOptions o;
    o.path = "/dev/shm/file-backed.seg";
    const std::string why =
        out_of_memory_message([&] { (void)Segment::create("file-backed", user_spec(2 * kMiB), nullptr, o); });
    zipc::test::report(why);
    return why.find("needs 2.0 MiB of shared memory, /dev/shm has ") != std::string::npos ? 0 : 1;
  });
}

TEST(Footprint, PrefaultOpenOfASegmentThatNoLongerFitsFailsInsteadOfFaultingLater) {
  with_small_shm("1m", [] {
    auto sut = Segment::create("sparse", user_spec(768 << 10), nullptr);
    {
      std::ofstream filler("/dev/shm/filler", std::ios::binary);
      const std::string page(4096, 'x');
      for (int i = 0; i < 150; ++i) filler << page;  // 600 KiB: the sparse segment no longer fits
    }
    zipc::SegmentOptions o;
    o.prefault = true;
    const std::string why = out_of_memory_message([&] { (void)Segment::open("sparse", zipc::SegmentKind::user, o); });
    zipc::test::report(why);
    return why.find("needs 7") != std::string::npos && why.find("KiB free") != std::string::npos ? 0 : 1;
  });
}

TEST(Footprint, TouchingAReservedPageOfAFullDevShmRaisesSigbus) {
  // The residual risk docs/guide/segment.md describes: reserved pages are not
  // allocated, so a /dev/shm filled by others after create faults on touch.
  with_small_shm("1m", [] {
    auto sut = Segment::create("victim", user_spec(768 << 10), nullptr);
    {
      std::ofstream filler("/dev/shm/filler", std::ios::binary);
      const std::string page(4096, 'x');
      for (int i = 0; i < 250; ++i) filler << page;  // /dev/shm full
    }
    auto toucher = zipc::test::spawn([&] {
      default_sigbus_action();
      std::memset(sut.payload(), 1, sut.payload_size());
      return 0;
    });
    const zipc::test::ChildResult r = toucher.wait();
    return !r.exited && r.signal == SIGBUS ? 0 : 1;
  });
}

TEST(Footprint, DefaultsFitManyChannelsInDockersDefaultSixtyFourMiB) {
  with_small_shm("64m", [] {
    std::vector<zipc::Queue> queues;
    std::vector<zipc::Topic> topics;
    for (int i = 0; i < 24; ++i) {
      queues.push_back(zipc::Queue::create("q" + std::to_string(i), {}));
      topics.push_back(zipc::Topic::create("t" + std::to_string(i)));
    }
    std::uint64_t held = 0;
    for (int i = 0; i < 24; ++i) {
      held += Segment::inspect("q" + std::to_string(i)).allocated + Segment::inspect("t" + std::to_string(i)).allocated;
    }
    zipc::test::report("48 channels hold " + std::to_string(held) + " bytes");
    return held < 32 * kMiB ? 0 : 1;
  });
}

TEST(Footprint, DefaultQueueAndTopicStayUnderTwoMiBAfterCreateAndAThousandMessages) {
  zipc::test::TempName qname("fq");
  zipc::test::TempName tname("ft");
  auto child = zipc::test::spawn([&] {  // a process of its own: RssShmem starts from nothing
    const std::uint64_t rss0 = rss_shmem();
    auto q = zipc::Queue::create(qname.str(), {});
    auto t = zipc::Topic::create(tname.str());
    const std::uint64_t q_created = Segment::inspect(qname.str()).allocated;
    const std::uint64_t t_created = Segment::inspect(tname.str()).allocated;
    const std::uint64_t rss_created = rss_shmem() - rss0;
    auto sub = t.subscribe({zipc::From::oldest(), zipc::Delivery::reliable});
    auto pub = t.publisher();
    std::array<std::byte, 64> msg{}, buf{};
    for (int i = 0; i < 1000; ++i) {
      if (q.send(msg, 1s) != zipc::Status::ok || !q.recv(buf, 1s).ok()) return 3;
      if (!pub.publish(msg, 1s).ok() || !sub.read(buf, 1s).ok()) return 4;
    }
    const std::uint64_t q_used = Segment::inspect(qname.str()).allocated;
    const std::uint64_t t_used = Segment::inspect(tname.str()).allocated;
    const std::uint64_t rss_used = rss_shmem() - rss0;
    zipc::test::report("queue " + std::to_string(q_created) + " -> " + std::to_string(q_used) + ", topic " +
                       std::to_string(t_created) + " -> " + std::to_string(t_used) + ", rss " +
                       std::to_string(rss_created) + " -> " + std::to_string(rss_used));
    const bool ok = q_created <= kGoal && q_used <= kGoal && t_created <= kGoal && t_used <= kGoal &&
                    rss_created <= 2 * kGoal && rss_used <= 2 * kGoal;
    return ok ? 0 : 1;
  });
  const zipc::test::ChildResult r = child.wait();
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.output;
}

TEST(Footprint, TopicResidentAfterCreateDoesNotGrowWithItsCapacity) {
  zipc::test::TempName small("fs");
  zipc::test::TempName big("fb");
  zipc::TopicOptions o;
  auto a = zipc::Topic::create(small.str(), o);
  o.capacity_bytes = 64 * kMiB;
  auto b = zipc::Topic::create(big.str(), o);
  const zipc::SegmentInfo sut = Segment::inspect(big.str());
  EXPECT_GT(sut.size, 64 * kMiB);
  EXPECT_EQ(sut.allocated, Segment::inspect(small.str()).allocated);  // the same pages of control data
  EXPECT_LT(sut.allocated, 256u << 10);
}

TEST(Footprint, PrefaultMakesTheWholeSegmentResidentAtCreate) {
  zipc::test::TempName name("fp");
  auto child = zipc::test::spawn([&] {
    const std::uint64_t rss0 = rss_shmem();
    zipc::TopicOptions o;
    o.capacity_bytes = 4 * kMiB;
    o.segment.prefault = true;
    auto t = zipc::Topic::create(name.str(), o);
    const zipc::SegmentInfo sut = Segment::inspect(name.str());
    const std::uint64_t rss = rss_shmem() - rss0;
    zipc::test::report("size " + std::to_string(sut.size) + ", allocated " + std::to_string(sut.allocated) + ", rss " +
                       std::to_string(rss));
    return sut.allocated == sut.size && rss >= sut.size ? 0 : 1;
  });
  const zipc::test::ChildResult r = child.wait();
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.output;
}

TEST(Footprint, PrefaultOpenMakesAnUntouchedSegmentResident) {
  zipc::test::TempName name("fo");
  auto created = Segment::create(name.str(), user_spec(kMiB), nullptr);
  ASSERT_LT(Segment::inspect(name.str()).allocated, created.mapped_size());
  zipc::SegmentOptions o;
  o.prefault = true;
  auto sut = Segment::open(name.str(), zipc::SegmentKind::user, o);
  EXPECT_EQ(Segment::inspect(name.str()).allocated, sut.mapped_size());
}

}  // namespace footprint_test
