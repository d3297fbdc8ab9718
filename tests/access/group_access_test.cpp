// Group-shared channels: two users in a common group exchange messages on a
// queue and a topic; a user outside the group is refused with
// Errc::permission_denied naming the segment. Needs root (it makes the users
// with useradd/groupadd and drops privileges in forked children).
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;

namespace group_access_test {
namespace {

int run(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str());  // NOLINT(concurrency-mt-unsafe, cert-env33-c)
}

// Two members of a fresh group and one outsider; all removed at scope exit.
struct TestUsers {
  std::string group, member1, member2, outsider;
  gid_t gid = 0;
  uid_t uid1 = 0, uid2 = 0, uid_out = 0;
  gid_t gid_out = 0;
  bool ok = false;

  TestUsers() {
    const std::string tag = std::to_string(::getpid());
    group = "zg" + tag;
    member1 = "zm" + tag + "a";
    member2 = "zm" + tag + "b";
    outsider = "zo" + tag;
    if (run("groupadd " + group) != 0) return;
    const std::string opts = " -M -N -s /usr/sbin/nologin ";
    if (run("useradd" + opts + "-g " + group + " " + member1) != 0) return;
    if (run("useradd" + opts + "-g " + group + " " + member2) != 0) return;
    if (run("useradd" + opts + outsider) != 0) return;
    const struct group* g = ::getgrnam(group.c_str());  // NOLINT(concurrency-mt-unsafe): test setup, one thread
    const passwd* p1 = ::getpwnam(member1.c_str());     // NOLINT(concurrency-mt-unsafe)
    if (g == nullptr || p1 == nullptr) return;
    gid = g->gr_gid;
    uid1 = p1->pw_uid;
    const passwd* p2 = ::getpwnam(member2.c_str());  // NOLINT(concurrency-mt-unsafe)
    if (p2 == nullptr) return;
    uid2 = p2->pw_uid;
    const passwd* po = ::getpwnam(outsider.c_str());  // NOLINT(concurrency-mt-unsafe)
    if (po == nullptr) return;
    uid_out = po->pw_uid;
    gid_out = po->pw_gid;
    ok = gid_out != gid;
  }
  ~TestUsers() {
    run("userdel " + member1);
    run("userdel " + member2);
    run("userdel " + outsider);
    run("groupdel " + group);
  }
  TestUsers(const TestUsers&) = delete;
  TestUsers& operator=(const TestUsers&) = delete;
};

// In a forked child: become uid/gid with no supplementary groups, as
// `setpriv --reuid --regid --clear-groups` would.
void become(uid_t uid, gid_t gid) {
  if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0) {
    throw std::runtime_error("cannot drop privileges");
  }
}

zipc::SegmentOptions shared_with(const std::string& group) {
  zipc::SegmentOptions o;
  o.group = group;
  o.mode = zipc::mode::group;
  return o;
}

std::span<const std::byte> bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::string text(std::span<const std::byte> b, std::size_t n) {
  return {reinterpret_cast<const char*>(b.data()), n};
}

}  // namespace

TEST(GroupAccess, MembersOfTheGroupExchangeMessagesAndAnOutsiderIsRefusedByName) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: creates users and a group and drops privileges to them";
  TestUsers users;
  ASSERT_TRUE(users.ok) << "useradd/groupadd failed";
  zipc::test::TempName qname("grpq");
  zipc::test::TempName tname("grpt");

  // Member 1 creates both channels for its group and writes to each.
  auto creator = zipc::test::spawn([&] {
    become(users.uid1, users.gid);
    zipc::QueueOptions qo;
    qo.segment = shared_with(users.group);
    auto q = zipc::Queue::create(qname.str(), qo);
    if (q.try_send(bytes("to member2")) != zipc::Status::ok) return 2;
    zipc::TopicOptions to;
    to.segment = shared_with(users.group);
    auto t = zipc::Topic::create(tname.str(), to);
    auto pub = t.publisher();
    if (!pub.try_publish(bytes("topic news")).ok()) return 3;
    return 0;
  });
  ASSERT_EQ(creator.wait().exit_code, 0);

  struct stat st {};
  ASSERT_EQ(::stat(zipc::Segment::path_for(qname.str()).c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, users.gid);
  EXPECT_EQ(st.st_uid, users.uid1);
  EXPECT_EQ(st.st_mode & 0777u, 0660u);

  // Member 2 reads both and answers on the queue.
  auto reader = zipc::test::spawn([&] {
    become(users.uid2, users.gid);
    auto q = zipc::Queue::open(qname.str());
    std::array<std::byte, 64> buf{};
    auto r = q.recv(buf, 1s);
    if (!r.ok() || text(buf, r.size) != "to member2") return 2;
    if (q.try_send(bytes("from member2")) != zipc::Status::ok) return 3;
    auto t = zipc::Topic::open(tname.str());
    zipc::SubscribeOptions so;
    so.from = zipc::From::oldest();
    auto sub = t.subscribe(so);
    auto rr = sub.read(buf, 1s);
    if (!rr.ok() || text(buf, rr.size) != "topic news") return 4;
    return 0;
  });
  ASSERT_EQ(reader.wait().exit_code, 0);

  // Member 1 gets the answer.
  auto back = zipc::test::spawn([&] {
    become(users.uid1, users.gid);
    auto q = zipc::Queue::open(qname.str());
    std::array<std::byte, 64> buf{};
    auto r = q.recv(buf, 1s);
    return r.ok() && text(buf, r.size) == "from member2" ? 0 : 2;
  });
  ASSERT_EQ(back.wait().exit_code, 0);

  // The outsider is refused, and told which segment.
  auto outsider = zipc::test::spawn([&] {
    become(users.uid_out, users.gid_out);
    int refused = 0;
    for (const std::string& name : {qname.str(), tname.str()}) {
      try {
        if (name == qname.str()) {
          (void)zipc::Queue::open(name);
        } else {
          (void)zipc::Topic::open(name);
        }
      } catch (const zipc::Error& e) {
        zipc::test::report(std::string(e.what()) + "\n");
        if (e.errc() == zipc::Errc::permission_denied && std::string(e.what()).find(name) != std::string::npos) {
          ++refused;
        }
      }
    }
    return refused == 2 ? 0 : 2;
  });
  auto res = outsider.wait();
  EXPECT_EQ(res.exit_code, 0) << res.output;
}

TEST(GroupAccess, AnUnknownGroupIsNotFoundAndNothingIsLeftBehind) {
  zipc::test::TempName name("grpunk");
  zipc::QueueOptions qo;
  qo.segment.group = "zipc-no-such-group-xyz";
  try {
    (void)zipc::Queue::create(name.str(), qo);
    FAIL() << "create with an unknown group succeeded";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.errc(), zipc::Errc::not_found) << e.what();
    EXPECT_NE(std::string(e.what()).find("zipc-no-such-group-xyz"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(zipc::Queue::remove(name.str()));
}

TEST(GroupAccess, ANumericGidIsAccepted) {
  zipc::test::TempName name("grpnum");
  zipc::QueueOptions qo;
  qo.segment.group = std::to_string(::getegid());
  qo.segment.mode = zipc::mode::group;
  auto q = zipc::Queue::create(name.str(), qo);
  struct stat st {};
  ASSERT_EQ(::stat(zipc::Segment::path_for(name.str()).c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, ::getegid());
  EXPECT_EQ(st.st_mode & 0777u, 0660u);
}

}  // namespace group_access_test
