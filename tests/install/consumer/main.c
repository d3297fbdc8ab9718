/* An outside C program using the installed shared library through zipc.h:
 * creates a queue, sends and receives one message through it, removes it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zipc/zipc.h>

int main(void) {
  char name[64];
  snprintf(name, sizeof name, "t.c-consumer.%d", (int)getpid());
  if (zipc_abi_version() != ZIPC_ABI_VERSION) {
    printf("c consumer: library ABI %u, header ABI %d\n", (unsigned)zipc_abi_version(), ZIPC_ABI_VERSION);
    return 1;
  }
  zipc_queue_t* q = NULL;
  zipc_status_t s = zipc_queue_create(name, NULL, &q);
  if (s != ZIPC_OK) {
    printf("c consumer: %s\n", zipc_last_error());
    return 1;
  }
  char buf[16] = {0};
  size_t n = 0;
  s = zipc_queue_send(q, "hello", 6, 0);
  if (s == ZIPC_OK) s = zipc_queue_recv(q, buf, sizeof buf, &n, 0);
  zipc_queue_detach(q);
  zipc_queue_remove(name, NULL);
  const int ok = s == ZIPC_OK && n == 6 && strcmp(buf, "hello") == 0;
  printf(ok ? "c consumer: ok (zipc %s)\n" : "c consumer: wrong content (%s)\n",
         ok ? zipc_version_string() : zipc_status_str(s));
  return ok ? 0 : 1;
}
