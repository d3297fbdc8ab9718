/* type_identity_test.c - zipc_type_identity_*: C producers declare the
 * message type of a queue or topic, readers see it, and opening with another
 * type is ZIPC_TYPE_MISMATCH (the error C++ typed channels give). */
#include "check.h"

static zipc_type_identity_t quote_type(void) {
  zipc_type_identity_t t;
  OK(zipc_type_identity_init(&t, "demo.Quote", 16, 8, 2, 1));
  return t;
}

TEST(init_computes_a_fingerprint_that_changes_with_every_field) {
  zipc_type_identity_t a = quote_type(), b;
  CHECK(strcmp(a.name, "demo.Quote") == 0 && a.size == 16 && a.align == 8 && a.field_count == 2 && a.version == 1);
  CHECK(a.fingerprint != 0);
  OK(zipc_type_identity_init(&b, "demo.Quote", 16, 8, 2, 1));
  CHECK(a.fingerprint == b.fingerprint);
  OK(zipc_type_identity_init(&b, "demo.Quote", 24, 8, 2, 1));
  CHECK(a.fingerprint != b.fingerprint);
  OK(zipc_type_identity_init(&b, "demo.Quote", 16, 8, 2, 2));
  CHECK(a.fingerprint != b.fingerprint);
  OK(zipc_type_identity_init(&b, "demo.Trade", 16, 8, 2, 1));
  CHECK(a.fingerprint != b.fingerprint);
  EXPECT(zipc_type_identity_init(&b, NULL, 16, 8, 0, 0), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_type_identity_init(NULL, "x", 16, 8, 0, 0), ZIPC_INVALID_ARGUMENT);
  char longname[ZIPC_TYPE_NAME_MAX + 2];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  EXPECT(zipc_type_identity_init(&b, longname, 16, 8, 0, 0), ZIPC_INVALID_ARGUMENT);
}

TEST(a_queue_created_with_a_type_reports_it_and_open_checks_it) {
  const char* name = temp_name("qt");
  zipc_type_identity_t quote = quote_type();
  zipc_queue_options_t o;
  OK(zipc_queue_options_init(&o));
  CHECK(o.type == NULL);
  o.block_size = 16;
  o.block_count = 4;
  o.type = &quote;
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  zipc_type_identity_t seen;
  OK(zipc_queue_type_identity(q, &seen));
  CHECK(strcmp(seen.name, "demo.Quote") == 0 && seen.size == 16 && seen.align == 8);
  CHECK(seen.fingerprint == quote.fingerprint && seen.version == 1 && seen.field_count == 2);

  zipc_queue_t* same = NULL;
  OK(zipc_queue_open(name, &o, &same)); /* the same type */
  OK(zipc_queue_detach(same));
  zipc_queue_options_t bytes;
  OK(zipc_queue_options_init(&bytes));
  OK(zipc_queue_open(name, &bytes, &same)); /* the byte API: no check, can read the type */
  OK(zipc_queue_type_identity(same, &seen));
  CHECK(seen.fingerprint == quote.fingerprint);
  OK(zipc_queue_detach(same));

  zipc_type_identity_t trade;
  OK(zipc_type_identity_init(&trade, "demo.Trade", 24, 8, 3, 0));
  o.type = &trade;
  zipc_queue_t* other = NULL;
  EXPECT(zipc_queue_open(name, &o, &other), ZIPC_TYPE_MISMATCH);
  CHECK(other == NULL);
  CHECK_MESSAGE("demo.Quote");
  CHECK_MESSAGE("demo.Trade");
  EXPECT(zipc_queue_open_or_create(name, &o, &other, NULL), ZIPC_TYPE_MISMATCH);
  OK(zipc_queue_detach(q));
}

TEST(a_queue_created_without_a_type_has_none_and_refuses_a_typed_open) {
  const char* name = temp_name("qt");
  zipc_queue_options_t o;
  OK(zipc_queue_options_init(&o));
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  zipc_type_identity_t seen;
  EXPECT(zipc_queue_type_identity(q, &seen), ZIPC_NOT_FOUND);
  CHECK_MESSAGE("no message type");
  zipc_type_identity_t quote = quote_type();
  o.type = &quote;
  zipc_queue_t* typed = NULL;
  EXPECT(zipc_queue_open(name, &o, &typed), ZIPC_TYPE_MISMATCH);
  CHECK_MESSAGE("byte API");
  EXPECT(zipc_queue_type_identity(NULL, &seen), ZIPC_INVALID_ARGUMENT);
  EXPECT(zipc_queue_type_identity(q, NULL), ZIPC_INVALID_ARGUMENT);
  OK(zipc_queue_detach(q));
}

TEST(a_topic_records_its_type_too) {
  const char* name = temp_name("tt");
  zipc_type_identity_t quote = quote_type();
  zipc_topic_options_t o;
  OK(zipc_topic_options_init(&o));
  CHECK(o.type == NULL);
  o.type = &quote;
  zipc_topic_t* t = NULL;
  OK(zipc_topic_create(name, &o, &t));
  zipc_type_identity_t seen;
  OK(zipc_topic_type_identity(t, &seen));
  CHECK(strcmp(seen.name, "demo.Quote") == 0 && seen.fingerprint == quote.fingerprint);
  zipc_type_identity_t trade;
  OK(zipc_type_identity_init(&trade, "demo.Trade", 24, 8, 3, 0));
  o.type = &trade;
  zipc_topic_t* other = NULL;
  EXPECT(zipc_topic_open(name, &o, &other), ZIPC_TYPE_MISMATCH);
  EXPECT(zipc_topic_type_identity(NULL, &seen), ZIPC_INVALID_ARGUMENT);
  OK(zipc_topic_detach(t));
}

TEST(another_process_opening_with_another_type_gets_type_mismatch) {
  const char* name = temp_name("qt");
  zipc_type_identity_t quote = quote_type();
  zipc_queue_options_t o;
  OK(zipc_queue_options_init(&o));
  o.type = &quote;
  zipc_queue_t* q = NULL;
  OK(zipc_queue_create(name, &o, &q));
  const pid_t pid = fork_child();
  if (pid == 0) {
    zipc_type_identity_t trade;
    if (zipc_type_identity_init(&trade, "demo.Trade", 24, 8, 3, 0) != ZIPC_OK) _exit(2);
    zipc_queue_options_t c;
    zipc_queue_options_init(&c);
    c.type = &trade;
    zipc_queue_t* mine = NULL;
    if (zipc_queue_open(name, &c, &mine) != ZIPC_TYPE_MISMATCH) _exit(3);
    if (strstr(zipc_last_error(), "demo.Quote") == NULL) _exit(4);
    c.type = &quote;
    if (zipc_queue_open(name, &c, &mine) != ZIPC_OK) _exit(5);
    zipc_queue_detach(mine);
    _exit(0);
  }
  CHECK(child_ok(pid));
  OK(zipc_queue_detach(q));
}

int main(int argc, char** argv) {
  select_test(argc, argv);
  RUN(init_computes_a_fingerprint_that_changes_with_every_field);
  RUN(a_queue_created_with_a_type_reports_it_and_open_checks_it);
  RUN(a_queue_created_without_a_type_has_none_and_refuses_a_typed_open);
  RUN(a_topic_records_its_type_too);
  RUN(another_process_opening_with_another_type_gets_type_mismatch);
  return done();
}
