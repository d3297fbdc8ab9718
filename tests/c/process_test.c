/* process_test.c - two processes over the C API: a forked producer and a
 * consumer on a queue, a forked publisher and reliable + lossy subscribers on
 * a topic, and a consumer killed while holding a loan. Every payload carries
 * its sequence number and a checksum the receiver verifies. */
#include "check.h"

enum { kMessages = 20000, kMaxPayload = 64 };

/* seq (8 bytes), then filler derived from seq, then a 4-byte FNV-1a checksum. */
static size_t make_payload(uint64_t seq, unsigned char* out) {
  const size_t fill = (size_t)(seq % 40);
  memcpy(out, &seq, 8);
  for (size_t i = 0; i < fill; ++i) out[8 + i] = (unsigned char)(seq * 31 + i);
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < 8 + fill; ++i) h = (h ^ out[i]) * 16777619u;
  memcpy(out + 8 + fill, &h, 4);
  return 12 + fill;
}

/* The sequence a payload carries, or UINT64_MAX when it fails its checks. */
static uint64_t check_payload(const void* data, size_t size) {
  unsigned char expected[kMaxPayload];
  if (size < 12) return UINT64_MAX;
  uint64_t seq;
  memcpy(&seq, data, 8);
  if (make_payload(seq, expected) != size || memcmp(expected, data, size) != 0) return UINT64_MAX;
  return seq;
}

TEST(a_forked_producer_delivers_every_message_in_order) {
  const char* name = temp_name("pq");
  zipc_queue_options_t o;
  OK(zipc_queue_options_init(&o));
  o.block_size = kMaxPayload;
  o.block_count = 64;
  o.producers = ZIPC_SINGLE;
  o.consumers = ZIPC_SINGLE;
  o.role = ZIPC_ROLE_CONSUMER;
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  const pid_t child = fork_child();
  if (child == 0) {
    zipc_queue_options_t po;
    OK(zipc_queue_options_init(&po));
    po.role = ZIPC_ROLE_PRODUCER;
    zipc_queue_t* p = NULL;
    OK(zipc_queue_open(name, &po, &p));
    for (uint64_t seq = 0; seq < kMessages; ++seq) {
      unsigned char buf[kMaxPayload];
      const size_t n = make_payload(seq, buf);
      if (seq % 2 == 0) {
        OK(zipc_queue_send(p, buf, n, 10 * SECONDS));
      } else {
        zipc_write_loan_t w;
        OK(zipc_queue_reserve(p, 10 * SECONDS, &w));
        memcpy(w.data, buf, n);
        OK(zipc_write_loan_commit(&w, n, NULL));
      }
    }
    OK(zipc_queue_close(p));
    OK(zipc_queue_detach(p));
    exit(0); /* q is the parent's participant record: the child leaves it alone */
  }
  uint64_t next = 0;
  for (;;) {
    zipc_read_loan_t r;
    const zipc_status_t s = zipc_queue_acquire(q, 10 * SECONDS, &r);
    if (s == ZIPC_CLOSED) break;
    OK(s);
    CHECK(check_payload(r.data, r.size) == next);
    ++next;
    OK(zipc_read_loan_release(&r));
  }
  CHECK(next == kMessages);
  CHECK(child_ok(child));
  zipc_queue_stats_t st;
  OK(zipc_queue_stats(q, &st));
  CHECK(st.sent == kMessages && st.received == kMessages);
  OK(zipc_queue_detach(q));
}

TEST(a_forked_publisher_reaches_reliable_and_lossy_subscribers) {
  const char* name = temp_name("pt");
  zipc_topic_options_t o;
  OK(zipc_topic_options_init(&o));
  o.capacity_bytes = 1 << 14;
  o.max_message_size = kMaxPayload;
  zipc_topic_t* t = NULL;
  OK(zipc_topic_create(name, &o, &t));
  zipc_subscriber_t* reliable = NULL;
  zipc_subscriber_t* lossy = NULL;
  OK(zipc_topic_subscribe(t, NULL, &reliable));
  zipc_subscribe_options_t so;
  OK(zipc_subscribe_options_init(&so));
  so.delivery = ZIPC_LOSSY;
  OK(zipc_topic_subscribe(t, &so, &lossy));
  const pid_t child = fork_child();
  if (child == 0) {
    /* The inherited handles are the parent's records: leave them alone, open our own. */
    zipc_topic_t* mine = NULL;
    OK(zipc_topic_open(name, NULL, &mine));
    zipc_publisher_t* p = NULL;
    OK(zipc_topic_publisher(mine, &p));
    for (uint64_t seq = 0; seq < kMessages; ++seq) {
      unsigned char buf[kMaxPayload];
      const size_t n = make_payload(seq, buf);
      uint64_t got = UINT64_MAX;
      if (seq % 3 == 0) {
        zipc_write_loan_t w;
        OK(zipc_publisher_reserve(p, n, 10 * SECONDS, &w));
        memcpy(w.data, buf, n);
        OK(zipc_write_loan_commit(&w, n, &got));
      } else {
        OK(zipc_publisher_publish(p, buf, n, 10 * SECONDS, &got));
      }
      CHECK(got == seq);
    }
    OK(zipc_publisher_detach(p));
    OK(zipc_topic_detach(mine));
    exit(0);
  }
  uint64_t lossy_seen = 0, lossy_last = 0;
  for (uint64_t next = 0; next < kMessages;) {
    zipc_read_loan_t r;
    OK(zipc_subscriber_acquire(reliable, 10 * SECONDS, &r));
    CHECK(r.sequence == next && check_payload(r.data, r.size) == next);
    OK(zipc_read_loan_release(&r));
    ++next;
    /* The lossy reader runs alongside, now and then. */
    if (next % 7 == 0) {
      unsigned char buf[kMaxPayload];
      zipc_message_info_t info;
      const zipc_status_t s = zipc_subscriber_read(lossy, buf, sizeof buf, 0, &info);
      if (s == ZIPC_OK) {
        CHECK(check_payload(buf, info.size) == info.sequence);
        CHECK(lossy_seen == 0 || info.sequence > lossy_last);
        lossy_last = info.sequence;
        ++lossy_seen;
      } else {
        CHECK(s == ZIPC_OVERRUN || s == ZIPC_EMPTY);
      }
    }
  }
  CHECK(child_ok(child));
  for (;;) {
    unsigned char buf[kMaxPayload];
    zipc_message_info_t info;
    const zipc_status_t s = zipc_subscriber_read(lossy, buf, sizeof buf, 0, &info);
    if (s == ZIPC_EMPTY) break;
    if (s == ZIPC_OVERRUN) continue;
    OK(s);
    CHECK(check_payload(buf, info.size) == info.sequence);
    ++lossy_seen;
  }
  zipc_subscriber_stats_t st;
  OK(zipc_subscriber_stats(lossy, &st));
  CHECK(lossy_seen + st.lost == kMessages); /* every message read or counted */
  OK(zipc_subscriber_detach(reliable));
  OK(zipc_subscriber_detach(lossy));
  OK(zipc_topic_detach(t));
}

TEST(a_message_held_by_a_killed_consumer_is_redelivered) {
  const char* name = temp_name("pk");
  zipc_queue_options_t o;
  OK(zipc_queue_options_init(&o));
  o.block_size = kMaxPayload;
  o.block_count = 8;
  o.recovery_time_ms = 20;
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  unsigned char buf[kMaxPayload];
  const size_t n = make_payload(42, buf);
  OK(zipc_queue_send(q, buf, n, 0));
  int holding[2];
  CHECK(pipe(holding) == 0);
  const pid_t child = fork_child();
  if (child == 0) {
    zipc_queue_t* c = NULL;
    OK(zipc_queue_open(name, NULL, &c));
    zipc_read_loan_t r;
    OK(zipc_queue_acquire(c, 10 * SECONDS, &r));
    CHECK(write(holding[1], "h", 1) == 1);
    for (;;) sleep_ms(1000); /* killed while holding the loan */
  }
  char byte;
  CHECK(read(holding[0], &byte, 1) == 1);
  CHECK(kill(child, SIGKILL) == 0);
  CHECK(!child_ok(child));
  zipc_read_loan_t r;
  OK(zipc_queue_acquire(q, 10 * SECONDS, &r)); /* waits out recovery_time, then recovers */
  CHECK(check_payload(r.data, r.size) == 42);
  OK(zipc_read_loan_release(&r));
  zipc_queue_stats_t st;
  OK(zipc_queue_stats(q, &st));
  CHECK(st.redelivered == 1);
  OK(zipc_queue_detach(q));
  close(holding[0]);
  close(holding[1]);
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(a_forked_producer_delivers_every_message_in_order);
  RUN(a_forked_publisher_reaches_reliable_and_lossy_subscribers);
  RUN(a_message_held_by_a_killed_consumer_is_redelivered);
  return done();
}
