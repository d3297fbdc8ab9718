/* rpc_test.c - zipc_rpc_* from C: a pull-loop server and a callback server,
 * blocking, pipelined and zero-copy calls, and the errors a caller can reach. */
#include <pthread.h>

#include "check.h"

/* What the test servers do, by the request's first byte:
 * 'l' reply through a loan, 'a' abort the reply loan, 'n' no reply, 'b' a
 * reply over max_response_size, '!' fail with code 40 + size and the
 * request as message, 'r' reply then try to fail (closed); anything else
 * is echoed. */
static void handle(void* context, zipc_rpc_request_t* req) {
  int* served = context;
  if (served != NULL) __atomic_add_fetch(served, 1, __ATOMIC_RELAXED);
  const char kind = req->size > 0 ? ((const char*)req->data)[0] : 'e';
  zipc_write_loan_t w;
  switch (kind) {
    case 'l':
      OK(zipc_rpc_request_reserve_reply(req, req->size, &w));
      CHECK(w.size == req->size);
      memcpy(w.data, req->data, req->size);
      ((char*)w.data)[0] = 'L';
      OK(zipc_write_loan_commit(&w, req->size, NULL));
      break;
    case 'a':
      OK(zipc_rpc_request_reserve_reply(req, 8, &w));
      OK(zipc_write_loan_abort(&w));
      break;
    case 'n': break;
    case '!': {
      char msg[64];
      const size_t n = req->size < sizeof msg - 1 ? req->size : sizeof msg - 1;
      memcpy(msg, req->data, n);
      msg[n] = 0;
      OK(zipc_rpc_request_fail(req, 40u + (uint32_t)req->size, msg));
      EXPECT(zipc_rpc_request_fail(req, 1, "again"), ZIPC_CLOSED);
      break;
    }
    case 'r':
      OK(zipc_rpc_request_reply(req, "r", 1));
      EXPECT(zipc_rpc_request_fail(req, 1, NULL), ZIPC_CLOSED);
      break;
    case 'b': {
      static char big[2048];
      EXPECT(zipc_rpc_request_reply(req, big, sizeof big), ZIPC_TOO_LARGE);
      break;
    }
    default: OK(zipc_rpc_request_reply(req, req->data, req->size)); break;
  }
}

static zipc_rpc_server_t* make_server(const char* name) {
  zipc_rpc_options_t o;
  OK(zipc_rpc_options_init(&o));
  o.max_request_size = 1024;
  o.max_response_size = 1024;
  o.inline_size = 64;
  o.inflight_per_client = 4;
  zipc_rpc_server_t* s = NULL;
  OK(zipc_rpc_server_create(name, &o, &s));
  return s;
}

static void* pull_loop(void* arg) {
  zipc_rpc_server_t* server = arg;
  zipc_rpc_request_t req;
  for (;;) {
    const zipc_status_t s = zipc_rpc_server_next(server, 100 * MS, &req);
    if (s == ZIPC_CLOSED) break;
    if (s == ZIPC_TIMEOUT) continue;
    OK(s);
    handle(NULL, &req);
    OK(zipc_rpc_request_release(&req));
    EXPECT(zipc_rpc_request_release(&req), ZIPC_INVALID_ARGUMENT); /* ended */
  }
  return NULL;
}

static void call_expect(zipc_rpc_client_t* c, const char* msg, const char* want) {
  zipc_read_loan_t r;
  OK(zipc_rpc_client_call(c, msg, strlen(msg), 5 * SECONDS, &r));
  CHECK(r.size == strlen(want) && memcmp(r.data, want, r.size) == 0);
  OK(zipc_read_loan_release(&r));
}

TEST(a_pull_loop_server_answers_every_kind_of_call) {
  const char* name = temp_name("rpc");
  zipc_rpc_server_t* server = make_server(name);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, pull_loop, server) == 0);
  zipc_rpc_client_t* c = NULL;
  OK(zipc_rpc_client_connect(name, 5 * SECONDS, &c));
  call_expect(c, "echo", "echo");
  call_expect(c, "loan reply", "Loan reply");
  call_expect(c, "a", "");
  call_expect(c, "n", "");
  zipc_read_loan_t r;
  EXPECT(zipc_rpc_client_call(c, "b", 1, 5 * SECONDS, &r), ZIPC_TOO_LARGE);
  /* pipelined */
  zipc_rpc_ticket_t t1, t2;
  OK(zipc_rpc_client_call_async(c, "first", 5, &t1));
  OK(zipc_rpc_client_call_async(c, "second", 6, &t2));
  OK(zipc_rpc_ticket_wait(&t2, 5 * SECONDS, &r));
  CHECK(r.size == 6 && memcmp(r.data, "second", 6) == 0);
  OK(zipc_read_loan_release(&r));
  bool ready = false;
  for (int i = 0; i < 5000 && !ready; ++i) {
    OK(zipc_rpc_ticket_ready(&t1, &ready));
    if (!ready) sleep_ms(1);
  }
  CHECK(ready);
  OK(zipc_rpc_ticket_wait(&t1, 0, &r));
  CHECK(r.size == 5 && memcmp(r.data, "first", 5) == 0);
  OK(zipc_read_loan_release(&r));
  EXPECT(zipc_rpc_ticket_wait(&t1, 0, &r), ZIPC_INVALID_ARGUMENT); /* waited once */
  /* zero copy requests */
  zipc_write_loan_t w;
  OK(zipc_rpc_client_reserve(c, 100, &w));
  CHECK(w.size == 100);
  memcpy(w.data, "zero copy", 9);
  EXPECT(zipc_write_loan_commit(&w, 101, NULL), ZIPC_TOO_LARGE);
  OK(zipc_write_loan_commit(&w, 9, NULL)); /* sets the length; sent below */
  OK(zipc_rpc_client_call_loan(c, &w, 5 * SECONDS, &r));
  CHECK(r.size == 9 && memcmp(r.data, "zero copy", 9) == 0);
  OK(zipc_read_loan_release(&r));
  EXPECT(zipc_rpc_client_call_loan(c, &w, 0, &r), ZIPC_INVALID_ARGUMENT); /* sent */
  OK(zipc_rpc_client_reserve(c, 600, &w));                                /* over inline_size: a shared block */
  memset(w.data, 'l', 600);
  OK(zipc_rpc_client_call_async_loan(c, &w, &t1));
  OK(zipc_rpc_ticket_wait(&t1, 5 * SECONDS, &r));
  CHECK(r.size == 600 && ((const char*)r.data)[0] == 'L' && ((const char*)r.data)[599] == 'l');
  OK(zipc_read_loan_release(&r));
  OK(zipc_rpc_client_reserve(c, 10, &w));
  OK(zipc_write_loan_abort(&w)); /* never sent */
  size_t clients = 0;
  OK(zipc_rpc_server_connected_clients(server, &clients));
  CHECK(clients == 1);
  zipc_rpc_client_info_t info;
  OK(zipc_rpc_client_info(c, &info));
  CHECK(info.max_request_size == 1024 && info.max_response_size == 1024 && info.inflight_limit == 4 &&
        info.reconnects == 0);
  OK(zipc_rpc_server_stop(server));
  CHECK(pthread_join(t, NULL) == 0);
  OK(zipc_rpc_client_detach(c));
  OK(zipc_rpc_server_detach(server));
}

struct serve_args {
  zipc_rpc_server_t* server;
  int served;
  zipc_status_t status;
};

static void* serve_loop(void* arg) {
  struct serve_args* a = arg;
  a->status = zipc_rpc_server_serve(a->server, handle, &a->served, 2);
  return NULL;
}

TEST(a_callback_server_serves_on_several_threads_until_stopped) {
  const char* name = temp_name("rpc");
  struct serve_args args = {make_server(name), 0, ZIPC_CORRUPT};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, serve_loop, &args) == 0);
  zipc_rpc_client_t* c = NULL;
  OK(zipc_rpc_client_connect(name, -1, &c));
  zipc_wait_options_t w;
  OK(zipc_wait_options_init(&w));
  w.strategy = ZIPC_WAIT_BLOCK;
  OK(zipc_rpc_client_set_wait(c, &w)); /* sleeps at once: the calls still get answers */
  for (int i = 0; i < 20; ++i) call_expect(c, "hello", "hello");
  w.strategy = 9;
  EXPECT(zipc_rpc_client_set_wait(c, &w), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("strategy");
  EXPECT(zipc_rpc_client_set_wait(c, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_set_wait(NULL, &w), ZIPC_INVALID_ARGUMENT);
  call_expect(c, "loan", "Loan");
  call_expect(c, "n", "");
  OK(zipc_rpc_server_stop(args.server));
  CHECK(pthread_join(t, NULL) == 0);
  OK(args.status);
  CHECK(__atomic_load_n(&args.served, __ATOMIC_RELAXED) == 22);
  OK(zipc_rpc_client_detach(c));
  OK(zipc_rpc_server_detach(args.server));
}

TEST(calls_nobody_answers_time_out_and_a_full_pipeline_says_full) {
  const char* name = temp_name("rpc");
  zipc_rpc_server_t* server = make_server(name); /* never serves */
  zipc_rpc_client_t* c = NULL;
  OK(zipc_rpc_client_connect(name, 0, &c));
  zipc_read_loan_t r;
  EXPECT(zipc_rpc_client_call(c, "x", 1, 1 * MS, &r), ZIPC_TIMEOUT);
  zipc_rpc_ticket_t t[5];
  for (int i = 0; i < 3; ++i) OK(zipc_rpc_client_call_async(c, "x", 1, &t[i]));
  EXPECT(zipc_rpc_ticket_wait(&t[0], 1 * MS, &r), ZIPC_TIMEOUT); /* still live */
  bool ready = true;
  OK(zipc_rpc_ticket_ready(&t[0], &ready));
  CHECK(!ready);
  OK(zipc_rpc_client_call_async(c, "x", 1, &t[3]));
  EXPECT(zipc_rpc_client_call_async(c, "x", 1, &t[4]), ZIPC_FULL);
  zipc_write_loan_t w;
  EXPECT(zipc_rpc_client_reserve(c, 10, &w), ZIPC_FULL);
  for (int i = 0; i < 4; ++i) OK(zipc_rpc_ticket_cancel(&t[i]));
  EXPECT(zipc_rpc_ticket_cancel(&t[0]), ZIPC_INVALID_ARGUMENT);
  OK(zipc_rpc_client_detach(c));
  OK(zipc_rpc_server_detach(server));
}

TEST(oversized_requests_are_too_large_and_a_closed_server_says_closed) {
  const char* name = temp_name("rpc");
  zipc_rpc_server_t* server = make_server(name);
  zipc_rpc_client_t* c = NULL;
  OK(zipc_rpc_client_connect(name, 1 * SECONDS, &c));
  static char big[1025];
  zipc_read_loan_t r;
  zipc_write_loan_t w;
  zipc_rpc_ticket_t t;
  EXPECT(zipc_rpc_client_call(c, big, sizeof big, 1 * SECONDS, &r), ZIPC_TOO_LARGE);
  EXPECT(zipc_rpc_client_call_async(c, big, sizeof big, &t), ZIPC_TOO_LARGE);
  EXPECT(zipc_rpc_client_reserve(c, sizeof big, &w), ZIPC_TOO_LARGE);
  OK(zipc_rpc_server_close(server));
  EXPECT(zipc_rpc_client_call(c, "x", 1, 100 * MS, &r), ZIPC_CLOSED);
  zipc_rpc_request_t req;
  EXPECT(zipc_rpc_server_next(server, 0, &req), ZIPC_CLOSED);
  OK(zipc_rpc_client_detach(c));
  OK(zipc_rpc_server_detach(server));
}

TEST(a_call_to_a_server_killed_mid_service_fails_with_peer_dead) {
  const char* name = temp_name("rpc");
  int ready[2];
  CHECK(pipe(ready) == 0);
  const pid_t child = fork_child();
  if (child == 0) {
    zipc_rpc_server_t* server = make_server(name);
    CHECK(write(ready[1], "r", 1) == 1);
    pull_loop(server); /* until killed */
    _exit(3);
  }
  char byte;
  CHECK(read(ready[0], &byte, 1) == 1);
  zipc_rpc_client_t* c = NULL;
  OK(zipc_rpc_client_connect(name, 5 * SECONDS, &c));
  call_expect(c, "echo", "echo");
  CHECK(kill(child, SIGKILL) == 0);
  CHECK(!child_ok(child));
  zipc_read_loan_t r;
  EXPECT(zipc_rpc_client_call(c, "x", 1, 50 * MS, &r), ZIPC_PEER_DEAD);
  OK(zipc_rpc_client_detach(c));
  close(ready[0]);
  close(ready[1]);
}

TEST(setup_errors_and_null_arguments_are_reported) {
  const char* name = temp_name("rpc");
  zipc_rpc_client_t* c = NULL;
  EXPECT(zipc_rpc_client_connect(name, 10 * MS, &c), ZIPC_NOT_FOUND);
  CHECK_MESSAGE(name);
  zipc_rpc_server_t* s = make_server(name);
  zipc_rpc_server_t* s2 = NULL;
  EXPECT(zipc_rpc_server_create(name, NULL, &s2), ZIPC_ALREADY_EXISTS);
  CHECK_MESSAGE(name);
  zipc_rpc_options_t o;
  OK(zipc_rpc_options_init(&o));
  o.max_clients = 0;
  const char* other = temp_name("rpc");
  EXPECT(zipc_rpc_server_create(other, &o, &s2), ZIPC_INVALID_ARGUMENT);
  o.struct_size = 0;
  EXPECT(zipc_rpc_server_create(other, &o, &s2), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_create(NULL, NULL, &s2), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_create(other, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_connect(NULL, 0, &c), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_connect(name, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_options_init(NULL), ZIPC_INVALID_ARGUMENT);
  zipc_rpc_request_t req;
  memset(&req, 0, sizeof req);
  zipc_read_loan_t r;
  zipc_write_loan_t w;
  zipc_rpc_ticket_t t;
  memset(&t, 0, sizeof t);
  size_t n = 0;
  bool ready = false;
  zipc_rpc_client_info_t info;
  EXPECT(zipc_rpc_server_next(NULL, 0, &req), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_next(s, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_next(s, 0, &req), ZIPC_TIMEOUT); /* nothing pending */
  EXPECT(zipc_rpc_server_serve(NULL, handle, NULL, 1), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_serve(s, NULL, NULL, 1), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_serve(s, handle, NULL, 0), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_stop(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_close(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_connected_clients(NULL, &n), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_server_connected_clients(s, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_request_reply(&req, "x", 1), ZIPC_INVALID_ARGUMENT); /* not live */
  EXPECT(zipc_rpc_request_reply(NULL, "x", 1), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_request_reserve_reply(&req, 1, &w), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_request_release(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call(NULL, "x", 1, 0, &r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call_async(NULL, "x", 1, &t), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_reserve(NULL, 1, &w), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call_loan(NULL, &w, 0, &r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call_async_loan(NULL, &w, &t), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_info(NULL, &info), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_ticket_wait(&t, 0, &r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_ticket_wait(NULL, 0, &r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_ticket_ready(&t, &ready), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_ticket_cancel(NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_rpc_client_connect(name, 1 * SECONDS, &c));
  EXPECT(zipc_rpc_client_call(c, NULL, 1, 0, &r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call(c, "x", 1, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call_async(c, NULL, 1, &t), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call_async(c, "x", 1, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_reserve(c, 1, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_info(c, NULL), ZIPC_INVALID_ARGUMENT);
  memset(&w, 0, sizeof w);
  EXPECT(zipc_rpc_client_call_loan(c, &w, 0, &r), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call_async_loan(c, &w, &t), ZIPC_INVALID_ARGUMENT);
  OK(zipc_rpc_client_reserve(c, 4, &w));
  EXPECT(zipc_rpc_client_call_loan(c, &w, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_client_call_async_loan(c, &w, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_write_loan_abort(&w));
  OK(zipc_rpc_client_call_async(c, "x", 1, &t));
  EXPECT(zipc_rpc_ticket_wait(&t, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_ticket_ready(&t, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_rpc_server_next(s, 1 * SECONDS, &req));
  EXPECT(zipc_rpc_request_reply(&req, NULL, 1), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_request_reserve_reply(&req, 1, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_rpc_request_reserve_reply(&req, 2000, &w), ZIPC_TOO_LARGE);
  OK(zipc_rpc_request_release(&req)); /* empty response */
  OK(zipc_rpc_ticket_wait(&t, 5 * SECONDS, &r));
  CHECK(r.size == 0);
  OK(zipc_read_loan_release(&r));
  OK(zipc_rpc_client_detach(NULL));
  OK(zipc_rpc_server_detach(NULL));
  OK(zipc_rpc_client_detach(c));
  OK(zipc_rpc_server_detach(s));
}

static void* no_remote_error_on_a_fresh_thread(void* arg) {
  (void)arg;
  zipc_rpc_error_t e;
  EXPECT(zipc_rpc_last_remote_error(&e), ZIPC_NOT_FOUND);
  return NULL;
}

TEST(a_handler_that_fails_gives_the_caller_remote_error_with_its_code_and_message) {
  const char* name = temp_name("rpc");
  zipc_rpc_server_t* server = make_server(name);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, pull_loop, server) == 0);
  zipc_rpc_client_t* c = NULL;
  OK(zipc_rpc_client_connect(name, 5 * SECONDS, &c));
  zipc_read_loan_t r;
  EXPECT(zipc_rpc_client_call(c, "!fail me", 8, 5 * SECONDS, &r), ZIPC_REMOTE_ERROR);
  CHECK(r.data == NULL && r.size == 0); /* not filled */
  zipc_rpc_error_t e;
  OK(zipc_rpc_last_remote_error(&e));
  CHECK(e.code == 48);
  CHECK(strcmp(e.type, "") == 0);
  CHECK(strcmp(e.message, "!fail me") == 0);
  CHECK(strstr(zipc_last_error(), "remote error 48") != NULL);
  CHECK(strstr(zipc_last_error(), "fail me") != NULL);
  CHECK(strcmp(zipc_status_str(ZIPC_REMOTE_ERROR), "remote_error") == 0);
  EXPECT(zipc_rpc_last_remote_error(NULL), ZIPC_INVALID_ARGUMENT);
  call_expect(c, "r", "r"); /* a reply stands; a fail after it is closed */
  /* Pipelined: each ticket its own outcome, in order. */
  const char* sent[] = {"!1", "echo2", "!fail3", "echo4"};
  zipc_rpc_ticket_t tk[4];
  for (int i = 0; i < 4; ++i) OK(zipc_rpc_client_call_async(c, sent[i], strlen(sent[i]), &tk[i]));
  for (int i = 0; i < 4; ++i) {
    if (sent[i][0] == '!') {
      EXPECT(zipc_rpc_ticket_wait(&tk[i], 5 * SECONDS, &r), ZIPC_REMOTE_ERROR);
      OK(zipc_rpc_last_remote_error(&e));
      CHECK(e.code == 40u + strlen(sent[i]));
      CHECK(strcmp(e.message, sent[i]) == 0);
    } else {
      OK(zipc_rpc_ticket_wait(&tk[i], 5 * SECONDS, &r));
      CHECK(r.size == strlen(sent[i]) && memcmp(r.data, sent[i], r.size) == 0);
      OK(zipc_read_loan_release(&r));
    }
  }
  /* The remote error is per thread. */
  pthread_t other;
  CHECK(pthread_create(&other, NULL, no_remote_error_on_a_fresh_thread, NULL) == 0);
  CHECK(pthread_join(other, NULL) == 0);
  /* Failed calls gave their slots back: a full pipeline still works. */
  for (int i = 0; i < 20; ++i) EXPECT(zipc_rpc_client_call(c, "!", 1, 5 * SECONDS, &r), ZIPC_REMOTE_ERROR);
  call_expect(c, "echo", "echo");
  OK(zipc_rpc_server_stop(server));
  CHECK(pthread_join(t, NULL) == 0);
  OK(zipc_rpc_client_detach(c));
  OK(zipc_rpc_server_detach(server));
  EXPECT(zipc_rpc_request_fail(NULL, 1, "x"), ZIPC_INVALID_ARGUMENT);
}

TEST(serve_rejects_a_thread_count_past_its_bound_naming_it) {
  const char* name = temp_name("rpc");
  zipc_rpc_server_t* server = make_server(name);
  EXPECT(zipc_rpc_server_serve(server, handle, NULL, ZIPC_RPC_MAX_SERVE_THREADS + 1), ZIPC_INVALID_ARGUMENT);
  CHECK(strstr(zipc_last_error(), "1..256") != NULL);
  EXPECT(zipc_rpc_server_serve(server, handle, NULL, 4000000000u), ZIPC_INVALID_ARGUMENT);
  OK(zipc_rpc_server_detach(server));
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(a_pull_loop_server_answers_every_kind_of_call);
  RUN(a_callback_server_serves_on_several_threads_until_stopped);
  RUN(calls_nobody_answers_time_out_and_a_full_pipeline_says_full);
  RUN(oversized_requests_are_too_large_and_a_closed_server_says_closed);
  RUN(a_call_to_a_server_killed_mid_service_fails_with_peer_dead);
  RUN(setup_errors_and_null_arguments_are_reported);
  RUN(a_handler_that_fails_gives_the_caller_remote_error_with_its_code_and_message);
  RUN(serve_rejects_a_thread_count_past_its_bound_naming_it);
  return done();
}
