/* waitset_test.c - zipc_waitset_* from C: many channels at once, level
 * triggering, intervals, the readiness fd under poll(2), a sender in another
 * process, more ready than the caller's array holds, and bad arguments. */
#include <poll.h>

#include "check.h"

static zipc_queue_t* queue_as(const char* name, uint32_t role, int create) {
  zipc_queue_options_t o;
  OK(zipc_queue_options_init(&o));
  o.block_size = 64;
  o.block_count = 16;
  o.role = role;
  zipc_queue_t* q = NULL;
  OK(create ? zipc_queue_create(name, &o, &q) : zipc_queue_open(name, &o, &q));
  return q;
}

static zipc_topic_t* topic(const char* name) {
  zipc_topic_t* t = NULL;
  OK(zipc_topic_create(name, NULL, &t));
  return t;
}

TEST(a_waitset_reports_the_channel_that_has_data_until_it_is_read) {
  const char* qn = temp_name("wq");
  zipc_queue_t* q = queue_as(qn, ZIPC_ROLE_BOTH, 1);
  zipc_topic_t* t = topic(temp_name("wt"));
  zipc_subscriber_t* s = NULL;
  OK(zipc_topic_subscribe(t, NULL, &s));
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  zipc_waitset_t* ws = NULL;
  OK(zipc_waitset_create(&ws));
  uint64_t iq = 0, is = 0;
  OK(zipc_waitset_attach_queue(ws, q, &iq));
  OK(zipc_waitset_attach_subscriber(ws, s, &is));
  CHECK(iq != 0 && is != 0 && iq != is);
  zipc_ready_t r[4];
  size_t n = 99;
  EXPECT(zipc_waitset_wait(ws, 0, r, 4, &n), ZIPC_EMPTY);
  CHECK(n == 0);
  EXPECT(zipc_waitset_wait(ws, 5 * MS, r, 4, &n), ZIPC_TIMEOUT);
  OK(zipc_publisher_publish(p, "tick", 5, 0, NULL));
  OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 4, &n));
  CHECK(n == 1 && r[0].id == is && r[0].kind == ZIPC_READY_SUBSCRIBER);
  OK(zipc_waitset_wait(ws, 0, r, 4, &n)); /* level-triggered: still there */
  CHECK(n == 1 && r[0].id == is);
  char buf[64];
  OK(zipc_subscriber_read(s, buf, sizeof buf, 0, NULL));
  EXPECT(zipc_waitset_wait(ws, 0, r, 4, &n), ZIPC_EMPTY);
  OK(zipc_queue_send(q, "job", 4, 0));
  OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 4, &n));
  CHECK(n == 1 && r[0].id == iq && r[0].kind == ZIPC_READY_QUEUE);
  size_t len = 0;
  OK(zipc_queue_recv(q, buf, sizeof buf, &len, 0));
  CHECK(len == 4 && strcmp(buf, "job") == 0);
  OK(zipc_waitset_detach(ws, iq));
  EXPECT(zipc_waitset_detach(ws, iq), ZIPC_NOT_FOUND);
  CHECK_MESSAGE("no attachment");
  OK(zipc_queue_send(q, "job", 4, 0));
  EXPECT(zipc_waitset_wait(ws, 0, r, 4, &n), ZIPC_EMPTY); /* detached: not reported */
  zipc_waitset_destroy(ws);
  OK(zipc_publisher_detach(p));
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
  OK(zipc_queue_detach(q));
}

TEST(a_sender_in_another_process_wakes_the_readiness_fd) {
  const char* name = temp_name("wfd");
  zipc_queue_t* q = queue_as(name, ZIPC_ROLE_CONSUMER, 1);
  zipc_waitset_t* ws = NULL;
  OK(zipc_waitset_create(&ws));
  uint64_t id = 0;
  OK(zipc_waitset_attach_queue(ws, q, &id));
  const int fd = zipc_waitset_readiness_fd(ws);
  zipc_ready_t r[2];
  size_t n = 0;
  EXPECT(zipc_waitset_wait(ws, 0, r, 2, &n), ZIPC_EMPTY); /* arms the futex wait */
  const pid_t child = fork_child();
  if (child == 0) {
    sleep_ms(50);
    zipc_queue_t* producer = queue_as(name, ZIPC_ROLE_PRODUCER, 0);
    _exit(zipc_queue_send(producer, "wake", 5, 1 * SECONDS) == ZIPC_OK ? 0 : 1);
  }
  if (fd >= 0) { /* io_uring futex waits (kernel 6.7+): the fd goes in poll beside others */
    /* Readable for the sender's wake-up, or for the periodic maintenance
     * (after which wait(0) may report nothing): an event loop polls again. */
    zipc_status_t st = ZIPC_EMPTY;
    for (int turn = 0; turn < 1000 && st == ZIPC_EMPTY; ++turn) {
      struct pollfd pfd = {fd, POLLIN, 0};
      CHECK(poll(&pfd, 1, 10000) == 1 && (pfd.revents & POLLIN));
      st = zipc_waitset_wait(ws, 0, r, 2, &n);
    }
    OK(st);
  } else {
    OK(zipc_waitset_wait(ws, 10 * SECONDS, r, 2, &n));
  }
  CHECK(n == 1 && r[0].id == id);
  CHECK(child_ok(child));
  char buf[64];
  size_t len = 0;
  OK(zipc_queue_recv(q, buf, sizeof buf, &len, 0));
  CHECK(len == 5 && strcmp(buf, "wake") == 0);
  zipc_waitset_destroy(ws);
  OK(zipc_queue_detach(q));
}

TEST(more_ready_than_the_array_holds_come_in_the_next_calls) {
  enum { kTopics = 5 };
  zipc_topic_t* t[kTopics];
  zipc_subscriber_t* s[kTopics];
  zipc_waitset_t* ws = NULL;
  OK(zipc_waitset_create(&ws));
  uint64_t ids[kTopics];
  for (int i = 0; i < kTopics; ++i) {
    t[i] = topic(temp_name("wm"));
    OK(zipc_topic_subscribe(t[i], NULL, &s[i]));
    OK(zipc_waitset_attach_subscriber(ws, s[i], &ids[i]));
    zipc_publisher_t* p = NULL;
    OK(zipc_topic_publisher(t[i], &p));
    OK(zipc_publisher_publish(p, "x", 2, 0, NULL));
    OK(zipc_publisher_detach(p));
  }
  int seen[kTopics] = {0};
  zipc_ready_t r[2];
  size_t n = 0, total = 0;
  for (int call = 0; call < 3; ++call) {
    OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 2, &n));
    CHECK(n >= 1 && n <= 2);
    for (size_t k = 0; k < n; ++k)
      for (int i = 0; i < kTopics; ++i)
        if (r[k].id == ids[i]) ++seen[i];
    total += n;
  }
  CHECK(total == kTopics);
  for (int i = 0; i < kTopics; ++i) CHECK(seen[i] == 1);
  zipc_waitset_destroy(ws);
  for (int i = 0; i < kTopics; ++i) {
    OK(zipc_subscriber_detach(s[i]));
    OK(zipc_topic_detach(t[i]));
  }
}

TEST(fds_and_intervals_are_reported_and_stop_ends_a_wait) {
  zipc_waitset_t* ws = NULL;
  OK(zipc_waitset_create(&ws));
  int pipe_fds[2];
  CHECK(pipe(pipe_fds) == 0);
  uint64_t ifd = 0, iiv = 0;
  OK(zipc_waitset_attach_fd(ws, pipe_fds[0], POLLIN, &ifd));
  zipc_ready_t r[4];
  size_t n = 0;
  EXPECT(zipc_waitset_wait(ws, 0, r, 4, &n), ZIPC_EMPTY);
  CHECK(write(pipe_fds[1], "a", 1) == 1);
  OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 4, &n));
  CHECK(n == 1 && r[0].id == ifd && r[0].kind == ZIPC_READY_FD && (r[0].revents & POLLIN));
  OK(zipc_waitset_detach(ws, ifd));
  OK(zipc_waitset_attach_interval(ws, 10 * MS, &iiv));
  OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 4, &n));
  CHECK(n == 1 && r[0].id == iiv && r[0].kind == ZIPC_READY_INTERVAL && r[0].expirations >= 1);
  OK(zipc_waitset_detach(ws, iiv));
  OK(zipc_waitset_stop(ws));
  EXPECT(zipc_waitset_wait(ws, 10 * SECONDS, r, 4, &n), ZIPC_TIMEOUT); /* a stopped set returns at once */
  zipc_waitset_destroy(ws);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST(bad_arguments_get_invalid_argument_naming_the_parameter) {
  EXPECT(zipc_waitset_create(NULL), ZIPC_INVALID_ARGUMENT);
  zipc_waitset_destroy(NULL);
  CHECK(zipc_waitset_readiness_fd(NULL) == -1);
  zipc_waitset_t* ws = NULL;
  OK(zipc_waitset_create(&ws));
  uint64_t id = 0;
  EXPECT(zipc_waitset_attach_queue(ws, NULL, &id), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("queue is NULL");
  EXPECT(zipc_waitset_attach_subscriber(NULL, NULL, &id), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("waitset is NULL");
  EXPECT(zipc_waitset_attach_interval(ws, 0, &id), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("period_ns");
  zipc_queue_t* producer = queue_as(temp_name("wp"), ZIPC_ROLE_PRODUCER, 1);
  EXPECT(zipc_waitset_attach_queue(ws, producer, &id), ZIPC_INVALID_ARGUMENT); /* nothing to receive */
  EXPECT(zipc_waitset_attach_queue_room(ws, NULL, &id), ZIPC_INVALID_ARGUMENT);
  size_t n = 0;
  EXPECT(zipc_waitset_wait(ws, 0, NULL, 0, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_waitset_stop(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_waitset_detach(NULL, 1), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_waitset_attach_fd(ws, 0, POLLIN, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_queue_detach(producer));
  zipc_waitset_destroy(ws);
}

TEST(a_full_queue_reports_room_to_its_producer_when_a_block_is_freed) {
  const char* name = temp_name("wr");
  zipc_queue_t* p = queue_as(name, ZIPC_ROLE_PRODUCER, 1);
  zipc_queue_t* c = queue_as(name, ZIPC_ROLE_CONSUMER, 0);
  while (zipc_queue_send(p, "x", 2, 0) == ZIPC_OK) {
  }
  zipc_waitset_t* ws = NULL;
  OK(zipc_waitset_create(&ws));
  uint64_t id = 0;
  OK(zipc_waitset_attach_queue_room(ws, p, &id));
  EXPECT(zipc_waitset_attach_queue_room(ws, c, &id), ZIPC_INVALID_ARGUMENT); /* no producer role */
  zipc_ready_t r[2];
  size_t n = 0;
  EXPECT(zipc_waitset_wait(ws, 10 * MS, r, 2, &n), ZIPC_TIMEOUT);
  char buf[64];
  size_t len = 0;
  OK(zipc_queue_recv(c, buf, sizeof buf, &len, 0));
  OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 2, &n));
  CHECK(n == 1 && r[0].id == id && r[0].kind == ZIPC_READY_QUEUE_ROOM);
  OK(zipc_queue_send(p, "y", 2, 0));
  EXPECT(zipc_waitset_wait(ws, 0, r, 2, &n), ZIPC_EMPTY); /* full again */
  zipc_waitset_destroy(ws);
  OK(zipc_queue_detach(c));
  OK(zipc_queue_detach(p));
}

TEST(an_rpc_server_and_client_are_reported_when_a_request_and_its_response_wait) {
  const char* name = temp_name("wrpc");
  zipc_rpc_server_t* server = NULL;
  OK(zipc_rpc_server_create(name, NULL, &server));
  zipc_rpc_client_t* client = NULL;
  OK(zipc_rpc_client_connect(name, 1 * SECONDS, &client));
  zipc_waitset_t* ws = NULL;
  OK(zipc_waitset_create(&ws));
  uint64_t sid = 0, cid = 0;
  OK(zipc_waitset_attach_rpc_server(ws, server, &sid));
  OK(zipc_waitset_attach_rpc_client(ws, client, &cid));
  zipc_ready_t r[4];
  size_t n = 0;
  EXPECT(zipc_waitset_wait(ws, 10 * MS, r, 4, &n), ZIPC_TIMEOUT);
  zipc_rpc_ticket_t ticket;
  OK(zipc_rpc_client_call_async(client, "ping", 5, &ticket));
  OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 4, &n));
  CHECK(n == 1 && r[0].id == sid && r[0].kind == ZIPC_READY_RPC_SERVER);
  zipc_rpc_request_t req;
  OK(zipc_rpc_server_next(server, 0, &req));
  CHECK(req.size == 5 && strcmp((const char*)req.data, "ping") == 0);
  OK(zipc_rpc_request_reply(&req, "pong", 5));
  OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 4, &n));
  CHECK(n == 1 && r[0].id == cid && r[0].kind == ZIPC_READY_RPC_CLIENT);
  zipc_read_loan_t resp;
  OK(zipc_rpc_ticket_wait(&ticket, 0, &resp));
  CHECK(resp.size == 5 && strcmp((const char*)resp.data, "pong") == 0);
  OK(zipc_read_loan_release(&resp));
  EXPECT(zipc_waitset_wait(ws, 0, r, 4, &n), ZIPC_EMPTY);
  EXPECT(zipc_waitset_attach_rpc_server(ws, NULL, &sid), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_waitset_attach_rpc_client(ws, NULL, &cid), ZIPC_INVALID_ARGUMENT);
  zipc_waitset_destroy(ws);
  OK(zipc_rpc_client_detach(client));
  OK(zipc_rpc_server_detach(server));
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(a_waitset_reports_the_channel_that_has_data_until_it_is_read);
  RUN(a_sender_in_another_process_wakes_the_readiness_fd);
  RUN(more_ready_than_the_array_holds_come_in_the_next_calls);
  RUN(fds_and_intervals_are_reported_and_stop_ends_a_wait);
  RUN(bad_arguments_get_invalid_argument_naming_the_parameter);
  RUN(a_full_queue_reports_room_to_its_producer_when_a_block_is_freed);
  RUN(an_rpc_server_and_client_are_reported_when_a_request_and_its_response_wait);
  return done();
}
