// C ABI misuse is a status, never a crash (docs/guide/handles.md, docs/guide/c-api.md):
// NULL handles and loans are ZIPC_INVALID_ARGUMENT, so are loans ended twice
// and calls in the wrong order; loans outlive the handle that lent them.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "isolated.hpp"
#include "zipc/zipc.h"

using zipc::misuse::isolated;

namespace c_misuse_test {
namespace {

zipc_queue_t* make_queue(const std::string& name) {
  zipc_queue_options_t o;
  zipc_queue_options_init(&o);
  o.block_size = 64;
  o.block_count = 8;
  zipc_queue_t* q = nullptr;
  EXPECT_EQ(zipc_queue_create(name.c_str(), &o, &q), ZIPC_OK) << zipc_last_error();
  return q;
}

zipc_topic_t* make_topic(const std::string& name) {
  zipc_topic_options_t o;
  zipc_topic_options_init(&o);
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.max_subscribers = 4;
  zipc_topic_t* t = nullptr;
  EXPECT_EQ(zipc_topic_create(name.c_str(), &o, &t), ZIPC_OK) << zipc_last_error();
  return t;
}

zipc_subscriber_t* subscribe_oldest(zipc_topic_t* t) {
  zipc_subscribe_options_t so;
  zipc_subscribe_options_init(&so);
  so.from = ZIPC_FROM_OLDEST;
  zipc_subscriber_t* s = nullptr;
  EXPECT_EQ(zipc_topic_subscribe(t, &so, &s), ZIPC_OK) << zipc_last_error();
  return s;
}

// ---------------------------------------------------------------- NULL handles

TEST(CMisuse, QueueCallsOnANullHandleAreInvalidArguments) {
  isolated([] {
    char buf[8];
    size_t n = 0;
    zipc_write_loan_t w;
    zipc_read_loan_t r;
    EXPECT_EQ(zipc_queue_send(nullptr, "x", 1, 0), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_queue_recv(nullptr, buf, sizeof buf, &n, ZIPC_FOREVER), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_queue_reserve(nullptr, 0, &w), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_queue_acquire(nullptr, 0, &r), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_queue_close(nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_STRNE(zipc_last_error(), "");
  });
}

TEST(CMisuse, TopicCallsOnNullHandlesAreInvalidArguments) {
  isolated([] {
    char buf[8];
    zipc_write_loan_t w;
    zipc_read_loan_t r;
    zipc_publisher_t* p = nullptr;
    EXPECT_EQ(zipc_topic_publisher(nullptr, &p), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_publisher_publish(nullptr, "x", 1, 0, nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_publisher_reserve(nullptr, 1, 0, &w), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_subscriber_read(nullptr, buf, sizeof buf, 0, nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_subscriber_acquire(nullptr, 0, &r), ZIPC_INVALID_ARGUMENT);
  });
}

TEST(CMisuse, HeapEventAndWaitSetCallsOnNullHandlesAreInvalidArguments) {
  isolated([] {
    void* p = nullptr;
    uint32_t ids[4];
    size_t n = 0;
    zipc_ready_t ready[4];
    EXPECT_EQ(zipc_heap_allocate(nullptr, 16, 16, &p), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_heap_free(nullptr, p), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_notifier_notify(nullptr, 1, nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_listener_wait(nullptr, 0, ids, 4, &n), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_waitset_wait(nullptr, 0, ready, 4, &n), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_waitset_stop(nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_waitset_readiness_fd(nullptr), -1);
  });
}

TEST(CMisuse, DetachOfNullIsANoOp) {
  isolated([] {
    EXPECT_EQ(zipc_queue_detach(nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_topic_detach(nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_publisher_detach(nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_subscriber_detach(nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_heap_detach(nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_event_channel_detach(nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_listener_detach(nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_notifier_detach(nullptr), ZIPC_OK);
    zipc_waitset_destroy(nullptr);
  });
}

// ---------------------------------------------------------------- loans

TEST(CMisuse, NullLoansAreInvalidArguments) {
  isolated([] {
    EXPECT_EQ(zipc_write_loan_commit(nullptr, 0, nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_write_loan_abort(nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_read_loan_release(nullptr), ZIPC_INVALID_ARGUMENT);
  });
}

TEST(CMisuse, ZeroedLoansAreInvalidArguments) {
  isolated([] {
    zipc_write_loan_t w;
    std::memset(&w, 0, sizeof w);
    zipc_read_loan_t r;
    std::memset(&r, 0, sizeof r);
    EXPECT_EQ(zipc_write_loan_commit(&w, 0, nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_write_loan_abort(&w), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_read_loan_release(&r), ZIPC_INVALID_ARGUMENT);
  });
}

TEST(CMisuse, ADoubleCommitIsAnInvalidArgument) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_queue_t* q = make_queue(name.str());
    zipc_write_loan_t w;
    ASSERT_EQ(zipc_queue_reserve(q, 0, &w), ZIPC_OK);
    EXPECT_EQ(zipc_write_loan_commit(&w, 1, nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_write_loan_commit(&w, 1, nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_write_loan_abort(&w), ZIPC_INVALID_ARGUMENT);
    zipc_queue_detach(q);
  });
}

TEST(CMisuse, ADoubleReleaseIsAnInvalidArgument) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_queue_t* q = make_queue(name.str());
    ASSERT_EQ(zipc_queue_send(q, "x", 1, 0), ZIPC_OK);
    zipc_read_loan_t r;
    ASSERT_EQ(zipc_queue_acquire(q, 0, &r), ZIPC_OK);
    EXPECT_EQ(zipc_read_loan_release(&r), ZIPC_OK);
    EXPECT_EQ(zipc_read_loan_release(&r), ZIPC_INVALID_ARGUMENT);
    zipc_queue_detach(q);
  });
}

TEST(CMisuse, ACommitPastTheLoanSizeIsTooLargeAndKeepsTheLoan) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_queue_t* q = make_queue(name.str());
    zipc_write_loan_t w;
    ASSERT_EQ(zipc_queue_reserve(q, 0, &w), ZIPC_OK);
    EXPECT_EQ(zipc_write_loan_commit(&w, w.size + 1, nullptr), ZIPC_TOO_LARGE);
    EXPECT_EQ(zipc_write_loan_commit(&w, SIZE_MAX, nullptr), ZIPC_TOO_LARGE);
    EXPECT_EQ(zipc_write_loan_commit(&w, w.size, nullptr), ZIPC_OK);
    zipc_queue_detach(q);
  });
}

TEST(CMisuse, AQueueReadLoanOutlivesItsHandle) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_queue_t* q = make_queue(name.str());
    ASSERT_EQ(zipc_queue_send(q, "kept", 4, 0), ZIPC_OK);
    zipc_read_loan_t r;
    ASSERT_EQ(zipc_queue_acquire(q, 0, &r), ZIPC_OK);
    EXPECT_EQ(zipc_queue_detach(q), ZIPC_OK);
    EXPECT_EQ(std::string(static_cast<const char*>(r.data), r.size), "kept");
    EXPECT_EQ(zipc_read_loan_release(&r), ZIPC_OK);
  });
}

TEST(CMisuse, AQueueWriteLoanCommittedAfterItsHandleWentIsDelivered) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_queue_t* reader = make_queue(name.str());
    zipc_queue_t* q = nullptr;
    ASSERT_EQ(zipc_queue_open(name.str().c_str(), nullptr, &q), ZIPC_OK);
    zipc_write_loan_t w;
    ASSERT_EQ(zipc_queue_reserve(q, 0, &w), ZIPC_OK);
    EXPECT_EQ(zipc_queue_detach(q), ZIPC_OK);
    std::memcpy(w.data, "late", 4);
    EXPECT_EQ(zipc_write_loan_commit(&w, 4, nullptr), ZIPC_OK);
    char buf[64];
    size_t n = 0;
    EXPECT_EQ(zipc_queue_recv(reader, buf, sizeof buf, &n, 0), ZIPC_OK);
    EXPECT_EQ(std::string(buf, n), "late");
    zipc_queue_detach(reader);
  });
}

TEST(CMisuse, AMovedLoanStructIsUsableAndTheOldCopyIsNot) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_topic_t* t = make_topic(name.str());
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    zipc_write_loan_t w;
    ASSERT_EQ(zipc_publisher_reserve(p, 4, 0, &w), ZIPC_OK);
    zipc_write_loan_t moved;
    std::memcpy(&moved, &w, sizeof w);  // C moves a struct by copying it
    std::memset(&w, 0, sizeof w);
    EXPECT_EQ(zipc_write_loan_commit(&moved, 4, nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_write_loan_commit(&w, 4, nullptr), ZIPC_INVALID_ARGUMENT);
    zipc_publisher_detach(p);
    zipc_topic_detach(t);
  });
}

// ---------------------------------------------------------------- topic loans

TEST(CMisuse, APublisherReserveWhileALoanIsOutIsAnInvalidArgument) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_topic_t* t = make_topic(name.str());
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    zipc_write_loan_t first;
    zipc_write_loan_t second;
    ASSERT_EQ(zipc_publisher_reserve(p, 8, 0, &first), ZIPC_OK);
    EXPECT_EQ(zipc_publisher_reserve(p, 8, 0, &second), ZIPC_INVALID_ARGUMENT);
    EXPECT_NE(std::string(zipc_last_error()).find("zipc_publisher_reserve"), std::string::npos);
    EXPECT_EQ(zipc_write_loan_abort(&first), ZIPC_OK);
    EXPECT_EQ(zipc_publisher_reserve(p, 8, 0, &second), ZIPC_OK);
    EXPECT_EQ(zipc_write_loan_commit(&second, 8, nullptr), ZIPC_OK);
    zipc_publisher_detach(p);
    zipc_topic_detach(t);
  });
}

TEST(CMisuse, APublishWhileALoanIsOutIsAnInvalidArgument) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_topic_t* t = make_topic(name.str());
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    zipc_write_loan_t w;
    ASSERT_EQ(zipc_publisher_reserve(p, 8, 0, &w), ZIPC_OK);
    EXPECT_EQ(zipc_publisher_publish(p, "x", 1, 0, nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_write_loan_commit(&w, 8, nullptr), ZIPC_OK);
    EXPECT_EQ(zipc_publisher_publish(p, "x", 1, 0, nullptr), ZIPC_OK);
    zipc_publisher_detach(p);
    zipc_topic_detach(t);
  });
}

TEST(CMisuse, APublisherDetachedWithALoanOutLetsTheLoanCommit) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_topic_t* t = make_topic(name.str());
    zipc_subscriber_t* s = subscribe_oldest(t);
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    zipc_write_loan_t w;
    ASSERT_EQ(zipc_publisher_reserve(p, 4, 0, &w), ZIPC_OK);
    EXPECT_EQ(zipc_publisher_detach(p), ZIPC_OK);
    std::memcpy(w.data, "late", 4);
    uint64_t seq = 99;
    EXPECT_EQ(zipc_write_loan_commit(&w, 4, &seq), ZIPC_OK);
    EXPECT_EQ(seq, 0u);
    char buf[16];
    EXPECT_EQ(zipc_subscriber_read(s, buf, sizeof buf, 0, nullptr), ZIPC_OK);
    zipc_subscriber_detach(s);
    zipc_topic_detach(t);
  });
}

TEST(CMisuse, APublisherDetachedWithALoanOutLetsTheLoanAbort) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_topic_t* t = make_topic(name.str());
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    zipc_write_loan_t w;
    ASSERT_EQ(zipc_publisher_reserve(p, 4, 0, &w), ZIPC_OK);
    EXPECT_EQ(zipc_publisher_detach(p), ZIPC_OK);
    EXPECT_EQ(zipc_write_loan_abort(&w), ZIPC_OK);
    zipc_publisher_t* again = nullptr;
    EXPECT_EQ(zipc_topic_publisher(t, &again), ZIPC_OK) << zipc_last_error();  // the slot came back
    zipc_publisher_detach(again);
    zipc_topic_detach(t);
  });
}

TEST(CMisuse, ASubscriberDetachedWithALoanOutLetsTheLoanRelease) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_topic_t* t = make_topic(name.str());
    zipc_subscriber_t* s = subscribe_oldest(t);
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    ASSERT_EQ(zipc_publisher_publish(p, "kept", 4, 0, nullptr), ZIPC_OK);
    zipc_read_loan_t r;
    ASSERT_EQ(zipc_subscriber_acquire(s, 0, &r), ZIPC_OK);
    EXPECT_EQ(zipc_subscriber_detach(s), ZIPC_OK);
    EXPECT_EQ(std::string(static_cast<const char*>(r.data), r.size), "kept");
    EXPECT_EQ(zipc_read_loan_release(&r), ZIPC_OK);
    EXPECT_EQ(zipc_read_loan_release(&r), ZIPC_INVALID_ARGUMENT);
    zipc_publisher_detach(p);
    zipc_topic_detach(t);
  });
}

TEST(CMisuse, ASubscriberReadWhileALoanIsOutIsAnInvalidArgument) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_topic_t* t = make_topic(name.str());
    zipc_subscriber_t* s = subscribe_oldest(t);
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    ASSERT_EQ(zipc_publisher_publish(p, "a", 1, 0, nullptr), ZIPC_OK);
    zipc_read_loan_t r;
    zipc_read_loan_t r2;
    char buf[8];
    ASSERT_EQ(zipc_subscriber_acquire(s, 0, &r), ZIPC_OK);
    EXPECT_EQ(zipc_subscriber_read(s, buf, sizeof buf, 0, nullptr), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_subscriber_acquire(s, 0, &r2), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_read_loan_release(&r), ZIPC_OK);
    zipc_subscriber_detach(s);
    zipc_publisher_detach(p);
    zipc_topic_detach(t);
  });
}

TEST(CMisuse, ATopicDetachedBeforeItsEndpointsLeavesThemWorking) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_topic_t* t = make_topic(name.str());
    zipc_subscriber_t* s = subscribe_oldest(t);
    zipc_publisher_t* p = nullptr;
    ASSERT_EQ(zipc_topic_publisher(t, &p), ZIPC_OK);
    EXPECT_EQ(zipc_topic_detach(t), ZIPC_OK);
    EXPECT_EQ(zipc_publisher_publish(p, "x", 1, 0, nullptr), ZIPC_OK);
    char buf[8];
    EXPECT_EQ(zipc_subscriber_read(s, buf, sizeof buf, 0, nullptr), ZIPC_OK);
    zipc_subscriber_detach(s);
    zipc_publisher_detach(p);
  });
}

// ---------------------------------------------------------------- statuses

TEST(CMisuse, TheDetachedStatusHasItsName) {
  isolated([] {
    EXPECT_STREQ(zipc_status_str(ZIPC_DETACHED), "detached");
    EXPECT_STREQ(zipc_status_str(static_cast<zipc_status_t>(12345)), "unknown");
  });
}

TEST(CMisuse, ABufferTooSmallIsTooLargeAndKeepsTheMessage) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_queue_t* q = make_queue(name.str());
    ASSERT_EQ(zipc_queue_send(q, "four", 4, 0), ZIPC_OK);
    char small[2];
    size_t n = 0;
    EXPECT_EQ(zipc_queue_recv(q, small, sizeof small, &n, 0), ZIPC_TOO_LARGE);
    char buf[8];
    EXPECT_EQ(zipc_queue_recv(q, buf, sizeof buf, &n, 0), ZIPC_OK);
    EXPECT_EQ(n, 4u);
    zipc_queue_detach(q);
  });
}

TEST(CMisuse, ANullBufferWithACapacityIsAnInvalidArgument) {
  isolated([] {
    zipc::test::TempName name("misuse");
    zipc_queue_t* q = make_queue(name.str());
    size_t n = 0;
    EXPECT_EQ(zipc_queue_send(q, nullptr, 4, 0), ZIPC_INVALID_ARGUMENT);
    EXPECT_EQ(zipc_queue_recv(q, nullptr, 8, &n, 0), ZIPC_INVALID_ARGUMENT);
    zipc_queue_detach(q);
  });
}

}  // namespace

}  // namespace c_misuse_test
