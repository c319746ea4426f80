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
 * --hold): sp_hold_lookup() is lock-free and never blocks the recording
 * threads.  It dates most holds from the first lookup of the lock, so
 * every scan looks up the lock of every thread that waits, and the warning
 * says "for at least".
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
#include "runtime/runtime.h"


/* ---- the scanning side (helper thread only) --------------------------- */

#define MAX_PENDING 64 /* warned waits whose total is not printed yet */
#define MAX_NEW 32     /* warnings printed per scan */

struct wait_copy {
	pid_t tid;
	char name[16];
	uint32_t id;
	uint64_t waited_ns; /* when copied */
	uintptr_t obj;
	struct sp_site site;
	uint8_t type;
};

struct done_copy {
	struct wait_copy w;
	uint64_t total_ns;
	int thread_gone;
};

static struct wait_copy pending[MAX_PENDING];
static unsigned n_pending;

struct scan_ctx {
	uint64_t now, limit_ns;
	struct wait_copy fresh[MAX_NEW];
	unsigned n_fresh;
	struct done_copy done[MAX_PENDING];
	unsigned n_done;
	unsigned char seen[MAX_PENDING];
};

/* Copy @t's published wait; 0 when it is waiting (consistent copy). */
static int read_wait(struct sp_thread *t, struct wait_copy *c)
{
	struct sp_wait_pub *w = &t->wait;

	for (int tries = 0; tries < 4; tries++) {
		uint32_t s1 = sp_load_acquire(&w->seq), s2;

		if (s1 & 1)
			continue;
		const struct sp_entry *e;
		uint64_t t0;
		int mode;

		/* Acquire loads: if one sees a store of a newer wait, the seq
		 * load below sees that wait's odd or newer seq (no fences, which
		 * ThreadSanitizer does not model). */
		t0 = sp_load_acquire(&w->t0);
		mode = sp_load_acquire(&w->mode);
		e = sp_load_acquire(&w->entry);
		s2 = sp_load_relaxed(&w->seq);
		if (s1 != s2)
			continue;
		if (!e)
			return -ENOENT;
		c->waited_ns = sp_wait_ns(mode, t0);
		/* The entry's key is immutable, and the entry lives as long as
		 * its thread's record, which the registry lock keeps. */
		c->obj = e->obj;
		c->site.file = e->file;
		c->site.func = e->cold ? e->cold->func : NULL;
		c->site.pc = e->pc;
		c->site.line = e->line;
		c->type = e->type;
		c->id = s1;
		c->tid = t->tid;
		memcpy(c->name, t->name, sizeof(c->name));
		return 0;
	}
	return -EAGAIN;
}

static void scan_thread(struct sp_thread *t, void *arg)
{
	struct scan_ctx *c = arg;
	struct wait_copy w;

	for (unsigned i = 0; i < n_pending; i++) {
		if (pending[i].tid != t->tid)
			continue;
		c->seen[i] = 1;
		if (sp_load_acquire(&t->wait.done_seq) == pending[i].id &&
		    c->n_done < MAX_PENDING) {
			c->done[c->n_done].w = pending[i];
			c->done[c->n_done].total_ns = sp_load_relaxed(&t->wait.done_ns);
			c->done[c->n_done++].thread_gone = 0;
			c->seen[i] = 2; /* finished */
		}
	}
	if (read_wait(t, &w))
		return;
	/* Hold tracking dates a hold from the first time anyone looked it up
	 * (hold.c): look at every waiter's lock on every scan, so that by the
	 * warning the holder's age is known to within one scan interval. */
	if (sp_hold_is_on()) {
		struct sp_site hs;
		uint64_t since;
		pid_t tid;

		sp_hold_lookup(w.obj, &tid, &hs, &since);
	}
	if (w.waited_ns < c->limit_ns)
		return;
	if (sp_load_relaxed(&t->wait.warned) == w.id || c->n_fresh >= MAX_NEW ||
	    n_pending + c->n_fresh >= MAX_PENDING)
		return;
	__atomic_store_n(&t->wait.warned, w.id, __ATOMIC_SEQ_CST); /* see sp_watch_end() */
	if (__atomic_load_n(&t->wait.seq, __ATOMIC_SEQ_CST) != w.id)
		return; /* ended just now: not "still waiting" */
	c->fresh[c->n_fresh++] = w;
}

static void format_site(const struct sp_site *s, char *buf, size_t size)
{
	if (s->file) {
		snprintf(buf, size, "%s:%u%s%s%s",
			 sp_path_strip(s->file, sp_opts.report.src_root, 0), (unsigned)s->line,
			 s->func ? " (" : "", s->func ? s->func : "", s->func ? ")" : "");
		return;
	}
	if (s->pc) {
		sp_site_name(s, NULL, buf, size);
		return;
	}
	snprintf(buf, size, "an unknown site");
}

static void print_warning(FILE *out, const struct wait_copy *w, uint64_t now)
{
	char site[512], holder_site[512], holder[768];
	struct sp_site hs;
	uint64_t since = 0;
	pid_t tid = 0;

	format_site(&w->site, site, sizeof(site));
	if (w->type == SP_TYPE_CONDVAR)
		snprintf(holder, sizeof(holder),
			 "a condition wait: it goes on until another thread signals the "
			 "condition variable (or its timeout)");
	else if (!sp_hold_is_on())
		snprintf(holder, sizeof(holder),
			 "holder unknown (hold tracking is off: hold=1, or syncprof run --hold)");
	else if (sp_hold_lookup(w->obj, &tid, &hs, &since) == 0) {
		format_site(&hs, holder_site, sizeof(holder_site));
		/* A lower bound: hold.c dates most holds from their first
		 * lookup (see scan_thread()). */
		snprintf(holder, sizeof(holder),
			 "held by thread %d for at least %.1f ms, acquired at %s", (int)tid,
			 since && now > since ? (double)(now - since) / 1e6 : 0.0, holder_site);
	} else
		snprintf(holder, sizeof(holder), "holder unknown");
	fprintf(out,
		"syncprof: warning: thread %d (%s) has been waiting %.1f ms for %s %#lx at %s; "
		"%s\n",
		(int)w->tid, w->name, (double)w->waited_ns / 1e6, sp_type_name(w->type),
		(unsigned long)w->obj, site, holder);
}

static void print_done(FILE *out, const struct done_copy *d)
{
	char site[512];

	format_site(&d->w.site, site, sizeof(site));
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
	n_pending = 0;
}

unsigned sp_watchdog_scan(FILE *out)
{
	static struct scan_ctx c; /* under scan_lock; too big for a stack */
	unsigned keep = 0, interval, printed;

	if (!sp_opts.warn_wait_ms)
		return 1000;
	sp_lock(&scan_lock);
	memset(&c, 0, sizeof(c));
	c.now = sp_now_ns();
	c.limit_ns = (uint64_t)sp_opts.warn_wait_ms * 1000000u;
	sp_registry_foreach_thread(scan_thread, &c);
	for (unsigned i = 0; i < n_pending; i++) {
		if (c.seen[i] == 2)
			continue;
		if (!c.seen[i] && c.n_done < MAX_PENDING) {
			c.done[c.n_done].w = pending[i];
			c.done[c.n_done++].thread_gone = 1;
			continue;
		}
		pending[keep++] = pending[i];
	}
	n_pending = keep;
	/* Symbolizing needs report_lock, taken before the registry lock. */
	sp_report_lock();
	for (unsigned i = 0; i < c.n_done; i++)
		print_done(out, &c.done[i]);
	for (unsigned i = 0; i < c.n_fresh; i++) {
		print_warning(out, &c.fresh[i], c.now);
		pending[n_pending++] = c.fresh[i];
	}
	sp_report_unlock();
	printed = c.n_done + c.n_fresh;
	sp_unlock(&scan_lock);
	if (printed)
		fflush(out);
	interval = sp_opts.warn_wait_ms / 4;
	return interval < 5 ? 5 : interval > 250 ? 250 : interval;
}
