/*
 * format.h - the syncprof trace file format, version 1: constants and
 * record layouts shared by the writer (file.c, buffer.c) and the reader
 * (src/read/trace_reader.c).  docs/trace-format.md is the prose version;
 * keep the two in step.  Private to src/ and tools/syncprof: the one
 * header of src/trace that the readers and the CLI may include.
 *
 * Design: a fixed 64-byte header, then a stream of records.  Every record
 * starts with the same 8-byte header (type, aux, size) and is a multiple of
 * 8 bytes long, so a reader can skip what it does not understand and can
 * tell a truncated tail (a size that runs past the end of the file) from a
 * corrupt one (a size or type that cannot be).  Event records are written
 * into the per-thread buffers in exactly their file layout, so the writer
 * thread copies bytes and never re-encodes.  Names (events, threads,
 * call-site strings, code addresses) are defined by records that precede
 * their first use in the file, so the file reads in one pass.
 *
 * Byte order is the writer's, which is little-endian on every platform
 * syncprof supports; the reader rejects a file whose magic does not match
 * byte for byte (a big-endian writer would produce a different magic).
 *
 * Alternatives considered: CTF (LTTng's format) describes layouts with a
 * metadata grammar; a reader for it is far larger than this format needs.
 * Varint-packed records save ~40% of space but cost an encode on the hot
 * path or a re-encode in the writer; fixed u64 arguments copy as is.
 */
#ifndef SP_TRACE_FORMAT_H
#define SP_TRACE_FORMAT_H

#include <stdint.h>

#define SP_TRACE_MAGIC "SYNCPTRC" /* 8 bytes, no NUL in the file */
#define SP_TRACE_VERSION 1
#define SP_TRACE_HEADER_SIZE 64
#define SP_TRACE_MAX_RECORD (1u << 20) /* larger sizes mean corruption */
#define SP_TRACE_MAX_ARGS 6
#define SP_TRACE_MAX_ID 65535 /* event ids in a file are below this */

enum sp_trace_clock {
	SP_TRACE_CLOCK_TSC = 1,       /* x86 time-stamp counter (invariant TSC) */
	SP_TRACE_CLOCK_MONOTONIC = 2, /* CLOCK_MONOTONIC nanoseconds */
};

/* The file header. */
struct sp_trace_file_header {
	char magic[8];          /* "SYNCPTRC" */
	uint32_t version;       /* SP_TRACE_VERSION */
	uint32_t header_size;   /* 64: records start here */
	uint32_t pid;           /* the traced process */
	uint32_t clock;         /* enum sp_trace_clock */
	uint64_t ticks_per_sec; /* timestamp units per second (1e9: ns) */
	uint64_t tick0;         /* a timestamp ... */
	uint64_t mono0_ns;      /* ... and CLOCK_MONOTONIC at the same instant */
	uint64_t realtime0_ns;  /* ... and CLOCK_REALTIME (wall offset) */
	uint32_t flags;         /* SP_TRACE_FLAG_*; 0 in a file written without trouble */
	uint32_t write_errno;   /* SP_TRACE_FLAG_WRITE_ERROR: the errno of the failure, else 0 */
};

_Static_assert(sizeof(struct sp_trace_file_header) == SP_TRACE_HEADER_SIZE,
	       "the header is 64 bytes");

/*
 * Set in a file whose writer hit a write error (ENOSPC, EIO, EFBIG, ...):
 * the writer cut the file back to its last whole record and wrote nothing
 * more, so events from the failure on are missing; a WRITE_LOSS record at
 * the end, when there was room for it, counts them.  Set after the fact,
 * by rewriting the header in place (which needs no new space).
 */
#define SP_TRACE_FLAG_WRITE_ERROR 1u

enum sp_trace_rec_type {
	SP_REC_EVENT = 1,     /* aux = nargs */
	SP_REC_DROPPED = 2,
	SP_REC_EVENT_DEF = 3, /* aux = nargs */
	SP_REC_THREAD = 4,
	SP_REC_STRING = 5,
	SP_REC_PCSITE = 6,
	SP_REC_MAPS = 7,
	SP_REC_CLOCK = 8,
	/* types >= 64 are optional: readers that do not know them skip them */
	SP_REC_OPTIONAL_MIN = 64,
	SP_REC_WRITE_LOSS = 64, /* the last record of a file with SP_TRACE_FLAG_WRITE_ERROR */
	SP_REC_LOCK_MODE = 65,  /* which lock events follow (struct sp_trace_rec_lock_mode) */
	SP_REC_LOCK_NAME = 66,  /* a lock's name and creation site (sp_trace_rec_lock_name) */
};

struct sp_trace_rec_header {
	uint16_t type;
	uint16_t aux;
	uint32_t size; /* whole record, header included; multiple of 8 */
};

/* SP_REC_EVENT: 24 + 8 * nargs bytes. */
struct sp_trace_rec_event {
	struct sp_trace_rec_header h;
	uint64_t ts;
	uint32_t tid;
	uint32_t id;
	uint64_t args[]; /* h.aux of them */
};

/* SP_REC_DROPPED: the thread dropped @count events, timestamps in
 * [first_ts, last_ts], at this point of its stream. */
struct sp_trace_rec_dropped {
	struct sp_trace_rec_header h;
	uint64_t first_ts;
	uint64_t last_ts;
	uint32_t tid;
	uint32_t pad;
	uint64_t count;
};

/* SP_REC_WRITE_LOSS: @count events (EVENT records, and the counts of
 * DROPPED records) with timestamps in [first_ts, last_ts] are not in the
 * file because writing it failed with @error (an errno).  Written at close
 * when the failed file still takes 40 bytes; so if present, EVENT records
 * + DROPPED counts + @count = events emitted while the file was open. */
struct sp_trace_rec_write_loss {
	struct sp_trace_rec_header h;
	uint64_t first_ts;
	uint64_t last_ts;
	uint32_t error;
	uint32_t pad;
	uint64_t count;
};

/*
 * SP_REC_LOCK_MODE: from @tick on, the lock events are @mode's.  Written
 * after the definitions of every file and again whenever the mode changes
 * (syncprof_trace_set_lock_events()).  A file without one (written before
 * the record existed) holds every lock event (SP_TRACE_LOCKS_ALL).
 *
 * SP_TRACE_LOCKS_CONTENDED (the default): what explains waiting, only.
 *   - lock_wait at the start of a blocking acquisition whose try failed,
 *     and cond_wait at the start of a condition wait: only when
 *     @min_wait_ns is 0 (with a threshold, whether a wait is traced is
 *     known at its end, so its start is ts - wait_ns of the end event);
 *   - lock_acquired after such a wait, and cond_woken, when the wait lasted
 *     at least @min_wait_ns; never for an acquisition that did not wait;
 *   - lock_released when the release found a thread waiting for the lock
 *     (a registered waiter, see lock_events.c) and the hold lasted at least
 *     @min_wait_ns; it carries hold_ns, so the hold's slice is
 *     [ts - hold_ns, ts] although its acquisition is not in the file;
 *   - no lock_try_failed.
 * SP_TRACE_LOCKS_ALL: every acquisition, release and failed try, as
 *   before; lock_released carries hold_ns when the acquisition was seen.
 *   An acquisition after a wait carries a wait_ns of at least 1 (the
 *   probe's clock.h, sp_wait_ns()), one that did not wait 0.
 */
#define SP_TRACE_MIN_WAIT_DEFAULT 1000 /* ns: trace_min_wait's default */
enum sp_trace_lock_mode {
	SP_TRACE_LOCKS_CONTENDED = 0,
	SP_TRACE_LOCKS_ALL = 1,
};
struct sp_trace_rec_lock_mode {
	struct sp_trace_rec_header h;
	uint64_t tick;
	uint32_t mode; /* enum sp_trace_lock_mode */
	uint32_t pad;
	uint64_t min_wait_ns;
};
_Static_assert(sizeof(struct sp_trace_rec_lock_mode) == 32, "LOCK_MODE records are 32 bytes");

/*
 * SP_REC_LOCK_NAME: from @tick on, the lock at @obj is called @name (the
 * NUL-terminated string after the fixed part, padded to 8 bytes; at most
 * 63 bytes of UTF-8), and it was created at @site/@func/@line, which read
 * as the lock events' arguments of the same names (below; @site 0 and
 * @line 0: not known); h.aux says how that site was learnt (0 unknown,
 * 1 the lock's init, 2 its first use: enum sp_lock_created).  An empty
 * @name: a new lock was made at that address, and it has no name.
 * Written after the definitions of every file for each lock named so
 * far, then whenever a lock is named or renamed, or a named lock's
 * address gets a new lock (its init, or its first use after a destroy).
 * Optional: a reader that does not know it names locks by address.
 */
struct sp_trace_rec_lock_name {
	struct sp_trace_rec_header h;
	uint64_t tick;
	uint64_t obj;
	uint64_t site;
	uint64_t func;
	uint32_t line;
	uint32_t pad;
	/* char name[], NUL-terminated, zero-padded */
};
_Static_assert(sizeof(struct sp_trace_rec_lock_name) == 48,
	       "LOCK_NAME records are 48 bytes and the name");
_Static_assert(sizeof(struct sp_trace_rec_dropped) == 40, "DROPPED records are 40 bytes");
_Static_assert(sizeof(struct sp_trace_rec_write_loss) == 40, "WRITE_LOSS records are 40 bytes");

/* SP_REC_EVENT_DEF: u32 id, u32 pad, then h.aux + 1 NUL-terminated strings
 * (name, then argument names), zero-padded to a multiple of 8.
 * SP_REC_THREAD:    u32 tid, u32 pad, name NUL-terminated, padded.
 * SP_REC_STRING:    u64 key (the string's address in the process), string.
 * SP_REC_PCSITE:    u64 pc, u64 offset (from function, or from the DSO when
 *                   the function is unknown), function NUL, DSO path NUL.
 * SP_REC_MAPS:      a piece of /proc/self/maps text (not NUL-terminated;
 *                   consecutive MAPS records concatenate), padded with NULs.
 * SP_REC_CLOCK:     u64 tick, u64 mono_ns, u64 realtime_ns. */
struct sp_trace_rec_clock {
	struct sp_trace_rec_header h;
	uint64_t tick;
	uint64_t mono_ns;
	uint64_t realtime_ns;
};

/* The lock events, registered first in every process: fixed ids. */
enum sp_trace_lock_event {
	SP_EV_LOCK_WAIT = 1,       /* obj site func line type */
	SP_EV_LOCK_ACQUIRED = 2,   /* obj site func line type wait_ns */
	SP_EV_LOCK_RELEASED = 3,   /* obj site func line type [hold_ns]: absent when unknown */
	SP_EV_LOCK_TRY_FAILED = 4, /* obj site func line type */
	SP_EV_COND_WAIT = 5,       /* obj site func line type */
	SP_EV_COND_WOKEN = 6,      /* obj site func line type wait_ns */
	SP_EV_FUTEX_WAKE = 7,      /* obj site func line type woken: a futex wake that woke
				    * (or requeued) @woken waiters of the word @obj */
	SP_EV_LOCK_LAST = 7,
	SP_EV_HOLD_STATE = 8,      /* tid obj running_ns preempted_ns blocked_ns blocked_in:
				    * what the holder of a long hold did in the interval
				    * [ts - (running + preempted + blocked), ts] (written
				    * by the hold ticker, hold=1; not a lock event) */
	SP_EV_USER_FIRST = 16,     /* first id of syncprof_trace_register() */
};

/* hold_state's arguments; blocked_in says where the blocked part was spent. */
enum { SP_HA_TID, SP_HA_OBJ, SP_HA_RUNNING, SP_HA_PREEMPTED, SP_HA_BLOCKED, SP_HA_IN };
#define SP_HA_IN_LOCK 1        /* waiting for another profiled lock */
#define SP_HA_IN_OTHER 2       /* blocked outside a system call, or unknown */
#define SP_HA_IN_SYSCALL 16    /* + the system call's number (x86-64) */

/* Arguments of the lock events: @line != 0: @site and @func are the keys of
 * STRING records (file, function); @line == 0: @site is a code address
 * (PCSITE record), @func is 0. */
enum { SP_LA_OBJ, SP_LA_SITE, SP_LA_FUNC, SP_LA_LINE, SP_LA_TYPE, SP_LA_NS };
/* futex_wake's last argument (in SP_LA_NS's place): the waiters woken. */
#define SP_LA_WOKEN SP_LA_NS

/* An event's definition, as the EVENT_DEF record carries it: its name and
 * the names of its arguments (writer: events.c; reader: trace_reader.c). */
struct sp_trace_def {
	const char *name;
	const char *args[SP_TRACE_MAX_ARGS];
	unsigned nargs;
};

#endif /* SP_TRACE_FORMAT_H */
