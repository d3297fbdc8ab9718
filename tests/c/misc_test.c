/* misc_test.c - statuses, messages, versions, common options and segments. */
#include <pthread.h>

#include "check.h"

static void* fail_on_another_thread(void* arg) {
  zipc_heap_t* h = NULL;
  const zipc_status_t s = zipc_heap_open("t.c.other.thread.absent", NULL, &h);
  *(int*)arg = s == ZIPC_NOT_FOUND && strstr(zipc_last_error(), "t.c.other.thread.absent") != NULL;
  return NULL;
}

TEST(every_status_has_a_stable_number_and_a_name) {
  CHECK(ZIPC_OK == 0 && ZIPC_NOT_FOUND == 1 && ZIPC_TOO_LARGE == 13 && ZIPC_TIMEOUT == 21);
  CHECK(ZIPC_WRONG_ROLE == 25 && ZIPC_FULL == 100 && ZIPC_NOT_SUPPORTED == 103 && ZIPC_CORRUPT_BLOCK == 112);
  const struct {
    zipc_status_t status;
    const char* name;
  } names[] = {{ZIPC_OK, "ok"},
               {ZIPC_NOT_FOUND, "not_found"},
               {ZIPC_ALREADY_EXISTS, "already_exists"},
               {ZIPC_INVALID_ARGUMENT, "invalid_argument"},
               {ZIPC_TIMEOUT, "timeout"},
               {ZIPC_SYSTEM, "system"},
               {ZIPC_OPTIONS_MISMATCH, "options_mismatch"},
               {ZIPC_TYPE_MISMATCH, "type_mismatch"},
               {ZIPC_WRONG_ROLE, "wrong_role"},
               {ZIPC_FULL, "full"},
               {ZIPC_EMPTY, "empty"},
               {ZIPC_OVERRUN, "overrun"},
               {ZIPC_NOT_SUPPORTED, "not_supported"},
               {ZIPC_DOUBLE_FREE, "double_free"},
               {ZIPC_FOREIGN_POINTER, "foreign_pointer"},
               {ZIPC_CORRUPT_BLOCK, "corrupt_block"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char* got = zipc_status_str(names[i].status);
    if (strcmp(got, names[i].name) != 0) {
      fprintf(stderr, "status %d is named \"%s\", expected \"%s\"\n", (int)names[i].status, got, names[i].name);
      exit(1);
    }
  }
  for (int s = 1; s <= ZIPC_WRONG_ROLE; ++s) CHECK(strcmp(zipc_status_str((zipc_status_t)s), "unknown") != 0);
  CHECK(strcmp(zipc_status_str((zipc_status_t)77), "unknown") == 0);
  CHECK(strcmp(zipc_status_str((zipc_status_t)-1), "unknown") == 0);
}

TEST(the_library_reports_its_abi_and_release) {
  CHECK(zipc_abi_version() == ZIPC_ABI_VERSION);
  const char* v = zipc_version_string();
  int major = -1, minor = -1, patch = -1;
  CHECK(sscanf(v, "%d.%d.%d", &major, &minor, &patch) == 3 && major >= 0 && minor >= 0 && patch >= 0);
}

TEST(the_last_error_stays_until_the_next_failure_and_is_per_thread) {
  zipc_clear_error();
  CHECK(strcmp(zipc_last_error(), "") == 0);
  zipc_queue_t* q = NULL;
  EXPECT(zipc_queue_open("t.c.surely.absent", NULL, &q), ZIPC_NOT_FOUND);
  CHECK_MESSAGE("t.c.surely.absent");
  CHECK_MESSAGE("not found");
  CHECK(strcmp(zipc_status_str(ZIPC_OK), "ok") == 0); /* success leaves it alone */
  CHECK_MESSAGE("t.c.surely.absent");
  char long_path[3000] = "/nonexistent-dir/";
  memset(long_path + 17, 'x', sizeof long_path - 18);
  long_path[sizeof long_path - 1] = '\0';
  zipc_topic_options_t o;
  OK(zipc_topic_options_init(&o));
  o.segment.path = long_path;
  zipc_topic_t* t = NULL;
  CHECK(zipc_topic_open("t.c.long", &o, &t) != ZIPC_OK);                                /* the message names the path */
  CHECK(strlen(zipc_last_error()) == 1023 && strstr(zipc_last_error(), "...") != NULL); /* cut, not overflowed */
  EXPECT(zipc_queue_open("t.c.surely.absent", NULL, &q), ZIPC_NOT_FOUND);
  int other_ok = 0;
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, fail_on_another_thread, &other_ok) == 0);
  CHECK(pthread_join(thread, NULL) == 0);
  CHECK(other_ok);
  CHECK_MESSAGE("t.c.surely.absent"); /* this thread's message is untouched */
  zipc_clear_error();
  CHECK(zipc_last_error()[0] == '\0');
}

TEST(option_initializers_give_the_documented_defaults) {
  zipc_wait_options_t w;
  OK(zipc_wait_options_init(&w));
  CHECK(w.strategy == ZIPC_WAIT_ADAPTIVE && w.spin_ns > 0);
  zipc_segment_options_t s;
  OK(zipc_segment_options_init(&s));
  CHECK(s.path == NULL && s.mode == ZIPC_MODE_OWNER && s.huge_pages == ZIPC_HUGE_PAGES_OFF && !s.prefault &&
        s.open_timeout_ms == 1000);
  zipc_queue_options_t q;
  OK(zipc_queue_options_init(&q));
  CHECK(q.struct_size == sizeof q && q.block_size == 1024 && q.block_count == 1024 && q.role == ZIPC_ROLE_BOTH &&
        q.recovery_time_ms == 200);
  zipc_topic_options_t t;
  OK(zipc_topic_options_init(&t));
  CHECK(t.struct_size == sizeof t && t.capacity_bytes == 1u << 20 && t.max_message_size == 1u << 16 &&
        t.publishers == ZIPC_SINGLE);
  zipc_rpc_options_t r;
  OK(zipc_rpc_options_init(&r));
  CHECK(r.struct_size == sizeof r && r.max_clients == 16 && r.replace_stale);
  zipc_heap_options_t h;
  OK(zipc_heap_options_init(&h));
  CHECK(h.struct_size == sizeof h && h.address_mode == ZIPC_ADDRESS_ANY && h.address == NULL);
  zipc_subscribe_options_t so;
  OK(zipc_subscribe_options_init(&so));
  CHECK(so.from == ZIPC_FROM_LATEST && so.delivery == ZIPC_RELIABLE);
  EXPECT(zipc_wait_options_init(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_segment_options_init(NULL), ZIPC_INVALID_ARGUMENT);
}

struct found {
  const char* want;
  int seen;
  uint32_t kind;
  uint64_t size;
  bool valid;
  bool alive;
};

static void look(void* context, const zipc_segment_info_t* info) {
  struct found* f = context;
  CHECK(info->name != NULL && info->path != NULL && info->problem != NULL);
  if (strcmp(info->name, f->want) != 0) return;
  ++f->seen;
  f->kind = info->kind;
  f->size = info->size;
  f->valid = info->valid;
  f->alive = info->creator_alive && info->creator_pid == (uint32_t)getpid() && info->created_ns > 0;
}

TEST(segments_are_listed_with_their_kind_and_removed_by_name) {
  const char* name = temp_name("seg");
  zipc_topic_t* t = NULL;
  OK(zipc_topic_create(name, NULL, &t));
  struct found f = {name, 0, 0, 0, false, false};
  size_t count = 0;
  OK(zipc_segment_list(look, &f, &count));
  CHECK(f.seen == 1 && f.kind == ZIPC_KIND_TOPIC && f.size > (1u << 20) && f.valid && f.alive && count >= 1);
  OK(zipc_segment_list(look, &f, NULL));
  OK(zipc_segment_remove(name, NULL));
  EXPECT(zipc_segment_remove(name, NULL), ZIPC_NOT_FOUND);
  CHECK_MESSAGE(name);
  f.seen = 0;
  OK(zipc_segment_list(look, &f, NULL));
  CHECK(f.seen == 0);
  EXPECT(zipc_segment_list(NULL, NULL, &count), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_segment_remove(NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_segment_remove("bad/name", NULL), ZIPC_INVALID_NAME);
  OK(zipc_topic_detach(t)); /* the mapping outlived the name */
}

TEST(a_file_backed_topic_keeps_its_messages_across_handles) {
  const char* name = temp_name("file");
  char path[128];
  snprintf(path, sizeof path, "/tmp/zipc-c-test-%d.topic", (int)getpid());
  zipc_topic_options_t o;
  OK(zipc_topic_options_init(&o));
  o.capacity_bytes = 4096;
  o.max_message_size = 256;
  o.segment.path = path;
  zipc_topic_t* t = NULL;
  OK(zipc_topic_create(name, &o, &t));
  zipc_publisher_t* p = NULL;
  OK(zipc_topic_publisher(t, &p));
  OK(zipc_publisher_publish(p, "kept", 5, 0, NULL));
  OK(zipc_publisher_detach(p));
  OK(zipc_topic_sync(t));
  OK(zipc_topic_detach(t));
  OK(zipc_topic_open(name, &o, &t));
  zipc_subscribe_options_t so;
  OK(zipc_subscribe_options_init(&so));
  so.from = ZIPC_FROM_OLDEST;
  zipc_subscriber_t* s = NULL;
  OK(zipc_topic_subscribe(t, &so, &s));
  char buf[16];
  OK(zipc_subscriber_read(s, buf, sizeof buf, 0, NULL));
  CHECK(strcmp(buf, "kept") == 0);
  OK(zipc_subscriber_detach(s));
  OK(zipc_topic_detach(t));
  zipc_segment_options_t seg;
  OK(zipc_segment_options_init(&seg));
  seg.path = path;
  OK(zipc_topic_remove(name, &seg));
  EXPECT(zipc_topic_remove(name, &seg), ZIPC_NOT_FOUND);
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(every_status_has_a_stable_number_and_a_name);
  RUN(the_library_reports_its_abi_and_release);
  RUN(the_last_error_stays_until_the_next_failure_and_is_per_thread);
  RUN(option_initializers_give_the_documented_defaults);
  RUN(segments_are_listed_with_their_kind_and_removed_by_name);
  RUN(a_file_backed_topic_keeps_its_messages_across_handles);
  return done();
}
