/*
 * syncprof.h - public API of libsyncprof, a synchronization profiler.
 *
 * syncprof records where the threads of a program wait for locks: per call
 * site, lock object and lock type it keeps acquisitions, contended attempts,
 * total/maximum wait and a log2 histogram of waits.  Reports merge every
 * thread's statistics, subtract the last reset, optionally coalesce objects,
 * sort, cut to the top N rows and render as a table or as JSON.
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
};

struct syncprof_report_options {
	unsigned int top;             /* rows to print; 0 = all */
	enum syncprof_sort sort;
	int coalesce;                 /* 1: one row per (site, type) */
	enum syncprof_format format;
	const char *src_root;         /* strip from paths; NULL = common prefix */
};

/**
 * syncprof_report_options_init() - fill @opts with the defaults: top 0 (all
 * rows), sort by total wait, coalesced, table format, automatic source root.
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
 * Return: 0, -EINVAL for bad options, -ENOMEM, or -EIO when writing failed.
 */
SYNCPROF_API int syncprof_report(FILE *out, const struct syncprof_report_options *opts);

/**
 * syncprof_parse_sort() / syncprof_parse_format() - map a name ("total",
 * "avg", ...; "table", "json") to its value.  Return 0 or -EINVAL.
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

/*
 * The flags behind syncprof_is_enabled(), exported so that instrument.h can
 * test them inline: profiling that is off then costs one load and one
 * predictable branch per lock call.  Not zero: lock calls must go through
 * the library; SYNCPROF__UNLOCK_HOOKS set: unlock calls too (hold tracking,
 * tracing).  Read only; write through the API.
 */
SYNCPROF_API extern int syncprof__enabled;
#define SYNCPROF__PROFILING 1
#define SYNCPROF__UNLOCK_HOOKS 2

#ifdef __cplusplus
}
#endif

#endif /* SYNCPROF_H */
