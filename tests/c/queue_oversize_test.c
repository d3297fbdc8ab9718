/* queue_oversize_test.c - messages larger than a block from C: a queue with
 * an oversize region (zipc_queue_options_t.oversize_bytes), copies and
 * loans sized per message, a full region, and a producer killed holding one. */
#include <signal.h>

#include "check.h"

static zipc_queue_options_t oversize_options(uint64_t region) {
  zipc_queue_options_t o;
  OK(zipc_queue_options_init(&o));
  CHECK(o.oversize_bytes == 0);
  o.block_size = 64;
  o.block_count = 8;
  o.recovery_time_ms = 50;
  o.oversize_bytes = region;
  return o;
}

TEST(a_message_over_the_block_travels_through_the_region_by_copy_and_by_loan) {
  const char* name = temp_name("qo");
  zipc_queue_options_t o = oversize_options(1u << 20);
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  static char big[300000];
  for (size_t i = 0; i < sizeof big; ++i) big[i] = (char)(i * 7);
  OK(zipc_queue_send(q, big, sizeof big, 0));
  static char out[400000];
  size_t n = 0;
  EXPECT(zipc_queue_recv(q, out, 1000, &n, 0), ZIPC_TOO_LARGE);
  CHECK(n == sizeof big); /* the size needed; the message stays queued */
  OK(zipc_queue_recv(q, out, sizeof out, &n, 0));
  CHECK(n == sizeof big && memcmp(out, big, n) == 0);

  zipc_write_loan_t w;
  OK(zipc_queue_reserve_size(q, 200000, 0, &w));
  CHECK(w.size == 200000);
  memset(w.data, 5, w.size);
  OK(zipc_write_loan_commit(&w, 150000, NULL));
  zipc_read_loan_t r;
  OK(zipc_queue_acquire(q, 0, &r));
  CHECK(r.size == 150000 && ((const char*)r.data)[149999] == 5);
  OK(zipc_read_loan_release(&r));
  OK(zipc_queue_reserve_size(q, 10, 0, &w)); /* a block */
  CHECK(w.size == 64);
  OK(zipc_write_loan_abort(&w));
  OK(zipc_queue_detach(q));
}

TEST(without_a_region_or_beyond_it_a_message_is_too_large_and_a_full_region_says_full) {
  const char* name = temp_name("qo");
  zipc_queue_options_t o = oversize_options(0);
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  zipc_write_loan_t w;
  EXPECT(zipc_queue_reserve_size(q, 65, 0, &w), ZIPC_TOO_LARGE);
  EXPECT(zipc_queue_reserve_size(NULL, 65, 0, &w), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_reserve_size(q, 65, 0, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_queue_detach(q));

  const char* name2 = temp_name("qo");
  o = oversize_options(1u << 16);
  OK(zipc_queue_create(name2, &o, &q));
  EXPECT(zipc_queue_reserve_size(q, 1u << 17, 0, &w), ZIPC_TOO_LARGE);
  zipc_write_loan_t held;
  OK(zipc_queue_reserve_size(q, 40000, 0, &held));
  EXPECT(zipc_queue_reserve_size(q, 40000, 0, &w), ZIPC_FULL);
  EXPECT(zipc_queue_reserve_size(q, 40000, 5 * MS, &w), ZIPC_TIMEOUT);
  OK(zipc_write_loan_abort(&held));
  OK(zipc_queue_reserve_size(q, 40000, 0, &w));
  OK(zipc_write_loan_abort(&w));
  OK(zipc_queue_detach(q));
}

TEST(a_producer_killed_holding_a_big_loan_has_its_room_reclaimed) {
  const char* name = temp_name("qo");
  zipc_queue_options_t o = oversize_options(1u << 16);
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  int fds[2];
  CHECK(pipe(fds) == 0);
  const pid_t pid = fork_child();
  if (pid == 0) {
    zipc_queue_t* p = NULL;
    zipc_write_loan_t w;
    if (zipc_queue_open(name, &o, &p) != ZIPC_OK || zipc_queue_reserve_size(p, 50000, 0, &w) != ZIPC_OK) _exit(1);
    (void)!write(fds[1], "x", 1);
    sleep_ms(60000); /* killed before commit */
    _exit(2);
  }
  char c = 0;
  CHECK(read(fds[0], &c, 1) == 1);
  zipc_write_loan_t w;
  EXPECT(zipc_queue_reserve_size(q, 50000, 0, &w), ZIPC_FULL);
  kill(pid, SIGKILL);
  CHECK(!child_ok(pid));
  size_t recovered = 0;
  OK(zipc_queue_recover(q, &recovered));
  CHECK(recovered == 1);
  OK(zipc_queue_reserve_size(q, 50000, 0, &w)); /* the dead producer's room is back */
  OK(zipc_write_loan_abort(&w));
  zipc_queue_stats_t st;
  OK(zipc_queue_stats(q, &st));
  CHECK(st.abandoned == 1);
  close(fds[0]);
  close(fds[1]);
  OK(zipc_queue_detach(q));
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(a_message_over_the_block_travels_through_the_region_by_copy_and_by_loan);
  RUN(without_a_region_or_beyond_it_a_message_is_too_large_and_a_full_region_says_full);
  RUN(a_producer_killed_holding_a_big_loan_has_its_room_reclaimed);
  return done();
}
