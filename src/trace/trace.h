/*
 * trace.h - internal interface of the trace backend: per-thread buffers
 * (buffer.c), the trace file and its writer thread (file.c), the file's
 * bytes and write errors (sink.c), the event table (events.c) and lock
 * events (lock_events.c).  Private to
 * src/trace, and to the record and runtime layers that emit events and
 * open files; readers use format.h and src/read/trace_reader.h.
 *
 * Design in one paragraph (each file has the details): every thread that
 * emits owns one single-producer/single-consumer byte ring.  The owner
 * appends records in their file layout and publishes its head with a
 * release store; the writer thread, holding io_lock, writes [tail, head) of
 * every ring to the file straight from the ring and then publishes the
 * tail.  Nothing shared is written per event; the writer polls every 1 ms
 * while there is traffic (100 ms when idle) and is kicked when a ring is
 * 3/4 full.  A full ring drops the new event and counts it in the owner's
 * private drop state, which the owner itself turns into a DROPPED record,
 * in order, as soon as there is room again (or at flush/exit).
 *
 * Lock order: sp_trace_ctl_lock (events.c: open/close/register/
 * enable) before io_lock (file.c: the file, draining, retiring a
 * ring) before list_lock (the list of rings).  The hot path takes none.
 */
#ifndef SP_TRACE_H
#define SP_TRACE_H

#include "base/base.h"
#include "base/clock.h"
#include "base/flags.h"
#include "base/types.h"
#include "format.h"

#define SP_TRACE_EVENTS SYNCPROF_TRACE_MAX_EVENTS
#define SP_TRACE_BUF_DEFAULT (1u << 20)
#define SP_TRACE_BUF_MIN 256u
#define SP_TRACE_BUF_MAX (1u << 30)

/*
 * One thread's ring.  The first cache line is the producer's (the owning
 * thread), with every field an event touches: only it writes them, so they
 * need no atomics except head (read by the writer) and drop_count (read at
 * process exit).  The second holds the producer's drop span, written only
 * while events are being dropped.  The third is the consumer's: tail is
 * written by whoever holds io_lock.  (The first version put the drop span
 * in the first line too, which then ran to byte 80: its claim of one
 * producer line was false.  The asserts below keep it true.)
 */
struct sp_trace_buf {
	/* producer, every event */
	uint64_t head;       /* bytes ever committed; store_release by owner */
	uint64_t tail_cache; /* owner's last view of tail */
	uint64_t wake_at;    /* head at which the owner checks the fill level */
	uint64_t last_ts;    /* clamps timestamps so they never go backwards */
	uint8_t *ring;
	uint64_t mask;       /* ring size - 1; the size is a power of two */
	uint64_t drop_count; /* events dropped since the last DROPPED record */
	uint32_t tid;
	uint32_t pad_;
	/* producer, while dropping: the first and last dropped timestamps */
	uint64_t drop_first __attribute__((aligned(64)));
	uint64_t drop_last;
	/* consumer side */
	uint64_t tail __attribute__((aligned(64))); /* store_release under io_lock */
	uint32_t file_gen;   /* file whose THREAD record names this ring */
	char name[16];
	size_t map_size;     /* this struct and the ring, one mapping */
	struct sp_trace_buf *next, *prev; /* list_lock */
};

_Static_assert(offsetof(struct sp_trace_buf, pad_) + sizeof(uint32_t) <= 64,
	       "the producer's per-event fields fit its first cache line");
_Static_assert(offsetof(struct sp_trace_buf, drop_first) == 64,
	       "the drop span starts the second line");
_Static_assert(offsetof(struct sp_trace_buf, tail) == 128,
	       "the consumer's tail has a cache line of its own");

/* ---- "buffer.c" ------------------------------------------------------- */

extern int sp_trace_use_tsc;     /* set before any event flag goes on */
extern size_t sp_trace_buf_size; /* ring size of threads created from now */

uint64_t sp_trace_now(void);
/* Events that could not even be counted in a ring (no memory for one,
 * emitted during thread teardown). */
uint64_t sp_trace_lost_get(void);
/* The calling thread's ring, NULL when it has none. */
struct sp_trace_buf *sp_trace_buf_self(void);
/* After fork, in the child: forget the TLS of rings that are not ours. */
void sp_trace_buf_fork_child(struct sp_trace_buf *self);

/* ---- "sink.c" --------------------------------------------------------- */

/*
 * The trace file's output: whole records only, and what a failed write
 * leaves (the design is in sink.c).  One instance, file.c's; every call
 * but sp_sink_prepare() with io_lock held.
 */
struct sp_trace_sink {
	int fd;            /* -1: no file */
	int error;         /* 0, or the negative errno of the write that failed the
			    * file: nothing more is written to it */
	uint64_t written;  /* bytes in the file */
	uint64_t complete; /* where the last whole record in the file ends */
	uint8_t *out;      /* output buffer (1 MiB): whole records, not yet written */
	size_t out_len;
	/* what the failure kept out of the file: events (EVENT records and
	 * DROPPED counts) and their first and last timestamps */
	uint64_t lost, lost_first, lost_last;
};

/* EVENT records lost to write errors, all files so far (for
 * syncprof_trace_dropped(); written under io_lock, read relaxed). */
extern uint64_t sp_trace_write_lost_events;

/* Write the file header at the start of @fd: 0, or the negative errno
 * (then the file is cut back to nothing, where it can be). */
int sp_trace_header_write(int fd, const struct sp_trace_file_header *h);
/* Map the output buffer (once): 0 or -ENOMEM.  sp_trace_ctl_lock held. */
int sp_sink_prepare(struct sp_trace_sink *s);
/* @fd, its header written (@header_error 0) or not, is the file from now. */
void sp_sink_start_locked(struct sp_trace_sink *s, int fd, int header_error);
/* Room for one record of @size bytes in the output buffer (written at the
 * next flush); NULL only when not prepared.  Fill it at once, completely. */
void *sp_sink_reserve_locked(struct sp_trace_sink *s, size_t size);
void sp_sink_flush_locked(struct sp_trace_sink *s);
/* Flush, then write the whole records [@tail, @head) of a ring. */
void sp_sink_write_ring_locked(struct sp_trace_sink *s, const uint8_t *ring, uint64_t mask,
			       uint64_t tail, uint64_t head);
/* Flush and close; on a failed file first the WRITE_LOSS record, if it
 * fits (*@recorded).  Return: 0, the failure's negative errno, -EIO when
 * close() failed, -EBADF when no file is open. */
int sp_sink_close_locked(struct sp_trace_sink *s, int *recorded);

/* ---- "file.c" --------------------------------------------------------- */

/*
 * What the trace layer tells the runtime of a write error (it prints
 * nothing itself): once when a file fails, and once when the failed file
 * is closed, with the final count.  Called with no trace lock held, by
 * whichever thread met the error or closed the file (the writer thread,
 * an exiting thread, a caller of the API, the process exit).
 */
struct sp_trace_write_error {
	const char *path;  /* the file, %p expanded */
	int error;         /* negative errno of the failed write */
	int closed;        /* 0: it just failed; 1: closed, the count is final */
	uint64_t lost;     /* closed: events that are not in the file */
	int64_t first_ns, last_ns; /* closed, lost > 0: their span, ns since the file's start */
	int recorded;      /* closed: the file ends with a WRITE_LOSS record saying so */
};
/* Install the one handler (the runtime's, at start-up). */
void sp_trace_set_write_error_handler(void (*fn)(const struct sp_trace_write_error *e));

/* fork() and exit, called by the lifecycle (src/runtime/lifecycle.c) in its
 * order: prepare takes the trace's locks, parent releases them, child
 * keeps only the forking thread's ring and opens the child's own file
 * when the name has %p; exit stops the writer, drains every ring and
 * closes the file.  Each is a no-op when no trace was ever opened. */
void sp_trace_fork_prepare(void);
void sp_trace_fork_parent(void);
void sp_trace_fork_child(void);
void sp_trace_exit(void);

/*
 * The rings (buffer.c), newest first: linked by their owners at their
 * first event, unlinked when they exit.  The head is read and the links
 * changed under sp_trace_list_lock; a walk past the head needs the file's
 * io_lock too (file.c), under which a ring is unlinked while a file is
 * open.  At its owner's exit, a ring goes to the hook the file installed
 * (sp_trace_buf_set_exit_hook(), under sp_trace_list_lock: it writes out
 * the ring and its drops, unlinks and unmaps it); with no hook (no file
 * was ever set up), buffer.c unlinks and unmaps it itself.
 */
extern sp_lock_t sp_trace_list_lock;
extern struct sp_trace_buf *sp_trace_bufs;
void sp_trace_buf_set_exit_hook(void (*hook)(struct sp_trace_buf *b));
void sp_trace_buf_unlink_locked(struct sp_trace_buf *b);

/* Wake the writer thread (owner of a ring that crossed its threshold). */
void sp_trace_writer_kick(void);
/*
 * writer.c, under sp_trace_ctl_lock: start the writer (signals blocked in
 * it), stop and join it; a fork child's state, the parent's writer gone.
 * The writer knows the file through @ops (file.c's): one drain of every
 * ring into the file, its write errors told, returning the bytes taken
 * from the rings; and whether a file is open.
 */
struct sp_trace_writer_ops {
	uint64_t (*round)(void);
	int (*file_open)(void);
};
void sp_trace_writer_start_locked(const struct sp_trace_writer_ops *ops);
void sp_trace_writer_stop_locked(void);
void sp_trace_writer_fork_child(void);
/* Set in a fork child: the next kick starts the child's writer. */
extern int sp_trace_writer_wanted;
/* Test hook: sleep this long before each drain pass (a slow writer). */
extern unsigned sp_trace_test_writer_delay_us;

/* events.c knows the file through the hooks file.c installs at its
 * set-up (under sp_trace_ctl_lock, as they are called): is a file open;
 * write the definition of a new event into it.  Without them no file is
 * open. */
struct sp_trace_events_file {
	int (*open_locked)(void);
	void (*def_added_locked)(unsigned id);
};
void sp_trace_events_set_file_locked(const struct sp_trace_events_file *file);
/* ... and the lock-event mode changed (LOCK_MODE record). */
void sp_trace_file_mode_changed_locked(void);

/*
 * Lock names (LOCK_NAME records, format.h).  The names live above the
 * trace (record/lockname.c): the lifecycle installs that table's walker
 * as the source of the names in force, which every new file gets after
 * its definitions (@each calls @emit once per named lock, under io_lock,
 * holding no lock of its own while it does).  Later changes come through
 * sp_trace_lock_named(), from the thread that names the lock, holding no
 * lock: it takes io_lock and writes the record at once (names are rare;
 * their ordering with respect to the lock events is by the tick).
 * sp_trace_names_on: a file is open (relaxed; a caller that loses a race
 * with the file's start is covered by that file's walk, see file.c).
 */
struct sp_trace_lock_name {
	uintptr_t obj;
	const char *name;       /* "": no name any more */
	struct sp_site created; /* all zero: not known */
	int how;                /* enum sp_lock_created */
};
typedef void (*sp_trace_lock_name_fn)(const struct sp_trace_lock_name *n);
void sp_trace_set_lock_names_source(void (*each)(sp_trace_lock_name_fn emit));
extern int sp_trace_names_on;
void sp_trace_lock_named(const struct sp_trace_lock_name *n);

/* ---- "events.c" ------------------------------------------------------- */

struct sp_trace_def;
/* Serialises the control API: open/close/switch, register, switches. */
extern sp_lock_t sp_trace_ctl_lock;
/* Define the lock events (once). */
void sp_trace_events_init_locked(void);
/* Recompute syncprof__trace_on[] and sp_trace_locks_on. */
void sp_trace_flags_update_locked(int file_open);
/* The definition of event @id (pointers valid while it stays defined,
 * which is forever); -ENOENT when undefined. */
int sp_trace_event_def_locked(unsigned id, struct sp_trace_def *out);

/* ---- "lock_events.c" --------------------------------------------------- */

/* Nonzero when some lock event is on: the one flag the probe tests. */
extern int sp_trace_locks_on;
/* The lock-event mode (enum sp_trace_lock_mode), its threshold, and the
 * waiters that found no slot (lock_events.c). */
extern int sp_trace_lock_mode;
extern uint64_t sp_trace_min_wait_ns;
extern uint64_t sp_trace_waiters_full;
/* @type: enum sp_type; for the cond events the mutex's address. */
void sp_trace_lock_event(int ev, const void *obj, uint64_t type, const struct sp_site *site,
			 uint64_t ns, int has_ns);
void sp_trace_cond_wait(const void *cond, const void *mutex, const struct sp_site *site);
void sp_trace_cond_woken(const void *cond, const struct sp_site *site, uint64_t wait_ns);
/* A futex wake that woke (or requeued) @woken waiters of the word @obj. */
void sp_trace_futex_wake(const void *obj, const struct sp_site *site, uint64_t woken);

/*
 * What the probe calls, each only while sp_trace_locks_on: the mode
 * decides what is written (lock_events.c).
 * - an acquisition that did not wait: sp_trace_acquired();
 * - a failed trylock: sp_trace_try_failed();
 * - a blocking wait: sp_trace_wait_begin() before it, returning a waiter
 *   slot that sp_trace_wait_end() takes after it, whatever the result;
 * - before an unlock: sp_trace_release_begin() says whether to emit the
 *   released event, and with which hold.
 */
#define SP_TRACE_NO_SLOT (-2) /* sp_trace_wait_begin() was not called */
void sp_trace_acquired_slow(const void *obj, int type, const struct sp_site *site);
void sp_trace_try_failed(const void *obj, int type, const struct sp_site *site);
int sp_trace_wait_begin(const void *obj, int type, const struct sp_site *site);
void sp_trace_wait_end(int slot, const void *obj, int type, const struct sp_site *site,
		       uint64_t wait_ns, int acquired);
int sp_trace_release_begin(const void *obj, uint64_t *hold_ns, int *has_hold);

static inline void sp_trace_acquired(const void *obj, int type, const struct sp_site *site)
{
	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on)))
		sp_trace_acquired_slow(obj, type, site);
}

#endif /* SP_TRACE_H */
