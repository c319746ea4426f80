/*
 * wait_pub.c - a thread's wait in progress, published for the watchdog
 * (src/runtime/watchdog.c has the design and the reading side).
 *
 * The contended slow path of the probe, which already reads the clock
 * before blocking, publishes "waiting since t0 on entry" in the thread's
 * own record (struct sp_wait_pub, a cache line only the owner writes)
 * under a sequence count, and clears it when the wait ends; only while
 * sp_watch_on is set (warn_wait=MS).
 */
#include "record/record.h"

unsigned sp_watch_on;

void sp_watch_begin(struct sp_thread *t, const struct sp_entry *e, uint64_t t0, int mode)
{
	struct sp_wait_pub *w = &t->wait;
	uint32_t s = w->seq;

	sp_store_relaxed(&w->seq, s + 1); /* odd: being written */
	/* Release stores (plain moves on x86): a reader that sees one of
	 * them also sees the odd seq above, and retries.  The wait's own
	 * start (TSC ticks or ns, clock.c): no extra clock read here; the
	 * watchdog converts it with the same mode. */
	sp_store_release(&w->t0, t0);
	sp_store_release(&w->mode, mode);
	sp_store_release(&w->entry, e);
	sp_store_release(&w->seq, s + 2); /* even: a wait, identified by s + 2 */
}

void sp_watch_end(struct sp_thread *t, uint64_t wait_ns)
{
	struct sp_wait_pub *w = &t->wait;
	uint32_t id = w->seq;

	sp_store_relaxed(&w->seq, id + 1);
	sp_store_release(&w->entry, NULL);
	/* Sequentially consistent store then load, as scan_thread() does
	 * with @warned and seq (Dekker): one of us sees the other. */
	__atomic_store_n(&w->seq, id + 2, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&w->warned, __ATOMIC_SEQ_CST) == id) {
		sp_store_relaxed(&w->done_ns, wait_ns);
		sp_store_release(&w->done_seq, id);
	}
}

