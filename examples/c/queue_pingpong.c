/* queue_pingpong.c - two processes bounce a counter over two queues (C API).
 *
 *   cc -std=c11 queue_pingpong.c $(pkg-config --cflags --libs zipc-shared)
 *   ./a.out            # forks the "pong" side, plays 10000 rounds, prints the mean round trip
 *
 * Run with no arguments it demonstrates itself end to end and exits 0 only
 * when every reply carried the number it should.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zipc/zipc.h>

enum { kRounds = 10000 };
static const int64_t kTimeout = 5000000000; /* 5 s, in nanoseconds */

static int fail(const char* what, zipc_status_t s) {
  fprintf(stderr, "%s: %s (%s)\n", what, zipc_status_str(s), zipc_last_error());
  return 1;
}

/* The pong side: answers every number n with n + 1, until ping closes. */
static int pong(const char* ping_name, const char* pong_name) {
  zipc_queue_t* in = NULL;
  zipc_queue_t* out = NULL;
  zipc_queue_options_t opt;
  zipc_queue_options_init(&opt);
  opt.role = ZIPC_ROLE_CONSUMER; /* single-consumer queue: this side is its consumer */
  zipc_status_t s = zipc_queue_open(ping_name, &opt, &in);
  if (s != ZIPC_OK) return fail("open ping", s);
  opt.role = ZIPC_ROLE_PRODUCER;
  if ((s = zipc_queue_open(pong_name, &opt, &out)) != ZIPC_OK) return fail("open pong", s);
  for (;;) {
    zipc_read_loan_t msg; /* zero copy: read the number where it lies */
    s = zipc_queue_acquire(in, kTimeout, &msg);
    if (s == ZIPC_CLOSED) break;
    if (s != ZIPC_OK) return fail("acquire", s);
    uint64_t n = 0;
    if (msg.size == sizeof n) n = *(const uint64_t*)msg.data;
    zipc_read_loan_release(&msg);
    ++n;
    if ((s = zipc_queue_send(out, &n, sizeof n, kTimeout)) != ZIPC_OK) return fail("send", s);
  }
  zipc_queue_detach(in);
  zipc_queue_detach(out);
  return 0;
}

int main(void) {
  char ping_name[64], pong_name[64];
  snprintf(ping_name, sizeof ping_name, "example.c.ping.%d", (int)getpid());
  snprintf(pong_name, sizeof pong_name, "example.c.pong.%d", (int)getpid());

  zipc_queue_options_t opt;
  zipc_queue_options_init(&opt);
  opt.block_size = 64;
  opt.block_count = 16;
  opt.producers = ZIPC_SINGLE;
  opt.consumers = ZIPC_SINGLE;
  zipc_queue_t* ping = NULL;   /* we produce into ping... */
  zipc_queue_t* pong_q = NULL; /* ...and consume from pong */
  opt.role = ZIPC_ROLE_PRODUCER;
  zipc_status_t s = zipc_queue_create(ping_name, &opt, &ping);
  if (s != ZIPC_OK) return fail("create ping", s);
  opt.role = ZIPC_ROLE_CONSUMER;
  if ((s = zipc_queue_create(pong_name, &opt, &pong_q)) != ZIPC_OK) {
    zipc_queue_remove(ping_name, NULL);
    return fail("create pong", s);
  }

  const pid_t child = fork();
  if (child == 0) _exit(pong(ping_name, pong_name));

  int ok = child > 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint64_t i = 0; ok && i < kRounds; ++i) {
    zipc_write_loan_t w; /* zero copy: write the number into the ring */
    if ((s = zipc_queue_reserve(ping, kTimeout, &w)) != ZIPC_OK) {
      ok = !fail("reserve", s);
      break;
    }
    *(uint64_t*)w.data = i;
    zipc_write_loan_commit(&w, sizeof i, NULL);
    uint64_t reply = 0;
    size_t len = 0;
    s = zipc_queue_recv(pong_q, &reply, sizeof reply, &len, kTimeout);
    if (s != ZIPC_OK || len != sizeof reply || reply != i + 1) {
      fprintf(stderr, "round %llu: %s, got %llu\n", (unsigned long long)i, zipc_status_str(s),
              (unsigned long long)reply);
      ok = 0;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  zipc_queue_close(ping); /* pong drains, then sees closed and exits */
  int status = 0;
  if (child > 0) waitpid(child, &status, 0);
  ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  const double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
  if (ok)
    printf("queue_pingpong: %d round trips, mean %.0f ns (zipc %s)\n", kRounds, ns / kRounds, zipc_version_string());
  zipc_queue_detach(ping);
  zipc_queue_detach(pong_q);
  zipc_queue_remove(ping_name, NULL);
  zipc_queue_remove(pong_name, NULL);
  return ok ? 0 : 1;
}
