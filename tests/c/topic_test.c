/* topic_test.c - zipc_topic_*, zipc_publisher_*, zipc_subscriber_* from C:
 * reliable and lossy subscribers, replay, loans, loss counts and errors. */
#include <pthread.h>
#include <stdint.h>

#include "check.h"

static zipc_topic_t* small_topic(const char* name, uint32_t max_subscribers) {
  zipc_topic_options_t o;
  OK(zipc_topic_options_init(&o));
  o.capacity_bytes = 4096;
  o.max_message_size = 512;
  o.max_subscribers = max_subscribers;
  zipc_topic_t* t = NULL;
  OK(zipc_topic_create(name, &o, &t));
  return t;
}

static zipc_subscriber_t* subscribe(zipc_topic_t* t, uint32_t from, uint64_t sequence, uint32_t delivery) {
  zipc_subscribe_options_t so;
  OK(zipc_subscribe_options_init(&so));
  so.from = from;
  so.sequence = sequence;
  so.delivery = delivery;
  zipc_subscriber_t* s = NULL;
  OK(zipc_topic_subscribe(t, &so, &s));
  return s;
}

TEST(every_subscriber_reads_every_message_with_its_sequence) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_subscriber_t* a = NULL;
  OK(zipc_topic_subscribe(t, NULL, &a)); /* defaults: latest, reliable */
  zipc_subscriber_t* b = subscribe(t, ZIPC_FROM_LATEST, 0, ZIPC_LOSSY);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  uint64_t seq = 99;
  OK(zipc_publisher_publish(p, "one", 4, 0, &seq));
  CHECK(seq == 0);
  OK(zipc_publisher_publish(p, "two", 4, ZIPC_FOREVER, &seq));
  CHECK(seq == 1);
  OK(zipc_publisher_publish(p, "three", 6, 1 * SECONDS, NULL));
  OK(zipc_publisher_flush(p));
  zipc_subscriber_t* subs[2] = {a, b};
  for (int i = 0; i < 2; ++i) {
    char buf[64];
    zipc_message_info_t info;
    OK(zipc_subscriber_read(subs[i], buf, sizeof buf, 0, &info));
    CHECK(info.sequence == 0 && info.size == 4 && strcmp(buf, "one") == 0 && info.publish_ns > 0);
    OK(zipc_subscriber_read(subs[i], buf, sizeof buf, ZIPC_FOREVER, &info));
    CHECK(info.sequence == 1 && strcmp(buf, "two") == 0);
    OK(zipc_subscriber_read(subs[i], buf, sizeof buf, 1 * SECONDS, NULL));
    CHECK(strcmp(buf, "three") == 0);
    EXPECT(zipc_subscriber_read(subs[i], buf, sizeof buf, 0, &info), ZIPC_EMPTY);
    EXPECT(zipc_subscriber_read(subs[i], buf, sizeof buf, 1 * MS, &info), ZIPC_TIMEOUT);
  }
  zipc_topic_info_t ti;
  OK(zipc_topic_info(t, &ti));
  CHECK(ti.capacity_bytes == 4096 && ti.max_message_size == 512 && ti.max_subscribers == 4);
  CHECK(ti.publishers == ZIPC_SINGLE && ti.next_sequence == 3 && ti.oldest_sequence == 0 && ti.abandoned == 0);
  zipc_subscriber_stats_t st;
  OK(zipc_subscriber_stats(b, &st));
  CHECK(st.lost == 0 && st.abandoned == 0 && st.next_sequence == 3 && st.delivery == ZIPC_LOSSY);
  OK(zipc_subscriber_stats(a, &st));
  CHECK(st.delivery == ZIPC_RELIABLE);
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(a));
  OK(zipc_subscriber_detach(b));
  OK(zipc_topic_detach(t));
  OK(zipc_topic_remove(name, NULL));
}

TEST(late_subscribers_replay_from_oldest_latest_or_a_sequence) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 8);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  for (int i = 0; i < 3; ++i) OK(zipc_publisher_publish(p, &i, sizeof i, 0, NULL));
  zipc_subscriber_t* oldest = subscribe(t, ZIPC_FROM_OLDEST, 0, ZIPC_RELIABLE);
  zipc_subscriber_t* latest = subscribe(t, ZIPC_FROM_LATEST, 0, ZIPC_RELIABLE);
  zipc_subscriber_t* from1 = subscribe(t, ZIPC_FROM_SEQUENCE, 1, ZIPC_RELIABLE);
  int v = -1;
  zipc_message_info_t info;
  OK(zipc_subscriber_read(oldest, &v, sizeof v, 0, &info));
  CHECK(v == 0 && info.sequence == 0);
  OK(zipc_subscriber_read(from1, &v, sizeof v, 0, &info));
  CHECK(v == 1 && info.sequence == 1);
  EXPECT(zipc_subscriber_read(latest, &v, sizeof v, 0, &info), ZIPC_EMPTY);
  int three = 3;
  OK(zipc_publisher_publish(p, &three, sizeof three, 0, NULL));
  OK(zipc_subscriber_read(latest, &v, sizeof v, 0, &info));
  CHECK(v == 3 && info.sequence == 3);
  OK(zipc_subscriber_detach(oldest));
  OK(zipc_subscriber_detach(latest));
  OK(zipc_subscriber_detach(from1));
  OK(zipc_publisher_detach(p));
  OK(zipc_topic_detach(t));
}

TEST(a_sequence_the_log_no_longer_holds_is_not_retained) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  char msg[400] = {0};
  for (int i = 0; i < 40; ++i) OK(zipc_publisher_publish(p, msg, sizeof msg, 0, NULL));
  zipc_subscribe_options_t so;
  OK(zipc_subscribe_options_init(&so));
  so.from = ZIPC_FROM_SEQUENCE;
  so.sequence = 0;
  zipc_subscriber_t* s = NULL;
  EXPECT(zipc_topic_subscribe(t, &so, &s), ZIPC_NOT_RETAINED);
  CHECK_MESSAGE("oldest");
  CHECK(s == NULL);
  OK(zipc_publisher_detach(p));
  OK(zipc_topic_detach(t));
}

TEST(a_lapped_lossy_subscriber_counts_what_it_lost) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_subscriber_t* s = subscribe(t, ZIPC_FROM_OLDEST, 0, ZIPC_LOSSY);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  char msg[400] = {0};
  for (int i = 0; i < 40; ++i) OK(zipc_publisher_publish(p, msg, sizeof msg, 0, NULL)); /* never waits */
  char buf[512];
  zipc_message_info_t info;
  EXPECT(zipc_subscriber_read(s, buf, sizeof buf, 0, &info), ZIPC_OVERRUN);
  zipc_subscriber_stats_t st;
  OK(zipc_subscriber_stats(s, &st));
  CHECK(st.lost > 0 && st.lost < 40);
  uint64_t got = 0;
  while (zipc_subscriber_read(s, buf, sizeof buf, 0, &info) == ZIPC_OK) ++got;
  CHECK(got + st.lost == 40);
  zipc_read_loan_t r;
  EXPECT(zipc_subscriber_acquire(s, 0, &r), ZIPC_NOT_SUPPORTED); /* lossy readers copy */
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
}

TEST(a_reliable_subscriber_holds_the_publisher_back) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_subscriber_t* s = subscribe(t, ZIPC_FROM_LATEST, 0, ZIPC_RELIABLE);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  char msg[400] = {0};
  int sent = 0;
  zipc_status_t st = ZIPC_OK;
  while ((st = zipc_publisher_publish(p, msg, sizeof msg, 0, NULL)) == ZIPC_OK) ++sent;
  EXPECT(st, ZIPC_FULL);
  CHECK(sent > 0 && sent < 20);
  EXPECT(zipc_publisher_publish(p, msg, sizeof msg, 1 * MS, NULL), ZIPC_TIMEOUT);
  zipc_write_loan_t w;
  EXPECT(zipc_publisher_reserve(p, 400, 0, &w), ZIPC_FULL);
  char buf[512];
  OK(zipc_subscriber_read(s, buf, sizeof buf, 0, NULL));
  OK(zipc_publisher_publish(p, msg, sizeof msg, 0, NULL)); /* room again */
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
}

TEST(loans_write_and_read_records_in_place) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_subscriber_t* s = subscribe(t, ZIPC_FROM_LATEST, 0, ZIPC_RELIABLE);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  zipc_write_loan_t w;
  OK(zipc_publisher_reserve(p, 16, 0, &w));
  CHECK(w.size == 16);
  EXPECT(zipc_write_loan_commit(&w, 17, NULL), ZIPC_TOO_LARGE); /* kept */
  OK(zipc_write_loan_abort(&w));                                /* no sequence used */
  OK(zipc_publisher_reserve(p, 16, ZIPC_FOREVER, &w));
  memcpy(w.data, "in place", 9);
  uint64_t seq = 99;
  OK(zipc_write_loan_commit(&w, 9, &seq));
  CHECK(seq == 0);
  zipc_read_loan_t r;
  OK(zipc_subscriber_acquire(s, 0, &r));
  CHECK(r.size == 9 && strcmp(r.data, "in place") == 0 && r.sequence == 0 && r.publish_ns > 0);
  zipc_read_loan_t second;
  char buf[16];
  EXPECT(zipc_subscriber_acquire(s, 0, &second), ZIPC_INVALID_ARGUMENT); /* one loan at a time */
  CHECK_MESSAGE("release it first");
  EXPECT(zipc_subscriber_read(s, buf, sizeof buf, 0, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_read_loan_release(&r));
  EXPECT(zipc_subscriber_acquire(s, 0, &r), ZIPC_EMPTY);
  EXPECT(zipc_subscriber_acquire(s, 1 * MS, &r), ZIPC_TIMEOUT);
  EXPECT(zipc_publisher_reserve(p, 513, 0, &w), ZIPC_TOO_LARGE);
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
}

TEST(oversized_messages_and_small_buffers_are_too_large) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_subscriber_t* s = subscribe(t, ZIPC_FROM_LATEST, 0, ZIPC_RELIABLE);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  char big[513] = {0};
  EXPECT(zipc_publisher_publish(p, big, sizeof big, 0, NULL), ZIPC_TOO_LARGE);
  OK(zipc_publisher_publish(p, big, 100, 0, NULL));
  char small[10];
  zipc_message_info_t info;
  EXPECT(zipc_subscriber_read(s, small, sizeof small, 0, &info), ZIPC_TOO_LARGE);
  CHECK(info.size == 100); /* nothing consumed */
  OK(zipc_subscriber_read(s, big, sizeof big, 0, &info));
  CHECK(info.size == 100);
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
}

TEST(a_second_single_publisher_or_subscriber_past_the_slots_is_busy) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 1);
  zipc_publisher_t* p = NULL;
  zipc_publisher_t* p2 = NULL;
  OK(zipc_topic_publisher(t, &p));
  EXPECT(zipc_topic_publisher(t, &p2), ZIPC_BUSY);
  CHECK_MESSAGE(name);
  zipc_subscriber_t* s = NULL;
  zipc_subscriber_t* s2 = NULL;
  OK(zipc_topic_subscribe(t, NULL, &s));
  EXPECT(zipc_topic_subscribe(t, NULL, &s2), ZIPC_BUSY);
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_subscribe(t, NULL, &s2)); /* the slot came back */
  OK(zipc_subscriber_detach(s2));
  OK(zipc_publisher_detach(p));
  OK(zipc_topic_detach(t));
}

TEST(open_and_open_or_create_share_one_topic) {
  const char* name = temp_name("t");
  zipc_topic_options_t o;
  OK(zipc_topic_options_init(&o));
  o.capacity_bytes = 8192;
  o.max_message_size = 1024;
  o.publishers = ZIPC_MULTI;
  zipc_topic_t* a = NULL;
  zipc_topic_t* b = NULL;
  zipc_topic_t* c = NULL;
  bool created = false;
  OK(zipc_topic_open_or_create(name, &o, &a, &created));
  CHECK(created);
  EXPECT(zipc_topic_open_or_create(name, NULL, &b, &created), ZIPC_OPTIONS_MISMATCH);
  CHECK_MESSAGE("capacity_bytes");
  zipc_topic_options_t any;
  OK(zipc_topic_options_init(&any));
  any.accept_existing = true;
  OK(zipc_topic_open_or_create(name, &any, &b, &created));
  CHECK(!created);
  OK(zipc_topic_open(name, NULL, &c));
  zipc_topic_info_t info;
  OK(zipc_topic_info(c, &info));
  CHECK(info.capacity_bytes == 8192 && info.publishers == ZIPC_MULTI);
  OK(zipc_topic_sync(c)); /* nothing to flush in /dev/shm */
  zipc_publisher_t* p1 = NULL;
  zipc_publisher_t* p2 = NULL;
  OK(zipc_topic_publisher(a, &p1));
  OK(zipc_topic_publisher(b, &p2)); /* multi: both */
  OK(zipc_publisher_detach(p1));
  OK(zipc_publisher_detach(p2));
  OK(zipc_topic_detach(a));
  OK(zipc_topic_detach(b));
  OK(zipc_topic_detach(c));
}

TEST(setup_errors_and_null_arguments_are_reported) {
  const char* name = temp_name("t");
  zipc_topic_t* t = NULL;
  EXPECT(zipc_topic_open(name, NULL, &t), ZIPC_NOT_FOUND);
  CHECK_MESSAGE(name);
  EXPECT(zipc_topic_remove(name, NULL), ZIPC_NOT_FOUND);
  zipc_topic_options_t o;
  OK(zipc_topic_options_init(&o));
  o.max_subscribers = 0;
  EXPECT(zipc_topic_create(name, &o, &t), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("max_subscribers");
  OK(zipc_topic_options_init(&o));
  o.publishers = 5;
  EXPECT(zipc_topic_create(name, &o, &t), ZIPC_INVALID_ARGUMENT);
  o.struct_size = 4;
  EXPECT(zipc_topic_create(name, &o, &t), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_create(NULL, NULL, &t), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_create(name, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_open(NULL, NULL, &t), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_open_or_create(name, NULL, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_remove(NULL, NULL), ZIPC_INVALID_ARGUMENT);
  CHECK(t == NULL);
  t = small_topic(name, 2);
  zipc_topic_t* again = NULL;
  EXPECT(zipc_topic_create(name, NULL, &again), ZIPC_ALREADY_EXISTS);
  OK(zipc_topic_open(name, NULL, &again));
  OK(zipc_topic_detach(again));
  zipc_subscribe_options_t so;
  OK(zipc_subscribe_options_init(&so));
  zipc_subscriber_t* s = NULL;
  so.from = 9;
  EXPECT(zipc_topic_subscribe(t, &so, &s), ZIPC_INVALID_ARGUMENT);
  OK(zipc_subscribe_options_init(&so));
  so.delivery = 9;
  EXPECT(zipc_topic_subscribe(t, &so, &s), ZIPC_INVALID_ARGUMENT);
  so.struct_size = 0;
  EXPECT(zipc_topic_subscribe(t, &so, &s), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_subscribe(t, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_subscribe(NULL, NULL, &s), ZIPC_INVALID_ARGUMENT);
  zipc_publisher_t* p = NULL;
  EXPECT(zipc_topic_publisher(NULL, &p), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_publisher(t, NULL), ZIPC_INVALID_ARGUMENT);
  zipc_topic_info_t ti;
  EXPECT(zipc_topic_info(NULL, &ti), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_info(t, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_sync(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_options_init(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_subscribe_options_init(NULL), ZIPC_INVALID_ARGUMENT);
  zipc_write_loan_t w;
  zipc_read_loan_t r;
  char buf[8];
  zipc_subscriber_stats_t st;
  EXPECT(zipc_publisher_publish(NULL, "a", 1, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_publisher_reserve(NULL, 1, 0, &w), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_publisher_flush(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_subscriber_read(NULL, buf, 8, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_subscriber_acquire(NULL, 0, &r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_subscriber_stats(NULL, &st), ZIPC_INVALID_ARGUMENT);
  OK(zipc_topic_publisher(t, &p));
  OK(zipc_topic_subscribe(t, NULL, &s));
  EXPECT(zipc_publisher_publish(p, NULL, 1, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_publisher_reserve(p, 1, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_subscriber_read(s, NULL, 8, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_subscriber_acquire(s, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_subscriber_stats(s, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_publisher_detach(NULL));
  OK(zipc_subscriber_detach(NULL));
  OK(zipc_topic_detach(NULL));
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
}

TEST(close_fails_later_publishes_and_subscribers_drain_then_see_closed) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_subscriber_t* s = subscribe(t, ZIPC_FROM_LATEST, 0, ZIPC_RELIABLE);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  OK(zipc_publisher_publish(p, "one", 4, 0, NULL));
  bool closed = true;
  OK(zipc_topic_closed(t, &closed));
  CHECK(!closed);
  OK(zipc_topic_close(t));
  OK(zipc_topic_closed(t, &closed));
  CHECK(closed);
  EXPECT(zipc_publisher_publish(p, "two", 4, 0, NULL), ZIPC_CLOSED);
  char buf[512];
  zipc_message_info_t info;
  OK(zipc_subscriber_read(s, buf, sizeof buf, 0, &info));
  CHECK(info.sequence == 0 && strcmp(buf, "one") == 0);
  EXPECT(zipc_subscriber_read(s, buf, sizeof buf, 0, &info), ZIPC_CLOSED);
  EXPECT(zipc_topic_close(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_topic_closed(t, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
}

static zipc_subscriber_t* durable(zipc_topic_t* t, const char* name, int64_t grace_ns) {
  zipc_subscribe_options_t so;
  OK(zipc_subscribe_options_init(&so));
  CHECK(so.durable_name == NULL && so.durable_grace_ns > 0);
  so.from = ZIPC_FROM_OLDEST;
  so.durable_name = name;
  so.durable_grace_ns = grace_ns;
  zipc_subscriber_t* s = NULL;
  OK(zipc_topic_subscribe(t, &so, &s));
  return s;
}

TEST(a_durable_subscriber_resumes_where_it_left_off_and_its_name_is_exclusive) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  zipc_subscriber_t* s = durable(t, "c-reader", 60 * 1000 * MS);
  OK(zipc_publisher_publish(p, "one", 4, 0, NULL));
  OK(zipc_publisher_publish(p, "two", 4, 0, NULL));
  char buf[512];
  zipc_message_info_t info;
  OK(zipc_subscriber_read(s, buf, sizeof buf, 0, &info));
  zipc_subscribe_options_t so;
  OK(zipc_subscribe_options_init(&so));
  so.durable_name = "c-reader";
  zipc_subscriber_t* again = NULL;
  EXPECT(zipc_topic_subscribe(t, &so, &again), ZIPC_BUSY);
  CHECK_MESSAGE("c-reader");
  so.durable_name = "bad name";
  EXPECT(zipc_topic_subscribe(t, &so, &again), ZIPC_INVALID_ARGUMENT);
  OK(zipc_subscriber_detach(s));
  again = durable(t, "c-reader", 60 * 1000 * MS);
  OK(zipc_subscriber_read(again, buf, sizeof buf, 0, &info));
  CHECK(info.sequence == 1 && strcmp(buf, "two") == 0);
  OK(zipc_subscriber_detach(again));
  OK(zipc_publisher_detach(p));
  OK(zipc_topic_detach(t));
}

TEST(a_read_only_topic_serves_lossy_subscribers_and_refuses_writers) {
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  zipc_topic_options_t o;
  OK(zipc_topic_options_init(&o));
  CHECK(!o.read_only);
  o.read_only = true;
  zipc_topic_t* ro = NULL;
  EXPECT(zipc_topic_create(temp_name("t"), &o, &ro), ZIPC_INVALID_ARGUMENT); /* a creator writes */
  OK(zipc_topic_open(name, &o, &ro));
  zipc_subscriber_t* s = subscribe(ro, ZIPC_FROM_LATEST, 0, ZIPC_LOSSY);
  OK(zipc_publisher_publish(p, "seen", 5, 0, NULL));
  char buf[64];
  OK(zipc_subscriber_read(s, buf, sizeof buf, 1 * SECONDS, NULL));
  CHECK(strcmp(buf, "seen") == 0);
  zipc_publisher_t* no = NULL;
  EXPECT(zipc_topic_publisher(ro, &no), ZIPC_WRONG_ROLE);
  CHECK_MESSAGE("read-only");
  /* A reliable read-only subscriber keeps its position in a seat of its own:
   * the publisher adopts it and is held back by it. */
  zipc_subscriber_t* reliable = subscribe(ro, ZIPC_FROM_LATEST, 0, ZIPC_RELIABLE);
  char msg[400] = {0};
  int sent = 0;
  zipc_status_t st = ZIPC_OK;
  while (sent < 1000 && (st = zipc_publisher_publish(p, msg, sizeof msg, 0, NULL)) == ZIPC_OK) ++sent;
  EXPECT(st, ZIPC_FULL);
  CHECK(sent > 0 && sent < 20);
  char big[512];
  OK(zipc_subscriber_read(reliable, big, sizeof big, 1 * SECONDS, NULL));
  OK(zipc_publisher_publish(p, msg, sizeof msg, 1 * SECONDS, NULL)); /* room again */
  OK(zipc_subscriber_detach(reliable));
  zipc_subscribe_options_t durable;
  OK(zipc_subscribe_options_init(&durable));
  durable.durable_name = "keeper";
  zipc_subscriber_t* no_sub = NULL;
  EXPECT(zipc_topic_subscribe(ro, &durable, &no_sub), ZIPC_WRONG_ROLE);
  EXPECT(zipc_topic_close(ro), ZIPC_WRONG_ROLE);
  bool closed = true;
  OK(zipc_topic_closed(t, &closed));
  CHECK(!closed);
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(ro));
  OK(zipc_publisher_detach(p));
  OK(zipc_topic_detach(t));
  OK(zipc_topic_remove(name, NULL));
}

#ifndef NDEBUG
/* Reads one message, waiting without a deadline; tries again while the main
 * thread's probe is inside the subscriber. Returns the read's status. */
static void* read_forever(void* arg) {
  zipc_subscriber_t* s = (zipc_subscriber_t*)arg;
  char buf[64];
  zipc_status_t st;
  do st = zipc_subscriber_read(s, buf, sizeof buf, ZIPC_FOREVER, NULL);
  while (st == ZIPC_BUSY);
  return (void*)(intptr_t)st;
}
#endif

TEST(a_subscriber_read_by_a_second_thread_at_once_is_busy_in_debug_builds) {
#ifdef NDEBUG
  fprintf(stderr, "skipped: the check exists in debug builds only (docs/guide/handles.md, Threads)\n");
#else
  const char* name = temp_name("t");
  zipc_topic_t* t = small_topic(name, 4);
  zipc_subscriber_t* s = NULL;
  OK(zipc_topic_subscribe(t, NULL, &s));
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  pthread_t inside;
  CHECK(pthread_create(&inside, NULL, read_forever, s) == 0);
  char buf[64];
  zipc_status_t st;
  /* EMPTY until the other thread is inside; a library that never refused would hang here (the ctest timeout) */
  do st = zipc_subscriber_read(s, buf, sizeof buf, 0, NULL);
  while (st == ZIPC_EMPTY);
  EXPECT(st, ZIPC_BUSY);
  OK(zipc_publisher_publish(p, "m", 2, 0, NULL));
  void* waited = NULL;
  CHECK(pthread_join(inside, &waited) == 0);
  EXPECT((zipc_status_t)(intptr_t)waited, ZIPC_OK);
  EXPECT(zipc_subscriber_read(s, buf, sizeof buf, 0, NULL), ZIPC_EMPTY); /* one thread again */
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
#endif
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(every_subscriber_reads_every_message_with_its_sequence);
  RUN(late_subscribers_replay_from_oldest_latest_or_a_sequence);
  RUN(a_sequence_the_log_no_longer_holds_is_not_retained);
  RUN(a_lapped_lossy_subscriber_counts_what_it_lost);
  RUN(a_reliable_subscriber_holds_the_publisher_back);
  RUN(loans_write_and_read_records_in_place);
  RUN(oversized_messages_and_small_buffers_are_too_large);
  RUN(a_second_single_publisher_or_subscriber_past_the_slots_is_busy);
  RUN(open_and_open_or_create_share_one_topic);
  RUN(setup_errors_and_null_arguments_are_reported);
  RUN(close_fails_later_publishes_and_subscribers_drain_then_see_closed);
  RUN(a_durable_subscriber_resumes_where_it_left_off_and_its_name_is_exclusive);
  RUN(a_read_only_topic_serves_lossy_subscribers_and_refuses_writers);
  RUN(a_subscriber_read_by_a_second_thread_at_once_is_busy_in_debug_builds);
  return done();
}
