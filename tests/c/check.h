/* check.h - the harness of the C tests (C11).
 *
 *   TEST(a_sent_message_is_received) {
 *     const char* name = temp_name("queue");  // unique; removed at exit, pass or fail
 *     OK(zipc_queue_create(name, NULL, &q));
 *     EXPECT(zipc_queue_recv(q, buf, sizeof buf, &n, 0), ZIPC_EMPTY);
 *   }
 *   int main(int argc, char** argv) { RUN(a_sent_message_is_received); return done(); }
 *
 * Run with no argument, a program runs every test; with one, only that test
 * (ctest registers one entry per TEST). A failed check prints the file, line,
 * the status and zipc_last_error(), and exits 1.
 */
#ifndef ZIPC_TESTS_C_CHECK_H
#define ZIPC_TESTS_C_CHECK_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zipc/zipc.h"

#define TEST(name) static void name(void)

#define CHECK(cond)                                                                                                \
  do {                                                                                                             \
    if (!(cond)) {                                                                                                 \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: %s)\n", __FILE__, __LINE__, #cond, zipc_last_error()); \
      exit(1);                                                                                                     \
    }                                                                                                              \
  } while (0)

#define EXPECT(call, expected)                                                                                      \
  do {                                                                                                              \
    const zipc_status_t got_ = (call);                                                                              \
    const zipc_status_t want_ = (expected);                                                                         \
    if (got_ != want_) {                                                                                            \
      fprintf(stderr, "%s:%d: %s returned %s (%d), expected %s (%d) (last error: %s)\n", __FILE__, __LINE__, #call, \
              zipc_status_str(got_), (int)got_, zipc_status_str(want_), (int)want_, zipc_last_error());             \
      exit(1);                                                                                                      \
    }                                                                                                               \
  } while (0)

#define OK(call) EXPECT(call, ZIPC_OK)

/* The last error message contains text. */
#define CHECK_MESSAGE(text)                                                                                      \
  do {                                                                                                           \
    if (strstr(zipc_last_error(), (text)) == NULL) {                                                             \
      fprintf(stderr, "%s:%d: last error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, zipc_last_error(), (text)); \
      exit(1);                                                                                                   \
    }                                                                                                            \
  } while (0)

#define MS ((int64_t)1000000)
#define SECONDS ((int64_t)1000000000)

enum { kMaxNames = 64, kNameLength = 96 };
static char g_names[kMaxNames][kNameLength];
static int g_name_count = 0;
static pid_t g_owner = 0;
static const char* g_only = NULL;
static int g_ran = 0;

static inline void remove_temp_names(void) {
  if (getpid() != g_owner) return; /* a forked child leaves them to its parent */
  for (int i = 0; i < g_name_count; ++i) (void)zipc_segment_remove(g_names[i], NULL);
}

/* A segment name unique to this process and call, removed at exit. */
static inline const char* temp_name(const char* tag) {
  CHECK(g_name_count < kMaxNames);
  if (g_owner == 0) {
    g_owner = getpid();
    atexit(remove_temp_names);
  }
  static unsigned counter = 0;
  snprintf(g_names[g_name_count], kNameLength, "t.c.%s.%d.%u", tag, (int)getpid(), counter++);
  return g_names[g_name_count++];
}

static inline void sleep_ms(long ms) {
  const struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* fork(), with the child killed when this process dies (a failed check in
 * the parent must not leave a child running). */
static inline pid_t fork_child(void) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
  }
  return pid;
}

/* Waits for a forked child; true when it exited with 0. */
static inline int child_ok(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

#define RUN(name)                                       \
  do {                                                  \
    if (g_only == NULL || strcmp(g_only, #name) == 0) { \
      name();                                           \
      printf("ok %s\n", #name);                         \
      ++g_ran;                                          \
    }                                                   \
  } while (0)

static inline void select_test(int argc, char** argv) {
  g_only = argc > 1 ? argv[1] : NULL;
  if (g_owner == 0) {
    g_owner = getpid();
    atexit(remove_temp_names);
  }
}

/* 0 when at least one test ran (a misspelled name must not pass). */
static inline int done(void) {
  if (g_ran == 0) {
    fprintf(stderr, "no test named %s\n", g_only != NULL ? g_only : "(any)");
    return 1;
  }
  return 0;
}

#endif /* ZIPC_TESTS_C_CHECK_H */
