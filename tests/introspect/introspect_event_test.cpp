// Introspection of event channels (what `zipc stat` shows): each listener
// with its process, liveness, pending ids and whether it sleeps.
#include <gtest/gtest.h>

#include <unistd.h>
#include <random>

#include <zipc/event_channel.hpp>
#include <zipc/waitset.hpp>
#include <zipc/zipc.hpp>

#include "zipc_test.hpp"

namespace introspect_event_test {
namespace {

using namespace std::chrono_literals;
using zipc::test::TempName;

std::uint64_t field(const zipc::ReportFields& f, std::string_view key) {
  const std::uint64_t* v = zipc::find_field(f, key);
  EXPECT_NE(v, nullptr) << key;
  return v != nullptr ? *v : ~0ull;
}

const zipc::ParticipantReport* in_slot(const zipc::ChannelReport& r, std::uint32_t slot) {
  for (const auto& p : r.participants)
    if (p.slot == slot) return &p;
  return nullptr;
}

TEST(IntrospectEvent, EachListenerIsListedWithItsPendingIdsAndADeadOneIsReportedDead) {
  TempName name("intro-ev");
  zipc::EventChannelOptions o;
  o.max_event_id = 300;
  o.max_listeners = 4;
  auto channel = zipc::EventChannel::create(name.str(), o);
  zipc::Listener mine = channel.listener();  // slot 0
  zipc::test::Child child = zipc::test::spawn([&] {
    auto c = zipc::EventChannel::open(name.str());
    zipc::Listener l = c.listener();  // slot 1, dies holding it
    ::_exit(0);
    return 0;
  });
  ASSERT_TRUE(child.wait().exited);
  zipc::Notifier n = channel.notifier();
  ASSERT_EQ(n.notify(3), zipc::Status::ok);
  ASSERT_EQ(n.notify(299), zipc::Status::ok);  // the fifth bitmap word
  ASSERT_EQ(n.notify(3), zipc::Status::ok);    // coalesces with the first

  zipc::ChannelReport r = zipc::inspect_channel(name.str());
  ASSERT_TRUE(r.readable) << r.problem;
  EXPECT_EQ(field(r.geometry, "max_event_id"), 300u);
  EXPECT_EQ(field(r.geometry, "max_listeners"), 4u);
  EXPECT_EQ(field(r.counters, "notifications"), 3u);
  ASSERT_EQ(r.participants.size(), 2u);
  EXPECT_EQ(r.dead_count(), 1u);
  const zipc::ParticipantReport* me = in_slot(r, 0);
  ASSERT_NE(me, nullptr);
  EXPECT_EQ(me->role, "listener");
  EXPECT_TRUE(me->alive);
  EXPECT_EQ(me->process.pid, getpid());
  EXPECT_EQ(field(me->fields, "pending"), 2u) << "ids 3 and 299";
  EXPECT_EQ(field(me->fields, "received"), 0u);
  EXPECT_EQ(field(me->fields, "sleeping"), 0u);
  const zipc::ParticipantReport* dead = in_slot(r, 1);
  ASSERT_NE(dead, nullptr);
  EXPECT_FALSE(dead->alive);

  EXPECT_EQ(mine.try_wait().size(), 2u);
  r = zipc::inspect_channel(name.str());
  ASSERT_NE(in_slot(r, 0), nullptr);
  EXPECT_EQ(field(in_slot(r, 0)->fields, "pending"), 0u);
  EXPECT_EQ(field(in_slot(r, 0)->fields, "received"), 2u);
  EXPECT_EQ(r.received, 2u);
}

TEST(IntrospectEvent, AListenerWaitingInAWaitSetIsReportedSleeping) {
  TempName name("intro-ev-ws");
  auto channel = zipc::EventChannel::create(name.str());
  zipc::Listener l = channel.listener();
  zipc::WaitSet ws;
  if (!ws.uses_io_uring()) GTEST_SKIP() << "the fallback WaitSet polls: it never registers as a sleeper";
  const std::uint64_t id = ws.attach(l);  // armed at once: registered on the slot's event
  zipc::ChannelReport r = zipc::inspect_channel(name.str());
  ASSERT_EQ(r.participants.size(), 1u);
  EXPECT_EQ(field(r.participants[0].fields, "sleeping"), 1u);
  ASSERT_TRUE(ws.detach(id));
  r = zipc::inspect_channel(name.str());
  EXPECT_EQ(field(r.participants[0].fields, "sleeping"), 0u);
}

// Hostile segments: a valid event header over random payload bytes (with the
// creator's parameters or random ones): a problem or a validated state, never a crash.
TEST(IntrospectEvent, RandomPayloadsBehindValidHeadersNeverCrashTheReader) {
  std::mt19937_64 rng(4242);
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    TempName name("intro-ev-fuzz");
    zipc::SegmentSpec spec;
    spec.kind = zipc::SegmentKind::event;
    spec.payload_size = 4096 * (1 + rng() % 16);
    for (auto& p : spec.params) p = (i % 2 == 0) ? rng() : rng() % 64;
    zipc::Segment::create(name.str(), spec, [&](std::byte* p, std::size_t n) {
      for (std::size_t k = 0; k < n; ++k) p[k] = static_cast<std::byte>(rng());
    });
    const zipc::ChannelReport r = zipc::inspect_channel(name.str());
    refused += r.readable ? 0 : 1;
    if (!r.readable) {
      EXPECT_FALSE(r.problem.empty());
    }
  }
  EXPECT_EQ(refused, 40);
}

TEST(IntrospectEvent, AScribbledListenerCountIsRefusedNotTrusted) {
  TempName name("intro-ev-scribble");
  zipc::EventChannelOptions o;
  o.max_listeners = 2;
  auto channel = zipc::EventChannel::create(name.str(), o);
  zipc::Segment seg = zipc::Segment::open(name.str(), zipc::SegmentKind::event);
  // EventChannelConfig: magic (8), layout_version (4), max_event_id (4), max_listeners (4).
  auto* max_listeners = reinterpret_cast<std::uint32_t*>(seg.payload() + 16);
  ASSERT_EQ(*max_listeners, 2u);
  *max_listeners = 1000;  // slots past the end of the segment
  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  EXPECT_FALSE(r.readable);
  EXPECT_NE(r.problem.find("geometry"), std::string::npos) << r.problem;
  *max_listeners = 2;
}

}  // namespace

}  // namespace introspect_event_test
