/*
 * trace_timeline.h - a lock-event trace as a timeline (trace_timeline.c):
 * threads, locks, slices (waits, holds, drops), flows from a release to
 * the acquisition it let through, and waiter counts per lock; what the
 * exporters (export_chrome.c, export_perfetto.c) write.  Private to
 * src/read and tools/syncprof.
 */
#ifndef SP_READ_TRACE_TIMELINE_H
#define SP_READ_TRACE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/containers.h"
#include "read/trace_reader.h"

#define SP_TL_NONE UINT32_MAX

enum sp_tl_kind {
	SP_TL_WAIT,       /* a lock wait, on the waiter's thread */
	SP_TL_COND_WAIT,  /* a condition wait */
	SP_TL_HOLD,       /* a hold, on the holder's thread */
	SP_TL_RELEASE,    /* instant: a release with no hold slice, source of a flow */
	SP_TL_ACQUIRE,    /* instant: an acquisition with no hold slice, end of a flow */
	SP_TL_TRY_FAILED, /* instant: a trylock found the lock busy */
	SP_TL_EVENT,      /* instant: a registered (user) event; value = file offset */
	SP_TL_DROPPED,    /* the span of events a thread's full buffer dropped */
	SP_TL_WRITE_LOSS, /* the span of events lost to a write error (tid 0) */
	SP_TL_WAKE,       /* instant: a futex wake that woke someone (value: how many),
			   * source of a flow to the futex wait it ended */
	SP_TL_STATE,      /* a part of a long hold's interval on the holder's thread
			   * (hold_state events): value = SP_TL_STATE_VALUE() */
	SP_TL_KINDS
};

/* An SP_TL_STATE slice's value: @part 0 running, 1 preempted, 2 blocked,
 * and for blocked where (trace/format.h's SP_HA_IN_*). */
#define SP_TL_STATE_VALUE(part, in) ((uint64_t)(in) << 8 | (part))

/* Slice flags. */
#define SP_TL_FROM_NS 1u   /* start computed from wait_ns/hold_ns (no begin event) */
#define SP_TL_CUT_DROP 2u  /* ended early: the events after it were dropped or lost */
#define SP_TL_OPEN_END 4u  /* still open when the trace ended */

struct sp_tl_slice {
	int64_t start, end;  /* ns since the trace started; end == start: instant */
	uint64_t value;      /* wait_ns, hold_ns, count dropped, waiters woken (WAKE), or
			      * file offset (EVENT) */
	uint32_t tid;        /* 0: of the process */
	uint32_t lock;       /* index into locks (condvars too), or SP_TL_NONE */
	uint32_t site;       /* index into sites, or SP_TL_NONE */
	uint32_t flow_out;   /* first flow leaving this slice, or SP_TL_NONE */
	uint32_t flow_in;    /* first flow ending at this slice, or SP_TL_NONE */
	uint32_t lane;       /* sub-track of its track where slices overlap (0 first) */
	uint32_t lock_lane;  /* HOLD: its lane on the lock's track */
	uint8_t kind;        /* enum sp_tl_kind */
	uint8_t flags;       /* SP_TL_* */
	uint8_t lock_type;   /* enum sp_type of the lock (HOLD, WAIT) */
};

/* A flow: @src's release let @dst's thread through, ending its wait
 * @wait (the HTML timeline draws the flow of the wait that is pointed at). */
struct sp_tl_flow {
	uint32_t src, dst;           /* slice indexes */
	uint32_t next_out, next_in;  /* next flow of the same slices, or SP_TL_NONE */
	uint32_t wait;               /* the WAIT slice it ended */
};

struct sp_tl_site {
	/* The frame as the profile names it (report/names.c): function,
	 * file:line for code addresses; file:line for instrumented sites. */
	const char *function, *file, *dso;
	unsigned line;
	uint64_t offset, address; /* address != 0: a code address */
	char *name;               /* sp_frame_format(), set by sp_timeline_build() */
};

struct sp_tl_lock {
	uint64_t obj;
	uint8_t type;        /* enum sp_type; SP_TYPE_CONDVAR for condition variables */
	/* The site of its first acquisition in the trace (an acquired, a
	 * lock_wait, a failed try, a condition wait's retaking of its mutex;
	 * for a condition variable, its first wait), SP_TL_NONE when the
	 * trace has none: never a release's or a futex wake's site. */
	uint32_t first_site;
	uint32_t first_tid;
	/* Where it was created, from its LOCK_NAME records (which the writer
	 * makes for named locks only): by its init, or else by its first use;
	 * SP_TL_NONE when not known. */
	uint32_t created_site, used_site;
	/* Its name (the latest LOCK_NAME record that named the address), or
	 * NULL; the exporters put it in the track name in place of the
	 * address. */
	const char *name;
	uint8_t name_shared; /* another lock of the trace has that name too */
	uint64_t waits, holds;
	uint32_t lanes;      /* hold lanes on the lock's track */
	uint32_t max_waiters;
};

/* A change of a lock's number of waiters, in time order per lock. */
struct sp_tl_count {
	int64_t ts;
	uint32_t lock;
	int32_t waiters; /* the value from @ts on */
};

struct sp_tl_thread {
	uint32_t tid;
	const char *name; /* "" when the trace has none */
	uint32_t lanes;   /* lanes of its track (1 when nothing overlaps) */
	int dropped;      /* has DROPPED slices */
};

struct sp_timeline {
	const struct sp_trace_reader *r;
	uint32_t pid;
	uint64_t mono0_ns; /* CLOCK_MONOTONIC at the trace's start */
	int64_t end_ns;    /* the last timestamp */
	struct sp_tl_slice *slices; /* by track, then start */
	size_t n_slices, cap_slices;
	struct sp_tl_flow *flows;
	size_t n_flows, cap_flows;
	struct sp_tl_site *sites;
	size_t n_sites, cap_sites;
	struct sp_tl_lock *locks;
	size_t n_locks, cap_locks;
	struct sp_tl_thread *threads; /* sorted by tid */
	size_t n_threads, cap_threads;
	struct sp_tl_count *counts;   /* by lock, then time */
	size_t n_counts, cap_counts;
	uint32_t process_lanes;       /* lanes of the process's track (tid 0) */
	/* The trace has every acquisition (an uncontended lock_acquired, or a
	 * lock_released without hold_ns was seen): a hold still open at a
	 * drop or at the end was really open.  Otherwise (contended-only
	 * tracing, where only releases that found waiters are traced) a hold
	 * seen only by its acquisition has no known end, and gets no slice. */
	int full_stream;
	struct sp_tl_private *priv;
};

/*
 * Read every record of @r (already initialised, nothing read yet) and
 * build @tl.  Returns 0 (the reader's status says whether the file read
 * to its end: what came before a bad record is in @tl), or -ENOMEM.
 */
int sp_timeline_build(struct sp_timeline *tl, struct sp_trace_reader *r);
void sp_timeline_free(struct sp_timeline *tl);
/* The name of @kind's slices: "wait", "hold", ... */
const char *sp_timeline_kind_name(unsigned kind);
/* The category both exports give a slice: "wait", "hold", "event",
 * "syncprof" (drops, write losses) or "lock". */
const char *sp_timeline_slice_category(const struct sp_tl_slice *s);
/* "<kind> <site>" ("wait journal_append bank.c:56"), or a drop's or a
 * user event's name, in @buf. */
const char *sp_timeline_slice_name(const struct sp_timeline *tl, const struct sp_tl_slice *s,
				   char *buf, size_t size);
/* A lock's track name, in @buf: "TYPE NAME" for a named lock (its
 * address after the name when another lock has that name: "mutex account
 * 0x5555..."), else "TYPE ADDRESS created at SITE" when its init is
 * known, else "TYPE ADDRESS SITE" with the site that first acquired it
 * (or its first use, as recorded), else "TYPE ADDRESS".  Never the site
 * of a release. */
const char *sp_timeline_lock_name(const struct sp_timeline *tl, const struct sp_tl_lock *l,
				  char *buf, size_t size);
const struct sp_tl_thread *sp_timeline_thread(const struct sp_timeline *tl, uint32_t tid);
/* "NAME (syncprof trace of pid N)", NAME the main thread's (tid == pid),
 * or "syncprof trace of pid N" when the trace has no name for it. */
const char *sp_timeline_process_name(const struct sp_timeline *tl, char *buf, size_t size);

/* "trace_timeline_draw.c", for sp_timeline_build(): lanes of every track,
 * and the sites' names.  0 or -ENOMEM. */
int sp_timeline_lanes(struct sp_timeline *tl);
int sp_timeline_name_sites(struct sp_timeline *tl);

/* "export_chrome.c", "export_perfetto.c": write @tl to @out; 0 or -errno. */
int sp_export_chrome(FILE *out, const struct sp_timeline *tl);
int sp_export_perfetto(FILE *out, const struct sp_timeline *tl);
/* "export_html.c": @tl as the HTML report's timeline, one JSON value (at
 * most @max slices, the longest, and the tracks of at most @max_locks
 * locks, the busiest); 0 or -ENOMEM. */
int sp_export_html_timeline(FILE *out, const struct sp_timeline *tl, size_t max,
			    size_t max_locks);

#endif /* SP_READ_TRACE_TIMELINE_H */
