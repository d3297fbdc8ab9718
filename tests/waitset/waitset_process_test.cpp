// zipc::WaitSet across processes: a sender in another process wakes it, a
// killed sender leaves no hang, a close is reported.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <thread>

#include "zipc/queue.hpp"
#include "zipc/topic.hpp"
#include "zipc/waitset.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::WaitSet;

namespace waitset_process_test {
namespace {

zipc::QueueOptions small_queue() {
  zipc::QueueOptions o;
  o.block_size = 64;
  o.block_count = 16;
  o.recovery_time = std::chrono::milliseconds(200);
  return o;
}
std::span<const std::byte> bytes(const char* s) {
  return std::as_bytes(std::span(s, std::strlen(s)));
}

TEST(WaitSetProcess, ASenderInAnotherProcessWakesTheWaitSet) {
  zipc::test::TempName qn("ws.proc.q");
  zipc::test::TempName tn("ws.proc.t");
  auto q = zipc::Queue::create(qn.str(), small_queue());
  zipc::TopicOptions to;
  to.capacity_bytes = 4096;
  to.max_message_size = 256;
  auto topic = zipc::Topic::create(tn.str(), to);
  auto sub = topic.subscribe();
  WaitSet ws;
  const auto qid = ws.attach(q);
  const auto tid = ws.attach(sub);
  auto child = zipc::test::spawn([&] {
    auto cq = zipc::Queue::open(qn.str(), zipc::Role::producer);
    auto ct = zipc::Topic::open(tn.str());
    auto pub = ct.publisher();
    std::this_thread::sleep_for(50ms);  // the parent is asleep by now (usually)
    if (cq.send(bytes("q"), 1s) != zipc::Status::ok) return 1;
    std::this_thread::sleep_for(50ms);
    return pub.publish(bytes("t"), 1s).ok() ? 0 : 2;
  });
  bool saw_q = false, saw_t = false;
  std::array<std::byte, 256> buf{};
  while (!(saw_q && saw_t)) {
    const auto r = ws.wait(10s);
    ASSERT_FALSE(r.empty()) << "no wake-up from the other process";
    for (const auto& x : r) {
      if (x.id == qid && q.try_recv(buf).status == zipc::Status::ok) saw_q = true;
      if (x.id == tid && sub.try_read(buf).status == zipc::Status::ok) saw_t = true;
    }
  }
  EXPECT_EQ(child.wait().exit_code, 0);
}

TEST(WaitSetProcess, AKilledSenderLeavesATimeoutNotAHang) {
  zipc::test::TempName qn("ws.kill");
  auto q = zipc::Queue::create(qn.str(), small_queue());
  WaitSet ws;
  const auto qid = ws.attach(q);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  auto child = zipc::test::spawn([&] {
    auto cq = zipc::Queue::open(qn.str(), zipc::Role::producer);
    auto loan = cq.reserve(1s);  // holds a position when killed
    if (!loan) return 1;
    (void)!write(ready[1], "r", 1);
    pause();
    return 0;
  });
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  child.kill(SIGKILL);
  const auto res = child.wait();
  EXPECT_EQ(res.signal, SIGKILL);
  // Nothing was sent: a wait times out, or reports the queue once recovery
  // made the dead reservation skippable (a receive then finds it empty).
  std::array<std::byte, 64> buf{};
  for (const auto& x : ws.wait(300ms))
    if (x.id == qid) {
      EXPECT_EQ(q.try_recv(buf).status, zipc::Status::empty);
    }
  // A later message behind the dead reservation is delivered: the WaitSet
  // runs the channel's recovery as a blocked receive would.
  ASSERT_EQ(q.send(bytes("after"), 2s), zipc::Status::ok);
  bool received = false;
  for (int i = 0; i < 20 && !received; ++i)
    for (const auto& x : ws.wait(1s))
      if (x.id == qid) {
        const auto r = q.try_recv(buf);
        received |= r.status == zipc::Status::ok && r.size == 5;
      }
  EXPECT_TRUE(received);
  close(ready[0]);
  close(ready[1]);
}

TEST(WaitSetProcess, AQueueClosedByAnotherProcessIsReportedAndReadsClosed) {
  zipc::test::TempName qn("ws.close");
  auto q = zipc::Queue::create(qn.str(), small_queue(), zipc::Role::consumer);
  WaitSet ws;
  const auto qid = ws.attach(q);
  auto child = zipc::test::spawn([&] {
    auto cq = zipc::Queue::open(qn.str(), zipc::Role::producer);
    std::this_thread::sleep_for(30ms);
    cq.close();
    return 0;
  });
  const auto r = ws.wait(10s);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, qid);
  std::array<std::byte, 64> buf{};
  EXPECT_EQ(q.try_recv(buf).status, zipc::Status::closed);
  EXPECT_EQ(child.wait().exit_code, 0);
}

}  // namespace

}  // namespace waitset_process_test
