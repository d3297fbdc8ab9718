/* zipc_cross_c_peer: a C11 program against a Python process (driven by
 * python/tests/test_cross.py), built only when the C ABI header
 * include/zipc/zipc.h is present. Verifies the shared test vectors
 * (vectors.hpp) and prints "ok key=value ..." or "FAIL reason".
 *
 *   queue-produce NAME COUNT    open a queue, send vectors 0..COUNT-1
 *   queue-consume NAME COUNT    receive COUNT vectors in order
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zipc/zipc.h"

#define TIMEOUT_NS 10000000000LL

static size_t vector_size(uint64_t seq) {
  return 16 + (size_t)((seq * 37) % 239);
}

static uint64_t fnv1a(const unsigned char* p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static size_t make_vector(uint64_t seq, unsigned char* out) {
  const size_t n = vector_size(seq);
  for (size_t i = 16; i < n; ++i) out[i] = (unsigned char)((seq * 131 + (i - 16) * 7) & 0xff);
  const uint64_t h = fnv1a(out + 16, n - 16);
  memcpy(out, &seq, 8);
  memcpy(out + 8, &h, 8);
  return n;
}

/* The sequence number of a valid vector, or -1. */
static int64_t check_vector(const unsigned char* m, size_t n) {
  unsigned char want[256];
  uint64_t seq = 0;
  if (n < 16) return -1;
  memcpy(&seq, m, 8);
  if (n != vector_size(seq) || make_vector(seq, want) != n || memcmp(want, m, n) != 0) return -1;
  return (int64_t)seq;
}

static int fail(const char* what) {
  printf("FAIL %s: %s\n", what, zipc_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: zipc_cross_c_peer queue-produce|queue-consume NAME COUNT\n");
    return 2;
  }
  const int produce = strcmp(argv[1], "queue-produce") == 0;
  const uint64_t count = strtoull(argv[3], NULL, 10);
  zipc_queue_options_t opt;
  zipc_queue_options_init(&opt);
  opt.role = produce ? ZIPC_ROLE_PRODUCER : ZIPC_ROLE_CONSUMER;
  zipc_queue_t* q = NULL;
  if (zipc_queue_open(argv[2], &opt, &q) != ZIPC_OK) return fail("open");
  unsigned char buf[256];
  for (uint64_t i = 0; i < count; ++i) {
    if (produce) {
      const size_t n = make_vector(i, buf);
      if (zipc_queue_send(q, buf, n, TIMEOUT_NS) != ZIPC_OK) return fail("send");
    } else {
      size_t n = 0;
      if (zipc_queue_recv(q, buf, sizeof buf, &n, TIMEOUT_NS) != ZIPC_OK) return fail("recv");
      if (check_vector(buf, n) != (int64_t)i) {
        printf("FAIL bad vector at message %llu\n", (unsigned long long)i);
        return 1;
      }
    }
  }
  zipc_queue_detach(q);
  printf("ok %s=%llu\n", produce ? "sent" : "received", (unsigned long long)count);
  return 0;
}
