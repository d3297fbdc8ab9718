// Messages larger than a block, stored in the queue's oversize region
// (QueueOptions::oversize_bytes): copy and loan APIs, order, a full region,
// and scribbled offsets and lengths.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "layout/queue_layout.hpp"
#include "layout/queue_oversize.hpp"
#include "queue_test_util.hpp"
#include "zipc/introspect.hpp"
#include "zipc/queue.hpp"
#include "zipc_test.hpp"

using namespace std::chrono_literals;
using zipc::Queue;
using zipc::QueueOptions;
using zipc::Status;

namespace queue_oversize_test {
namespace {

QueueOptions oversize_options(std::size_t region = 4u << 20, zipc::Multiplicity m = zipc::Multiplicity::multi) {
  QueueOptions o;
  o.block_size = 256;
  o.block_count = 16;
  o.producers = m;
  o.consumers = m;
  o.recovery_time = 50ms;
  o.oversize_bytes = region;
  return o;
}

std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(zipc::test::mix64(seed + i / 8) >> (8 * (i % 8)));
  return v;
}

bool same(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

TEST(QueueOversize, ABigMessageSentByCopyArrivesWholeAndItsRoomIsFreedAfterReceipt) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options());
  const std::uint64_t free0 = q.stats().oversize_free_bytes;
  ASSERT_GT(free0, 0u);
  const auto msg = pattern(1u << 20, 1);
  ASSERT_EQ(q.try_send(msg), Status::ok);
  EXPECT_LT(q.stats().oversize_free_bytes, free0 - msg.size());
  std::vector<std::byte> out(2u << 20);
  const zipc::IoResult r = q.try_recv(out);
  ASSERT_EQ(r.status, Status::ok);
  ASSERT_EQ(r.size, msg.size());
  EXPECT_TRUE(same({out.data(), r.size}, msg));
  EXPECT_EQ(q.stats().oversize_free_bytes, free0);
  EXPECT_EQ(q.stats().oversize_live, 0u);
}

TEST(QueueOversize, ABigLoanIsFilledInPlaceAndReadZeroCopyFromTheRegion) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options());
  const auto msg = pattern(300000, 2);
  {
    zipc::QueueWriteLoan w = q.try_reserve(msg.size());
    ASSERT_TRUE(w) << zipc::to_string(w.status());
    EXPECT_EQ(w.size(), msg.size());
    std::memcpy(w.data().data(), msg.data(), msg.size());
    EXPECT_EQ(w.commit(msg.size()).status, Status::ok);
  }
  const std::byte* seen = nullptr;
  {
    zipc::QueueReadLoan r = q.try_acquire();
    ASSERT_TRUE(r) << zipc::to_string(r.status());
    EXPECT_TRUE(same(r.data(), msg));
    seen = r.data().data();
    // Zero-copy: the loan spans the region, past the ring's blocks.
    const std::byte* cells_end = q.segment().payload() + zipc::layout::queue_payload_size(16, 256, 64);
    EXPECT_GE(seen, cells_end);
  }
  EXPECT_EQ(q.stats().oversize_live, 0u);
}

TEST(QueueOversize, AShortCommitOfABigLoanDeliversOnlyTheCommittedBytes) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options());
  zipc::QueueWriteLoan w = q.try_reserve(100000);
  ASSERT_TRUE(w);
  std::memset(w.data().data(), 7, 1000);
  ASSERT_EQ(w.commit(1000).status, Status::ok);
  zipc::QueueReadLoan r = q.try_acquire();
  ASSERT_TRUE(r);
  EXPECT_EQ(r.size(), 1000u);
  EXPECT_EQ(r.data()[999], std::byte{7});
}

TEST(QueueOversize, SmallAndBigMessagesKeepTheirOrder) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options());
  std::vector<std::vector<std::byte>> sent;
  for (int i = 0; i < 12; ++i) {
    sent.push_back(pattern(i % 3 == 0 ? 70000 + i : 10 + i, 100 + i));
    ASSERT_EQ(q.try_send(sent.back()), Status::ok) << i;
  }
  for (int i = 0; i < 12; ++i) {
    zipc::QueueReadLoan r = q.try_acquire();
    ASSERT_TRUE(r) << i;
    EXPECT_TRUE(same(r.data(), sent[i])) << i;
  }
  EXPECT_EQ(q.stats().oversize_live, 0u);
}

TEST(QueueOversize, ABatchCarriesBigMessagesBetweenSmallOnes) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options());
  const auto a = pattern(20, 1), b = pattern(90000, 2), c = pattern(30, 3);
  const std::span<const std::byte> msgs[] = {a, b, c};
  EXPECT_EQ(q.send_batch(msgs, 0ms), 3u);
  std::vector<std::size_t> sizes;
  EXPECT_EQ(q.recv_batch(8, 0ms, [&](std::span<const std::byte> m) { sizes.push_back(m.size()); }), 3u);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{20, 90000, 30}));
  EXPECT_EQ(q.stats().oversize_live, 0u);
}

TEST(QueueOversize, ASingleSingleQueueWithARegionCarriesBigMessagesToo) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options(1u << 20, zipc::Multiplicity::single));
  const auto msg = pattern(200000, 5);
  ASSERT_EQ(q.try_send(msg), Status::ok);
  zipc::QueueReadLoan r = q.try_acquire();
  ASSERT_TRUE(r);
  EXPECT_TRUE(same(r.data(), msg));
}

TEST(QueueOversize, ReceivingABigMessageIntoASmallBufferLeavesItQueuedWithItsSize) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options());
  const auto msg = pattern(5000, 3);
  ASSERT_EQ(q.try_send(msg), Status::ok);
  std::vector<std::byte> small(1000);
  const zipc::IoResult r = q.try_recv(small);
  EXPECT_EQ(r.status, Status::too_large);
  EXPECT_EQ(r.size, 5000u);
  std::vector<std::byte> big(5000);
  EXPECT_EQ(q.try_recv(big).status, Status::ok);
  EXPECT_TRUE(same(big, msg));
}

TEST(QueueOversize, WithoutARegionAMessageOverTheBlockIsTooLarge) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options(0));
  const auto msg = pattern(257, 1);
  EXPECT_EQ(q.try_send(msg), Status::too_large);
  EXPECT_EQ(q.try_reserve(257).status(), Status::too_large);
  EXPECT_EQ(q.stats().oversize_bytes, 0u);
}

TEST(QueueOversize, AMessageLargerThanTheWholeRegionIsTooLarge) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options(1u << 20));
  EXPECT_EQ(q.try_reserve(2u << 20).status(), Status::too_large);
}

TEST(QueueOversize, AFullRegionMakesTryReserveFullAndReserveWaitUntilRoomIsFreed) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options(1u << 20));
  std::vector<zipc::QueueWriteLoan> held;
  for (;;) {
    zipc::QueueWriteLoan w = q.try_reserve(200000);
    if (!w) {
      EXPECT_EQ(w.status(), Status::full);
      break;
    }
    held.push_back(std::move(w));
    ASSERT_LT(held.size(), 10u);
  }
  ASSERT_GE(held.size(), 4u);
  EXPECT_EQ(q.reserve(200000, 20ms).status(), Status::timeout);
  held.pop_back();  // aborted: its room comes back
  EXPECT_TRUE(q.reserve(200000, 1s));
}

TEST(QueueOversize, AnAbortedBigLoanIsNeverDeliveredAndFreesItsRoom) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options());
  const std::uint64_t free0 = q.stats().oversize_free_bytes;
  { zipc::QueueWriteLoan w = q.try_reserve(100000); }
  EXPECT_EQ(q.try_acquire().status(), Status::empty);
  EXPECT_EQ(q.stats().oversize_free_bytes, free0);
}

TEST(QueueOversize, OpenOrCreateWithAnotherRegionSizeFailsNamingBothValues) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options(1u << 20));
  try {
    (void)Queue::open_or_create(name.str(), oversize_options(2u << 20));
    FAIL() << "expected options_mismatch";
  } catch (const zipc::Error& e) {
    EXPECT_EQ(e.code(), zipc::Errc::options_mismatch);
    EXPECT_NE(std::string(e.what()).find("oversize_bytes"), std::string::npos) << e.what();
  }
  auto same_q = Queue::open(name.str());
  EXPECT_EQ(same_q.oversize_bytes(), 1u << 20);
}

TEST(QueueOversize, ARegionUnder64KiBIsRefused) {
  zipc::test::TempName name("qov");
  EXPECT_THROW((void)Queue::create(name.str(), oversize_options(1000)), zipc::Error);
}

TEST(QueueOversize, IntrospectionReportsTheRegionSizeOfAQueueThatHasOne) {
  zipc::test::TempName name("qov");
  zipc::test::TempName plain("qov");
  auto q = Queue::create(name.str(), oversize_options(1u << 20));
  auto p = Queue::create(plain.str(), oversize_options(0));
  const zipc::ChannelReport r = zipc::inspect_channel(name.str());
  ASSERT_TRUE(r.readable) << r.problem;
  const std::uint64_t* v = zipc::find_field(r.geometry, "oversize_bytes");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, 1u << 20);
  const zipc::ChannelReport rp = zipc::inspect_channel(plain.str());
  ASSERT_TRUE(rp.readable) << rp.problem;
  EXPECT_EQ(zipc::find_field(rp.geometry, "oversize_bytes"), nullptr);
}

// Hostile shared memory: the cell of a committed big message is scribbled.
class QueueOversizeScribble : public ::testing::TestWithParam<int> {};

TEST_P(QueueOversizeScribble, AScribbledOffsetOrLengthIsCorruptNeverAReadOutOfBounds) {
  zipc::test::TempName name("qov");
  auto q = Queue::create(name.str(), oversize_options(1u << 20));
  const std::uint64_t free0 = q.stats().oversize_free_bytes;
  const auto msg = pattern(100000, 9);
  ASSERT_EQ(q.try_send(msg), Status::ok);
  auto* cell = reinterpret_cast<zipc::layout::CellHeader*>(q.segment().payload() +
                                                           zipc::layout::queue_cells_offset(64));  // position 0
  switch (GetParam()) {
    case 0: cell->big_offset.store(1ull << 40); break;                   // far outside the arena
    case 1: cell->big_length.store(0xfffffff0u); break;                  // runs past the arena
    case 2: cell->big_offset.store(cell->big_offset.load() + 3); break;  // not where a block starts
    case 3: cell->size.store(zipc::layout::kSizeBig | 5); break;         // tagged for another position
    default: break;
  }
  zipc::QueueReadLoan r = q.try_acquire();
  EXPECT_FALSE(r);
  EXPECT_EQ(r.status(), Status::corrupt);
  // The queue goes on, and the next recover() frees the payload nothing names any more.
  ASSERT_EQ(q.try_send(pattern(10, 1)), Status::ok);
  EXPECT_TRUE(q.try_acquire());
  EXPECT_EQ(q.recover(), 0u);
  EXPECT_EQ(q.stats().oversize_free_bytes, free0);
  EXPECT_EQ(q.stats().oversize_live, 0u);
}

INSTANTIATE_TEST_SUITE_P(Fields, QueueOversizeScribble, ::testing::Values(0, 1, 2, 3));

// The sweep's invariant under live traffic: forced sweeps (as after a death)
// while producers and consumers stream mixed sizes by copy and by loan never
// free a payload that a record or a cell still names. A sweep that did would
// let a later allocation overwrite a message before it is read (a checksum
// fails) or free a block twice (the heap turns corrupt).
TEST(QueueOversize, SweepsDuringLiveTrafficNeverFreeAPayloadStillInUse) {
  zipc::test::TempName name("qov");
  QueueOptions o = oversize_options(4u << 20);
  o.block_count = 64;
  auto watcher = Queue::create(name.str(), o, zipc::Role::none);
  const std::uint64_t free0 = watcher.stats().oversize_free_bytes;
  auto* ov = reinterpret_cast<zipc::layout::OversizeControl*>(
      watcher.segment().payload() +
      zipc::layout::queue_oversize_offset(zipc::layout::queue_payload_size(o.block_count, o.block_size, 64)));
  ASSERT_EQ(ov->magic, zipc::layout::kOversizeMagic);
  constexpr int kPerProducer = 600;
  std::atomic<int> bad{0}, sent{0}, received{0}, producers_done{0};
  // Done when every producer finished and everything sent arrived; a broken
  // sweep (a corrupt heap, lost messages) ends the test by the deadline, failing.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  const auto finished = [&] {
    return (producers_done.load() == 2 && received.load() >= sent.load()) ||
           std::chrono::steady_clock::now() > deadline;
  };
  const auto check = [&](std::span<const std::byte> m) {
    if (m.size() < 8) {
      bad.fetch_add(1);
      return;
    }
    std::uint64_t seed = 0;
    std::memcpy(&seed, m.data(), 8);
    if (!same(m.subspan(8), pattern(m.size() - 8, seed))) bad.fetch_add(1);
  };
  std::vector<std::thread> threads;
  for (int p = 0; p < 2; ++p) {
    threads.emplace_back([&, p] {
      auto q = Queue::open(name.str(), zipc::Role::producer);
      for (int i = 0; i < kPerProducer; ++i) {
        const std::uint64_t seed = static_cast<std::uint64_t>(p) << 32 | static_cast<std::uint64_t>(i);
        const std::size_t n = i % 3 == 0 ? 8 + (zipc::test::mix64(seed) % 300000) : 8 + i % 200;
        std::vector<std::byte> m(n);
        std::memcpy(m.data(), &seed, 8);
        const auto body = pattern(n - 8, seed);
        if (n > 8) std::memcpy(m.data() + 8, body.data(), n - 8);
        if (i % 2 == 0) {
          if (q.send(m, 10s) == Status::ok)
            sent.fetch_add(1);
          else
            bad.fetch_add(1);
        } else {
          zipc::QueueWriteLoan w = q.reserve(n, 10s);
          if (!w) {
            bad.fetch_add(1);
            continue;
          }
          std::memcpy(w.data().data(), m.data(), n);
          if (w.commit(n).ok()) sent.fetch_add(1);
        }
      }
      producers_done.fetch_add(1);
    });
  }
  for (int c = 0; c < 2; ++c) {
    threads.emplace_back([&, c] {
      auto q = Queue::open(name.str(), zipc::Role::consumer);
      std::vector<std::byte> buf(1u << 20);
      while (!finished()) {
        if (c == 0) {
          if (zipc::QueueReadLoan r = q.acquire(20ms)) {
            check(r.data());
            received.fetch_add(1);
          }
        } else {
          const zipc::IoResult r = q.recv(buf, 20ms);
          if (r.ok()) {
            check({buf.data(), r.size});
            received.fetch_add(1);
          }
        }
      }
    });
  }
  std::uint64_t sweeps = 0;
  while (!finished()) {
    ov->sweep_needed.fetch_add(1);  // as recover() does after a death
    (void)watcher.recover();
    ++sweeps;
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(sent.load(), 2 * kPerProducer);
  EXPECT_EQ(received.load(), 2 * kPerProducer);
  EXPECT_GT(ov->sweeps.load(), 0u);
  EXPECT_EQ(ov->reclaimed.load(), 0u);  // nobody died: nothing was garbage
  const zipc::QueueStats st = watcher.stats();
  EXPECT_EQ(st.oversize_live, 0u);
  EXPECT_EQ(st.oversize_free_bytes, free0);
  std::printf("[zipc] %llu forced sweeps during the stream, %llu completed\n", static_cast<unsigned long long>(sweeps),
              static_cast<unsigned long long>(ov->sweeps.load()));
}

}  // namespace

}  // namespace queue_oversize_test
