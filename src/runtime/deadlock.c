/*
 * deadlock.c - the waits-for graph of the watchdog: who waits for whom,
 * wait chains to their root holder, and deadlocks (waiting threads in a
 * cycle), reported on stderr at once and kept for 'syncprof ctl PID
 * status'.
 *
 * What it does.  Each watchdog scan (watchdog.c, helper thread, under its
 * scan_lock) copies the published wait of every waiting thread (wait_pub.c)
 * into a node, then asks hold tracking's published held lists who holds
 * each lock waited for: sp_hold_lookup() for an exclusive holder,
 * sp_hold_readers() for the readers of an rwlock a writer waits for (one
 * reading thread is a holder; several are named as a count and end the
 * chain).  A node whose holder is itself waiting links to that holder's
 * node.  Every node has at most one link, so the graph is a set of chains
 * that end at a root holder (running, or waiting for something no single
 * thread holds: a condition variable, semaphore, barrier or join), or in
 * a cycle: every thread of a cycle waits for a lock that the next one
 * holds, and none of them can go on.
 *
 * No false deadlocks.  The copies are taken at different moments, and a
 * published wait may already be over (the wait ends, then its record is
 * cleared).  A cycle found in one pass is checked by a second one (a double
 * collect): the holders are looked up again (same thread, same hold, dated
 * by the same start: hold.c dates a hold once), then every member's wait is
 * read again (same sequence number: the same wait, never ended in
 * between).  All first reads precede all second reads, so at one instant
 * between them every member waited (or was about to block) for a lock
 * that the next member held - held for real, as hold.c publishes a hold
 * after the acquisition and removes it before the release.  Such a cycle
 * lasts forever for untimed lock calls: a deadlock.  A cycle with a timed
 * member (timedlock, clocklock: the wait publishes it, wait_pub.c) ends at
 * that member's deadline, when its call returns ETIMEDOUT: no deadlock.
 * It is said once as a warning that names the timed wait, and is not
 * counted among the deadlocks.
 *
 * Never blocks on the program.  The scan takes the watchdog's scan_lock,
 * the registry lock (to walk the thread records) and report_lock (to name
 * sites): all of them the profiler's own, never held by a thread while it
 * waits for a program's lock; every copy from a recording thread is
 * lock-free.  A deadlocked program thus cannot stop the report.  Printing
 * uses stdio on stderr (its lock is held only inside a stdio call).
 *
 * Each deadlock is reported once: a cycle is identified by the (thread,
 * wait) pairs of its members; the last SP_DL_KEEP reports are kept (text,
 * static buffers: no malloc) for the control socket's status.
 *
 * Costs.  The deadlock check (deadlock=1, or warn_wait with hold tracking
 * on) needs the held lists: deadlock=1 turns them on (hold.c, lists only,
 * as lock_order=1 does: 1.84x an uncontended preloaded lock+unlock at
 * 1 lock, 2.03x at 1024, docs/cost.md), and makes contended waits publish themselves (a few
 * stores on the waiting thread's own line).  The scan costs the helper
 * thread one walk of the registry and one lookup per waiting thread, every
 * 100 ms (or warn_wait/4).  Bounded: SP_WG_MAX waiting threads per scan
 * (more are counted and said).
 *
 * Alternatives considered: running the check in the waiting thread (it
 * would need the other threads' records under the registry lock on the
 * contended path); confirming a cycle over two scans (a report one scan
 * later, and no better proof than the double collect); a wait-for graph
 * kept up to date by the probes (a shared structure written on every
 * contended wait).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "report/profile.h"
#include "runtime/runtime.h"
#include "record/hold.h"

/* ---- building the graph (scan_lock held) ---------------------------------- */

void sp_wg_reset(struct sp_wg *g, uint64_t now)
{
	g->now = now;
	g->n = 0;
	g->dropped = 0;
	g->n_cycles = 0;
	memset(g->slot, 0, sizeof(g->slot));
}

static size_t thread_slot(const struct sp_thread *t)
{
	return (size_t)(((uintptr_t)t * 0x9E3779B97F4A7C15ull) >> 40) & (SP_WG_SLOTS - 1);
}

/* Copy @t's published wait into a new node; NULL when it is not waiting.
 * Registry lock held (@t lives). */
struct sp_wg_node *sp_wg_add(struct sp_wg *g, struct sp_thread *t)
{
	struct sp_wait_pub *w = &t->wait;
	struct sp_wg_node *n;

	if (g->n >= SP_WG_MAX) {
		if (sp_load_acquire(&w->entry))
			g->dropped++;
		return NULL;
	}
	n = &g->node[g->n];
	for (int tries = 0; tries < 4; tries++) {
		uint32_t s1 = sp_load_acquire(&w->seq), s2;
		const struct sp_entry *e;
		const struct sp_entry_cold *c;
		uint64_t t0;
		int mode, timed;

		if (s1 & 1)
			continue;
		/* Acquire loads: if one sees a store of a newer wait, the seq
		 * load below sees that wait's odd or newer seq. */
		t0 = sp_load_acquire(&w->t0);
		mode = sp_load_acquire(&w->mode);
		timed = sp_load_acquire(&w->timed);
		e = sp_load_acquire(&w->entry);
		s2 = sp_load_relaxed(&w->seq);
		if (s1 != s2)
			continue;
		if (!e)
			return NULL;
		memset(n, 0, sizeof(*n));
		n->waited_ns = sp_wait_ns(mode, t0);
		/* The entry's key is immutable, and the entry lives as long as
		 * its thread's record, which the registry lock keeps. */
		c = sp_entry_cold_r(e);
		n->obj = e->obj;
		n->site.file = e->file;
		n->site.func = c ? sp_entry_func(e) : NULL;
		n->site.pc = e->pc;
		n->site.line = e->line;
		n->type = e->type;
		n->timed = timed != 0;
		if (c) {
			unsigned k = sp_load_acquire(&c->n_frames);

			n->n_frames = (uint8_t)(k < SP_MAX_FRAMES ? k : SP_MAX_FRAMES);
			for (unsigned i = 0; i < n->n_frames; i++)
				n->frames[i] = c->frames[i];
		}
		n->id = s1;
		n->tid = t->tid;
		n->thr = t;
		n->next = -1;
		memcpy(n->name, t->name, sizeof(n->name));
		for (size_t i = thread_slot(t);; i = (i + 1) & (SP_WG_SLOTS - 1))
			if (!g->slot[i]) {
				g->slot[i] = (int)g->n + 1;
				break;
			}
		g->n++;
		return n;
	}
	return NULL;
}

/* The node of @t, added by this scan; NULL if none.  Registry lock held. */
struct sp_wg_node *sp_wg_find(struct sp_wg *g, const struct sp_thread *t)
{
	for (size_t i = thread_slot(t); g->slot[i]; i = (i + 1) & (SP_WG_SLOTS - 1)) {
		struct sp_wg_node *n = &g->node[g->slot[i] - 1];

		if (n->thr == t && n->tid == t->tid)
			return n;
	}
	return NULL;
}

/* Waits that no single thread can end: nothing to look up. */
static int has_holder(int type)
{
	return type != SP_TYPE_CONDVAR && type != SP_TYPE_SEMAPHORE && type != SP_TYPE_BARRIER &&
	       type != SP_TYPE_JOIN && type != SP_TYPE_FUTEX && type != SP_TYPE_GLIBC_LOCK;
}

/* Look up the holder of @n's lock into @h (as the node's fields). */
static void lookup_holder(const struct sp_wg_node *n, struct sp_wg_holder *h)
{
	memset(h, 0, sizeof(*h));
	if (!has_holder(n->type)) {
		h->kind = SP_WG_NO_HOLDER;
		return;
	}
	if (!sp_hold_is_on()) {
		h->kind = SP_WG_UNTRACKED;
		return;
	}
	if (!sp_hold_lookup(n->obj, &h->tid, &h->site, &h->since_ns)) {
		h->kind = SP_WG_HELD;
		return;
	}
	/* A writer waits for the readers (a reader for a writer: above). */
	if (n->type == SP_TYPE_RWLOCK_WRITE &&
	    !sp_hold_readers(n->obj, &h->tid, &h->site, &h->n_readers)) {
		h->kind = SP_WG_READ_HELD;
		return;
	}
	h->kind = SP_WG_UNKNOWN;
}

/* One linking holder: one thread holds it (exclusively, or alone reads). */
static int links(const struct sp_wg_holder *h)
{
	return h->kind == SP_WG_HELD || (h->kind == SP_WG_READ_HELD && h->n_readers == 1);
}

static int node_of_tid(const struct sp_wg *g, pid_t tid)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->node[i].tid == tid)
			return (int)i;
	return -1;
}

/* Holders, links and cycles: no lock but scan_lock (lock-free lookups). */
void sp_wg_link(struct sp_wg *g)
{
	int color[SP_WG_MAX]; /* 0 new, 1 on the current walk, 2 done */

	for (unsigned i = 0; i < g->n; i++) {
		struct sp_wg_node *n = &g->node[i];

		lookup_holder(n, &n->holder);
		n->next = links(&n->holder) ? node_of_tid(g, n->holder.tid) : -1;
		color[i] = 0;
	}
	/* Every node has one link at most: walk each chain once; a walk that
	 * meets its own trail has found a cycle. */
	for (unsigned i = 0; i < g->n; i++) {
		int k = (int)i;

		while (k >= 0 && !color[k]) {
			color[k] = 1;
			k = g->node[k].next;
		}
		if (k >= 0 && color[k] == 1 && g->n_cycles < SP_WG_CYCLES) {
			struct sp_wg_cycle *c = &g->cycle[g->n_cycles++];
			int m = k;

			c->n = 0;
			c->confirmed = 0;
			do {
				if (c->n < SP_WG_MAX)
					c->member[c->n++] = m;
				m = g->node[m].next;
			} while (m != k);
		}
		for (k = (int)i; k >= 0 && color[k] == 1; k = g->node[k].next)
			color[k] = 2;
	}
}

static int same_holder(const struct sp_wg_holder *a, const struct sp_wg_holder *b)
{
	return a->kind == b->kind && a->tid == b->tid && a->since_ns == b->since_ns &&
	       a->n_readers == b->n_readers && a->site.pc == b->site.pc &&
	       a->site.file == b->site.file && a->site.line == b->site.line;
}

/* The double collect's second reads of the holders: before the second
 * reads of the waits (sp_wg_recheck()). */
void sp_wg_recheck_holders(struct sp_wg *g)
{
	for (unsigned c = 0; c < g->n_cycles; c++) {
		struct sp_wg_cycle *cy = &g->cycle[c];

		cy->confirmed = 1;
		for (unsigned i = 0; i < cy->n; i++) {
			struct sp_wg_node *n = &g->node[cy->member[i]];
			struct sp_wg_holder again;

			lookup_holder(n, &again);
			if (!same_holder(&again, &n->holder))
				cy->confirmed = 0;
		}
	}
}

/* Second read of @t's wait (registry lock held): is it the same one? */
void sp_wg_recheck(struct sp_wg *g, struct sp_thread *t)
{
	struct sp_wg_node *n = sp_wg_find(g, t);

	if (n)
		n->same = sp_load_acquire(&t->wait.seq) == n->id;
}

/* ---- naming --------------------------------------------------------------- */

void sp_wg_site_name(const struct sp_site *s, char *buf, size_t size)
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

/* A text built in a fixed buffer (no malloc: the helper thread reports
 * while the program may be stuck anywhere). */
struct text {
	char *p;
	size_t len, cap;
};

static void __attribute__((format(printf, 2, 3))) put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len + 1 >= t->cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len = t->len + (size_t)n < t->cap ? t->len + (size_t)n : t->cap - 1;
}

/* The thread's name now (it may have changed since its record was made):
 * /proc/self/task/TID/comm, read by the helper thread when it prints;
 * else the name its record has, else none. */
static const char *thread_name(const struct sp_wg *g, pid_t tid, char *buf, size_t size)
{
	char path[64], comm[32] = "";
	int k = node_of_tid(g, tid), fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, comm, sizeof(comm) - 1);

		close(fd);
		comm[n > 0 ? n : 0] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
	}
	if (!comm[0] && k >= 0)
		snprintf(comm, sizeof(comm), "%s", g->node[k].name);
	if (comm[0])
		snprintf(buf, size, "thread %d (%s)", (int)tid, comm);
	else
		snprintf(buf, size, "thread %d", (int)tid);
	return buf;
}

/* The thread still runs (hold.c keeps the holds of threads that exited
 * holding locks, under their tid). */
static int thread_alive(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	return access(path, F_OK) == 0;
}

/* "held by thread T (name) for at least X ms, acquired at SITE", etc. */
static void put_holder(struct text *t, const struct sp_wg *g, const struct sp_wg_node *n)
{
	const struct sp_wg_holder *h = &n->holder;
	char site[512], who[64];

	switch (h->kind) {
	case SP_WG_NO_HOLDER:
		if (n->type == SP_TYPE_CONDVAR)
			put(t, "a condition wait: it goes on until another thread signals the "
			       "condition variable (or its timeout)");
		else if (n->type == SP_TYPE_SEMAPHORE)
			put(t, "no single thread holds a semaphore: any thread may post it");
		else if (n->type == SP_TYPE_BARRIER)
			put(t, "no single thread holds a barrier: it waits for the others to "
			       "arrive");
		else if (n->type == SP_TYPE_FUTEX || n->type == SP_TYPE_GLIBC_LOCK)
			put(t, "its holder is not known: the lock makes no call that syncprof sees "
			       "until it waits");
		else
			put(t, "no thread holds a join: it waits for the thread to end");
		return;
	case SP_WG_UNTRACKED:
		put(t, "holder unknown (hold tracking is off: hold=1, or syncprof run --hold)");
		return;
	case SP_WG_UNKNOWN:
		put(t, "holder unknown (taken before tracking, or held for reading)");
		return;
	case SP_WG_HELD:
		sp_wg_site_name(&h->site, site, sizeof(site));
		/* A lower bound: hold.c dates most holds from their first
		 * lookup, which every scan makes. */
		put(t, "held by %s for at least %.1f ms, acquired at %s",
		    thread_name(g, h->tid, who, sizeof(who)),
		    h->since_ns && g->now > h->since_ns ? (double)(g->now - h->since_ns) / 1e6
							 : 0.0,
		    site);
		/* What the holder is doing (its long hold sampled, holdstate.c). */
		{
			char state[64];
			uint64_t for_ns;

			if (!sp_holdstate_now(h->tid, state, sizeof(state), &for_ns))
				put(t, "; it has been %s for %.1f ms", state, (double)for_ns / 1e6);
		}
		return;
	case SP_WG_READ_HELD:
		sp_wg_site_name(&h->site, site, sizeof(site));
		if (h->n_readers == 1)
			put(t, "held for reading by %s, acquired at %s",
			    thread_name(g, h->tid, who, sizeof(who)), site);
		else
			put(t, "held for reading by %u threads, among them %s, acquired at %s",
			    h->n_readers, thread_name(g, h->tid, who, sizeof(who)), site);
		return;
	}
}

/* ---- chains ------------------------------------------------------------------ */

#define CHAIN_MAX 16 /* links printed under a warning */

/* The continuation lines under the warning about @n: one per link, from
 * its holder to the root holder.  Empty when the holder is not waiting. */
static void put_chain(struct text *t, const struct sp_wg *g, const struct sp_wg_node *n)
{
	char site[512], who[64];
	int k = n->next, depth = 0, visited[CHAIN_MAX];

	if (k < 0)
		return;
	while (k >= 0 && depth < CHAIN_MAX) {
		const struct sp_wg_node *m = &g->node[k];
		int again = m == n;

		for (int i = 0; i < depth; i++)
			again |= visited[i] == k;
		visited[depth] = k;
		if (again) {
			put(t,
			    "    ... and so back to %s: the threads wait in a cycle (a deadlock)\n",
			    thread_name(g, m->tid, who, sizeof(who)));
			return;
		}
		sp_wg_site_name(&m->site, site, sizeof(site));
		put(t, "    %s waits at %s for %s %#lx, ", thread_name(g, m->tid, who, sizeof(who)),
		    site, sp_type_name(m->type), (unsigned long)m->obj);
		put_holder(t, g, m);
		put(t, "\n");
		if (m->next < 0) {
			if (links(&m->holder) && node_of_tid(g, m->holder.tid) < 0)
				put(t, "    %s %s: the root holder\n",
				    thread_name(g, m->holder.tid, who, sizeof(who)),
				    thread_alive(m->holder.tid) ? "is not waiting"
								: "has exited holding it");
			else if (!links(&m->holder))
				put(t, "    %s waits for what no single thread holds: the end of "
				       "the chain\n",
				    thread_name(g, m->tid, who, sizeof(who)));
			return;
		}
		k = m->next;
		depth++;
	}
	if (k >= 0)
		put(t, "    ... (longer than %d links)\n", CHAIN_MAX);
}

/*
 * The root holder of @n's chain, when the chain is longer than one link:
 * the thread at its end that holds the lock the previous one waits for,
 * and where it took it.  That is the holder of the last waiting thread
 * when it is not waiting itself; or the last waiting thread, when what it
 * waits for has no single holder (a condition variable...) or no known
 * one.  0 without a chain, or when the chain ends in a cycle.
 */
int sp_wg_root(const struct sp_wg *g, const struct sp_wg_node *n, pid_t *tid,
	       struct sp_site *site)
{
	const struct sp_wg_node *prev = n;
	int k = n->next;

	for (int depth = 0; k >= 0 && depth < SP_WG_MAX; depth++) {
		const struct sp_wg_node *m = &g->node[k];

		if (m == n)
			return 0;
		if (m->next < 0) {
			if (links(&m->holder)) {
				*tid = m->holder.tid;
				*site = m->holder.site;
				return 1;
			}
			if (prev == n)
				return 0; /* n's own holder: blame names it already */
			*tid = m->tid;
			*site = prev->holder.site;
			return 1;
		}
		prev = m;
		k = m->next;
	}
	return 0;
}

void sp_wg_print_warning(FILE *out, const struct sp_wg *g, const struct sp_wg_node *n)
{
	static char buf[8192] SP_LARGE;
	struct text t = { buf, 0, sizeof(buf) };
	char site[512], who[64];

	sp_wg_site_name(&n->site, site, sizeof(site));
	put(&t, "syncprof: warning: %s has been waiting %.1f ms for %s %#lx at %s; ",
	    thread_name(g, n->tid, who, sizeof(who)), (double)n->waited_ns / 1e6,
	    sp_type_name(n->type), (unsigned long)n->obj, site);
	put_holder(&t, g, n);
	if (n->type == SP_TYPE_CONDVAR) {
		struct sp_site s[2];
		int bc[2];
		unsigned k = sp_cond_signallers((const void *)n->obj, s, bc, 2);

		for (unsigned i = 0; i < k; i++) {
			sp_wg_site_name(&s[i], site, sizeof(site));
			put(&t, "%s%s %s", i ? ", before that " : "; last signalled at ", site,
			    bc[i] ? "(broadcast)" : "(signal)");
		}
		if (!k)
			put(&t, "; no signal of it seen yet");
	}
	if (n->type == SP_TYPE_FUTEX) {
		/* A futex lock's releaser is its waker (probe_futex.c keeps
		 * the last one per word, with hold tracking on). */
		struct sp_site s;

		if (!sp_hold_is_on()) {
			put(&t, "; the site that last woke its waiters is kept with hold tracking "
				"(hold=1, or syncprof run --hold)");
		} else if (sp_futex_last_waker(n->obj, &s)) {
			sp_wg_site_name(&s, site, sizeof(site));
			put(&t, "; its waiters were last woken at %s", site);
		} else {
			put(&t, "; no wake of it seen yet");
		}
	}
	put(&t, "\n");
	put_chain(&t, g, n);
	fputs(buf, out);
}

/* ---- deadlocks --------------------------------------------------------------- */

#define SP_DL_KEEP 4     /* reports kept for the control socket */
#define SP_DL_TEXT 4096  /* bytes per kept report */
#define SP_DL_SEEN 64    /* cycles remembered as reported */

static uint64_t seen[SP_DL_SEEN];
static unsigned n_seen_total, n_timed;
static char kept[SP_DL_KEEP][SP_DL_TEXT] SP_LARGE;
static unsigned n_reported;

static uint64_t cycle_key(const struct sp_wg *g, const struct sp_wg_cycle *c)
{
	uint64_t k = 0;

	/* Order-free: the same cycle found from another member. */
	for (unsigned i = 0; i < c->n; i++) {
		const struct sp_wg_node *n = &g->node[c->member[i]];

		k += ((uint64_t)(uint32_t)n->tid << 32 | n->id) * 0x9E3779B97F4A7C15ull;
	}
	return k | 1;
}

static void put_frames(struct text *t, const struct sp_wg_node *n)
{
	char name[512];

	for (unsigned i = 0; i < n->n_frames; i++) {
		const struct sp_site s = { NULL, NULL, n->frames[i], 0 };

		sp_wg_site_name(&s, name, sizeof(name));
		put(t, "        called from %s\n", name);
	}
}

/* The first member of @c whose wait has a deadline; NULL: none. */
static const struct sp_wg_node *timed_member(const struct sp_wg *g, const struct sp_wg_cycle *c)
{
	for (unsigned i = 0; i < c->n; i++)
		if (g->node[c->member[i]].timed)
			return &g->node[c->member[i]];
	return NULL;
}

static void put_deadlock(struct text *t, const struct sp_wg *g, const struct sp_wg_cycle *c)
{
	char site[512], who[64];
	const struct sp_wg_node *timed = timed_member(g, c);

	if (timed && c->n == 1)
		put(t, "timed wait cycle: 1 thread waits, with a deadline, for a lock that it "
		       "holds itself; the wait ends at its deadline, so no deadlock "
		       "(syncprof, pid %d)\n",
		    (int)getpid());
	else if (timed)
		put(t, "timed wait cycle: %u threads wait in a cycle, each for a lock that the "
		       "next one holds; it ends when the wait of %s reaches its deadline, so "
		       "no deadlock (syncprof, pid %d)\n",
		    c->n, thread_name(g, timed->tid, who, sizeof(who)), (int)getpid());
	else if (c->n == 1)
		put(t, "deadlock: 1 thread waits for a lock that it holds itself; it cannot go on "
		       "(syncprof, pid %d)\n",
		    (int)getpid());
	else
		put(t, "deadlock: %u threads wait in a cycle, each for a lock that the next one "
		       "holds; none can go on (syncprof, pid %d)\n",
		    c->n, (int)getpid());
	for (unsigned i = 0; i < c->n; i++) {
		const struct sp_wg_node *n = &g->node[c->member[i]];
		/* The previous member waits for a lock that this one holds. */
		const struct sp_wg_node *p = &g->node[c->member[(i + c->n - 1) % c->n]];

		sp_wg_site_name(&n->site, site, sizeof(site));
		put(t, "  %s waits%s for %s %#lx at %s\n", thread_name(g, n->tid, who, sizeof(who)),
		    n->timed ? ", until its deadline," : "", sp_type_name(n->type),
		    (unsigned long)n->obj, site);
		put_frames(t, n);
		sp_wg_site_name(&p->holder.site, site, sizeof(site));
		put(t, "    and holds %s %#lx%s, taken at %s, which %s waits for\n",
		    sp_type_name(p->type == SP_TYPE_RWLOCK_WRITE &&
						 p->holder.kind == SP_WG_READ_HELD
					 ? SP_TYPE_RWLOCK_READ
					 : p->type),
		    (unsigned long)p->obj,
		    p->holder.kind == SP_WG_READ_HELD ? " (for reading)" : "", site,
		    p == n ? "it itself" : thread_name(g, p->tid, who, sizeof(who)));
	}
}

unsigned sp_wg_report_deadlocks(FILE *out, struct sp_wg *g)
{
	unsigned printed = 0;

	for (unsigned c = 0; c < g->n_cycles; c++) {
		struct sp_wg_cycle *cy = &g->cycle[c];
		struct text t;
		uint64_t key;
		int known = 0;

		if (!cy->confirmed)
			continue;
		for (unsigned i = 0; i < cy->n; i++)
			if (!g->node[cy->member[i]].same)
				cy->confirmed = 0;
		if (!cy->confirmed)
			continue;
		key = cycle_key(g, cy);
		for (unsigned i = 0; i < SP_DL_SEEN && i < n_seen_total; i++)
			known |= seen[i] == key;
		if (known)
			continue;
		seen[n_seen_total++ % SP_DL_SEEN] = key;
		if (timed_member(g, cy)) {
			/* Said, not kept: no deadlock (ctl status counts it apart). */
			static char said[SP_DL_TEXT] SP_LARGE;

			t = (struct text){ said, 0, SP_DL_TEXT };
			put_deadlock(&t, g, cy);
			n_timed++;
			fputs(t.p, out);
			printed++;
			continue;
		}
		t = (struct text){ kept[n_reported % SP_DL_KEEP], 0, SP_DL_TEXT };
		put_deadlock(&t, g, cy);
		n_reported++;
		fputs(t.p, out);
		printed++;
	}
	return printed;
}

void sp_wg_status(FILE *out)
{
	unsigned first = n_reported > SP_DL_KEEP ? n_reported - SP_DL_KEEP : 0;

	fprintf(out, "deadlocks: %u\n", n_reported);
	if (n_timed)
		fprintf(out, "timed_wait_cycles: %u (not deadlocks: each ended at a deadline)\n",
			n_timed);
	for (unsigned i = first; i < n_reported; i++)
		fputs(kept[i % SP_DL_KEEP], out);
}

void sp_wg_forget(void)
{
	n_seen_total = 0;
	n_reported = 0;
	n_timed = 0;
}
