/*
 * syncprof.h - public API of libsyncprof, a synchronization profiler.
 *
 * syncprof records where the threads of a program wait for locks: per call
 * site, lock object and lock type it keeps acquisitions, contended attempts,
 * total/maximum wait and a log-linear histogram of waits (and, with hold
 * tracking, of holds).  Reports merge every thread's statistics, subtract
 * the last reset, optionally coalesce objects, sort, cut to the top N rows
 * and render as a table, JSON, CSV, folded stacks, pprof or HTML.
 *
 * Three ways in:
 *   - compile-time instrumentation: -include syncprof/instrument.h turns
 *     pthread and C11 lock calls into the profiled calls declared below,
 *     which carry __FILE__, __LINE__ and __func__;
 *   - the preload library (libsyncprof-preload.so) for unmodified programs;
 *   - this API, to switch profiling on and off, reset and report.
 *
 * Errors are negative errno values.  Unless a function says otherwise it is
 * thread-safe and may be called at any time, also before the library's own
 * constructor ran.  None of these functions is async-signal-safe.
 */
#ifndef SYNCPROF_H
#define SYNCPROF_H

#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SYNCPROF_API __attribute__((visibility("default")))
#else
#define SYNCPROF_API
#endif

#define SYNCPROF_VERSION_MAJOR 0
#define SYNCPROF_VERSION_MINOR 1
#define SYNCPROF_VERSION_PATCH 0
#define SYNCPROF_VERSION_STRING "0.1.0"

/* ---- control ---------------------------------------------------------- */

/**
 * syncprof_enable() - start recording lock statistics in every thread.
 *
 * Idempotent.  Threads see the change at their next lock call (relaxed
 * store; no barrier is implied beyond that).
 */
SYNCPROF_API void syncprof_enable(void);

/**
 * syncprof_disable() - stop recording.  Statistics gathered so far are kept
 * and still reported.  A wait that is in progress is still recorded.
 */
SYNCPROF_API void syncprof_disable(void);

/** syncprof_is_enabled() - 1 when recording, 0 when not. */
SYNCPROF_API int syncprof_is_enabled(void);

/**
 * syncprof_reset() - take a snapshot: later reports show only what happened
 * after this call.  Recording threads are not stopped; an event racing with
 * the reset is counted on exactly one side of it.
 *
 * Return: 0, or -ENOMEM when the snapshot could not be stored (the previous
 * snapshot then stays in force).
 */
SYNCPROF_API int syncprof_reset(void);

/* ---- reports ---------------------------------------------------------- */

enum syncprof_sort {
	SYNCPROF_SORT_TOTAL = 0,  /* total wait time */
	SYNCPROF_SORT_AVG,        /* wait time / acquisitions */
	SYNCPROF_SORT_MAX,        /* longest single wait */
	SYNCPROF_SORT_COUNT,      /* acquisitions */
	SYNCPROF_SORT_CONTENDED,  /* contended attempts */
	SYNCPROF_SORT_HOLD,       /* total hold time (needs hold tracking) */
};

enum syncprof_format {
	SYNCPROF_FORMAT_TABLE = 0,
	SYNCPROF_FORMAT_JSON,
	SYNCPROF_FORMAT_CSV,      /* one line per row, RFC 4180 quoting */
	SYNCPROF_FORMAT_FOLDED,   /* collapsed stacks weighted by wait ns */
	SYNCPROF_FORMAT_PPROF,    /* gzipped profile.proto (binary) */
	SYNCPROF_FORMAT_HTML,     /* one self-contained page: table, flame graphs */
};

struct syncprof_report_options {
	unsigned int top;             /* rows to print; 0 = all */
	enum syncprof_sort sort;
	int coalesce;                 /* 1: one row per (site, type) */
	enum syncprof_format format;
	const char *src_root;         /* strip from paths; NULL = common prefix */
	const char *columns;          /* table columns, comma-separated keys
					 (type,object,site,wait,count,avg,
					 contended,max,p50,p90,p99,hold,
					 max_hold,owner_chg); NULL = all */
	int merged;                   /* table, html: 1 = one list of rows; 0 = lock
					 contention first, waits for an event
					 (condvar, semaphore, barrier, join) in
					 their own section after it */
};

/**
 * syncprof_report_options_init() - fill @opts with the defaults: top 0 (all
 * rows), sort by total wait, coalesced, table format, automatic source root,
 * all table columns, lock contention apart from (before) waits for an event.
 */
SYNCPROF_API void syncprof_report_options_init(struct syncprof_report_options *opts);

/**
 * syncprof_report() - write a report of everything recorded since the last
 * reset to @out.
 * @out:  stream to write to; not closed.
 * @opts: options, or NULL for the options from SYNCPROF_OPTIONS.
 *
 * Safe while other threads record: they are never stopped, and no value is
 * read torn.  Calls that the reporting thread itself makes while the report
 * runs are not recorded.
 *
 * Return: 0, -EINVAL for bad options (including an unknown column name),
 * -ENOMEM, -EIO when writing failed, or -ENOTSUP for the pprof format in a
 * program linked with libsyncprof.a but not with -lprotobuf-c -lz.
 */
SYNCPROF_API int syncprof_report(FILE *out, const struct syncprof_report_options *opts);

/**
 * syncprof_parse_sort() / syncprof_parse_format() - map a name ("total",
 * "avg", ...; "table", "json", "csv", "folded", "pprof") to its value.
 * Return 0 or -EINVAL.
 */
SYNCPROF_API int syncprof_parse_sort(const char *name, enum syncprof_sort *out);
SYNCPROF_API int syncprof_parse_format(const char *name, enum syncprof_format *out);

/**
 * syncprof_lost_events() - lock calls that could not be recorded (out of
 * memory for a new site, calls during thread teardown).  They still did
 * their locking; only their statistics are missing.  Reports print this
 * count when it is not zero.
 */
SYNCPROF_API unsigned long long syncprof_lost_events(void);

/* ---- profiled lock calls ---------------------------------------------- */
/*
 * Each behaves exactly as the call it is named after and returns what that
 * call returned; @file, @line and @func name the call site and must point to
 * storage that outlives the process's last report (string literals do).
 * syncprof/instrument.h maps the plain names onto these.
 */
#define SYNCPROF_SITE_PARAMS const char *file, int line, const char *func

SYNCPROF_API int syncprof_mutex_lock(pthread_mutex_t *m, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_mutex_trylock(pthread_mutex_t *m, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime,
					  SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_mutex_unlock(pthread_mutex_t *m, SYNCPROF_SITE_PARAMS);

SYNCPROF_API int syncprof_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
					 const struct timespec *abstime, SYNCPROF_SITE_PARAMS);

SYNCPROF_API int syncprof_rwlock_rdlock(pthread_rwlock_t *l, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_rwlock_wrlock(pthread_rwlock_t *l, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_rwlock_tryrdlock(pthread_rwlock_t *l, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_rwlock_trywrlock(pthread_rwlock_t *l, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime,
					     SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime,
					     SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_rwlock_unlock(pthread_rwlock_t *l, SYNCPROF_SITE_PARAMS);

SYNCPROF_API int syncprof_spin_lock(pthread_spinlock_t *s, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_spin_trylock(pthread_spinlock_t *s, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_spin_unlock(pthread_spinlock_t *s, SYNCPROF_SITE_PARAMS);

/*
 * The same calls with the site given by their return address (the
 * instruction after the call), named at report time as interposed calls
 * are: function, file:line from debug info (-g) with libdw, frames inlined
 * from system headers skipped.  syncprof/instrument.h uses these for calls
 * that C++ code makes inside system headers - libstdc++'s
 * __gthread_mutex_lock, inlined into the program's function by
 * std::mutex::lock() - where __FILE__ and __LINE__ would name the header.
 */
SYNCPROF_API int syncprof_mutex_lock_pc(pthread_mutex_t *m);
SYNCPROF_API int syncprof_mutex_trylock_pc(pthread_mutex_t *m);
SYNCPROF_API int syncprof_mutex_timedlock_pc(pthread_mutex_t *m, const struct timespec *abstime);
SYNCPROF_API int syncprof_mutex_unlock_pc(pthread_mutex_t *m);
SYNCPROF_API int syncprof_cond_wait_pc(pthread_cond_t *c, pthread_mutex_t *m);
SYNCPROF_API int syncprof_cond_timedwait_pc(pthread_cond_t *c, pthread_mutex_t *m,
					    const struct timespec *abstime);
SYNCPROF_API int syncprof_rwlock_rdlock_pc(pthread_rwlock_t *l);
SYNCPROF_API int syncprof_rwlock_wrlock_pc(pthread_rwlock_t *l);
SYNCPROF_API int syncprof_rwlock_tryrdlock_pc(pthread_rwlock_t *l);
SYNCPROF_API int syncprof_rwlock_trywrlock_pc(pthread_rwlock_t *l);
SYNCPROF_API int syncprof_rwlock_timedrdlock_pc(pthread_rwlock_t *l,
						const struct timespec *abstime);
SYNCPROF_API int syncprof_rwlock_timedwrlock_pc(pthread_rwlock_t *l,
						const struct timespec *abstime);
SYNCPROF_API int syncprof_rwlock_unlock_pc(pthread_rwlock_t *l);
SYNCPROF_API int syncprof_spin_lock_pc(pthread_spinlock_t *s);
SYNCPROF_API int syncprof_spin_trylock_pc(pthread_spinlock_t *s);
SYNCPROF_API int syncprof_spin_unlock_pc(pthread_spinlock_t *s);

/*
 * C11 <threads.h>.  Declared with opaque pointers so that this header does
 * not need <threads.h> (C++ and old C libraries lack it); instrument.h
 * passes mtx_t * and cnd_t *.
 */
SYNCPROF_API int syncprof_mtx_lock(void *mtx, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_mtx_trylock(void *mtx, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_mtx_timedlock(void *mtx, const struct timespec *abstime,
					SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_mtx_unlock(void *mtx, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_cnd_wait(void *cnd, void *mtx, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_cnd_timedwait(void *cnd, void *mtx, const struct timespec *abstime,
					SYNCPROF_SITE_PARAMS);

/**
 * syncprof_lock_forget() - the lock at @lock is being initialised or was
 * destroyed: lock-order checking (lock_order=1) forgets its edges, so
 * that another lock made later at the same address is not taken for it.
 * syncprof/instrument.h calls it from pthread_mutex_init(), _destroy() and
 * their rwlock, spin lock and C11 twins; the preload library interposes
 * those.  Cheap (one atomic add) and harmless when checking is off.
 */
SYNCPROF_API void syncprof_lock_forget(const void *lock);

/**
 * syncprof_name_lock() - call the lock at @lock @name in every report:
 * the table, JSON, CSV, folded and pprof outputs show it on the lock's
 * per-object rows (coalesced rows, which merge many objects, do not).
 * The name is copied (at most 63 bytes kept, cut at a UTF-8 boundary), so
 * @name need not outlive the call; naming again renames.  Thread-safe,
 * callable whether or not profiling is on; not for a signal handler.  The
 * lock's next pthread_mutex_init() (or rwlock, spin lock, C11 twin) or,
 * after its destroy, its next use starts an unnamed lock at that address.
 * Return: 0; -EINVAL (NULL @lock or @name); -ENOSPC (the name table, 65536
 * locks, is full) or -EBUSY: not kept, counted in "names_lost".
 */
SYNCPROF_API int syncprof_name_lock(void *lock, const char *name);

/**
 * syncprof_lock_created() - the lock at @lock is being initialised at
 * @file:@line in @func: reports name that as where it was created (its
 * name, if any, is forgotten), and lock-order checking forgets it as
 * syncprof_lock_forget() does.  syncprof_lock_destroyed(): the lock was
 * destroyed.  syncprof/instrument.h calls them from pthread_mutex_init(),
 * _destroy() and their twins while profiling is on; the preload library
 * interposes those.  They take a lock of the profiler's own: not hot.
 */
SYNCPROF_API void syncprof_lock_created(const void *lock, SYNCPROF_SITE_PARAMS);
SYNCPROF_API void syncprof_lock_destroyed(const void *lock);

/*
 * Blocking calls that are not plain locks, as their namesakes.  The clock
 * calls have _pc twins (below) because libstdc++'s headers make them
 * (std::timed_mutex::try_lock_for, std::condition_variable::wait_for).
 * Semaphore calls return 0, or -1 with errno set.  Semaphores, barriers
 * and joins are not hold-tracked: they have no owner.
 */
SYNCPROF_API int syncprof_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
					  const struct timespec *abstime, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
					 const struct timespec *abstime, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock,
					     const struct timespec *abstime, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock,
					     const struct timespec *abstime, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_mutex_clocklock_pc(pthread_mutex_t *m, clockid_t clock,
					     const struct timespec *abstime);
SYNCPROF_API int syncprof_cond_clockwait_pc(pthread_cond_t *c, pthread_mutex_t *m,
					    clockid_t clock, const struct timespec *abstime);
SYNCPROF_API int syncprof_rwlock_clockrdlock_pc(pthread_rwlock_t *l, clockid_t clock,
						const struct timespec *abstime);
SYNCPROF_API int syncprof_rwlock_clockwrlock_pc(pthread_rwlock_t *l, clockid_t clock,
						const struct timespec *abstime);
SYNCPROF_API int syncprof_sem_wait(sem_t *s, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_sem_trywait(sem_t *s, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_sem_timedwait(sem_t *s, const struct timespec *abstime,
					SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime,
					SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_barrier_wait(pthread_barrier_t *b, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_join(pthread_t thread, void **retval, SYNCPROF_SITE_PARAMS);
/* The GNU joins with a deadline (CLOCK_REALTIME, or @clock): type join,
 * a wait whether the thread ended or the deadline passed (ETIMEDOUT); a
 * clock glibc rejects is answered by glibc alone (EINVAL, not recorded).
 * pthread_tryjoin_np never blocks and is not profiled. */
SYNCPROF_API int syncprof_timedjoin_np(pthread_t thread, void **retval,
				       const struct timespec *abstime, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_clockjoin_np(pthread_t thread, void **retval, clockid_t clock,
				       const struct timespec *abstime, SYNCPROF_SITE_PARAMS);
/* C11 thrd_join; @thr is a thrd_t (an unsigned long in glibc). */
SYNCPROF_API int syncprof_thrd_join(unsigned long thr, int *res, SYNCPROF_SITE_PARAMS);
/* Signals: the real call, and its site remembered for the watchdog's
 * warnings about condition waits (warn_wait). */
SYNCPROF_API int syncprof_cond_signal(pthread_cond_t *c, SYNCPROF_SITE_PARAMS);
SYNCPROF_API int syncprof_cond_broadcast(pthread_cond_t *c, SYNCPROF_SITE_PARAMS);

/* What instrument.h's inline fast path reads of the library (the flag
 * word, the per-thread home slots, the failed-try entry point): private,
 * in a header of its own. */
#include "syncprof/inline.h"

/* ==== tracing (lock-event tracer) ======================================= */
/*
 * A trace records *when* things happened: every lock event of the profiled
 * threads (wait, acquired, released, trylock failed, condition wait and
 * wake-up) and events of your own, with a timestamp and thread id, in a
 * binary file read by 'syncprof trace dump|stats|export'
 * (docs/trace-format.md).  Each thread writes into its own buffer; a writer
 * thread drains the buffers to the file.  When a buffer is full the newest
 * events are dropped and counted exactly; the file says how many and when.
 *
 * Lock events are emitted by the profiled lock calls while profiling is on
 * (syncprof_enable()) and a trace file is open.  SYNCPROF_OPTIONS keys
 * trace=FILE and trace_buffer=BYTES open a trace at start-up (trace=FILE
 * also switches profiling on); trace_events= and trace_min_wait= choose
 * which lock events are written (syncprof_trace_set_lock_events()).
 *
 * Unless a function says otherwise it is thread-safe; none is
 * async-signal-safe.
 */
#include <stddef.h>
#include <stdint.h>

#define SYNCPROF_TRACE_MAX_EVENTS 1024 /* event ids are below this */
#define SYNCPROF_TRACE_MAX_ARGS 6

/**
 * syncprof_trace_open() - start tracing into @path, or switch to it.
 * @path: file to create (truncated if it exists); "%p" expands to the pid,
 *        "%%" to "%".  A child created by fork() traces into its own file
 *        when the name contains "%p"; otherwise tracing stops in the child.
 *
 * When a file is already open, everything the threads emitted before this
 * call is written to the old file, which is then closed; other threads keep
 * emitting throughout, and an event racing with the switch lands in exactly
 * one of the two files.
 *
 * Return: 0, or a negative errno from creating the file or writing its
 * header, e.g. -ENOSPC (the previous file, if any, then stays open).
 */
SYNCPROF_API int syncprof_trace_open(const char *path);

/**
 * syncprof_trace_close() - write out every buffer and close the trace file.
 * Events emitted while no file is open are not recorded.  The process's
 * exit closes the file the same way (threads' own exits flush their
 * buffers).
 *
 * Return: 0, -EBADF when no file was open, or the negative errno of a
 * write that failed (-ENOSPC, -EIO, -EFBIG, ...; -EIO also when close()
 * failed).  After a failed write the library writes nothing more to the
 * file, which ends on its last whole record and says so (its header);
 * the events that could not be written are counted (they are in
 * syncprof_trace_dropped()) and reported on stderr (docs/trace-format.md,
 * "Write errors").
 */
SYNCPROF_API int syncprof_trace_close(void);

/**
 * syncprof_trace_flush() - write every thread's buffered events to the
 * file now.  On return, everything any thread emitted before the call is in
 * the kernel (it survives a SIGKILL of the process, not a power loss).  The
 * count of events another thread dropped since its last DROPPED record is
 * written when that thread next emits with room, flushes or exits (the
 * calling thread's own count is written now).
 *
 * Return: 0, -EBADF when no file is open, or the negative errno of the
 * write that failed (-ENOSPC, ...): from then on, at every call, as
 * nothing more reaches the file (see syncprof_trace_close()).
 */
SYNCPROF_API int syncprof_trace_flush(void);

/**
 * syncprof_trace_enable() / syncprof_trace_disable() - switch tracing on or
 * off for all events (on by default once a file is open).  The state is
 * kept across file switches.  Threads see the change at their next event.
 */
SYNCPROF_API void syncprof_trace_enable(void);
SYNCPROF_API void syncprof_trace_disable(void);

/**
 * syncprof_trace_register() - define an event.
 * @name:      its name (at most 63 bytes); registering a name again returns
 *             the same id (the argument names of the first call stay).
 * @arg_names: @nargs names (at most 31 bytes each), or NULL for "a0".."a5".
 * @nargs:     0 to SYNCPROF_TRACE_MAX_ARGS.
 *
 * New events are enabled.  May be called before a file is open.
 *
 * Return: the event id (> 0, < SYNCPROF_TRACE_MAX_EVENTS), -EINVAL for a bad
 * name or count, -ENOSPC when the table is full.
 */
SYNCPROF_API int syncprof_trace_register(const char *name, const char *const *arg_names,
					 unsigned nargs);

/**
 * syncprof_trace_event_id() - the id of event @name ("lock_acquired", ...,
 * or a registered one); -ENOENT when there is none.
 */
SYNCPROF_API int syncprof_trace_event_id(const char *name);

/**
 * syncprof_trace_set_event() - enable (@on != 0) or disable one event.
 * Return: 0, or -EINVAL when @id is not a defined event.
 */
SYNCPROF_API int syncprof_trace_set_event(int id, int on);

/**
 * syncprof_trace_set_buffer_size() - size in bytes of the buffer of each
 * thread that emits its first event from now on (rounded up to a power of
 * two, 256 bytes to 1 GiB; default 1 MiB).  Return 0 or -EINVAL.
 */
SYNCPROF_API int syncprof_trace_set_buffer_size(size_t bytes);

#define SYNCPROF_TRACE_CONTENDED 0 /* lock events that explain waiting (default) */
#define SYNCPROF_TRACE_ALL 1       /* every acquisition, release and failed try */

/**
 * syncprof_trace_set_lock_events() - which lock events are traced.
 * @which: SYNCPROF_TRACE_CONTENDED (the default): waits, and the releases
 *         that let a waiter through, with their hold time; an acquisition
 *         that did not wait writes nothing.  SYNCPROF_TRACE_ALL: every
 *         acquisition, release and failed trylock.
 * @min_wait_ns: with SYNCPROF_TRACE_CONTENDED, waits (and holds released
 *         to a waiter) shorter than this are not traced; 0 traces all.
 *         Until called: SYNCPROF_TRACE_CONTENDED, 1000 ns (waits in which
 *         the thread never slept are left out).  With a threshold above
 *         0 a wait's start is not written (its end carries its length).
 *
 * SYNCPROF_OPTIONS: trace_events=contended|all, trace_min_wait=DURATION.
 * Takes effect for acquisitions from now on; the trace file records the
 * change (docs/trace-format.md, LOCK_MODE).  Return 0 or -EINVAL.
 */
SYNCPROF_API int syncprof_trace_set_lock_events(int which, uint64_t min_wait_ns);

/**
 * syncprof_trace_emit() - record event @id with @nargs (at most 6) values.
 *
 * Wait-free: never blocks, never allocates except for the calling thread's
 * first event (its buffer).  When the buffer is full the event is dropped
 * and counted.  Does nothing when the event or tracing is off; prefer the
 * SYNCPROF_TRACE() macro, which tests that inline.
 */
SYNCPROF_API void syncprof_trace_emit(unsigned id, unsigned nargs, const uint64_t *args);

/**
 * syncprof_trace_dropped() - events dropped so far because a buffer was
 * full (all of them are also in the file as DROPPED records, unless a
 * write error lost those), plus events that could not be recorded at all
 * (emitted during thread teardown), plus events that a write error kept
 * out of the file (syncprof_trace_close() returns that error).
 */
SYNCPROF_API unsigned long long syncprof_trace_dropped(void);

/*
 * One byte per event id: nonzero when the event is recorded now (a file is
 * open, tracing is on and the event is on).  Read only; exported so that
 * SYNCPROF_TRACE() costs one load and one predictable branch when off.
 */
SYNCPROF_API extern unsigned char syncprof__trace_on[SYNCPROF_TRACE_MAX_EVENTS];

#if defined(__GNUC__)
#define SYNCPROF__TRACE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SYNCPROF__TRACE_UNLIKELY(x) (x)
#endif

/** syncprof_trace_event_on() - nonzero when event @id is recorded now. */
static inline int syncprof_trace_event_on(unsigned id)
{
#if defined(__GNUC__)
	/* Relaxed atomic: a plain load, that race detectors know is meant. */
	return __atomic_load_n(&syncprof__trace_on[id & (SYNCPROF_TRACE_MAX_EVENTS - 1)],
			       __ATOMIC_RELAXED);
#else
	return syncprof__trace_on[id & (SYNCPROF_TRACE_MAX_EVENTS - 1)];
#endif
}

/*
 * SYNCPROF_TRACE(id, a0, ...) - emit event @id with 1 to 6 uint64_t
 * values; SYNCPROF_TRACE0(id) with none.  C and C++.
 */
#define SYNCPROF_TRACE(id, ...)                                                       \
	do {                                                                          \
		if (SYNCPROF__TRACE_UNLIKELY(syncprof_trace_event_on(id))) {          \
			const uint64_t syncprof__a[] = { __VA_ARGS__ };               \
			syncprof_trace_emit((id), sizeof(syncprof__a) / sizeof(uint64_t), \
					    syncprof__a);                             \
		}                                                                     \
	} while (0)
#define SYNCPROF_TRACE0(id)                                                           \
	do {                                                                          \
		if (SYNCPROF__TRACE_UNLIKELY(syncprof_trace_event_on(id)))            \
			syncprof_trace_emit((id), 0, NULL);                           \
	} while (0)

/* ==== end of tracing ===================================================== */

#ifdef __cplusplus
}
#endif

#endif /* SYNCPROF_H */
