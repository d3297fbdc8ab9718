// Every registered transport passes a short correctness run through the real
// harness: N messages between forked processes, every byte checked, order
// checked, nothing lost. A transport that cannot carry a shape says why and
// is skipped, never failed.
#include <gtest/gtest.h>

#include <string>

#include "payload.hpp"
#include "runner.hpp"
#include "transport.hpp"
#include "zipc_test.hpp"

namespace zipc::bench {
namespace transport_test {
namespace {

std::uint64_t scaled(std::uint64_t n) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  n = n / 4 + 1;
#endif
  return static_cast<std::uint64_t>(static_cast<double>(n) * zipc::test::stress_scale());
}

RunConfig base(Shape shape, std::size_t size, Wait wait) {
  RunConfig c;
  c.shape = shape;
  c.size = size;
  c.wait = wait;
  c.iterations = scaled(300);
  c.warmup = 10;
  c.budget_s = 1e6;  // never cut short: every message must arrive
  c.timeout_s = 120;
  c.tag = "zbt";
  return c;
}

// Runs c over t; unsupported shapes are skipped, anything else must be clean.
void expect_clean_run(Transport& t, const RunConfig& c, std::uint64_t expect_delivered) {
  const RunResult sut = run_workload(t, c);
  if (!sut.ok && sut.error.rfind("unsupported", 0) == 0) {
    GTEST_LOG_(INFO) << t.name() << ": " << sut.error;
    return;
  }
  ASSERT_TRUE(sut.ok) << t.name() << " (" << to_string(c.wait) << ", " << c.size << " B): " << sut.error;
  EXPECT_EQ(sut.lost, 0u) << t.name();
  EXPECT_EQ(sut.delivered, expect_delivered) << t.name();
}

class EveryTransport : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_THREAD__)
    // TSan cannot follow a forked child that starts threads (libzmq's I/O
    // thread): "starting new threads after multi-threaded fork is not supported".
    if (GetParam().rfind("zmq", 0) == 0) GTEST_SKIP() << "ZeroMQ starts threads after fork; not runnable under TSan";
    // iceoryx's runtime starts its keep-alive thread in each forked worker.
    if (GetParam() == "iceoryx") GTEST_SKIP() << "iceoryx starts threads after fork; not runnable under TSan";
#endif
  }
  std::unique_ptr<Transport> transport() {
    for (auto& t : all_transports())
      if (t->name() == GetParam()) return std::move(t);
    return nullptr;
  }
};

std::vector<std::string> transport_names() {
  std::vector<std::string> out;
  for (auto& t : all_transports()) out.push_back(t->name());
  return out;
}

TEST_P(EveryTransport, PingPongDeliversEveryReplyInOrderWithItsBytesIntact) {
  auto t = transport();
  ASSERT_TRUE(t);
  for (Wait w : t->waits()) {
    for (std::size_t size : {std::size_t{64}, std::size_t{4096}}) {
      RunConfig c = base(Shape::round_trip, size, w);
      expect_clean_run(*t, c, c.iterations);
    }
  }
}

TEST_P(EveryTransport, StreamDeliversEveryMessageInOrder) {
  auto t = transport();
  ASSERT_TRUE(t);
  for (Wait w : t->waits()) {
    for (std::size_t size : {std::size_t{100}, std::size_t{3000}}) {
      RunConfig c = base(Shape::stream, size, w);
      expect_clean_run(*t, c, c.iterations);
    }
  }
}

TEST_P(EveryTransport, LargeMessagesArriveWholeOrAreDeclaredUnsupported) {
  auto t = transport();
  ASSERT_TRUE(t);
  RunConfig c = base(Shape::stream, 65536 + 100, t->waits().front());
  c.iterations = scaled(40);
  expect_clean_run(*t, c, c.iterations);
}

TEST_P(EveryTransport, ManyToManyDeliversEachMessageOnceWhenSupported) {
  auto t = transport();
  ASSERT_TRUE(t);
  RunConfig c = base(Shape::many, 100, t->waits().front());
  c.senders = c.receivers = 2;
  c.cpus = {};
  expect_clean_run(*t, c, c.iterations * 2);
}

TEST_P(EveryTransport, FanOutGivesEverySubscriberEveryMessageWhenSupported) {
  auto t = transport();
  ASSERT_TRUE(t);
  RunConfig c = base(Shape::stream, 100, t->waits().front());
  c.broadcast = true;
  c.receivers = 2;
  expect_clean_run(*t, c, c.iterations * 2);
}

INSTANTIATE_TEST_SUITE_P(Bench, EveryTransport, ::testing::ValuesIn(transport_names()), [](const auto& info) {
  std::string n = info.param;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

// A transport that corrupts one byte of every message in flight: the harness
// must call that an error, not a result.
class CorruptingTransport final : public Transport {
 public:
  explicit CorruptingTransport(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "corrupting"; }
  std::string family() const override { return "os"; }
  void create(const ChannelSpec& s) override { inner_->create(s); }
  void destroy(const ChannelSpec& s) override { inner_->destroy(s); }
  std::unique_ptr<Receiver> open_receiver(const ChannelSpec& s, int i) override { return inner_->open_receiver(s, i); }
  std::unique_ptr<Sender> open_sender(const ChannelSpec& s, int i) override {
    struct Flip final : Sender {
      std::unique_ptr<Sender> in;
      unsigned char* last = nullptr;
      void* prepare(std::size_t n) override { return last = static_cast<unsigned char*>(in->prepare(n)); }
      bool commit(std::size_t n) override {
        if (n > kMinMessage) last[n - 1] ^= 0x5a;
        return in->commit(n);
      }
    };
    auto f = std::make_unique<Flip>();
    f->in = inner_->open_sender(s, i);
    return f;
  }

 private:
  std::unique_ptr<Transport> inner_;
};

TEST(Harness, AWrongByteMakesTheRunAnErrorNotAResult) {
  std::unique_ptr<Transport> pipe;
  for (auto& t : all_transports())
    if (t->name() == "pipe") pipe = std::move(t);
  ASSERT_TRUE(pipe);
  CorruptingTransport sut(std::move(pipe));
  RunConfig c = base(Shape::stream, 256, Wait::block);
  const RunResult r = run_workload(sut, c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("checksum"), std::string::npos) << r.error;
}

TEST(Harness, MessageBelowTheHeaderSizeIsRefused) {
  auto all = all_transports();
  ASSERT_FALSE(all.empty());
  RunConfig c = base(Shape::stream, 8, Wait::block);
  const RunResult r = run_workload(*all.front(), c);
  EXPECT_FALSE(r.ok);
}

TEST(Payload, CheckFindsASingleFlippedBitAnywhere) {
  std::vector<unsigned char> buf(3000);
  fill_message(buf.data(), buf.size(), MessageHeader{7, 1, 2, kFlagData, 0});
  MessageHeader h{};
  ASSERT_TRUE(check_message(buf.data(), buf.size(), &h));
  EXPECT_EQ(h.seq, 7u);
  for (std::size_t i = kMinMessage; i < buf.size(); i += 97) {
    buf[i] ^= 1;
    EXPECT_FALSE(check_message(buf.data(), buf.size(), &h)) << "byte " << i;
    buf[i] ^= 1;
  }
}

}  // namespace

}  // namespace transport_test
}  // namespace zipc::bench
