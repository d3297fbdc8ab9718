/* event_channel_test.c - zipc_event_channel_*, zipc_notifier_*, zipc_listener_*
 * from C: ids from another process, coalescing, a small ids array, errors,
 * and a listener in a WaitSet. */
#include "check.h"

static zipc_event_channel_t* channel_of(const char* name, uint32_t max_event_id) {
  zipc_event_channel_options_t o;
  OK(zipc_event_channel_options_init(&o));
  o.max_event_id = max_event_id;
  o.max_listeners = 4;
  zipc_event_channel_t* c = NULL;
  OK(zipc_event_channel_create(name, &o, &c));
  return c;
}

TEST(a_listener_gets_the_ids_another_process_notified_each_once) {
  const char* name = temp_name("ev");
  zipc_event_channel_t* c = channel_of(name, 127);
  zipc_listener_t* l = NULL;
  OK(zipc_event_channel_listener(c, &l));
  const pid_t child = fork_child();
  if (child == 0) {
    zipc_event_channel_t* mine = NULL;
    zipc_notifier_t* n = NULL;
    if (zipc_event_channel_open(name, NULL, &mine) != ZIPC_OK) _exit(1);
    if (zipc_event_channel_notifier(mine, &n) != ZIPC_OK) _exit(2);
    uint32_t reach = 0;
    if (zipc_notifier_notify(n, 100, &reach) != ZIPC_OK || reach != 1) _exit(3);
    if (zipc_notifier_notify(n, 4, NULL) != ZIPC_OK || zipc_notifier_notify(n, 100, NULL) != ZIPC_OK) _exit(4);
    _exit(0);
  }
  CHECK(child_ok(child));
  uint32_t ids[8];
  size_t n = 0;
  OK(zipc_listener_wait(l, 1 * SECONDS, ids, 8, &n));
  CHECK(n == 2 && ids[0] == 4 && ids[1] == 100);
  EXPECT(zipc_listener_wait(l, 0, ids, 8, &n), ZIPC_EMPTY);
  EXPECT(zipc_listener_wait(l, 1 * MS, ids, 8, &n), ZIPC_TIMEOUT);
  CHECK(n == 0);
  OK(zipc_listener_detach(l));
  OK(zipc_event_channel_detach(c));
}

TEST(more_ids_than_the_array_holds_come_in_the_next_calls_and_errors_are_named) {
  const char* name = temp_name("ev");
  zipc_event_channel_t* c = channel_of(name, 63);
  zipc_listener_t* l = NULL;
  zipc_notifier_t* n = NULL;
  OK(zipc_event_channel_listener(c, &l));
  OK(zipc_event_channel_notifier(c, &n));
  for (uint32_t id = 0; id < 5; ++id) OK(zipc_notifier_notify(n, id, NULL));
  EXPECT(zipc_notifier_notify(n, 64, NULL), ZIPC_TOO_LARGE);
  CHECK_MESSAGE("max_event_id");
  uint32_t ids[2];
  size_t count = 0;
  uint32_t all = 0;
  for (int call = 0; call < 3; ++call) {
    OK(zipc_listener_wait(l, 0, ids, 2, &count));
    for (size_t i = 0; i < count; ++i) CHECK(ids[i] == all++);
  }
  CHECK(all == 5);
  EXPECT(zipc_listener_wait(l, 0, ids, 2, &count), ZIPC_EMPTY);
  EXPECT(zipc_listener_wait(l, 0, NULL, 2, &count), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_listener_wait(NULL, 0, ids, 2, &count), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_notifier_notify(NULL, 1, NULL), ZIPC_INVALID_ARGUMENT);
  zipc_event_channel_t* again = NULL;
  EXPECT(zipc_event_channel_open_or_create(name, NULL, &again, NULL), ZIPC_OPTIONS_MISMATCH);
  CHECK_MESSAGE("max_event_id");
  zipc_event_channel_options_t any;
  OK(zipc_event_channel_options_init(&any));
  any.accept_existing = true;
  bool created = true;
  OK(zipc_event_channel_open_or_create(name, &any, &again, &created));
  CHECK(!created);
  zipc_event_channel_options_t bad;
  OK(zipc_event_channel_options_init(&bad));
  bad.max_listeners = 0;
  zipc_event_channel_t* none = NULL;
  EXPECT(zipc_event_channel_create(temp_name("ev"), &bad, &none), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("max_listeners");
  EXPECT(zipc_event_channel_open(temp_name("ev"), NULL, &none), ZIPC_NOT_FOUND);
  OK(zipc_notifier_detach(n));
  OK(zipc_listener_detach(l));
  OK(zipc_event_channel_detach(again));
  OK(zipc_event_channel_detach(c));
  OK(zipc_event_channel_remove(name, NULL));
  EXPECT(zipc_event_channel_remove(name, NULL), ZIPC_NOT_FOUND);
}

TEST(a_listener_in_a_waitset_is_reported_when_notified) {
  const char* name = temp_name("ev");
  zipc_event_channel_t* c = channel_of(name, 255);
  zipc_listener_t* l = NULL;
  zipc_notifier_t* n = NULL;
  OK(zipc_event_channel_listener(c, &l));
  OK(zipc_event_channel_notifier(c, &n));
  zipc_waitset_t* ws = NULL;
  OK(zipc_waitset_create(&ws));
  uint64_t id = 0;
  OK(zipc_waitset_attach_listener(ws, l, &id));
  zipc_ready_t r[2];
  size_t count = 0;
  EXPECT(zipc_waitset_wait(ws, 1 * MS, r, 2, &count), ZIPC_TIMEOUT);
  OK(zipc_notifier_notify(n, 200, NULL));
  OK(zipc_waitset_wait(ws, 1 * SECONDS, r, 2, &count));
  CHECK(count == 1 && r[0].id == id && r[0].kind == ZIPC_READY_LISTENER);
  uint32_t ids[4];
  OK(zipc_listener_wait(l, 0, ids, 4, &count));
  CHECK(count == 1 && ids[0] == 200);
  EXPECT(zipc_waitset_attach_listener(ws, NULL, &id), ZIPC_INVALID_ARGUMENT);
  zipc_waitset_destroy(ws);
  OK(zipc_notifier_detach(n));
  OK(zipc_listener_detach(l));
  OK(zipc_event_channel_detach(c));
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(a_listener_gets_the_ids_another_process_notified_each_once);
  RUN(more_ids_than_the_array_holds_come_in_the_next_calls_and_errors_are_named);
  RUN(a_listener_in_a_waitset_is_reported_when_notified);
  return done();
}
