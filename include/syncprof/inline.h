/*
 * inline.h - the parts of libsyncprof that instrument.h's inline fast path
 * reads directly: the flag word behind syncprof_is_enabled(), the layout
 * of a per-thread entry's head and the calling thread's home slots, and
 * the library's entry point for an acquisition whose inline try failed.
 * Private to syncprof.h, which includes it, and to instrument.h: not an
 * API; names with two underscores may change with any release (as
 * liburcu keeps its inline parts in its static/ headers).
 */
#ifndef SYNCPROF_INLINE_H
#define SYNCPROF_INLINE_H

#ifndef SYNCPROF_H
#error "include <syncprof.h>, which includes this"
#endif

/*
 * The flags behind syncprof_is_enabled(), exported so that instrument.h can
 * test them inline: profiling that is off then costs one load and one
 * predictable branch per lock call.  Not zero: lock calls must go through
 * the library; SYNCPROF__UNLOCK_HOOKS set: unlock calls too (hold tracking,
 * tracing).  The other bits are the library's own.  Read only; write
 * through the API.
 */
SYNCPROF_API extern int syncprof__enabled;
#define SYNCPROF__PROFILING 1
#define SYNCPROF__UNLOCK_HOOKS 2

#if defined(__GNUC__) && defined(__x86_64__)
/*
 * Private to instrument.h's inline fast path (SYNCPROF__FAST there): the
 * head of the library's per-thread counters of a (lock, call site), laid
 * out as the library's own (src/record/record.h checks every offset), and
 * the calling thread's home slots: its first entry for a lock sits at
 * syncprof__home[SYNCPROF__HOME_SLOT(lock)].  NULL while the thread has
 * none, is being torn down, or must take the library's path (after fork).
 * Read only; the library writes both.
 */
struct syncprof__entry {
	const void *obj;
	const char *file;
	unsigned long pc;
	unsigned int line;
	unsigned char op; /* SYNCPROF__OP_*: the call made */
	unsigned char type_, live_, pad_;
	void *cold_;
	unsigned long long acquisitions;
	unsigned long long contended_, owner_changes_;
} __attribute__((aligned(64)));
#define SYNCPROF__HOME_SLOT(obj) (((unsigned long)(obj) >> 5) & 2047)
#define SYNCPROF__OP_MUTEX 0
#define SYNCPROF__OP_RWLOCK_READ 3
#define SYNCPROF__OP_RWLOCK_WRITE 4
#define SYNCPROF__OP_SPINLOCK 5
SYNCPROF_API extern __thread struct syncprof__entry *syncprof__home
	__attribute__((tls_model("initial-exec")));
/* The acquisition whose try on the fast path failed with @rc: the
 * library's wait, recorded on @e (SYNCPROF__TRIED_*: which call). */
SYNCPROF_API int syncprof__tried(struct syncprof__entry *e, int rc, int call);
#define SYNCPROF__TRIED_MUTEX 0
#define SYNCPROF__TRIED_RDLOCK 1
#define SYNCPROF__TRIED_WRLOCK 2
#define SYNCPROF__TRIED_SPIN 3
#define SYNCPROF__TRIED_MTX 4
#endif

#endif /* SYNCPROF_INLINE_H */
