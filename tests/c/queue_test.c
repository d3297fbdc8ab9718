/* queue_test.c - zipc_queue_* from C: copies, loans, batches, close, stats,
 * and every error a caller can reach. */
#include "check.h"

static zipc_queue_options_t small_options(void) {
  zipc_queue_options_t o;
  OK(zipc_queue_options_init(&o));
  o.block_size = 64;
  o.block_count = 4;
  return o;
}

TEST(a_sent_message_is_received_once_with_its_size) {
  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  OK(zipc_queue_send(q, "hello", 6, 0));
  char buf[64];
  size_t n = 0;
  OK(zipc_queue_recv(q, buf, sizeof buf, &n, 0));
  CHECK(n == 6 && strcmp(buf, "hello") == 0);
  EXPECT(zipc_queue_recv(q, buf, sizeof buf, &n, 0), ZIPC_EMPTY);
  EXPECT(zipc_queue_recv(q, buf, sizeof buf, &n, 1 * MS), ZIPC_TIMEOUT);
  OK(zipc_queue_detach(q));
  OK(zipc_queue_remove(name, NULL));
}

TEST(a_full_queue_says_full_then_timeout) {
  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  for (int i = 0; i < 4; ++i) OK(zipc_queue_send(q, &i, sizeof i, 0));
  EXPECT(zipc_queue_send(q, "x", 1, 0), ZIPC_FULL);
  EXPECT(zipc_queue_send(q, "x", 1, 1 * MS), ZIPC_TIMEOUT);
  zipc_queue_stats_t st;
  OK(zipc_queue_stats(q, &st));
  CHECK(st.sent == 4 && st.received == 0 && st.full_waits >= 1);
  zipc_queue_info_t info;
  OK(zipc_queue_info(q, &info));
  CHECK(info.block_size == 64 && info.block_count == 4 && info.size_approx == 4);
  CHECK(info.producers == ZIPC_MULTI && info.consumers == ZIPC_MULTI && !info.closed);
  OK(zipc_queue_detach(q));
}

TEST(messages_over_the_block_size_or_the_buffer_are_too_large) {
  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  char big[65] = {0};
  EXPECT(zipc_queue_send(q, big, sizeof big, 0), ZIPC_TOO_LARGE);
  OK(zipc_queue_send(q, big, 40, 0));
  char small[8];
  size_t n = 0;
  EXPECT(zipc_queue_recv(q, small, sizeof small, &n, 0), ZIPC_TOO_LARGE);
  CHECK(n == 40); /* the size needed; the message stays queued */
  char buf[64];
  OK(zipc_queue_recv(q, buf, sizeof buf, &n, ZIPC_FOREVER));
  CHECK(n == 40);
  OK(zipc_queue_detach(q));
}

TEST(loans_write_and_read_in_place) {
  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  zipc_write_loan_t w;
  OK(zipc_queue_reserve(q, 0, &w));
  CHECK(w.data != NULL && w.size == 64);
  memcpy(w.data, "abc", 3);
  EXPECT(zipc_write_loan_commit(&w, 65, NULL), ZIPC_TOO_LARGE); /* the loan is kept */
  uint64_t seq = 99;
  OK(zipc_write_loan_commit(&w, 3, &seq));
  CHECK(w.data == NULL && seq == 0);                                  /* the first position of the ring */
  EXPECT(zipc_write_loan_commit(&w, 3, NULL), ZIPC_INVALID_ARGUMENT); /* ended */
  EXPECT(zipc_write_loan_abort(&w), ZIPC_INVALID_ARGUMENT);
  OK(zipc_queue_reserve(q, ZIPC_FOREVER, &w));
  OK(zipc_write_loan_abort(&w)); /* never delivered */
  zipc_read_loan_t r;
  OK(zipc_queue_acquire(q, 0, &r));
  CHECK(r.size == 3 && memcmp(r.data, "abc", 3) == 0 && r.sequence == seq);
  OK(zipc_read_loan_release(&r));
  EXPECT(zipc_read_loan_release(&r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_acquire(q, 0, &r), ZIPC_EMPTY);
  EXPECT(zipc_queue_acquire(q, 1 * MS, &r), ZIPC_TIMEOUT);
  for (int i = 0; i < 4; ++i) OK(zipc_queue_send(q, "x", 1, 0));
  EXPECT(zipc_queue_reserve(q, 0, &w), ZIPC_FULL);
  OK(zipc_queue_detach(q));
}

static void count_bytes(void* context, const void* data, size_t size) {
  size_t* total = context;
  CHECK(data != NULL);
  *total += size;
}

TEST(batches_send_and_receive_many_at_once) {
  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  o.block_count = 128;
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  zipc_bytes_t msgs[100];
  for (int i = 0; i < 100; ++i) msgs[i] = (zipc_bytes_t){"0123456789", (size_t)(i % 10) + 1};
  size_t sent = 0;
  OK(zipc_queue_send_batch(q, msgs, 100, 0, &sent));
  CHECK(sent == 100);
  EXPECT(zipc_queue_send_batch(q, msgs, 100, 0, &sent), ZIPC_FULL); /* 28 fit */
  CHECK(sent == 28);
  size_t total = 0, got = 0;
  OK(zipc_queue_recv_batch(q, 1000, 0, count_bytes, &total, &got));
  CHECK(got == 128 && total == 550 + (28 / 10) * 55 + 36);
  EXPECT(zipc_queue_recv_batch(q, 10, 0, count_bytes, &total, &got), ZIPC_EMPTY);
  CHECK(got == 0);
  zipc_write_loan_t w[40];
  OK(zipc_queue_reserve_batch(q, w, 40, 0, &got));
  CHECK(got == 40);
  for (int i = 0; i < 40; ++i) {
    memcpy(w[i].data, &i, sizeof i);
    OK(zipc_write_loan_commit(&w[i], sizeof i, NULL));
  }
  zipc_read_loan_t r[50];
  OK(zipc_queue_acquire_batch(q, r, 50, 0, &got));
  CHECK(got == 40);
  for (int i = 0; i < 40; ++i) {
    int v = -1;
    memcpy(&v, r[i].data, sizeof v);
    CHECK(v == i && r[i].size == sizeof v);
    OK(zipc_read_loan_release(&r[i]));
  }
  EXPECT(zipc_queue_acquire_batch(q, r, 50, 0, &got), ZIPC_EMPTY);
  for (int i = 0; i < 128; ++i) OK(zipc_queue_send(q, "x", 1, 0));
  EXPECT(zipc_queue_reserve_batch(q, w, 4, 0, &got), ZIPC_FULL);
  CHECK(got == 0);
  OK(zipc_queue_detach(q));
}

TEST(a_closed_queue_refuses_sends_and_drains_then_says_closed) {
  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  OK(zipc_queue_send(q, "a", 1, 0));
  OK(zipc_queue_close(q));
  EXPECT(zipc_queue_send(q, "b", 1, 0), ZIPC_CLOSED);
  zipc_write_loan_t w;
  EXPECT(zipc_queue_reserve(q, 0, &w), ZIPC_CLOSED);
  char buf[8];
  size_t n = 0;
  OK(zipc_queue_recv(q, buf, sizeof buf, &n, ZIPC_FOREVER));
  EXPECT(zipc_queue_recv(q, buf, sizeof buf, &n, ZIPC_FOREVER), ZIPC_CLOSED); /* never blocks */
  zipc_queue_info_t info;
  OK(zipc_queue_info(q, &info));
  CHECK(info.closed);
  size_t recovered = 7;
  OK(zipc_queue_recover(q, &recovered));
  CHECK(recovered == 0);
  OK(zipc_queue_recover(q, NULL));
  OK(zipc_queue_detach(q));
}

TEST(open_finds_the_geometry_and_open_or_create_tells_which_happened) {
  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  zipc_queue_t* a = NULL;
  zipc_queue_t* b = NULL;
  zipc_queue_t* c = NULL;
  bool created = false;
  OK(zipc_queue_open_or_create(name, &o, &a, &created));
  CHECK(created);
  OK(zipc_queue_open_or_create(name, &o, &b, &created));
  CHECK(!created);
  OK(zipc_queue_open(name, NULL, &c));
  zipc_queue_info_t info;
  OK(zipc_queue_info(c, &info));
  CHECK(info.block_size == 64 && info.block_count == 4);
  OK(zipc_queue_send(a, "z", 1, 0));
  char buf[8];
  size_t n = 0;
  OK(zipc_queue_recv(c, buf, sizeof buf, &n, 0));
  CHECK(n == 1 && buf[0] == 'z');
  zipc_queue_t* d = NULL;
  EXPECT(zipc_queue_open_or_create(name, NULL, &d, NULL), ZIPC_OPTIONS_MISMATCH); /* defaults disagree */
  CHECK_MESSAGE("block_count 1024 asked, 4 existing");
  zipc_queue_options_t any;
  OK(zipc_queue_options_init(&any));
  any.accept_existing = true;
  OK(zipc_queue_open_or_create(name, &any, &d, NULL)); /* takes the existing geometry */
  OK(zipc_queue_info(d, &info));
  CHECK(info.block_count == 4);
  OK(zipc_queue_detach(d));
  OK(zipc_queue_detach(a));
  OK(zipc_queue_detach(b));
  OK(zipc_queue_detach(c));
}

TEST(a_handle_without_the_role_cannot_send_or_receive) {
  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  o.role = ZIPC_ROLE_NONE;
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  const zipc_status_t s = zipc_queue_send(q, "a", 1, 0);
  EXPECT(s, ZIPC_WRONG_ROLE);

  o.role = ZIPC_ROLE_PRODUCER;
  zipc_queue_t* p = NULL;
  OK(zipc_queue_open(name, &o, &p));
  OK(zipc_queue_send(p, "a", 1, 0));
  char buf[4];
  size_t n = 0;
  const zipc_status_t r = zipc_queue_recv(p, buf, sizeof buf, &n, 0);
  EXPECT(r, ZIPC_WRONG_ROLE);
  zipc_queue_stats_t st;
  OK(zipc_queue_stats(q, &st));
  CHECK(st.sent == 1);
  OK(zipc_queue_close(q)); /* a supervisor may close */
  OK(zipc_queue_detach(p));
  OK(zipc_queue_detach(q));
}

TEST(setup_errors_come_with_a_message_naming_the_queue) {
  const char* name = temp_name("q");
  zipc_queue_t* q = NULL;
  EXPECT(zipc_queue_open(name, NULL, &q), ZIPC_NOT_FOUND);
  CHECK_MESSAGE(name);
  CHECK(q == NULL);
  zipc_queue_options_t o = small_options();
  OK(zipc_queue_create(name, &o, &q));
  zipc_queue_t* q2 = NULL;
  zipc_clear_error();
  CHECK(strcmp(zipc_last_error(), "") == 0);
  EXPECT(zipc_queue_create(name, &o, &q2), ZIPC_ALREADY_EXISTS);
  CHECK_MESSAGE(name);
  CHECK_MESSAGE("already exists");
  OK(zipc_queue_detach(q));
  OK(zipc_queue_remove(name, NULL));
  EXPECT(zipc_queue_remove(name, NULL), ZIPC_NOT_FOUND);
  CHECK_MESSAGE(name);
  o.block_count = 3; /* not a power of two */
  EXPECT(zipc_queue_create(name, &o, &q2), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE(name);
  o = small_options();
  o.producers = 7;
  EXPECT(zipc_queue_create(name, &o, &q2), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("producers");
  o = small_options();
  o.role = 9;
  EXPECT(zipc_queue_create(name, &o, &q2), ZIPC_INVALID_ARGUMENT);
  o = small_options();
  o.wait.strategy = 3;
  EXPECT(zipc_queue_create(name, &o, &q2), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("strategy");
  o = small_options();
  o.segment.huge_pages = 5;
  EXPECT(zipc_queue_create(name, &o, &q2), ZIPC_INVALID_ARGUMENT);
  o.struct_size = 0; /* never initialized */
  EXPECT(zipc_queue_create(name, &o, &q2), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("options_init");
  EXPECT(zipc_queue_create("bad/name", NULL, &q2), ZIPC_INVALID_NAME);
  EXPECT(zipc_queue_create("", NULL, &q2), ZIPC_INVALID_NAME);
  EXPECT(zipc_queue_create(NULL, NULL, &q2), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_create(name, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_open(NULL, NULL, &q2), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_open_or_create(name, NULL, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_remove(NULL, NULL), ZIPC_INVALID_ARGUMENT);
  CHECK(q2 == NULL);
}

TEST(null_handles_and_pointers_are_invalid_arguments) {
  char buf[4];
  size_t n = 0;
  zipc_write_loan_t w;
  zipc_read_loan_t r;
  zipc_queue_stats_t st;
  zipc_queue_info_t info;
  EXPECT(zipc_queue_send(NULL, "a", 1, 0), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("zipc_queue_send: queue is NULL");
  EXPECT(zipc_queue_recv(NULL, buf, 4, &n, 0), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_reserve(NULL, 0, &w), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_acquire(NULL, 0, &r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_send_batch(NULL, NULL, 0, 0, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_recv_batch(NULL, 1, 0, count_bytes, NULL, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_reserve_batch(NULL, &w, 1, 0, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_acquire_batch(NULL, &r, 1, 0, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_close(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_stats(NULL, &st), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_info(NULL, &info), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_recover(NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_options_init(NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_queue_detach(NULL)); /* like free(NULL) */
  EXPECT(zipc_write_loan_commit(NULL, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_write_loan_abort(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_read_loan_release(NULL), ZIPC_INVALID_ARGUMENT);
  memset(&w, 0, sizeof w); /* never reserved */
  EXPECT(zipc_write_loan_commit(&w, 0, NULL), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("not live");

  const char* name = temp_name("q");
  zipc_queue_options_t o = small_options();
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  EXPECT(zipc_queue_send(q, NULL, 1, 0), ZIPC_INVALID_ARGUMENT);
  OK(zipc_queue_send(q, NULL, 0, 0)); /* an empty message */
  EXPECT(zipc_queue_recv(q, NULL, 4, &n, 0), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_recv(q, buf, 4, NULL, 0), ZIPC_INVALID_ARGUMENT);
  OK(zipc_queue_recv(q, buf, 4, &n, 0));
  CHECK(n == 0);
  EXPECT(zipc_queue_reserve(q, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_acquire(q, 0, NULL), ZIPC_INVALID_ARGUMENT);
  zipc_bytes_t bad = {NULL, 3};
  EXPECT(zipc_queue_send_batch(q, &bad, 1, 0, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_send_batch(q, NULL, 1, 0, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_send_batch(q, &bad, 0, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_recv_batch(q, 1, 0, NULL, NULL, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_recv_batch(q, 1, 0, count_bytes, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_reserve_batch(q, NULL, 1, 0, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_reserve_batch(q, &w, 1, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_acquire_batch(q, NULL, 1, 0, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_acquire_batch(q, &r, 1, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_stats(q, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_info(q, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_queue_detach(q));
}

TEST(options_from_a_newer_header_are_read_as_far_as_this_library_knows) {
  const char* name = temp_name("q");
  struct {
    zipc_queue_options_t known;
    unsigned char newer_fields[16]; /* what a later header might append */
  } newer;
  OK(zipc_queue_options_init(&newer.known));
  newer.known.struct_size = sizeof newer;
  newer.known.block_size = 32;
  newer.known.block_count = 8;
  memset(newer.newer_fields, 0x7f, sizeof newer.newer_fields);
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &newer.known, &q));
  zipc_queue_info_t info;
  OK(zipc_queue_info(q, &info));
  CHECK(info.block_size == 32 && info.block_count == 8);
  OK(zipc_queue_detach(q));
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(a_sent_message_is_received_once_with_its_size);
  RUN(a_full_queue_says_full_then_timeout);
  RUN(messages_over_the_block_size_or_the_buffer_are_too_large);
  RUN(loans_write_and_read_in_place);
  RUN(batches_send_and_receive_many_at_once);
  RUN(a_closed_queue_refuses_sends_and_drains_then_says_closed);
  RUN(open_finds_the_geometry_and_open_or_create_tells_which_happened);
  RUN(a_handle_without_the_role_cannot_send_or_receive);
  RUN(setup_errors_come_with_a_message_naming_the_queue);
  RUN(null_handles_and_pointers_are_invalid_arguments);
  RUN(options_from_a_newer_header_are_read_as_far_as_this_library_knows);
  return done();
}
