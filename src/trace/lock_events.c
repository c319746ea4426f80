/*
 * lock_events.c - lock events: what the probe emits into the trace, and
 * which of them (the lock-event mode).
 *
 * Design: the probe (probe.h, probe.c) tests one flag, sp_trace_locks_on,
 * with an unlikely branch, and calls in here only when some lock event is
 * on; each event then checks its own flag.  An event carries the lock
 * object, the call site and the lock type; acquired and cond_woken carry
 * the wait in nanoseconds (0 for an uncontended acquisition), released
 * carries the hold when the acquisition was seen (6 arguments) and omits
 * it otherwise (5 arguments).
 *
 * Modes (format.h, enum sp_trace_lock_mode).  A trace of every acquisition
 * is mostly uncontended acquire/release pairs that explain nothing: the
 * bank demo wrote 146 MB in half a second and dropped 85% of it.  So by
 * default (SP_TRACE_LOCKS_CONTENDED) only waits are traced, and the
 * releases that let a waiter through, with their hold time; the holder's
 * acquisition is not, and readers draw its hold as [ts - hold_ns, ts].
 * SP_TRACE_LOCKS_ALL keeps the full stream.  A threshold (min_wait_ns)
 * leaves out waits shorter than it, and holds released to a waiter that
 * were shorter than it (a waiter that waited longer than the threshold
 * for this holder waited at most that hold).  Its default, 1 us, leaves
 * out the waits in which the thread never slept (a futex sleep and
 * wake-up alone takes several us): in the bank demo (bank 4 300000) they
 * were 73,000 of 74,000 waits and 399,000 of 400,000 releases to a waiter
 * (their holds are that short too), 39 MB of a 39.5 MB trace; with 1 us
 * the trace is 0.4 MB.
 *
 * That needs two things the probe did not keep:
 * - The hold time at a release: a per-thread stack of the locks taken and
 *   the clock tick at which each was taken (held[], HELD_MAX deep; a deeper
 *   nesting loses the oldest, whose release then has no hold_ns).  Pushed on
 *   every acquisition of a lock that has a release (mutexes, rwlocks, spin
 *   locks), popped at its release: one rdtsc and a few stores per
 *   acquisition while tracing.  Releases pop the most recent entry of
 *   their lock, so a recursive mutex's nested holds nest.
 * - Whether a release finds waiters: a thread about to block on a lock
 *   registers in waiters[], a table of 4096 words (the lock's address in
 *   the low 48 bits, the number of registered waiters above), and leaves
 *   it when its call returns.  The lock's slot is one of the 8 words of
 *   one cache line chosen by a hash of the address, so a release reads one
 *   line, which only contended acquisitions write (and first a count of
 *   all registered waiters: 0 in a program that is not contended right
 *   now, and a release then reads nothing else).  A waiter that finds
 *   its line full is counted (sp_trace_waiters_full) and its holder's
 *   release may then not be traced: its own wait still is.  A release that
 *   races with a waiter's registration (the waiter's try failed, the
 *   holder released before it registered) is not traced either; that
 *   waiter's wait then ends at once.
 *
 * A call site is named in the file without any work here: for
 * instrumented sites the arguments are the addresses of the __FILE__ and
 * __func__ strings and the line, and the writer thread copies each string
 * into the file once (file.c); for interposed sites the argument is the
 * return address, which readers resolve through the MAPS records.
 *
 * Thread ids and names come with the per-thread buffer (buffer.c).
 *
 * Alternatives considered: reading "has waiters" from the lock word
 * (glibc's mutex __lock == 2, FUTEX_WAITERS of robust and PI mutexes) is
 * free, but rwlocks, spin locks and C11 mutexes each differ, and glibc
 * sets 2 in a lock word whose waiter has gone; the table works the same
 * for every lock.  Tracing the holder's acquisition too and dropping it
 * later when nobody waited would need the ring to take records back.
 */
#include <errno.h>

#include "trace.h"

int sp_trace_lock_mode = SP_TRACE_LOCKS_CONTENDED;
uint64_t sp_trace_min_wait_ns = SP_TRACE_MIN_WAIT_DEFAULT;
uint64_t sp_trace_waiters_full;

static SP_TLS uint64_t tls_cond_mutex; /* mutex of the cond wait in progress */

/* ---- the locks this thread holds, and since when ----------------------- */

#define HELD_MAX 8
struct held {
	uintptr_t obj;
	uint64_t t0; /* sp_clock_ticks() at the acquisition */
};
static SP_TLS struct held held[HELD_MAX];
static SP_TLS unsigned n_held;

/* Locks that have a release: a hold, a holder, waiters. */
static inline int has_release(int type)
{
	return type == SP_TYPE_MUTEX || type == SP_TYPE_REC_MUTEX || type == SP_TYPE_RWLOCK_READ ||
	       type == SP_TYPE_RWLOCK_WRITE || type == SP_TYPE_SPINLOCK;
}

static void held_push(uintptr_t obj)
{
	unsigned n = n_held;

	if (SP_UNLIKELY(n == HELD_MAX)) { /* the oldest loses its hold time */
		for (unsigned i = 1; i < HELD_MAX; i++)
			held[i - 1] = held[i];
		n--;
	}
	held[n].obj = obj;
	held[n].t0 = sp_clock_ticks();
	n_held = n + 1;
}

/* Pop @obj's most recent entry: 1 and, when @hold_ns, its hold, or 0. */
static inline int held_pop(uintptr_t obj, uint64_t *hold_ns)
{
	unsigned n = n_held;

	for (unsigned i = n; i-- > 0;) {
		if (held[i].obj != obj)
			continue;
		if (hold_ns)
			*hold_ns = sp_clock_ticks_to_ns(sp_clock_ticks() - held[i].t0);
		for (unsigned j = i + 1; j < n; j++)
			held[j - 1] = held[j];
		n_held = n - 1;
		return 1;
	}
	return 0;
}

/* A condition wait retook @obj: its hold starts again. */
static void held_restart(uintptr_t obj)
{
	for (unsigned i = n_held; i-- > 0;)
		if (held[i].obj == obj) {
			held[i].t0 = sp_clock_ticks();
			return;
		}
}

/* ---- threads waiting for a lock ---------------------------------------- */

#define WAITERS_SLOTS 4096u /* a power of two; 8 per cache line */
#define WAITERS_LINE 8u
#define KEY_BITS 48
#define KEY_MASK ((UINT64_C(1) << KEY_BITS) - 1)
#define ONE_WAITER (UINT64_C(1) << KEY_BITS)

static uint64_t waiters[WAITERS_SLOTS] __attribute__((aligned(64))) SP_LARGE;
/* Waiters registered anywhere, on a line of its own: while it is 0 (no
 * thread is blocked on a lock), a release reads it alone. */
static struct {
	int n;
} waiting __attribute__((aligned(64)));

static inline uint64_t *waiters_line(uintptr_t obj)
{
	uint64_t h = ((uint64_t)obj >> 3) * UINT64_C(0x9E3779B97F4A7C15);

	return &waiters[(h >> (64 - 12)) & (WAITERS_SLOTS - WAITERS_LINE)];
}

/* Count a waiter for @obj: its slot's index, or -1 when its line is full. */
static int waiter_add(uintptr_t obj)
{
	uint64_t key = (uint64_t)obj & KEY_MASK;
	uint64_t *line = waiters_line(obj);

	for (int attempt = 0; attempt < 4; attempt++) {
		int free_slot = -1;

		for (unsigned i = 0; i < WAITERS_LINE; i++) {
			uint64_t v = sp_load_relaxed(&line[i]);

			if ((v & KEY_MASK) == key && v >> KEY_BITS) {
				if (__atomic_compare_exchange_n(&line[i], &v, v + ONE_WAITER, 0,
								__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
					__atomic_fetch_add(&waiting.n, 1, __ATOMIC_ACQ_REL);
					return (int)(line - waiters + i);
				}
				goto again;
			}
			if (!(v >> KEY_BITS) && free_slot < 0)
				free_slot = (int)i;
		}
		if (free_slot >= 0) {
			uint64_t v = sp_load_relaxed(&line[free_slot]);

			if (!(v >> KEY_BITS) &&
			    __atomic_compare_exchange_n(&line[free_slot], &v, ONE_WAITER | key, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
				__atomic_fetch_add(&waiting.n, 1, __ATOMIC_ACQ_REL);
				return (int)(line - waiters + free_slot);
			}
		}
	again:;
	}
	__atomic_fetch_add(&sp_trace_waiters_full, 1, __ATOMIC_RELAXED);
	return -1;
}

static void waiter_remove(int slot)
{
	__atomic_fetch_sub(&waiters[slot], ONE_WAITER, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&waiting.n, 1, __ATOMIC_RELEASE);
}

/* The count of all waiters, then the lock's cache line, read without a
 * branch per slot. */
static inline int has_waiters(uintptr_t obj)
{
	uint64_t key = (uint64_t)obj & KEY_MASK;
	const uint64_t *line;
	int found = 0;

	if (SP_LIKELY(!sp_load_relaxed(&waiting.n)))
		return 0;
	line = waiters_line(obj);
	for (unsigned i = 0; i < WAITERS_LINE; i++) {
		uint64_t v = sp_load_relaxed(&line[i]);

		found |= ((v & KEY_MASK) == key) & (v >= ONE_WAITER);
	}
	return found;
}

/* ---- the events -------------------------------------------------------- */

void sp_trace_lock_event(int ev, const void *obj, uint64_t type, const struct sp_site *site,
			 uint64_t ns, int has_ns)
{
	uint64_t a[SP_TRACE_MAX_ARGS];

	if (!sp_load_relaxed(&syncprof__trace_on[ev]))
		return;
	a[SP_LA_OBJ] = (uint64_t)(uintptr_t)obj;
	if (site->file) {
		a[SP_LA_SITE] = (uint64_t)(uintptr_t)site->file;
		a[SP_LA_FUNC] = (uint64_t)(uintptr_t)site->func;
		a[SP_LA_LINE] = site->line ? site->line : 1;
	} else {
		a[SP_LA_SITE] = site->pc;
		a[SP_LA_FUNC] = 0;
		a[SP_LA_LINE] = 0;
	}
	a[SP_LA_TYPE] = type;
	a[SP_LA_NS] = ns;
	syncprof_trace_emit((unsigned)ev, has_ns ? 6 : 5, a);
}

static inline int mode_all(void)
{
	return sp_load_relaxed(&sp_trace_lock_mode) == SP_TRACE_LOCKS_ALL;
}

/* Is a wait (or a hold released to a waiter) of @ns long enough? */
static inline int long_enough(uint64_t ns)
{
	return mode_all() || ns >= sp_load_relaxed(&sp_trace_min_wait_ns);
}

/* Are wait starts traced (the threshold is decided at a wait's end)? */
static inline int wait_starts(void)
{
	return mode_all() || !sp_load_relaxed(&sp_trace_min_wait_ns);
}

void sp_trace_acquired_slow(const void *obj, int type, const struct sp_site *site)
{
	if (has_release(type))
		held_push((uintptr_t)obj);
	if (mode_all())
		sp_trace_lock_event(SP_EV_LOCK_ACQUIRED, obj, (uint64_t)type, site, 0, 1);
}

void sp_trace_try_failed(const void *obj, int type, const struct sp_site *site)
{
	if (mode_all())
		sp_trace_lock_event(SP_EV_LOCK_TRY_FAILED, obj, (uint64_t)type, site, 0, 0);
}

int sp_trace_wait_begin(const void *obj, int type, const struct sp_site *site)
{
	if (wait_starts())
		sp_trace_lock_event(SP_EV_LOCK_WAIT, obj, (uint64_t)type, site, 0, 0);
	if (!has_release(type) || mode_all())
		return -1;
	return waiter_add((uintptr_t)obj);
}

void sp_trace_wait_end(int slot, const void *obj, int type, const struct sp_site *site,
		       uint64_t wait_ns, int acquired)
{
	if (slot >= 0)
		waiter_remove(slot);
	if (!acquired)
		return;
	if (has_release(type))
		held_push((uintptr_t)obj);
	if (long_enough(wait_ns))
		sp_trace_lock_event(SP_EV_LOCK_ACQUIRED, obj, (uint64_t)type, site, wait_ns, 1);
}

int sp_trace_release_begin(const void *obj, uint64_t *hold_ns, int *has_hold)
{
	if (mode_all()) {
		*has_hold = held_pop((uintptr_t)obj, hold_ns);
		return 1;
	}
	/* Contended only: the clock is read for a release that is written. */
	if (SP_LIKELY(!has_waiters((uintptr_t)obj))) {
		*has_hold = 0;
		held_pop((uintptr_t)obj, NULL);
		return 0;
	}
	*has_hold = held_pop((uintptr_t)obj, hold_ns);
	return !*has_hold || long_enough(*hold_ns);
}

/*
 * A condition wait releases its mutex and takes it again: the cond events
 * carry the mutex in place of the type, so readers see the hold end and
 * restart.  The mutex is remembered in TLS between the two (the probe's
 * wake-up path does not have it).
 */
void sp_trace_cond_wait(const void *cond, const void *mutex, const struct sp_site *site)
{
	tls_cond_mutex = (uint64_t)(uintptr_t)mutex;
	if (wait_starts())
		sp_trace_lock_event(SP_EV_COND_WAIT, cond, tls_cond_mutex, site, 0, 0);
}

void sp_trace_cond_woken(const void *cond, const struct sp_site *site, uint64_t wait_ns)
{
	held_restart((uintptr_t)tls_cond_mutex);
	if (long_enough(wait_ns))
		sp_trace_lock_event(SP_EV_COND_WOKEN, cond, tls_cond_mutex, site, wait_ns, 1);
}

/*
 * A futex wake that woke @woken waiters of the word @obj (probe_futex.c):
 * the releaser's side of a futex lock, whose holds are not seen.  Written
 * in both modes and without threshold: a wake that woke someone is what
 * "a release that found a waiter" is for the other locks (its hold is
 * unknown, so there is nothing to compare with min_wait_ns), and wakes
 * are rare next to acquisitions (only lock slow paths make the call).
 */
void sp_trace_futex_wake(const void *obj, const struct sp_site *site, uint64_t woken)
{
	sp_trace_lock_event(SP_EV_FUTEX_WAKE, obj, SP_TYPE_FUTEX, site, woken, 1);
}

/* ---- the mode ----------------------------------------------------------- */

int syncprof_trace_set_lock_events(int which, uint64_t min_wait_ns)
{
	if (which != SYNCPROF_TRACE_CONTENDED && which != SYNCPROF_TRACE_ALL)
		return -EINVAL;
	sp_lock(&sp_trace_ctl_lock);
	sp_store_relaxed(&sp_trace_min_wait_ns, min_wait_ns);
	sp_store_relaxed(&sp_trace_lock_mode, which);
	sp_trace_file_mode_changed_locked();
	sp_unlock(&sp_trace_ctl_lock);
	return 0;
}
