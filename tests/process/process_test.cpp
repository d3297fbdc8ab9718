#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zipc/process.hpp"
#include "zipc_test.hpp"

using zipc::ProcessId;

TEST(ProcessId, CurrentProcessIsAliveWithAStartTime) {
  const ProcessId me = ProcessId::current();
  EXPECT_EQ(me.pid, ::getpid());
  EXPECT_GT(me.start_time, 0u);
  EXPECT_TRUE(zipc::is_alive(me));
  EXPECT_TRUE(zipc::is_alive_packed(zipc::pack(me)));
}

TEST(ProcessId, ChildSeesItsOwnIdentityAfterFork) {
  const ProcessId parent = ProcessId::current();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto child = zipc::test::spawn([&] {
    const ProcessId c = ProcessId::current();
    return (c.pid == ::getpid() && c.pid != parent.pid && zipc::is_alive(parent)) ? 0 : 1;
  });
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(ProcessId, KilledChildIsDeadEvenBeforeItIsReaped) {
  ProcessId id;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    for (;;) ::pause();
  }
  // Wait until the child exists in /proc with a start time.
  for (int i = 0; i < 1000 && !id.valid(); ++i) {
    ProcessId probe{pid, 0};
    if (zipc::is_alive(probe)) id = probe;
  }
  ASSERT_TRUE(zipc::is_alive(id));
  ::kill(pid, SIGKILL);
  // A zombie (killed, not yet reaped) must already count as dead.
  for (int i = 0; i < 1000 && zipc::is_alive(id); ++i) ::usleep(1000);
  EXPECT_FALSE(zipc::is_alive(id));
  int st;
  ::waitpid(pid, &st, 0);
  EXPECT_FALSE(zipc::is_alive(id));
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(ProcessId, ReusedPidWithAnotherStartTimeIsNotTakenForTheOldProcess) {
  // A live pid with a different start time is exactly what pid reuse looks like.
  ProcessId me = ProcessId::current();
  ProcessId impostor{me.pid, me.start_time + 12345};
  EXPECT_FALSE(zipc::is_alive(impostor));
  EXPECT_FALSE(zipc::is_alive_packed(zipc::pack(impostor)));
}

TEST(ProcessId, PackRoundTripsPidAndStartTime) {
  ProcessId id{4194303, (std::uint64_t{1} << 41) + 77};
  ProcessId back = zipc::unpack(zipc::pack(id));
  EXPECT_EQ(back.pid, id.pid);
  EXPECT_EQ(back.start_time, id.start_time);
  EXPECT_EQ(zipc::pack(ProcessId{}), 0u);
  EXPECT_FALSE(zipc::is_alive(ProcessId{}));
}
