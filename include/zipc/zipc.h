/** \file
 * zipc/zipc.h - the C ABI of zipc (C11): queues, topics, rpc, heaps, segments.
 *
 * \code
 *   zipc_queue_options_t opt;
 *   zipc_queue_options_init(&opt);
 *   opt.block_size = 256;
 *   opt.block_count = 64;
 *   zipc_queue_t* q = NULL;
 *   if (zipc_queue_create("jobs", &opt, &q) != ZIPC_OK) {
 *     fprintf(stderr, "%s\n", zipc_last_error());  // "queue 'jobs': already exists (...)"
 *     return 1;
 *   }
 *   zipc_queue_send(q, "hello", 6, 1000000);        // waits at most 1 ms for room
 *   char buf[256];
 *   size_t len = 0;
 *   zipc_queue_recv(q, buf, sizeof buf, &len, ZIPC_FOREVER);  // wait without a deadline
 *   zipc_write_loan_t w;                            // zero copy: write into the ring
 *   if (zipc_queue_reserve(q, 0, &w) == ZIPC_OK) {
 *     memcpy(w.data, "abc", 3);
 *     zipc_write_loan_commit(&w, 3, NULL);
 *   }
 *   zipc_queue_detach(q);
 *   zipc_queue_remove("jobs", NULL);
 * \endcode
 *
 * Conventions
 * - Every function returns a zipc_status_t, except the few that say otherwise
 *   (versions, zipc_status_str, zipc_last_error). Results come back through
 *   out-parameters, which are written only when the call returns ZIPC_OK
 *   (unless the function says otherwise, e.g. the size a too-small buffer needs).
 * - Handles (zipc_queue_t*, ...) are opaque; create/open hand one out and
 *   *_detach frees it (detach(NULL) is a no-op returning ZIPC_OK). A NULL
 *   handle or a NULL required pointer gives ZIPC_INVALID_ARGUMENT.
 * - A failed setup call (create, open, connect, subscribe, named blocks, ...)
 *   and every ZIPC_INVALID_ARGUMENT leave a message in a thread-local buffer,
 *   readable with zipc_last_error() until the next failing call on this
 *   thread: what failed, on which object, and why, as zipc::Error::what()
 *   gives it ("queue 'jobs': already exists (/dev/shm/zipc.jobs)").
 *   Hot-path statuses (full, empty, timeout, closed, ...) leave no message.
 * - Timeouts are in nanoseconds (docs/guide/timeouts.md): ZIPC_FOREVER waits
 *   without a deadline; 0 tries once and never blocks; a negative value tries
 *   once too (an expired deadline). A try that finds nothing returns
 *   ZIPC_EMPTY / ZIPC_FULL; only a positive timeout that expires returns
 *   ZIPC_TIMEOUT.
 * - Loans (zipc_write_loan_t, zipc_read_loan_t) and rpc requests and tickets
 *   are structs the caller owns (usually on its stack): data and size are
 *   public, the rest is private state. A live loan must be ended exactly once
 *   (commit or abort; release) and must not be copied while live except as a
 *   move (use only the copy). A loan keeps what it needs of its handle: a
 *   handle detached while its loan is out stays until the loan ends, and
 *   the loan's data stays readable (docs/guide/handles.md).
 * - Threads: a handle is used by one thread at a time (open one per thread),
 *   except zipc_rpc_server_next/serve/stop, which may run on many threads.
 * - No C++ exception crosses this API: the library catches them and returns
 *   a status (std::bad_alloc -> ZIPC_OUT_OF_MEMORY).
 *
 * ABI stability (zipc_abi_version(); the shared library is `libzipc.so.<abi>`)
 * Within one ABI version: functions keep their signatures, status numbers
 * and enum values keep their meaning; new functions, new status values and
 * new enum values may be added (treat an unknown status as an error). Options
 * structs may grow at their end: they carry a struct_size that their *_init
 * function sets, and the library reads only the fields that size covers, so a
 * program built against an older header keeps working; always call the
 * *_init function before setting fields. Output structs (stats, infos),
 * loans, requests and tickets keep their layout. Anything else - removing or
 * changing a function, reordering a struct, renumbering a status - bumps the
 * ABI version and the soname.
 */
#ifndef ZIPC_ZIPC_H
#define ZIPC_ZIPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define ZIPC_API
#elif defined(__GNUC__)
/** Marks the functions the shared library exports (default visibility). */
#define ZIPC_API __attribute__((visibility("default")))
#else
#define ZIPC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* C names (zipc_queue_t, ZIPC_OK) are not the C++ naming rules' business. */
/* NOLINTBEGIN(readability-identifier-naming) */

/** The ABI version this header describes (compare with zipc_abi_version()). */
#define ZIPC_ABI_VERSION 0

/** Wait without a deadline (the C++ zipc::forever). */
#define ZIPC_FOREVER INT64_MAX

/* ---- Status ------------------------------------------------------------ */

/** One status for every call. 0..25 are zipc::Errc (setup errors, and the
 * hot-path statuses that share their meaning); 100.. are hot-path statuses
 * without an Errc, and heap statuses. The numbers never change. */
typedef enum zipc_status {
  ZIPC_OK = 0,                   /**< success */
  ZIPC_NOT_FOUND = 1,            /**< no segment (or named block) of that name */
  ZIPC_ALREADY_EXISTS = 2,       /**< create found one */
  ZIPC_PERMISSION_DENIED = 3,    /**< mode/uid forbids access */
  ZIPC_WRONG_KIND = 4,           /**< a queue opened as a topic, a named block of another type, ... */
  ZIPC_VERSION_MISMATCH = 5,     /**< layout version differs from this library's */
  ZIPC_TRUNCATED = 6,            /**< the file is shorter than its header says */
  ZIPC_BAD_MAGIC = 7,            /**< not a zipc segment */
  ZIPC_CORRUPT_HEADER = 8,       /**< a segment header field is out of range */
  ZIPC_INIT_TIMEOUT = 9,         /**< creator still initializing after the timeout */
  ZIPC_CREATOR_DIED = 10,        /**< creator died before finishing initialization */
  ZIPC_INVALID_NAME = 11,        /**< empty, '/', too long, bad characters */
  ZIPC_INVALID_ARGUMENT = 12,    /**< NULL handle or pointer, an option out of range */
  ZIPC_TOO_LARGE = 13,           /**< a message over the maximum, or a buffer too small */
  ZIPC_CORRUPT = 14,             /**< shared state failed validation */
  ZIPC_PEER_DEAD = 15,           /**< the other side died */
  ZIPC_NOT_RETAINED = 16,        /**< a sequence older than the log holds */
  ZIPC_ADDRESS_UNAVAILABLE = 17, /**< a fixed-address mapping could not be placed */
  ZIPC_OUT_OF_MEMORY = 18,       /**< a heap has no room, or malloc failed */
  ZIPC_BUSY = 19,                /**< no free participant slot */
  ZIPC_CLOSED = 20,              /**< the channel was closed (readers: and drained) */
  ZIPC_TIMEOUT = 21,             /**< a bounded wait expired */
  ZIPC_SYSTEM = 22,              /**< an unexpected OS error (errno in the message) */
  ZIPC_OPTIONS_MISMATCH = 23,    /**< open_or_create: the existing segment has other geometry */
  ZIPC_TYPE_MISMATCH = 24,       /**< a typed channel of another message type */
  ZIPC_WRONG_ROLE = 25,          /**< a handle without the producer/consumer role */
  ZIPC_FULL = 100,               /**< a try (timeout 0) found no room */
  ZIPC_EMPTY = 101,              /**< a try (timeout 0) found nothing to read */
  ZIPC_OVERRUN = 102,            /**< a lossy subscriber was lapped (see lost) */
  ZIPC_NOT_SUPPORTED = 103,      /**< not offered in this mode (acquire on a lossy subscriber) */
  ZIPC_DETACHED = 104,           /**< C++ handle detached, moved from or default (docs/guide/handles.md) */
  ZIPC_REMOTE_ERROR = 105,       /**< an rpc handler failed (zipc_rpc_last_remote_error has its code and message) */
  ZIPC_DOUBLE_FREE = 110,        /**< heap: the block is already free */
  ZIPC_FOREIGN_POINTER = 111,    /**< heap: the pointer is not a block of this heap */
  ZIPC_CORRUPT_BLOCK = 112       /**< heap: the block's header fails its check */
} zipc_status_t;

/** The status's name without ZIPC_: "ok", "not_found", ... ("unknown" for other values; never NULL). */
ZIPC_API const char* zipc_status_str(zipc_status_t status);
/** The message the last failing call on this thread left ("" if none). Valid
 * until the next zipc call on this thread. */
ZIPC_API const char* zipc_last_error(void);
/** Forgets the message. */
ZIPC_API void zipc_clear_error(void);

/* ---- Versions ---------------------------------------------------------- */

/** The ABI version of the library loaded (ZIPC_ABI_VERSION of its build). */
ZIPC_API uint32_t zipc_abi_version(void);
/** The release, "MAJOR.MINOR.PATCH". */
ZIPC_API const char* zipc_version_string(void);

/* ---- Common options ---------------------------------------------------- */

/** How a blocking call waits (zipc_wait_options_t::strategy). */
typedef enum zipc_wait_strategy {
  ZIPC_WAIT_BUSY_POLL = 0, /**< spin until ready or the deadline: lowest latency, burns a CPU */
  ZIPC_WAIT_ADAPTIVE = 1,  /**< spin briefly, yield, then sleep on a futex (default) */
  ZIPC_WAIT_BLOCK = 2      /**< sleep at once: least CPU */
} zipc_wait_strategy_t;

/** How one handle waits (C++: zipc::WaitOptions). Fill with zipc_wait_options_init. */
typedef struct zipc_wait_options {
  uint32_t strategy; /**< zipc_wait_strategy_t */
  uint32_t spin_ns;  /**< pause-spin this long before yielding */
  uint32_t yields;   /**< sched_yield this many times before sleeping */
} zipc_wait_options_t;
/** Sets the defaults: adaptive, with the C++ WaitOptions' spin and yield counts. ZIPC_INVALID_ARGUMENT for NULL. */
ZIPC_API zipc_status_t zipc_wait_options_init(zipc_wait_options_t* options);

/** Whether a segment asks for transparent huge pages (zipc_segment_options_t::huge_pages). */
typedef enum zipc_huge_pages {
  ZIPC_HUGE_PAGES_OFF = 0,    /**< small pages only (default) */
  ZIPC_HUGE_PAGES_PREFER = 1, /**< ask for transparent huge pages, fall back to small */
  ZIPC_HUGE_PAGES_REQUIRE = 2 /**< fail with ZIPC_INVALID_ARGUMENT when unavailable */
} zipc_huge_pages_t;

#define ZIPC_MODE_OWNER 0600u          /**< default */
#define ZIPC_MODE_GROUP 0660u          /**< the owner and its group read and write */
#define ZIPC_MODE_EVERYONE 0666u       /**< every user reads and writes */
#define ZIPC_MODE_GROUP_READS 0640u    /**< the owner writes, the group reads (read_only) */
#define ZIPC_MODE_EVERYONE_READS 0644u /**< the owner writes, everyone reads (read_only) */

/** Where a segment lives and how it is mapped (C++: zipc::SegmentOptions). Fill with zipc_segment_options_init. */
typedef struct zipc_segment_options {
  const char* path;         /**< NULL or "": /dev/shm/zipc.\<name\>; else a file at this path (copied) */
  uint32_t mode;            /**< permission bits for create (ZIPC_MODE_OWNER) */
  uint32_t huge_pages;      /**< zipc_huge_pages_t */
  bool prefault;            /**< take every page fault at create/open time */
  bool lock_memory;         /**< mlock the mapping */
  uint64_t open_timeout_ms; /**< how long open waits for a creator to finish (1000) */
} zipc_segment_options_t;
/** Sets the defaults (path NULL, ZIPC_MODE_OWNER, no huge pages, no prefault or mlock, open_timeout_ms 1000).
 * ZIPC_INVALID_ARGUMENT for NULL. */
ZIPC_API zipc_status_t zipc_segment_options_init(zipc_segment_options_t* options);

/** How many producers, consumers or publishers a channel admits. */
typedef enum zipc_multiplicity {
  ZIPC_SINGLE = 0, /**< one at a time: a second live one fails with ZIPC_BUSY */
  ZIPC_MULTI = 1   /**< any number */
} zipc_multiplicity_t;

/** Bytes to send (batches). */
typedef struct zipc_bytes {
  const void* data; /**< the message's first byte */
  size_t size;      /**< its length in bytes */
} zipc_bytes_t;

/* ---- Loans --------------------------------------------------------------- */

/** Memory to write in place (queue block, topic record, rpc request). Fill
 * data (size bytes available), then zipc_write_loan_commit or _abort. */
typedef struct zipc_write_loan {
  void* data;            /**< where to write */
  size_t size;           /**< bytes available at data */
  uint64_t private_[10]; /**< private state of the library: do not touch */
} zipc_write_loan_t;

/** A message to read in place (queue block, topic record, rpc response):
 * size bytes at data, valid until zipc_read_loan_release. */
typedef struct zipc_read_loan {
  const void* data;     /**< the message's first byte (read only) */
  size_t size;          /**< its length in bytes */
  uint64_t sequence;    /**< topic: the message's sequence number; queue: its position */
  uint64_t publish_ns;  /**< topic: CLOCK_REALTIME at commit; else 0 */
  uint64_t private_[8]; /**< private state of the library: do not touch */
} zipc_read_loan_t;

/** Publishes the first n bytes (n <= size). *sequence (may be NULL) gets the
 * topic sequence / queue position. ZIPC_TOO_LARGE (loan kept) if n > size.
 * An rpc request loan is not sent by commit: commit sets its length, then
 * zipc_rpc_client_call_loan / _call_async_loan send it. */
ZIPC_API zipc_status_t zipc_write_loan_commit(zipc_write_loan_t* loan, size_t n, uint64_t* sequence);
/** Gives the memory back unpublished. */
ZIPC_API zipc_status_t zipc_write_loan_abort(zipc_write_loan_t* loan);
/** Gives the message back (queue: the block returns to the ring). */
ZIPC_API zipc_status_t zipc_read_loan_release(zipc_read_loan_t* loan);

/* ---- Type identity: what a typed channel records about its messages ------ */

/** A message type as C++ typed channels record it (zipc/type_identity.hpp):
 * C and Python producers declare one to share a channel with them, e.g. a
 * numpy dtype's name and itemsize. Creating a queue or topic with options.type
 * records it; opening with options.type checks it: another identity (or none)
 * fails with ZIPC_TYPE_MISMATCH, the message naming both. */
#define ZIPC_TYPE_NAME_MAX 192
/** The identity record a typed channel stores (C++: zipc::TypeIdentity); fill with zipc_type_identity_init. */
typedef struct zipc_type_identity {
  char name[ZIPC_TYPE_NAME_MAX + 1]; /**< NUL-terminated; at most ZIPC_TYPE_NAME_MAX bytes are stored */
  uint64_t size;                     /**< sizeof the message type */
  uint64_t align;                    /**< its alignment */
  uint64_t fingerprint;              /**< zipc_type_identity_init computes it as C++ does */
  uint32_t version;                  /**< the user's layout version (C++: type_name<T>::version) */
  uint32_t field_count;              /**< aggregate members (0: not counted) */
} zipc_type_identity_t;
/** Fills out (fingerprint included) as C++ zipc::type_identity_of<T>() would
 * for a type of this name, size, alignment, field count and version: a C++
 * TypedQueue<T> whose zipc::type_name<T> says `name` then matches.
 * invalid_argument: name NULL or longer than ZIPC_TYPE_NAME_MAX. */
ZIPC_API zipc_status_t zipc_type_identity_init(zipc_type_identity_t* out, const char* name, uint64_t size,
                                               uint64_t align, uint32_t field_count, uint32_t version);

/* ---- Queue: many producers, many consumers, FIFO of blocks ---------------- */

/** A queue handle (opaque): one participant of the queue. Free it with zipc_queue_detach. */
typedef struct zipc_queue zipc_queue_t;

/** What a queue handle does (C++: zipc::Role). A single-producer queue admits one live producer handle, and the same
 * for consumers. */
typedef enum zipc_role {
  ZIPC_ROLE_NONE = 0,     /**< only close, stats, recover (a supervisor) */
  ZIPC_ROLE_PRODUCER = 1, /**< sends and reserves */
  ZIPC_ROLE_CONSUMER = 2, /**< receives and acquires */
  ZIPC_ROLE_BOTH = 3      /**< both (default) */
} zipc_role_t;

/** A queue's geometry and this handle's settings (C++: zipc::QueueOptions). Fill with zipc_queue_options_init, then
 * change fields. */
typedef struct zipc_queue_options {
  uint32_t struct_size;      /**< set by zipc_queue_options_init */
  uint32_t role;             /**< zipc_role_t of this handle (ZIPC_ROLE_BOTH) */
  uint64_t block_size;       /**< bytes per block: a multiple of 8 in [8, 16 MiB] (1024) */
  uint64_t block_count;      /**< blocks: a power of two in [2, 2^24] (1024) */
  uint32_t producers;        /**< zipc_multiplicity_t (ZIPC_MULTI) */
  uint32_t consumers;        /**< zipc_multiplicity_t (ZIPC_MULTI) */
  uint32_t max_participants; /**< handles attached at once, [2, 65535] (64) */
  uint32_t reserved0_;       /**< zero */
  uint64_t recovery_time_ms; /**< wait on a silent peer this long before checking it is alive (200) */
  bool accept_existing; /**< open_or_create: attach to an existing queue of other geometry (else OPTIONS_MISMATCH) */
  zipc_wait_options_t wait;       /**< this handle's waiting */
  zipc_segment_options_t segment; /**< permissions, file path, huge pages, open timeout */
  /** The message type (NULL: none recorded or checked): recorded by create,
   * checked by open and open_or_create (ZIPC_TYPE_MISMATCH). Copied. */
  const zipc_type_identity_t* type;
  /** Bytes of a region for messages larger than block_size (0: none; else at
   * least 64 KiB): such messages are then sent, received and reserved
   * (zipc_queue_reserve_size) like any other; see docs/guide/typed.md. */
  uint64_t oversize_bytes;
} zipc_queue_options_t;
/** Sets struct_size and the defaults given with each field. ZIPC_INVALID_ARGUMENT for NULL. */
ZIPC_API zipc_status_t zipc_queue_options_init(zipc_queue_options_t* options);

/** Counters summed over every handle of the queue. */
typedef struct zipc_queue_stats {
  uint64_t sent;        /**< messages sent (copied, committed, or in batches) */
  uint64_t received;    /**< messages received or acquired */
  uint64_t full_waits;  /**< blocking sends that had to wait for room */
  uint64_t empty_waits; /**< blocking receives that had to wait for data */
  uint64_t redelivered; /**< messages taken back from consumers that died holding them */
  uint64_t abandoned;   /**< blocks reserved, never published: producer died or leaked a loan */
} zipc_queue_stats_t;

/** A queue's geometry and state, from zipc_queue_info. */
typedef struct zipc_queue_info {
  uint64_t block_size;  /**< bytes per block */
  uint64_t block_count; /**< blocks in the ring */
  uint64_t size_approx; /**< messages committed or in flight */
  uint32_t producers;   /**< zipc_multiplicity_t */
  uint32_t consumers;   /**< zipc_multiplicity_t */
  bool closed;          /**< zipc_queue_close was called */
} zipc_queue_info_t;

/** options may be NULL (defaults). already_exists, invalid_argument, ... */
ZIPC_API zipc_status_t zipc_queue_create(const char* name, const zipc_queue_options_t* options, zipc_queue_t** out);
/** Geometry comes from the segment; options supplies role, wait, segment (may be NULL). */
ZIPC_API zipc_status_t zipc_queue_open(const char* name, const zipc_queue_options_t* options, zipc_queue_t** out);
/** Opens, or creates when absent (race-free). *created (may be NULL) tells which. */
ZIPC_API zipc_status_t zipc_queue_open_or_create(const char* name, const zipc_queue_options_t* options,
                                                 zipc_queue_t** out, bool* created);
/** Removes the name (ZIPC_NOT_FOUND if absent); mappings stay valid. segment may be NULL. */
ZIPC_API zipc_status_t zipc_queue_remove(const char* name, const zipc_segment_options_t* segment);
/** Lets go of this handle (every loan of it must have ended) and frees it. */
ZIPC_API zipc_status_t zipc_queue_detach(zipc_queue_t* queue);

/** Copies size bytes in as one message. full (timeout 0), timeout, closed,
 * too_large (over block_size without an oversize region), wrong_role. */
ZIPC_API zipc_status_t zipc_queue_send(zipc_queue_t* queue, const void* data, size_t size, int64_t timeout_ns);
/** Copies the next message out; *size gets its length. A message longer than
 * capacity stays queued: ZIPC_TOO_LARGE with *size = the length needed.
 * empty (timeout 0), timeout, closed (closed and drained), wrong_role. */
ZIPC_API zipc_status_t zipc_queue_recv(zipc_queue_t* queue, void* buffer, size_t capacity, size_t* size,
                                       int64_t timeout_ns);
/** Zero copy: a block to fill (loan->size = block_size). */
ZIPC_API zipc_status_t zipc_queue_reserve(zipc_queue_t* queue, int64_t timeout_ns, zipc_write_loan_t* loan);
/** Zero copy: a loan of size bytes (loan->size = size): a block when size <=
 * block_size, else room in the queue's oversize region. too_large (no region,
 * or more than it can ever hold); a full region: full (timeout 0) or timeout. */
ZIPC_API zipc_status_t zipc_queue_reserve_size(zipc_queue_t* queue, size_t size, int64_t timeout_ns,
                                               zipc_write_loan_t* loan);
/** Zero copy: the next message in place. */
ZIPC_API zipc_status_t zipc_queue_acquire(zipc_queue_t* queue, int64_t timeout_ns, zipc_read_loan_t* loan);

/** Batches (one position update, one wake-up): send a prefix of msgs; *sent
 * says how many, the status why it stopped early (ZIPC_OK: all sent). */
ZIPC_API zipc_status_t zipc_queue_send_batch(zipc_queue_t* queue, const zipc_bytes_t* msgs, size_t count,
                                             int64_t timeout_ns, size_t* sent);
/** Called once per message by zipc_queue_recv_batch: context as given, the
 * message's bytes (valid during the call only). */
typedef void (*zipc_message_fn)(void* context, const void* data, size_t size);
/** Calls fn for up to max messages available at once (waiting up to timeout
 * for the first); *received says how many. ZIPC_OK when at least one came. */
ZIPC_API zipc_status_t zipc_queue_recv_batch(zipc_queue_t* queue, size_t max, int64_t timeout_ns, zipc_message_fn fn,
                                             void* context, size_t* received);
/** Fills loans[0 .. *got) (waiting up to timeout for the first). */
ZIPC_API zipc_status_t zipc_queue_reserve_batch(zipc_queue_t* queue, zipc_write_loan_t* loans, size_t count,
                                                int64_t timeout_ns, size_t* got);
/** Takes loans[0 .. *got) in place at once (waiting up to timeout for the first); release each. */
ZIPC_API zipc_status_t zipc_queue_acquire_batch(zipc_queue_t* queue, zipc_read_loan_t* loans, size_t count,
                                                int64_t timeout_ns, size_t* got);

/** Closes the queue for everyone: senders get closed, receivers drain then get closed. */
ZIPC_API zipc_status_t zipc_queue_close(zipc_queue_t* queue);
/** Fills *out with the counters summed over every handle of the queue (detached handles' counts included). */
ZIPC_API zipc_status_t zipc_queue_stats(const zipc_queue_t* queue, zipc_queue_stats_t* out);
/** Fills *out with the queue's geometry and state. */
ZIPC_API zipc_status_t zipc_queue_info(const zipc_queue_t* queue, zipc_queue_info_t* out);
/** Recovers what dead participants held now; *recovered (may be NULL) = positions. */
ZIPC_API zipc_status_t zipc_queue_recover(zipc_queue_t* queue, size_t* recovered);
/** The message type the queue's creator recorded: ZIPC_OK and *out, or
 * ZIPC_NOT_FOUND when none was (a queue created without a type). */
ZIPC_API zipc_status_t zipc_queue_type_identity(const zipc_queue_t* queue, zipc_type_identity_t* out);

/* ---- Topic: publish/subscribe log ---------------------------------------- */

/** A topic handle (opaque): creates publishers and subscribers. Free it with zipc_topic_detach. */
typedef struct zipc_topic zipc_topic_t;
/** A publisher (opaque), from zipc_topic_publisher. Free it with zipc_publisher_detach. */
typedef struct zipc_publisher zipc_publisher_t;
/** A subscriber (opaque), from zipc_topic_subscribe. Free it with zipc_subscriber_detach. */
typedef struct zipc_subscriber zipc_subscriber_t;

/** A topic's geometry and this handle's settings (C++: zipc::TopicOptions). Fill with zipc_topic_options_init, then
 * change fields. */
typedef struct zipc_topic_options {
  uint32_t struct_size;      /**< set by zipc_topic_options_init */
  uint32_t publishers;       /**< zipc_multiplicity_t (ZIPC_SINGLE) */
  uint64_t capacity_bytes;   /**< ring bytes, rounded up to a power of two >= 4096 (1 MiB) */
  uint32_t max_message_size; /**< payload bytes; the ring holds two records of it (64 KiB) */
  uint32_t max_subscribers;  /**< subscriber slots (256) */
  uint64_t recovery_time_ms; /**< a dead peer is worked around after this (200) */
  bool streaming_stores;     /**< bulk logging: non-temporal copies, batched commits */
  bool accept_existing; /**< open_or_create: attach to an existing topic of other geometry (else OPTIONS_MISMATCH) */
  zipc_wait_options_t wait;       /**< this handle's waiting */
  zipc_segment_options_t segment; /**< segment.path: a file-backed, persistent topic */
  /** zipc_topic_open: map the topic read-only (read permission is enough).
   * Subscribers work on it (a reliable one keeps its position in a seat
   * file of its own and reads copies: acquire says ZIPC_NOT_SUPPORTED);
   * publishers, durable subscribers, close and waitsets say ZIPC_WRONG_ROLE
   * (docs/guide/containers-and-permissions.md, docs/design/topic.md). */
  bool read_only;
  /** The message type (NULL: none), as zipc_queue_options_t::type. */
  const zipc_type_identity_t* type;
} zipc_topic_options_t;
/** Sets struct_size and the defaults given with each field. ZIPC_INVALID_ARGUMENT for NULL. */
ZIPC_API zipc_status_t zipc_topic_options_init(zipc_topic_options_t* options);

/** Where a new subscriber starts (zipc_subscribe_options_t::from). */
typedef enum zipc_from {
  ZIPC_FROM_LATEST = 0,  /**< the next message published */
  ZIPC_FROM_OLDEST = 1,  /**< the oldest message the log retains */
  ZIPC_FROM_SEQUENCE = 2 /**< zipc_subscribe_options_t::sequence (ZIPC_NOT_RETAINED when gone) */
} zipc_from_t;
/** Whether the publisher waits for a subscriber (C++: zipc::Delivery). */
typedef enum zipc_delivery {
  ZIPC_RELIABLE = 0, /**< the publisher waits for this subscriber */
  ZIPC_LOSSY = 1     /**< the publisher never waits; overruns are counted */
} zipc_delivery_t;

/** How a subscriber starts and is delivered to (C++: zipc::SubscribeOptions). Fill with zipc_subscribe_options_init. */
typedef struct zipc_subscribe_options {
  uint32_t struct_size; /**< set by zipc_subscribe_options_init */
  uint32_t from;        /**< zipc_from_t (ZIPC_FROM_LATEST) */
  uint64_t sequence;    /**< with ZIPC_FROM_SEQUENCE */
  uint32_t delivery;    /**< zipc_delivery_t (ZIPC_RELIABLE) */
  /** Durable subscriber (reliable only; docs/design/topic.md): NULL or "" for none, else
   * 1..47 bytes of [A-Za-z0-9._-]. Its position is held durable_grace_ns after
   * it detaches or dies; a restart within resumes exactly, after it the first
   * read says ZIPC_NOT_RETAINED with info->size = messages lost. */
  const char* durable_name;
  int64_t durable_grace_ns; /**< default 10 s; at most 7 days */
} zipc_subscribe_options_t;
/** Sets struct_size and the defaults given with each field. ZIPC_INVALID_ARGUMENT for NULL. */
ZIPC_API zipc_status_t zipc_subscribe_options_init(zipc_subscribe_options_t* options);

/** A topic's geometry and state, from zipc_topic_info. */
typedef struct zipc_topic_info {
  uint64_t capacity_bytes;   /**< ring bytes */
  uint32_t max_message_size; /**< largest payload, bytes */
  uint32_t max_subscribers;  /**< subscriber slots */
  uint32_t publishers;       /**< zipc_multiplicity_t */
  uint64_t next_sequence;    /**< the next message gets this */
  uint64_t oldest_sequence;  /**< oldest still retained (== next when empty) */
  uint64_t abandoned;        /**< holes recovery made since creation */
} zipc_topic_info_t;

/** A message read by copy. */
typedef struct zipc_message_info {
  uint64_t sequence;   /**< the message's sequence number */
  uint64_t publish_ns; /**< CLOCK_REALTIME at commit */
  size_t size;         /**< payload bytes (with ZIPC_TOO_LARGE: the size needed) */
} zipc_message_info_t;

/** One subscriber's counters, from zipc_subscriber_stats. */
typedef struct zipc_subscriber_stats {
  uint64_t lost;          /**< messages a lossy subscriber missed */
  uint64_t abandoned;     /**< holes skipped (publishers that died mid-write) */
  uint64_t next_sequence; /**< sequence of the next message delivered */
  uint32_t delivery;      /**< zipc_delivery_t */
} zipc_subscriber_stats_t;

/** Creates a topic; options may be NULL (defaults). ZIPC_ALREADY_EXISTS when the name is taken, ZIPC_INVALID_ARGUMENT
 * for options out of range. */
ZIPC_API zipc_status_t zipc_topic_create(const char* name, const zipc_topic_options_t* options, zipc_topic_t** out);
/** Opens an existing topic (its geometry comes from the segment); options (may be NULL) supplies wait, segment,
 * read_only and type. */
ZIPC_API zipc_status_t zipc_topic_open(const char* name, const zipc_topic_options_t* options, zipc_topic_t** out);
/** Opens, or creates when absent (race-free). *created (may be NULL) tells which. */
ZIPC_API zipc_status_t zipc_topic_open_or_create(const char* name, const zipc_topic_options_t* options,
                                                 zipc_topic_t** out, bool* created);
/** Removes the name (ZIPC_NOT_FOUND if absent); mappings stay valid. segment may be NULL. */
ZIPC_API zipc_status_t zipc_topic_remove(const char* name, const zipc_segment_options_t* segment);
/** Publishers and subscribers may outlive their topic handle. */
ZIPC_API zipc_status_t zipc_topic_detach(zipc_topic_t* topic);
/** Fills *out with the topic's geometry and sequence numbers. */
ZIPC_API zipc_status_t zipc_topic_info(const zipc_topic_t* topic, zipc_topic_info_t* out);
/** Flushes a file-backed topic to disk. */
ZIPC_API zipc_status_t zipc_topic_sync(const zipc_topic_t* topic);
/** Closes the topic for everyone: publishes get closed, subscribers drain then get closed. */
ZIPC_API zipc_status_t zipc_topic_close(zipc_topic_t* topic);
/** *closed = zipc_topic_close was called (by any process). */
ZIPC_API zipc_status_t zipc_topic_closed(const zipc_topic_t* topic, bool* closed);
/** The message type recorded at create: ZIPC_OK and *out, or ZIPC_NOT_FOUND. */
ZIPC_API zipc_status_t zipc_topic_type_identity(const zipc_topic_t* topic, zipc_type_identity_t* out);

/** Attaches a publisher. Single mode: ZIPC_BUSY while another live one is attached. */
ZIPC_API zipc_status_t zipc_topic_publisher(zipc_topic_t* topic, zipc_publisher_t** out);
/** options may be NULL. busy (no slot), not_retained (the sequence is gone; the message says the oldest). */
ZIPC_API zipc_status_t zipc_topic_subscribe(zipc_topic_t* topic, const zipc_subscribe_options_t* options,
                                            zipc_subscriber_t** out);

/** Copies a message in; *sequence (may be NULL) gets its number. full
 * (timeout 0; a reliable subscriber has not read the room), timeout, too_large. */
ZIPC_API zipc_status_t zipc_publisher_publish(zipc_publisher_t* publisher, const void* data, size_t size,
                                              int64_t timeout_ns, uint64_t* sequence);
/** Zero copy: a record of size bytes in the log (one loan at a time). */
ZIPC_API zipc_status_t zipc_publisher_reserve(zipc_publisher_t* publisher, size_t size, int64_t timeout_ns,
                                              zipc_write_loan_t* loan);
/** Streaming mode: makes every commit visible now. */
ZIPC_API zipc_status_t zipc_publisher_flush(zipc_publisher_t* publisher);
/** Lets go of the publisher and frees it (with a loan out: when the loan ends). */
ZIPC_API zipc_status_t zipc_publisher_detach(zipc_publisher_t* publisher);

/** Copies the next message out. too_large (nothing consumed; info->size is
 * what is needed), overrun (lossy: lapped, lost grew; read again), empty,
 * timeout, corrupt. info may be NULL. */
ZIPC_API zipc_status_t zipc_subscriber_read(zipc_subscriber_t* subscriber, void* buffer, size_t capacity,
                                            int64_t timeout_ns, zipc_message_info_t* info);
/** Zero copy, reliable subscribers only (lossy: ZIPC_NOT_SUPPORTED). One loan
 * at a time: read or acquire while it is live is ZIPC_INVALID_ARGUMENT. */
ZIPC_API zipc_status_t zipc_subscriber_acquire(zipc_subscriber_t* subscriber, int64_t timeout_ns,
                                               zipc_read_loan_t* loan);
/** Fills *out with this subscriber's counters. */
ZIPC_API zipc_status_t zipc_subscriber_stats(const zipc_subscriber_t* subscriber, zipc_subscriber_stats_t* out);
/** Lets go of the subscriber's slot and frees it (with a loan out: when the loan ends). */
ZIPC_API zipc_status_t zipc_subscriber_detach(zipc_subscriber_t* subscriber);

/* ---- Rpc: request/response ------------------------------------------------ */

/** An rpc server handle (opaque): the service. Free it with zipc_rpc_server_detach. */
typedef struct zipc_rpc_server zipc_rpc_server_t;
/** An rpc client handle (opaque): one connection. Free it with zipc_rpc_client_detach. */
typedef struct zipc_rpc_client zipc_rpc_client_t;

/** A service's limits and the server's settings (C++: zipc::RpcOptions). Fill with zipc_rpc_options_init, then change
 * fields. */
typedef struct zipc_rpc_options {
  uint32_t struct_size;           /**< set by zipc_rpc_options_init */
  uint32_t max_clients;           /**< connections at once (16) */
  uint32_t inflight_per_client;   /**< pipelined calls per client (8) */
  uint32_t large_blocks;          /**< shared blocks for payloads over inline_size (0: automatic) */
  uint64_t max_request_size;      /**< (64 KiB) */
  uint64_t max_response_size;     /**< (64 KiB) */
  uint64_t inline_size;           /**< payloads up to this travel inside the slot (4096) */
  uint64_t recovery_time_ms;      /**< the server looks for dead clients this often (200) */
  bool replace_stale;             /**< create replaces a segment whose server died (true) */
  zipc_wait_options_t wait;       /**< server threads, and clients by default */
  zipc_segment_options_t segment; /**< mode, prefault, huge pages (path must stay NULL) */
} zipc_rpc_options_t;
/** Sets struct_size and the defaults given with each field. ZIPC_INVALID_ARGUMENT for NULL. */
ZIPC_API zipc_status_t zipc_rpc_options_init(zipc_rpc_options_t* options);

/** One request being served (caller-owned). Answer once (zipc_rpc_request_reply,
 * zipc_rpc_request_reserve_reply + zipc_write_loan_commit, or
 * zipc_rpc_request_fail), then end it with zipc_rpc_request_release;
 * released without an answer, the client gets an empty response. data stays valid until the reply is committed. A reply
 * loan points into its request: do not move the request while it is live. */
typedef struct zipc_rpc_request {
  const void* data;      /**< the request bytes in shared memory: validate what you parse */
  size_t size;           /**< request bytes at data */
  uint32_t client;       /**< which connection sent it */
  uint32_t reserved_;    /**< zero */
  uint64_t private_[14]; /**< private state of the library: do not touch */
} zipc_rpc_request_t;

/** A call in flight (caller-owned): wait for it once, or cancel it. */
typedef struct zipc_rpc_ticket {
  uint64_t private_[10]; /**< private state of the library: do not touch */
} zipc_rpc_ticket_t;

/** already_exists when a live server has the name. */
ZIPC_API zipc_status_t zipc_rpc_server_create(const char* name, const zipc_rpc_options_t* options,
                                              zipc_rpc_server_t** out);
/** Closes the service (pending and later calls see closed), removes its name, frees the handle. */
ZIPC_API zipc_status_t zipc_rpc_server_detach(zipc_rpc_server_t* server);
/** Pull loop: the next request (timeout, closed after stop/close). */
ZIPC_API zipc_status_t zipc_rpc_server_next(zipc_rpc_server_t* server, int64_t timeout_ns, zipc_rpc_request_t* request);
/** A request handler for zipc_rpc_server_serve: context as given, and the
 * request, which the library releases when the handler returns. */
typedef void (*zipc_rpc_handler_fn)(void* context, zipc_rpc_request_t* request);
/** Callback form: runs handler on `threads` threads (1 .. ZIPC_RPC_MAX_SERVE_THREADS,
 * else invalid_argument) until zipc_rpc_server_stop.
 * The handler replies (or not: empty response); the library releases the
 * request when the handler returns (do not keep the pointer). */
ZIPC_API zipc_status_t zipc_rpc_server_serve(zipc_rpc_server_t* server, zipc_rpc_handler_fn handler, void* context,
                                             unsigned threads);
/** Makes serve return and next report closed. Thread- and signal-safe. */
ZIPC_API zipc_status_t zipc_rpc_server_stop(zipc_rpc_server_t* server);
/** Marks the service closed and removes its name now. */
ZIPC_API zipc_status_t zipc_rpc_server_close(zipc_rpc_server_t* server);
/** *out = clients connected now. */
ZIPC_API zipc_status_t zipc_rpc_server_connected_clients(const zipc_rpc_server_t* server, size_t* out);

/** Copies the response in and publishes it: too_large over max_response_size
 * (the client sees too_large), full when no block is free. */
ZIPC_API zipc_status_t zipc_rpc_request_reply(zipc_rpc_request_t* request, const void* data, size_t size);
/** Zero copy: memory for an n-byte response; zipc_write_loan_commit sends it. */
ZIPC_API zipc_status_t zipc_rpc_request_reserve_reply(zipc_rpc_request_t* request, size_t n, zipc_write_loan_t* loan);
/** Ends the request (answered or not: unanswered, the client gets an empty response) and clears it.
 * ZIPC_INVALID_ARGUMENT when it is not live. */
ZIPC_API zipc_status_t zipc_rpc_request_release(zipc_rpc_request_t* request);
/** Ends the call with an error instead of a reply (an open reply loan is
 * dropped): the caller's call or ticket wait returns ZIPC_REMOTE_ERROR with
 * code and message (NULL: ""), cut to what fits (max_response_size bytes).
 * ZIPC_CLOSED when the request was already answered. Release it after. */
ZIPC_API zipc_status_t zipc_rpc_request_fail(zipc_rpc_request_t* request, uint32_t code, const char* message);
/** The most threads zipc_rpc_server_serve runs. */
#define ZIPC_RPC_MAX_SERVE_THREADS 256u
#define ZIPC_RPC_HANDLER_FAILED 1u /**< the code zipc's own servers send for a handler that threw or raised */
#define ZIPC_RPC_BAD_REPLY 2u      /**< ... and for a handler result that is no reply (Python: not bytes-like) */

/** Waits up to timeout_ns (ZIPC_FOREVER; 0 or negative: try once) for the server and a free client record. */
ZIPC_API zipc_status_t zipc_rpc_client_connect(const char* name, int64_t timeout_ns, zipc_rpc_client_t** out);
/** Every response and ticket of this client must have ended. */
ZIPC_API zipc_status_t zipc_rpc_client_detach(zipc_rpc_client_t* client);
/** Sends the request and waits for the response, read in place through
 * response (release it). timeout, too_large, full, peer_dead, closed, or
 * ZIPC_REMOTE_ERROR: the handler failed (response is not filled;
 * zipc_rpc_last_remote_error has the code and message, zipc_last_error a
 * one-line text). */
ZIPC_API zipc_status_t zipc_rpc_client_call(zipc_rpc_client_t* client, const void* data, size_t size,
                                            int64_t timeout_ns, zipc_read_loan_t* response);
/** Sends without waiting (full when inflight_per_client calls are out). */
ZIPC_API zipc_status_t zipc_rpc_client_call_async(zipc_rpc_client_t* client, const void* data, size_t size,
                                                  zipc_rpc_ticket_t* ticket);
/** Zero copy: memory for an n-byte request (too_large over max_request_size).
 * Optionally zipc_write_loan_commit(loan, m) to send only m bytes, then send
 * it with call_loan or call_async_loan (which end the loan), or abort it. */
ZIPC_API zipc_status_t zipc_rpc_client_reserve(zipc_rpc_client_t* client, size_t n, zipc_write_loan_t* loan);
/** Sends a request loan from zipc_rpc_client_reserve (ending it) and waits for the response, as zipc_rpc_client_call
 * does. */
ZIPC_API zipc_status_t zipc_rpc_client_call_loan(zipc_rpc_client_t* client, zipc_write_loan_t* loan, int64_t timeout_ns,
                                                 zipc_read_loan_t* response);
/** Sends a request loan from zipc_rpc_client_reserve (ending it) without waiting, as zipc_rpc_client_call_async does.
 */
ZIPC_API zipc_status_t zipc_rpc_client_call_async_loan(zipc_rpc_client_t* client, zipc_write_loan_t* loan,
                                                       zipc_rpc_ticket_t* ticket);
/** Waits for this call's response; on timeout the ticket stays live (wait again).
 * ZIPC_REMOTE_ERROR as for zipc_rpc_client_call (the ticket ended). */
ZIPC_API zipc_status_t zipc_rpc_ticket_wait(zipc_rpc_ticket_t* ticket, int64_t timeout_ns, zipc_read_loan_t* response);
/** *ready = the response has arrived (wait will not block). */
ZIPC_API zipc_status_t zipc_rpc_ticket_ready(const zipc_rpc_ticket_t* ticket, bool* ready);
/** Abandons the call (its response is dropped when it comes). */
ZIPC_API zipc_status_t zipc_rpc_ticket_cancel(zipc_rpc_ticket_t* ticket);

/** The last ZIPC_REMOTE_ERROR this thread got from a call or ticket wait:
 * the handler's code, its error type name ("" when none) and message, each
 * NUL-terminated (a NUL inside the text ends it early), valid until this
 * thread's next rpc call. ZIPC_NOT_FOUND when this thread got none. */
typedef struct zipc_rpc_error {
  uint32_t code;    /**< the code the handler failed with (ZIPC_RPC_HANDLER_FAILED, ZIPC_RPC_BAD_REPLY, or its own) */
  const char* type; /**< the handler's error type name ("" when none) */
  const char* message; /**< the handler's message */
} zipc_rpc_error_t;
/** Fills *out with this thread's last remote error; ZIPC_NOT_FOUND when it got none. */
ZIPC_API zipc_status_t zipc_rpc_last_remote_error(zipc_rpc_error_t* out);

/** A client's view of the service's limits, from zipc_rpc_client_info. */
typedef struct zipc_rpc_client_info {
  uint64_t max_request_size;  /**< largest request, bytes */
  uint64_t max_response_size; /**< largest response, bytes */
  uint32_t inflight_limit;    /**< calls this client may have in flight at once */
  uint64_t reconnects;        /**< transparent reconnects to a restarted server */
} zipc_rpc_client_info_t;
/** Fills *out with the service's limits as this client sees them. */
ZIPC_API zipc_status_t zipc_rpc_client_info(const zipc_rpc_client_t* client, zipc_rpc_client_info_t* out);
/** How this client's calls wait (default: the server's strategy). */
ZIPC_API zipc_status_t zipc_rpc_client_set_wait(zipc_rpc_client_t* client, const zipc_wait_options_t* wait);

/* ---- Heap: an allocator in shared memory ---------------------------------- */

/** A heap handle (opaque): an allocator in shared memory. Free it with zipc_heap_detach. */
typedef struct zipc_heap zipc_heap_t;

/** Where each process maps a heap (C++: zipc::AddressMode). */
typedef enum zipc_address_mode {
  ZIPC_ADDRESS_ANY = 0,  /**< each process maps it anywhere: use offsets */
  ZIPC_ADDRESS_FIXED = 1 /**< the same address in every process: pointers work */
} zipc_address_mode_t;

/** How a heap is mapped (C++: zipc::HeapOptions). Fill with zipc_heap_options_init, then change fields. */
typedef struct zipc_heap_options {
  uint32_t struct_size;           /**< set by zipc_heap_options_init */
  uint32_t address_mode;          /**< zipc_address_mode_t (ZIPC_ADDRESS_ANY) */
  void* address;                  /**< fixed mode, create: map here (NULL: zipc picks) */
  zipc_segment_options_t segment; /**< permissions, file path, huge pages, open timeout */
} zipc_heap_options_t;
/** Sets struct_size and the defaults given with each field. ZIPC_INVALID_ARGUMENT for NULL. */
ZIPC_API zipc_status_t zipc_heap_options_init(zipc_heap_options_t* options);

/** A heap's counters, from zipc_heap_stats. */
typedef struct zipc_heap_stats {
  uint64_t size;               /**< arena bytes */
  uint64_t free_bytes;         /**< bytes in free blocks */
  uint64_t largest_free_block; /**< largest allocation that would succeed now */
  uint64_t allocated_blocks;   /**< live allocations (named blocks included) */
  uint64_t repairs;            /**< recoveries after a process died in the allocator */
  bool corrupt;                /**< the allocator's shared state failed validation */
} zipc_heap_stats_t;

/** size: arena bytes (rounded up to the page size; at least 4096). */
ZIPC_API zipc_status_t zipc_heap_create(const char* name, uint64_t size, const zipc_heap_options_t* options,
                                        zipc_heap_t** out);
/** Opens an existing heap (its size comes from the segment); options may be NULL. */
ZIPC_API zipc_status_t zipc_heap_open(const char* name, const zipc_heap_options_t* options, zipc_heap_t** out);
/** Opens, or creates with size bytes when absent (race-free). *created (may be NULL) tells which. */
ZIPC_API zipc_status_t zipc_heap_open_or_create(const char* name, uint64_t size, const zipc_heap_options_t* options,
                                                zipc_heap_t** out, bool* created);
/** Removes the name (ZIPC_NOT_FOUND if absent); mappings stay valid. segment may be NULL. */
ZIPC_API zipc_status_t zipc_heap_remove(const char* name, const zipc_segment_options_t* segment);
/** Unmaps the heap in this process and frees the handle (the heap and its blocks stay for the others). */
ZIPC_API zipc_status_t zipc_heap_detach(zipc_heap_t* heap);

/** align: a power of two up to 4096 (0: 16). out_of_memory, invalid_argument, corrupt. */
ZIPC_API zipc_status_t zipc_heap_allocate(zipc_heap_t* heap, size_t size, size_t align, void** out);
/** NULL is ok. double_free, foreign_pointer, corrupt_block, corrupt. */
ZIPC_API zipc_status_t zipc_heap_free(zipc_heap_t* heap, void* p);
/** The offset of p from the arena start (the same in every process); invalid_argument outside. */
ZIPC_API zipc_status_t zipc_heap_offset_of(const zipc_heap_t* heap, const void* p, uint64_t* offset);
/** The address of [offset, offset + size) in this process, bounds-checked
 * (invalid_argument when outside the arena): safe with offsets from any peer. */
ZIPC_API zipc_status_t zipc_heap_at(const zipc_heap_t* heap, uint64_t offset, size_t size, void** out);
/** The arena in this process. */
ZIPC_API zipc_status_t zipc_heap_arena(const zipc_heap_t* heap, void** base, uint64_t* size);
/** Fills *out with the heap's counters. */
ZIPC_API zipc_status_t zipc_heap_stats(const zipc_heap_t* heap, zipc_heap_stats_t* out);
/** Walks every block: ZIPC_OK, or ZIPC_CORRUPT with the problem in zipc_last_error(). */
ZIPC_API zipc_status_t zipc_heap_check(const zipc_heap_t* heap);

/** Named blocks: zeroed memory found by name from every process.
 * create: already_exists, out_of_memory; find: not_found; any: wrong_kind
 * when the name holds a C++ object of another type. *size (may be NULL) gets
 * the block's size. */
ZIPC_API zipc_status_t zipc_heap_named_create(zipc_heap_t* heap, const char* name, size_t size, size_t align,
                                              void** out);
/** Finds the named block, or creates it (size bytes, zeroed) when absent; *created (may be NULL) tells which. */
ZIPC_API zipc_status_t zipc_heap_named_find_or_create(zipc_heap_t* heap, const char* name, size_t size, size_t align,
                                                      void** out, bool* created);
/** Finds the named block: *out its address, *size (may be NULL) its size. ZIPC_NOT_FOUND when absent. */
ZIPC_API zipc_status_t zipc_heap_named_find(zipc_heap_t* heap, const char* name, void** out, size_t* size);
/** Frees the block; ZIPC_NOT_FOUND when absent. */
ZIPC_API zipc_status_t zipc_heap_named_destroy(zipc_heap_t* heap, const char* name);

/* ---- Segments -------------------------------------------------------------- */

/** What a segment holds (zipc_segment_info_t::kind). */
typedef enum zipc_segment_kind {
  ZIPC_KIND_ANY = 0,   /**< not a kind a segment has (C++ open() uses it to accept every kind) */
  ZIPC_KIND_QUEUE = 1, /**< a queue */
  ZIPC_KIND_TOPIC = 2, /**< a topic */
  ZIPC_KIND_RPC = 3,   /**< an rpc service */
  ZIPC_KIND_HEAP = 4,  /**< a heap */
  ZIPC_KIND_BENCH = 5, /**< a benchmark's segment */
  ZIPC_KIND_EVENT = 6, /**< an event channel */
  ZIPC_KIND_USER = 100 /**< a user segment (C++: zipc::Segment) */
} zipc_segment_kind_t;

/** One segment found by zipc_segment_list (strings valid during the callback). */
typedef struct zipc_segment_info {
  const char* name;     /**< the segment's name */
  const char* path;     /**< its file */
  uint32_t kind;        /**< zipc_segment_kind_t */
  uint32_t creator_pid; /**< the process that created it */
  uint64_t size;        /**< file size, bytes */
  uint64_t created_ns;  /**< CLOCK_REALTIME */
  bool creator_alive;   /**< the creator process still runs */
  bool valid;           /**< header validated */
  const char* problem;  /**< why not valid ("" when valid) */
} zipc_segment_info_t;

/** Called once per segment by zipc_segment_list: context as given, and the
 * segment (its strings valid during the call only). */
typedef void (*zipc_segment_fn)(void* context, const zipc_segment_info_t* info);
/** Calls fn for every zipc segment in /dev/shm; *count (may be NULL) = how many. */
ZIPC_API zipc_status_t zipc_segment_list(zipc_segment_fn fn, void* context, size_t* count);
/** Removes any segment by name (ZIPC_NOT_FOUND if absent). segment may be NULL. */
ZIPC_API zipc_status_t zipc_segment_remove(const char* name, const zipc_segment_options_t* segment);

/* ---- Event channels: notifications by id, no payload --------------------- */

/** Notifiers signal ids 0..max_event_id; every listener attached at the time
 * learns each id once per take (notifications of one id coalesce). No locks:
 * a killed notifier or listener blocks nobody (docs/design/waitset.md). */
typedef struct zipc_event_channel zipc_event_channel_t;
/** A listener (opaque), from zipc_event_channel_listener. Free it with zipc_listener_detach. */
typedef struct zipc_listener zipc_listener_t;
/** A notifier (opaque), from zipc_event_channel_notifier. Free it with zipc_notifier_detach. */
typedef struct zipc_notifier zipc_notifier_t;

/** An event channel's geometry and this handle's settings (C++: zipc::EventChannelOptions). Fill with
 * zipc_event_channel_options_init. */
typedef struct zipc_event_channel_options {
  uint32_t struct_size;           /**< set by zipc_event_channel_options_init */
  uint32_t max_event_id;          /**< ids 0..max_event_id, at most 65535 (255) */
  uint32_t max_listeners;         /**< listener slots, 1..1024 (16) */
  bool accept_existing;           /**< open_or_create: attach to another geometry (else OPTIONS_MISMATCH) */
  zipc_wait_options_t wait;       /**< this handle's waiting */
  zipc_segment_options_t segment; /**< permissions, file path, huge pages, open timeout */
} zipc_event_channel_options_t;
/** Sets struct_size and the defaults given with each field. ZIPC_INVALID_ARGUMENT for NULL. */
ZIPC_API zipc_status_t zipc_event_channel_options_init(zipc_event_channel_options_t* options);

/** Creates an event channel; options may be NULL. ZIPC_ALREADY_EXISTS when the name is taken. */
ZIPC_API zipc_status_t zipc_event_channel_create(const char* name, const zipc_event_channel_options_t* options,
                                                 zipc_event_channel_t** out);
/** Opens an existing event channel (its geometry comes from the segment); options may be NULL. */
ZIPC_API zipc_status_t zipc_event_channel_open(const char* name, const zipc_event_channel_options_t* options,
                                               zipc_event_channel_t** out);
/** Opens, or creates when absent (race-free). *created (may be NULL) tells which. */
ZIPC_API zipc_status_t zipc_event_channel_open_or_create(const char* name, const zipc_event_channel_options_t* options,
                                                         zipc_event_channel_t** out, bool* created);
/** Removes the name (ZIPC_NOT_FOUND if absent); mappings stay valid. segment may be NULL. */
ZIPC_API zipc_status_t zipc_event_channel_remove(const char* name, const zipc_segment_options_t* segment);
/** Frees the handle (its listeners and notifiers stay usable until detached). */
ZIPC_API zipc_status_t zipc_event_channel_detach(zipc_event_channel_t* channel);
/** A listener slot; ZIPC_BUSY when every slot holds a live listener. */
ZIPC_API zipc_status_t zipc_event_channel_listener(zipc_event_channel_t* channel, zipc_listener_t** out);
/** A notifier of this channel (any number may exist). */
ZIPC_API zipc_status_t zipc_event_channel_notifier(zipc_event_channel_t* channel, zipc_notifier_t** out);
/** Marks id pending for every attached listener and wakes them; *reach (may be
 * NULL) says how many. ZIPC_TOO_LARGE when id > max_event_id (nothing sent). */
ZIPC_API zipc_status_t zipc_notifier_notify(zipc_notifier_t* notifier, uint32_t id, uint32_t* reach);
/** Frees the notifier. */
ZIPC_API zipc_status_t zipc_notifier_detach(zipc_notifier_t* notifier);
/** Waits up to timeout_ns (0 or negative: poll; ZIPC_FOREVER) and fills ids[0 .. *count)
 * with the ids notified since the last take, ascending. ZIPC_OK when some were,
 * ZIPC_EMPTY (timeout 0) or ZIPC_TIMEOUT when none. More than capacity: the
 * rest come first from the next call, without waiting. */
ZIPC_API zipc_status_t zipc_listener_wait(zipc_listener_t* listener, int64_t timeout_ns, uint32_t* ids, size_t capacity,
                                          size_t* count);
/** Frees the listener and its slot. */
ZIPC_API zipc_status_t zipc_listener_detach(zipc_listener_t* listener);

/* ---- WaitSet ----------------------------------------------------------- */

/** Waits on many queue consumers, subscribers, fds and intervals at once
 * (docs/design/waitset.md). Channels are level-triggered: reported by every wait
 * while they hold something; intervals once per expiry. An attached handle
 * must stay alive (detach it from the WaitSet before zipc_*_detach). One
 * thread at a time per WaitSet, except zipc_waitset_stop. */
typedef struct zipc_waitset zipc_waitset_t;

/** What a zipc_ready_t reports (zipc_ready_t::kind). */
typedef enum zipc_ready_kind {
  ZIPC_READY_QUEUE = 0,      /**< a consumer's queue has a message (or is closed) */
  ZIPC_READY_SUBSCRIBER = 1, /**< a subscriber has a message (or the topic is closed) */
  ZIPC_READY_FD = 2,         /**< an fd is ready (zipc_ready_t::revents) */
  ZIPC_READY_DEADLINE = 3,   /**< a deadline passed (only the C++ WaitSet attaches deadlines) */
  ZIPC_READY_INTERVAL = 4,   /**< an interval elapsed (zipc_ready_t::expirations) */
  ZIPC_READY_QUEUE_ROOM = 5, /**< a producer's queue has room (or is closed) */
  ZIPC_READY_RPC_SERVER = 6, /**< a request waits for zipc_rpc_server_next(.., 0, ..), or the server stopped */
  ZIPC_READY_RPC_CLIENT = 7, /**< a call in flight has its response, or the server closed or died */
  ZIPC_READY_LISTENER = 8    /**< an event channel listener has ids pending */
} zipc_ready_kind_t;

/** One ready attachment, from zipc_waitset_wait. */
typedef struct zipc_ready {
  uint64_t id;          /**< what zipc_waitset_attach_* gave */
  uint32_t kind;        /**< zipc_ready_kind_t */
  uint32_t revents;     /**< fd: poll(2) revents */
  uint64_t expirations; /**< interval: periods elapsed since the last report */
} zipc_ready_t;

/** A new, empty WaitSet. Free it with zipc_waitset_destroy. */
ZIPC_API zipc_status_t zipc_waitset_create(zipc_waitset_t** out);
/** Frees it (NULL is ignored); the attached handles stay as they are. */
ZIPC_API void zipc_waitset_destroy(zipc_waitset_t* waitset);
/** Each gives the attachment's id (never 0) in *id. ZIPC_INVALID_ARGUMENT for
 * a queue without the consumer role or a detached subscriber. */
ZIPC_API zipc_status_t zipc_waitset_attach_queue(zipc_waitset_t* waitset, zipc_queue_t* queue, uint64_t* id);
/** A producer waiting for room (ZIPC_READY_QUEUE_ROOM). */
ZIPC_API zipc_status_t zipc_waitset_attach_queue_room(zipc_waitset_t* waitset, zipc_queue_t* queue, uint64_t* id);
/** A subscriber (ZIPC_READY_SUBSCRIBER). */
ZIPC_API zipc_status_t zipc_waitset_attach_subscriber(zipc_waitset_t* waitset, zipc_subscriber_t* subscriber,
                                                      uint64_t* id);
/** An Rpc server pulled with zipc_rpc_server_next (not served by threads):
 * ZIPC_READY_RPC_SERVER. */
ZIPC_API zipc_status_t zipc_waitset_attach_rpc_server(zipc_waitset_t* waitset, zipc_rpc_server_t* server, uint64_t* id);
/** An Rpc client with calls in flight (ZIPC_READY_RPC_CLIENT); attach it
 * again after it reconnected to a new server. */
ZIPC_API zipc_status_t zipc_waitset_attach_rpc_client(zipc_waitset_t* waitset, zipc_rpc_client_t* client, uint64_t* id);
/** An event channel's listener (ZIPC_READY_LISTENER); take its ids with zipc_listener_wait(.., 0, ..). */
ZIPC_API zipc_status_t zipc_waitset_attach_listener(zipc_waitset_t* waitset, zipc_listener_t* listener, uint64_t* id);
/** An fd, watched for events (poll(2) bits, e.g. POLLIN); reported as ZIPC_READY_FD with revents. */
ZIPC_API zipc_status_t zipc_waitset_attach_fd(zipc_waitset_t* waitset, int fd, uint32_t events, uint64_t* id);
/** An interval of period_ns (positive), reported once per expiry as ZIPC_READY_INTERVAL. */
ZIPC_API zipc_status_t zipc_waitset_attach_interval(zipc_waitset_t* waitset, int64_t period_ns, uint64_t* id);
/** ZIPC_NOT_FOUND for an unknown id. */
ZIPC_API zipc_status_t zipc_waitset_detach(zipc_waitset_t* waitset, uint64_t id);
/** Waits up to timeout_ns (ZIPC_FOREVER; 0 or negative: poll) and fills
 * ready[0 .. *count). ZIPC_OK when something is ready; else ZIPC_EMPTY after
 * a poll, ZIPC_TIMEOUT after a wait (also after zipc_waitset_stop). More than capacity ready: the rest come
 * first from the next call, without waiting. */
ZIPC_API zipc_status_t zipc_waitset_wait(zipc_waitset_t* waitset, int64_t timeout_ns, zipc_ready_t* ready,
                                         size_t capacity, size_t* count);
/** Makes a wait in progress (in another thread) return. */
ZIPC_API zipc_status_t zipc_waitset_stop(zipc_waitset_t* waitset);
/** Readable while zipc_waitset_wait(.., 0, ..) would report something, and
 * every 20 ms while channels are attached (the maintenance that notices dead
 * peers; that wait may then report nothing): for epoll/poll/select. Without
 * io_uring futex waits (kernel < 6.7) also readable every fallback nap (1 ms),
 * when that wait polls every channel. -1 for NULL. */
ZIPC_API int zipc_waitset_readiness_fd(const zipc_waitset_t* waitset);

/* NOLINTEND(readability-identifier-naming) */

#ifdef __cplusplus
}
#endif

#endif /* ZIPC_ZIPC_H */
