// A publisher killed half-way through writing the (cursor, next sequence)
// pair leaves its version odd. Each test rewinds a topic to one of the three
// states a kill -9 inside Publisher::publish_commit leaves, with the
// publisher dead, and checks that the next reader, publisher or process
// after a restart carries on with every committed record (found by CI: a
// persistent topic refused every subscriber after such a kill, "the commit
// version stays odd").
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>

#include "layout/topic_layout.hpp"
#include "topic_support.hpp"
#include "zipc/error.hpp"
#include "zipc/process.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using topic_test::control_of;
using topic_test::dead_process;
using zipc::Delivery;
using zipc::From;
using zipc::Status;
using zipc::Topic;
using zipc::TopicOptions;

namespace topic_dead_commit_test {
namespace {

constexpr std::size_t kMessage = 100;
constexpr std::uint64_t kRecord = zipc::layout::record_bytes(kMessage);

// Where in publish_commit the publisher died: it stores the version odd, then
// next_sequence, then the cursor, then the version even.
enum class DiedAfter {
  odd_version,    // the pair is still the old one
  next_sequence,  // next_sequence moved, the cursor did not: the pair disagrees
  cursor,         // the pair is the new one, only the version is left odd
};

std::string to_string(DiedAfter d) {
  switch (d) {
    case DiedAfter::odd_version: return "odd_version";
    case DiedAfter::next_sequence: return "next_sequence";
    case DiedAfter::cursor: return "cursor";
  }
  return "?";
}

std::array<std::byte, kMessage> message(std::uint64_t seq) {
  std::array<std::byte, kMessage> m{};
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::byte>((seq * 31 + i) & 0xff);
  return m;
}

TopicOptions options(zipc::Multiplicity publishers) {
  TopicOptions o;
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.publishers = publishers;
  o.recovery_time = 200ms;
  return o;
}

// Publishes records 0, 1, 2, then rewinds the pair to the commit of record 2
// by a publisher that died where `died` says (record 2 is finished: its tag
// is stored before the pair changes). Returns the odd version left.
std::uint64_t die_committing_the_third(Topic& topic, DiedAfter died) {
  {
    auto pub = topic.publisher();
    for (std::uint64_t n = 0; n < 3; ++n) EXPECT_EQ(pub.try_publish(message(n)).sequence, n);
  }
  auto* control = control_of(topic);
  const std::uint64_t even = control->pub.commit_version.load();
  EXPECT_EQ(even % 2, 0u);
  EXPECT_EQ(control->pub.cursor.load(), 3 * kRecord);
  if (died != DiedAfter::cursor) control->pub.cursor.store(2 * kRecord);
  if (died == DiedAfter::odd_version) control->pub.next_sequence.store(2);
  control->pub.commit_version.store(even + 1);
  // The dead publisher: single mode keeps it in one word, multi mode in a
  // slot whose intent is the claim it was committing.
  if (topic.publishers() == zipc::Multiplicity::single) {
    control->admin.single_publisher.store(dead_process());
  } else {
    control->publishers[0].intent.store(2 * kRecord);
    control->publishers[0].owner.store(dead_process());
  }
  return even + 1;
}

// Reads sequences [0, n) intact from `sub`, then nothing more.
void expect_records(zipc::Subscriber& sub, std::uint64_t n) {
  std::array<std::byte, 256> buf;
  for (std::uint64_t seq = 0; seq < n; ++seq) {
    const auto r = sub.try_read(buf);
    ASSERT_EQ(r.status, Status::ok) << seq;
    ASSERT_EQ(r.sequence, seq);
    ASSERT_EQ(r.size, kMessage);
    const auto want = message(seq);
    EXPECT_EQ(std::memcmp(buf.data(), want.data(), kMessage), 0) << seq;
  }
  EXPECT_EQ(sub.try_read(buf).status, Status::empty);
  EXPECT_EQ(sub.abandoned(), 0u);
}

class DeadCommit : public ::testing::TestWithParam<DiedAfter> {};

INSTANTIATE_TEST_SUITE_P(Topic, DeadCommit,
                         ::testing::Values(DiedAfter::odd_version, DiedAfter::next_sequence, DiedAfter::cursor),
                         [](const auto& info) { return to_string(info.param); });

TEST_P(DeadCommit, ANewSubscriberSettlesTheVersionAndReadsEveryCommittedRecord) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), options(zipc::Multiplicity::single));
  const std::uint64_t odd = die_committing_the_third(topic, GetParam());
  auto sub = topic.subscribe({From::oldest(), Delivery::reliable});
  const std::uint64_t version = control_of(topic)->pub.commit_version.load();
  EXPECT_EQ(version % 2, 0u);
  EXPECT_GT(version, odd);
  // The pair agrees, and the record the dead publisher finished is kept at
  // once (when the cursor had not moved, next_sequence was rolled back to
  // the cursor's record, then moved past it), not a recovery time later.
  EXPECT_EQ(control_of(topic)->pub.cursor.load(), 3 * kRecord);
  EXPECT_EQ(control_of(topic)->pub.next_sequence.load(), 3u);
  EXPECT_EQ(topic.next_sequence(), 3u);
  expect_records(sub, 3);
}

TEST_P(DeadCommit, ThePublisherThatTakesOverCarriesOnAtTheNextSequence) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), options(zipc::Multiplicity::single));
  const std::uint64_t odd = die_committing_the_third(topic, GetParam());
  {
    auto pub = topic.publisher();  // replaces the dead one; nobody read the pair since
    EXPECT_EQ(pub.try_publish(message(3)).sequence, 3u);
  }
  const std::uint64_t version = control_of(topic)->pub.commit_version.load();
  EXPECT_EQ(version % 2, 0u) << "the first commit after a dead one leaves the version even";
  EXPECT_GT(version, odd);
  auto sub = topic.subscribe({From::oldest(), Delivery::reliable});
  expect_records(sub, 4);
}

TEST_P(DeadCommit, AProcessThatOpensTheTopicAfterTheCrashReadsEveryCommittedRecord) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), options(zipc::Multiplicity::single));
  (void)die_committing_the_third(topic, GetParam());
  auto reader = zipc::test::spawn([&] {
    auto t = Topic::open(name.str(), options(zipc::Multiplicity::single));
    if (t.oldest_sequence() != 0) return 1;
    auto sub = t.subscribe({From::oldest(), Delivery::reliable});
    std::array<std::byte, 256> buf;
    for (std::uint64_t seq = 0; seq < 3; ++seq) {
      const auto r = sub.read(buf, 5s);
      if (r.status != Status::ok || r.sequence != seq) return 10 + static_cast<int>(seq);
    }
    auto lossy = t.subscribe({From::latest(), Delivery::lossy});
    if (lossy.try_read(buf).status != Status::empty) return 20;
    return t.next_sequence() == 3 ? 0 : 30;
  });
  const auto r = reader.wait(30s);
  EXPECT_TRUE(r.exited) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_P(DeadCommit, MultiPublisherTopicSettlesWhenTheCommitterIsDead) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), options(zipc::Multiplicity::multi));
  (void)die_committing_the_third(topic, GetParam());
  auto live = topic.publisher();  // a live publisher with no claim: not at the cursor, not committing
  auto sub = topic.subscribe({From::oldest(), Delivery::reliable});
  std::array<std::byte, 256> buf;
  for (std::uint64_t seq = 0; seq < 3; ++seq) {
    const auto r = sub.read(buf, 5s);
    ASSERT_EQ(r.status, Status::ok) << seq;
    EXPECT_EQ(r.sequence, seq);
  }
  EXPECT_EQ(live.try_publish(message(3)).sequence, 3u);
  EXPECT_EQ(sub.read(buf, 5s).sequence, 3u);
  EXPECT_EQ(sub.abandoned(), 0u);
}

// A live publisher whose claim is at the cursor holds the commit token and may
// be half-way through the pair right now (preempted, stopped): nobody else
// may settle the version under it. The reader gives up with corrupt instead.
TEST(DeadCommitLiveWriter, AVersionALivePublisherAtTheCursorLeftOddIsNotSettled) {
  zipc::test::TempName name("topic");
  auto topic = Topic::create(name.str(), options(zipc::Multiplicity::multi));
  (void)die_committing_the_third(topic, DiedAfter::next_sequence);  // the pair disagrees: a rollback would show
  auto* control = control_of(topic);
  control->publishers[0].owner.store(zipc::pack(zipc::ProcessId::current()));  // alive: this process
  control->publishers[0].intent.store(2 * kRecord);                            // its claim is at the cursor
  const std::uint64_t odd = control->pub.commit_version.load();
  try {
    auto sub = topic.subscribe({From::oldest(), Delivery::reliable});
    ADD_FAILURE() << "joined while a live committer held the version odd";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::corrupt) << e.what();
    EXPECT_NE(std::string(e.what()).find("commit version"), std::string::npos) << e.what();
  }
  EXPECT_EQ(control->pub.commit_version.load(), odd);
  EXPECT_EQ(control->pub.next_sequence.load(), 3u) << "next_sequence rolled back under a live committer";
  control->publishers[0].owner.store(0);
}

}  // namespace

}  // namespace topic_dead_commit_test
