/* heap_test.c - zipc_heap_* from C: allocation, offsets, named blocks and
 * the statuses of a misused heap. */
#include "check.h"

TEST(blocks_allocated_in_one_handle_are_found_by_offset_in_another) {
  const char* name = temp_name("h");
  zipc_heap_t* a = NULL;
  zipc_heap_t* b = NULL;
  OK(zipc_heap_create(name, 1 << 16, NULL, &a));
  OK(zipc_heap_open(name, NULL, &b));
  void* p = NULL;
  OK(zipc_heap_allocate(a, 100, 64, &p));
  CHECK(((uintptr_t)p % 64) == 0);
  strcpy(p, "shared");
  uint64_t off = 0;
  OK(zipc_heap_offset_of(a, p, &off));
  void* q = NULL;
  OK(zipc_heap_at(b, off, 100, &q));
  CHECK(strcmp(q, "shared") == 0);
  void* base = NULL;
  uint64_t size = 0;
  OK(zipc_heap_arena(b, &base, &size));
  CHECK(size >= (1 << 16) - 4096 && (char*)q == (char*)base + off);
  zipc_heap_stats_t st;
  OK(zipc_heap_stats(b, &st));
  CHECK(st.allocated_blocks == 1 && st.free_bytes > 0 && st.free_bytes < st.size && !st.corrupt);
  OK(zipc_heap_check(a));
  OK(zipc_heap_free(b, q)); /* freed through the other handle */
  OK(zipc_heap_free(a, NULL));
  OK(zipc_heap_stats(a, &st));
  CHECK(st.allocated_blocks == 0);
  OK(zipc_heap_allocate(a, 8, 0, &p)); /* align 0: the default */
  OK(zipc_heap_free(a, p));
  OK(zipc_heap_detach(a));
  OK(zipc_heap_detach(b));
  OK(zipc_heap_remove(name, NULL));
  EXPECT(zipc_heap_remove(name, NULL), ZIPC_NOT_FOUND);
}

TEST(misused_pointers_and_sizes_get_their_own_status) {
  const char* name = temp_name("h");
  zipc_heap_t* h = NULL;
  bool created = false;
  OK(zipc_heap_open_or_create(name, 1 << 16, NULL, &h, &created));
  CHECK(created);
  void* p = NULL;
  EXPECT(zipc_heap_allocate(h, 1 << 20, 16, &p), ZIPC_OUT_OF_MEMORY);
  EXPECT(zipc_heap_allocate(h, 16, 3, &p), ZIPC_INVALID_ARGUMENT);
  CHECK_MESSAGE("power of two");
  OK(zipc_heap_allocate(h, 16, 16, &p));
  OK(zipc_heap_free(h, p));
  EXPECT(zipc_heap_free(h, p), ZIPC_DOUBLE_FREE);
  int local = 0;
  EXPECT(zipc_heap_free(h, &local), ZIPC_FOREIGN_POINTER);
  uint64_t off = 0;
  EXPECT(zipc_heap_offset_of(h, &local, &off), ZIPC_INVALID_ARGUMENT);
  void* base = NULL;
  uint64_t size = 0;
  OK(zipc_heap_arena(h, &base, &size));
  void* q = NULL;
  EXPECT(zipc_heap_at(h, size, 1, &q), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_at(h, size - 8, 16, &q), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_at(h, UINT64_MAX, 1, &q), ZIPC_INVALID_ARGUMENT);
  OK(zipc_heap_allocate(h, 64, 16, &p));
  memset((char*)p - 16, 0x5a, 16); /* scribble over the block's header */
  const zipc_status_t s = zipc_heap_free(h, p);
  CHECK(s == ZIPC_CORRUPT_BLOCK || s == ZIPC_FOREIGN_POINTER);
  OK(zipc_heap_detach(h));
}

TEST(named_blocks_are_zeroed_found_by_name_and_destroyed) {
  const char* name = temp_name("h");
  zipc_heap_options_t o;
  OK(zipc_heap_options_init(&o));
  zipc_heap_t* a = NULL;
  zipc_heap_t* b = NULL;
  OK(zipc_heap_create(name, 1 << 16, &o, &a));
  OK(zipc_heap_open(name, &o, &b));
  void* p = NULL;
  OK(zipc_heap_named_create(a, "config", 40, 8, &p));
  CHECK(((const char*)p)[0] == 0 && ((const char*)p)[39] == 0);
  strcpy(p, "from a");
  void* q = NULL;
  EXPECT(zipc_heap_named_create(b, "config", 40, 8, &q), ZIPC_ALREADY_EXISTS);
  CHECK_MESSAGE("config");
  size_t size = 0;
  OK(zipc_heap_named_find(b, "config", &q, &size));
  CHECK(size == 40 && strcmp(q, "from a") == 0);
  OK(zipc_heap_named_find(b, "config", &q, NULL));
  bool created = true;
  OK(zipc_heap_named_find_or_create(b, "config", 40, 8, &q, &created));
  CHECK(!created && strcmp(q, "from a") == 0);
  OK(zipc_heap_named_find_or_create(b, "counter", 8, 0, &q, &created));
  CHECK(created);
  OK(zipc_heap_named_find_or_create(a, "counter", 8, 0, &p, NULL));
  EXPECT(zipc_heap_named_find(a, "absent", &q, NULL), ZIPC_NOT_FOUND);
  CHECK_MESSAGE("absent");
  OK(zipc_heap_named_destroy(a, "config"));
  EXPECT(zipc_heap_named_destroy(b, "config"), ZIPC_NOT_FOUND);
  EXPECT(zipc_heap_named_find(b, "config", &q, NULL), ZIPC_NOT_FOUND);
  EXPECT(zipc_heap_named_create(a, "huge", 1 << 20, 8, &q), ZIPC_OUT_OF_MEMORY);
  EXPECT(zipc_heap_named_create(a, "odd", 8, 3, &q), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_find(a, "huge", &q, NULL), ZIPC_NOT_FOUND); /* nothing left behind */
  OK(zipc_heap_named_destroy(b, "counter"));
  zipc_heap_stats_t st;
  OK(zipc_heap_stats(a, &st));
  CHECK(st.allocated_blocks == 0);
  OK(zipc_heap_detach(a));
  OK(zipc_heap_detach(b));
}

TEST(a_fixed_heap_maps_at_one_address_in_every_handle) {
  const char* name = temp_name("h");
  zipc_heap_options_t o;
  OK(zipc_heap_options_init(&o));
  o.address_mode = ZIPC_ADDRESS_FIXED;
  zipc_heap_t* a = NULL;
  OK(zipc_heap_create(name, 1 << 16, &o, &a));
  void* base = NULL;
  uint64_t size = 0;
  OK(zipc_heap_arena(a, &base, &size));
  zipc_heap_t* b = NULL;
  EXPECT(zipc_heap_open(name, NULL, &b), ZIPC_ADDRESS_UNAVAILABLE); /* taken here by a */
  CHECK_MESSAGE("fixed address");
  const pid_t child = fork_child();
  if (child == 0) {
    OK(zipc_heap_detach(a)); /* the copy fork gave us: frees the address */
    OK(zipc_heap_open(name, NULL, &b));
    void* base2 = NULL;
    uint64_t size2 = 0;
    OK(zipc_heap_arena(b, &base2, &size2));
    const int same = base2 == base && size2 == size;
    OK(zipc_heap_detach(b));
    exit(same ? 0 : 3);
  }
  CHECK(child_ok(child));
  OK(zipc_heap_detach(a));
}

TEST(setup_errors_and_null_arguments_are_reported) {
  const char* name = temp_name("h");
  zipc_heap_t* h = NULL;
  EXPECT(zipc_heap_open(name, NULL, &h), ZIPC_NOT_FOUND);
  CHECK_MESSAGE(name);
  zipc_heap_options_t o;
  OK(zipc_heap_options_init(&o));
  o.address_mode = 7;
  EXPECT(zipc_heap_create(name, 4096, &o, &h), ZIPC_INVALID_ARGUMENT);
  o.struct_size = 1;
  EXPECT(zipc_heap_create(name, 4096, &o, &h), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_create(NULL, 4096, NULL, &h), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_create(name, 4096, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_open(NULL, NULL, &h), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_open_or_create(name, 4096, NULL, NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_remove(NULL, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_options_init(NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_heap_create(name, 4096, NULL, &h));
  zipc_heap_t* h2 = NULL;
  EXPECT(zipc_heap_create(name, 4096, NULL, &h2), ZIPC_ALREADY_EXISTS);
  zipc_queue_t* q = NULL;
  EXPECT(zipc_queue_open(name, NULL, &q), ZIPC_WRONG_KIND); /* a heap is no queue */
  CHECK_MESSAGE(name);
  void* p = NULL;
  uint64_t off = 0;
  size_t size = 0;
  zipc_heap_stats_t st;
  EXPECT(zipc_heap_allocate(NULL, 1, 0, &p), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_allocate(h, 1, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_free(NULL, p), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_offset_of(NULL, p, &off), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_offset_of(h, p, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_at(NULL, 0, 1, &p), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_at(h, 0, 1, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_arena(NULL, &p, &off), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_arena(h, NULL, &off), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_stats(NULL, &st), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_stats(h, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_check(NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_create(NULL, "n", 1, 0, &p), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_create(h, NULL, 1, 0, &p), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_create(h, "n", 1, 0, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_find_or_create(NULL, "n", 1, 0, &p, NULL), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_find(NULL, "n", &p, &size), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_find(h, NULL, &p, &size), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_find(h, "n", NULL, &size), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_destroy(NULL, "n"), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_heap_named_destroy(h, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_heap_detach(NULL));
  OK(zipc_heap_detach(h));
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(blocks_allocated_in_one_handle_are_found_by_offset_in_another);
  RUN(misused_pointers_and_sizes_get_their_own_status);
  RUN(named_blocks_are_zeroed_found_by_name_and_destroyed);
  RUN(a_fixed_heap_maps_at_one_address_in_every_handle);
  RUN(setup_errors_and_null_arguments_are_reported);
  return done();
}
