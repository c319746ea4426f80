/*
 * watchdog.c - warn about lock waits that last too long, while they last.
 *
 * With warn_wait=MS, a thread that has waited more than MS for a lock and
 * is still waiting gets one warning on stderr naming the thread, its call
 * site, the lock and - when the library has hold tracking - the thread
 * holding the lock, the site where it acquired it and for how long it has
 * held it.  When a warned wait ends, one more line gives its total.
 *
 * Design: the contended slow path of the probe (probe.c), which already
 * reads the clock before blocking, publishes "waiting since t0 on obj at
 * site" in the thread's own record (struct sp_wait_pub, a cache line only
 * the owner writes) under a sequence count, and clears it when the wait
 * ends.  The helper thread (control.c) calls sp_watchdog_scan() every
 * MS/4: it walks the registry, copies every wait older than MS (with the
 * key of the entry waited for), and prints outside the registry lock.
 * Uncontended acquisitions are not touched at all; a contended wait costs
 * a few stores on a line of its own thread, one of them seq_cst (no
 * extra clock read: the wait's own start and clock mode are published, and
 * the watchdog converts them, see clock.c).  Condition-variable waits
 * (timed or not) are watched too: waiting there for long is what they are
 * for, but a thread that never gets its signal is how many programs hang,
 * and the warning says it is a condition wait.
 *
 * One warning per wait: a wait is identified by its sequence number; the
 * watchdog writes that number into the record's @warned field, then
 * re-reads the sequence.  The owner, when its wait ends, bumps the
 * sequence, then reads @warned; seq_cst on both sides (Dekker) means
 * that at least one of them sees the other.  If the watchdog sees the
 * wait already over it prints nothing; otherwise the owner is bound to see
 * @warned and publishes the wait's total in done_seq/done_ns, which the
 * watchdog prints at a later scan, or at exit (control.c runs a last scan
 * from an exit handler).  A warned wait whose thread exits before the
 * total was read is reported as such.
 *
 * The holder comes from hold tracking (hold.c, hold=1 or syncprof run
 * --hold, or the held lists alone with deadlock=1 or lock_order=1):
 * sp_hold_lookup() is lock-free and never blocks the recording threads.
 * It dates most holds from the first lookup of the lock, so every scan
 * looks up the lock of every thread that waits, and the warning says "for
 * at least".  Each scan builds the waits-for graph (deadlock.c) from these
 * copies: when the holder is itself waiting, the warning follows the chain
 * to the root holder, one indented line per link; when waiting threads
 * form a cycle, a deadlock report is printed at once (deadlock=1, or
 * warn_wait with hold tracking on), whatever warn_wait is.  A condition
 * wait's warning names the sites that signalled that condition variable
 * last (wait_pub.c), as a hint of who should signal it; a futex wait's
 * (locks that wait through syscall(SYS_futex): Rust std, parking_lot,
 * Abseil), whose holder is never seen, the site that last woke a waiter
 * of that futex word (probe_futex.c, kept with hold tracking on).
 *
 * Alternatives considered: a timer per wait (a syscall on every contended
 * wait, and timers fire in the waiting thread); printing from the waiting
 * thread when it wakes (then nothing is said while the program hangs,
 * which is when it matters); scanning the per-thread statistics for
 * growing wait totals (they change only when a wait ends).
 */
#include <errno.h>
#include <string.h>

#include "runtime/runtime.h"
#include "report/profile.h"
#include "record/hold.h"


/* ---- the scanning side (helper thread only) --------------------------- */

#define MAX_PENDING 64 /* warned waits whose total is not printed yet */
#define MAX_NEW 32     /* warnings printed per scan */
#define DEADLOCK_SCAN_MS 100 /* scan interval of the deadlock check alone */

struct wait_copy {
	pid_t tid;
	char name[16];
	uint32_t id;
	uintptr_t obj;
	struct sp_site site;
	uint8_t type;
};

struct done_copy {
	struct wait_copy w;
	uint64_t total_ns;
	int thread_gone;
};

/* Written by the watchdog's scan: the waits it follows. */
static struct {
	struct wait_copy waits[MAX_PENDING];
	unsigned n;
} pending SP_LARGE;

struct scan_ctx {
	uint64_t now, limit_ns;
	int fresh[MAX_NEW]; /* nodes of the graph to warn about */
	unsigned n_fresh;
	struct done_copy done[MAX_PENDING];
	unsigned n_done;
	unsigned char seen[MAX_PENDING];
	struct sp_wg graph;
};

/* The deadlock check runs with deadlock=1, and with warn_wait when the
 * held lists are there anyway (hold=1, lock_order=1). */
static int deadlock_check_on(void)
{
	return sp_opts.deadlock || (sp_opts.warn_wait_ms && sp_hold_is_on());
}

int sp_watchdog_wanted(void)
{
	return sp_opts.warn_wait_ms || sp_opts.deadlock;
}

/* First pass (registry lock held): totals of warned waits, and a copy of
 * every wait in progress into the graph. */
static void scan_thread(struct sp_thread *t, void *arg)
{
	struct scan_ctx *c = arg;

	for (unsigned i = 0; i < pending.n; i++) {
		if (pending.waits[i].tid != t->tid)
			continue;
		c->seen[i] = 1;
		if (sp_load_acquire(&t->wait.done_seq) == pending.waits[i].id &&
		    c->n_done < MAX_PENDING) {
			c->done[c->n_done].w = pending.waits[i];
			c->done[c->n_done].total_ns = sp_load_relaxed(&t->wait.done_ns);
			c->done[c->n_done++].thread_gone = 0;
			c->seen[i] = 2; /* finished */
		}
	}
	sp_wg_add(&c->graph, t);
}

/* Second pass (registry lock held): each wait read again (the deadlock
 * check's double collect), and the waits to warn about marked. */
static void pick_thread(struct sp_thread *t, void *arg)
{
	struct scan_ctx *c = arg;
	struct sp_wg_node *n = sp_wg_find(&c->graph, t);

	pid_t root_tid;
	struct sp_site root;

	if (!n)
		return;
	sp_wg_recheck(&c->graph, t);
	/* A chain (the holder waits too): its root holder's site goes to
	 * blame when this wait ends (hold.c, with hold times on). */
	if (sp_hold_times_are_on() && sp_wg_root(&c->graph, n, &root_tid, &root))
		sp_watch_set_root(t, n->id, &root);
	if (n->waited_ns < c->limit_ns)
		return;
	if (sp_load_relaxed(&t->wait.warned) == n->id || c->n_fresh >= MAX_NEW ||
	    pending.n + c->n_fresh >= MAX_PENDING)
		return;
	__atomic_store_n(&t->wait.warned, n->id, __ATOMIC_SEQ_CST); /* see sp_watch_end() */
	if (__atomic_load_n(&t->wait.seq, __ATOMIC_SEQ_CST) != n->id)
		return; /* ended just now: not "still waiting" */
	c->fresh[c->n_fresh++] = (int)(n - c->graph.node);
}

static void print_done(FILE *out, const struct done_copy *d)
{
	char site[512];

	sp_wg_site_name(&d->w.site, site, sizeof(site));
	if (d->thread_gone)
		fprintf(out,
			"syncprof: thread %d (%s) stopped waiting for %s %#lx at %s and exited "
			"before its total wait was read\n",
			(int)d->w.tid, d->w.name, sp_type_name(d->w.type), (unsigned long)d->w.obj,
			site);
	else
		fprintf(out, "syncprof: thread %d (%s) waited %.1f ms in total for %s %#lx at %s\n",
			(int)d->w.tid, d->w.name, (double)d->total_ns / 1e6,
			sp_type_name(d->w.type), (unsigned long)d->w.obj, site);
}

/* The helper thread scans; so does the exit handler, once, for the totals
 * of waits that ended after the last scan.  scan_lock makes them take
 * turns (order: scan_lock, report_lock, registry lock). */
static sp_lock_t scan_lock = SP_LOCK_INIT;

void sp_watchdog_forget(void)
{
	/* Child of fork(): the warned waits were the parent's threads', and
	 * the parent's helper thread may have held scan_lock. */
	scan_lock = (sp_lock_t)SP_LOCK_INIT;
	pending.n = 0;
	sp_wg_forget();
}

void sp_watchdog_status(FILE *out)
{
	if (!sp_watchdog_wanted())
		return;
	sp_lock(&scan_lock);
	if (deadlock_check_on())
		sp_wg_status(out);
	sp_unlock(&scan_lock);
}

unsigned sp_watchdog_scan(FILE *out)
{
	static struct scan_ctx c SP_LARGE; /* under scan_lock; too big for a stack */
	unsigned keep = 0, interval, printed;

	if (!sp_watchdog_wanted())
		return 1000;
	sp_lock(&scan_lock);
	c.n_fresh = c.n_done = 0;
	memset(c.seen, 0, sizeof(c.seen));
	c.now = sp_now_ns();
	c.limit_ns = sp_opts.warn_wait_ms ? (uint64_t)sp_opts.warn_wait_ms * 1000000u : UINT64_MAX;
	sp_wg_reset(&c.graph, c.now);
	sp_registry_foreach_thread(scan_thread, &c);
	/* Hold tracking dates a hold from the first time anyone looked it up
	 * (hold.c): every waiter's lock is looked up on every scan, so that
	 * by the warning the holder's age is known to within one scan. */
	sp_wg_link(&c.graph);
	if (deadlock_check_on() && c.graph.n_cycles)
		sp_wg_recheck_holders(&c.graph);
	sp_registry_foreach_thread(pick_thread, &c);
	for (unsigned i = 0; i < pending.n; i++) {
		if (c.seen[i] == 2)
			continue;
		if (!c.seen[i] && c.n_done < MAX_PENDING) {
			c.done[c.n_done].w = pending.waits[i];
			c.done[c.n_done++].thread_gone = 1;
			continue;
		}
		pending.waits[keep++] = pending.waits[i];
	}
	pending.n = keep;
	/* Symbolizing needs report_lock, taken before the registry lock. */
	sp_report_lock();
	printed = 0;
	if (deadlock_check_on())
		printed += sp_wg_report_deadlocks(out, &c.graph);
	for (unsigned i = 0; i < c.n_done; i++)
		print_done(out, &c.done[i]);
	for (unsigned i = 0; i < c.n_fresh; i++) {
		const struct sp_wg_node *n = &c.graph.node[c.fresh[i]];
		struct wait_copy *p = &pending.waits[pending.n++];

		sp_wg_print_warning(out, &c.graph, n);
		p->tid = n->tid;
		memcpy(p->name, n->name, sizeof(p->name));
		p->id = n->id;
		p->obj = n->obj;
		p->site = n->site;
		p->type = n->type;
	}
	sp_report_unlock();
	printed += c.n_done + c.n_fresh;
	sp_unlock(&scan_lock);
	if (printed)
		fflush(out);
	if (!sp_opts.warn_wait_ms)
		return DEADLOCK_SCAN_MS;
	interval = sp_opts.warn_wait_ms / 4;
	interval = interval < 5 ? 5 : interval > 250 ? 250 : interval;
	return deadlock_check_on() && interval > DEADLOCK_SCAN_MS ? DEADLOCK_SCAN_MS : interval;
}
