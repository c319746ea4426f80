/*
 * options.h - SYNCPROF_OPTIONS, "key=value,key=value" (options.c): one
 * table of keys, one parser and one validation, used by the runtime at
 * start-up and by 'syncprof run' to check its command line before it
 * starts anything.  Private to src/read, src/runtime, preload/ and
 * tools/syncprof.
 */
#ifndef SP_READ_OPTIONS_H
#define SP_READ_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "syncprof.h"

/* Options read from SYNCPROF_OPTIONS (see options.c). */
#define SP_MAX_SKIP 16 /* record/stack.c keeps as many */
#define SP_DEFAULT_FRAMES 4
#define SP_MAX_SKIP_FRAMES 8
#define SP_DEFAULT_HOLD_SAMPLE 64
struct sp_options {
	int enabled;
	int report_at_exit;  /* -1: unset, report when profiling was ever on */
	char *output;        /* NULL: stderr; "%p" expands to the pid */
	struct syncprof_report_options report;
	char *src_root;
	char *trace;         /* trace=FILE: trace into FILE from start-up */
	size_t trace_buffer; /* trace_buffer=BYTES: per-thread ring size */
	int trace_events;    /* trace_events=: SYNCPROF_TRACE_CONTENDED or _ALL */
	uint64_t trace_min_wait_ns; /* trace_min_wait=DURATION */
	/* interposed call sites (stack.c) and hold tracking (hold.c) */
	unsigned frames;            /* callers kept per contended site */
	int hold;                   /* 1: hold times, owner changes, blame */
	int lock_order;             /* 1: lock-order cycles (hold.c's held lists) */
	unsigned hold_sample;       /* time 1 hold in N per thread (1: all) */
	unsigned n_skip;
	char *skip[SP_MAX_SKIP];    /* lock wrappers: name regexes, DSO+0xLO-0xHI */
	unsigned skip_frames;       /* callers above the interposed call skipped */
	char *columns;         /* owns report.columns */
	int control;           /* control.c: listen on the control socket */
	int report_signal;     /* 0, or the signal that prints a report */
	unsigned warn_wait_ms; /* watchdog.c: 0 = off */
	unsigned hold_states_ms; /* record/holdstate.c: a hold past this is long; 0 = off */
	int hold_clock;          /* SP_HOLD_CLOCK_* (record/record.h) */
	unsigned hold_where;     /* record/holdstate.c, with frames=N: 0 off, 1 blocked holders,
				  * 2 running holders too (a signal) */
	int deadlock;          /* deadlock.c: report waiting threads in a cycle */
	int symbolize_inprocess; /* symbolize=inprocess: no hand-off to syncprof run */
	int glibc_locks;       /* record/glibc_lock.c: glibc's own locks (default 1) */
	int account;           /* the threads' time account (docs/accounting.md) */
};

/* Parse "key=value,..." into @o (which holds defaults); items separated by
 * ',', ':' or white space, values quoted '...' or "..." or escaped with \
 * (options.c); warnings to @warn, none when it is NULL.
 * Returns the number of problems found (0: all understood). */
int sp_options_parse(struct sp_options *o, const char *s, FILE *warn);
/* Parse $SYNCPROF_OPTIONS into @o, warning to @warn only when no process
 * up the tree (or other copy of the library) warned about the same string:
 * marks it in $SYNCPROF_OPTIONS_WARNED.  Start-up only (setenv). */
int sp_options_env(struct sp_options *o, FILE *warn);
void sp_options_defaults(struct sp_options *o);
void sp_options_free(struct sp_options *o);
/*
 * sp_options_check() - would "@key=@value" be accepted?  Pure: parses into
 * a scratch set of options and frees it.
 * Return: 0 when valid, -EINVAL when the value is bad, -ENOENT when there is
 * no such key.
 */
int sp_options_check(const char *key, const char *value);
/* The values a key takes, as --help words them ("USR1, USR2 or none"), or
 * NULL for an unknown key. */
const char *sp_options_describe(const char *key);

#endif /* SP_READ_OPTIONS_H */
