/*
 * probe_futex.c - futex waits and wakes made through libc's syscall(): the
 * locks that never call pthread (Rust std, parking_lot, Abseil, folly,
 * TBB, libstdc++'s atomic waits), as the preload library's syscall()
 * interposer hands them over (preload.c).
 *
 * Design.  A call that may sleep - FUTEX_WAIT, FUTEX_WAIT_BITSET,
 * FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI, FUTEX_LOCK_PI2 (the op masked
 * with FUTEX_CMD_MASK: private and clock flags pass), and futex_waitv -
 * is timed around the real syscall() and recorded as a wait of type
 * futex: its object the futex word (futex_waitv: the first one), its site
 * the first caller outside the lock library (locklib.c).  Lock libraries
 * only make the call on their slow path, so every recorded call is a
 * contended wait; one that did not sleep (EAGAIN: the word changed
 * before the kernel slept; EFAULT, EINVAL...) is not recorded.  Each futex wait is
 * counted: a lock library that sleeps twice for one acquisition shows two
 * (docs/preload.md).
 *
 * A wake (FUTEX_WAKE, _WAKE_BITSET, _WAKE_OP, _REQUEUE, _CMP_REQUEUE,
 * _CMP_REQUEUE_PI, _UNLOCK_PI) that woke someone (return value > 0), with
 * hold tracking on, stores its site as the word's last waker (wakers[]:
 * direct-mapped by the word's address); a wait that ends on that word
 * then blames its time on that site, as other locks blame their holder's
 * (hold.c, sp_wait_end()), and the watchdog names it in its warning
 * about a long wait on that word (sp_futex_last_waker()).  Hold times of
 * such locks are unknown: no call is seen when they are taken uncontended.
 *
 * The trace (while lock events are on): a wait is a lock_wait (threshold
 * 0) and, when it slept, a lock_acquired of type futex with its wait; a
 * wake that woke someone a futex_wake event with the number woken, hold
 * tracking or not, from which the exports draw a flow to the wait it
 * ended (docs/trace-format.md).  A call that did not sleep writes no
 * lock_acquired, as it makes no row.
 *
 * Return values and errno are the real call's, byte for byte: the
 * profiler's bookkeeping runs after the call with errno saved, and
 * restores it.  Bad arguments reach the kernel unchanged.
 *
 * Alternatives considered: seccomp or Syscall User Dispatch traps would
 * see raw `syscall` instructions too, at 1.5-2 us per trapped call, per
 * thread for SUD, and break programs with their own SIGSYS handling;
 * keying rows by the futex word alone merges every caller of a lock and
 * spreads parking_lot's and Abseil's waits over one word per thread.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_CMD_MASK
#define FUTEX_CMD_MASK ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)
#endif

/* The last site that woke a waiter of a futex word, direct-mapped. */
#define WAKERS 4096
static struct waker {
	uintptr_t word; /* written last (release) */
	uintptr_t pc;
} wakers[WAKERS] SP_LARGE;

static struct waker *waker_slot(uintptr_t word)
{
	return &wakers[(word >> 2) * 0x9E3779B97F4A7C15ull >> 52];
}

int sp_futex_last_waker(uintptr_t word, struct sp_site *site)
{
	struct waker *k = waker_slot(word);
	uintptr_t pc;

	if (!word || sp_load_acquire(&k->word) != word)
		return 0;
	pc = sp_load_relaxed(&k->pc);
	if (sp_load_acquire(&k->word) != word || !pc)
		return 0;
	*site = (struct sp_site){ NULL, NULL, pc, 0 };
	return 1;
}

int sp_futex_op_waits(long nr, long op)
{
	if (nr == SYS_futex_waitv)
		return 1;
	if (nr != SYS_futex)
		return 0;
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET:
	case FUTEX_WAIT_REQUEUE_PI:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
		return 1;
	}
	return 0;
}

static int op_wakes(long op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAKE:
	case FUTEX_WAKE_BITSET:
	case FUTEX_WAKE_OP:
	case FUTEX_REQUEUE:
	case FUTEX_CMP_REQUEUE:
	case FUTEX_CMP_REQUEUE_PI:
	case FUTEX_UNLOCK_PI:
		return 1;
	}
	return 0;
}

/* futex_waitv's first word: struct futex_waitv { u64 val, uaddr; u32 flags, rsvd; }. */
static uintptr_t waitv_word(long vec, long n)
{
	const uint64_t *v = (const uint64_t *)vec;

	return v && n > 0 ? (uintptr_t)v[1] : 0;
}

static long futex_wait_timed(long nr, const long *a, uintptr_t ra)
{
	uintptr_t word = nr == SYS_futex ? (uintptr_t)a[0] : waitv_word(a[0], a[1]);
	struct sp_thread *t = sp_thread_self(), *watched;
	struct sp_site site = { NULL, NULL, ra, 0 };
	struct sp_entry *e;
	struct sp_wait_ctx w;
	int mode, slot = SP_TRACE_NO_SLOT, err, slept;
	uint64_t t0, ns;
	long rc;

	if (!t)
		return SP_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	site.pc = sp_locklib_site_pc(ra);
	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on)))
		slot = sp_trace_wait_begin((void *)word, SP_TYPE_FUTEX, &site);
	/* The entry before the wait only for the watchdog: a call that does
	 * not sleep leaves no row. */
	e = SP_UNLIKELY(sp_load_relaxed(&sp_watch_on)) ? sp_entry_get(t, &site, word, SP_TYPE_FUTEX)
						       : NULL;
	watched = e ? t : NULL;
	t0 = sp_wait_start(&mode);
	if (watched)
		sp_watch_begin(watched, e, t0, mode, 0);
	rc = SP_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	err = errno;
	ns = sp_wait_ns(mode, t0);
	if (watched)
		sp_watch_end(watched, ns);
	/* Slept: woken, timed out or interrupted.  EAGAIN (the word had
	 * changed), EFAULT, EINVAL, ENOSYS...: no wait. */
	slept = rc >= 0 || err == ETIMEDOUT || err == EINTR;
	if (slot != SP_TRACE_NO_SLOT)
		sp_trace_wait_end(slot, (void *)word, SP_TYPE_FUTEX, &site, ns, slept);
	if (slept) {
		struct waker *k = waker_slot(word);

		w.have_holder = 0;
		w.root = NULL;
		if (sp_hold_is_on() && sp_load_acquire(&k->word) == word) {
			w.holder = (struct sp_site){ NULL, NULL, sp_load_relaxed(&k->pc), 0 };
			w.have_holder = sp_load_acquire(&k->word) == word && w.holder.pc;
		}
		if (e || (e = sp_entry_get(t, &site, word, SP_TYPE_FUTEX))) {
			sp_entry_record_wait(e, ns, 1);
			sp_wait_end(e, ns, &w);
		}
	}
	errno = err;
	return rc;
}

static long wake(const long *a, uintptr_t ra)
{
	long rc = SP_REAL(syscall)(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]);
	int err = errno;

	/* sp_thread_self(), not sp_tls_self: a thread whose first call seen is
	 * a wake (a holder that took its lock uncontended) is one to name;
	 * NULL for the profiler's own calls and during thread teardown. */
	if (rc > 0 && sp_thread_self()) {
		int hold = sp_hold_is_on(), trace = sp_load_relaxed(&sp_trace_locks_on);
		uintptr_t pc = hold || trace ? sp_locklib_site_pc(ra) : 0;

		if (hold) {
			struct waker *k = waker_slot((uintptr_t)a[0]);

			/* Readers check the word before and after the pc (a
			 * torn pair names no waker rather than the wrong one). */
			sp_store_release(&k->word, 0);
			sp_store_relaxed(&k->pc, pc);
			sp_store_release(&k->word, (uintptr_t)a[0]);
		}
		if (SP_UNLIKELY(trace)) {
			struct sp_site site = { NULL, NULL, pc, 0 };

			sp_trace_futex_wake((void *)a[0], &site, (uint64_t)rc);
		}
	}
	errno = err;
	return rc;
}

SP_NOINLINE long sp_probe_futex(long nr, const long *a, uintptr_t ra)
{
	if (nr == SYS_futex && op_wakes(a[1]))
		return wake(a, ra);
	if (sp_futex_op_waits(nr, a[1]))
		return futex_wait_timed(nr, a, ra);
	return SP_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
