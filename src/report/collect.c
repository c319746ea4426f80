/*
 * collect.c - from the recording threads' tables to report rows: the one
 * door from src/record into src/report.
 *
 * Every live thread's table and the retired aggregate are merged into one
 * row per (site, object, type), under the registry lock; with hold
 * tracking, the blame records are attached to the rows of their waiters.
 * Rows are keyed by the *content* of file and function names, not their
 * addresses: the same inline function in a header has one __FILE__ string
 * per translation unit, and the user wants one row for it.
 *
 * With lock-order checking, the cycles found (lockorder.c) are copied
 * into the profile too, their edges' ends keyed like rows' sites.
 *
 * Concurrency: other threads' counters are read with relaxed loads (each
 * value whole, values of one entry possibly from slightly different
 * moments).  Maxima of entries whose epoch predates the last reset are
 * read as 0.  The caller serialises collections with resets (report_lock,
 * src/runtime), so the reset epoch cannot change under a collection.
 *
 * The time account (sp_collect_account): the live threads are those of
 * /proc/self/task, read first and outside the registry lock (a /proc read
 * costs tens of us here: exits must not wait for them); then, under the
 * lock, the registry's records give each its sync_wait and registration
 * time, and the exited threads come from the registry's ring.  A thread
 * that exited between the two is in both: its exit's figures (complete)
 * win over the earlier read, recognised by an exit sequence number above
 * the one read before the scan.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/syscall_names.h"
#include "record/glibc_lock.h"
#include "report/collect.h"
#include "record/ranges.h"

/* Counts of an entry's histograms, read into the stack of the collection. */
struct entry_hists {
	uint64_t wait[SP_HIST_BUCKETS], hold[SP_HIST_BUCKETS];
};

/* @tmp receives the entry's stack and views of its histograms, read into
 * @h; r->detail points to @tmp only when there is something in it. */
static void entry_to_row(const struct sp_entry *e, uint32_t epoch, struct sp_row *r,
			 struct sp_row_detail *tmp, struct entry_hists *h)
{
	const struct sp_entry_cold *c = sp_entry_cold_r(e);

	memset(r, 0, sizeof(*r));
	memset(tmp, 0, sizeof(*tmp));
	r->obj = e->obj;
	r->file = e->file;
	r->func = sp_entry_func(e);
	r->pc = e->pc;
	r->line = e->line;
	r->type = e->type;
	r->n_objects = 1;
	r->acquisitions = sp_load_relaxed(&e->acquisitions);
	r->contended = sp_load_relaxed(&e->contended);
	r->wait_ns = sp_load_relaxed(&c->wait_ns);
	/* The holds: from the row's sums, once every entry of it is read
	 * (collect_holds()). */
	if (sp_load_acquire(&c->epoch) == epoch) {
		r->wait_max_ns = sp_load_relaxed(&c->wait_max_ns);
		r->hold_max_ns = sp_load_relaxed(&c->hold_max_ns);
	}
	r->owner_changes = sp_load_relaxed(&e->owner_changes);
	r->n_frames = sp_load_acquire(&c->n_frames);
	if (r->n_frames > SP_MAX_FRAMES)
		r->n_frames = SP_MAX_FRAMES;
	/* Histograms are only written on contended waits and timed holds. */
	if (!r->contended && !sp_load_relaxed(&c->hold_exact_n) &&
	    !sp_load_relaxed(&c->hold_sample_n) && !r->n_frames)
		return;
	if (sp_hist_read(&c->hist[SP_HIST_WAIT], h->wait))
		sp_hist_view(&tmp->hist, h->wait);
	if (sp_hist_read(&c->hist[SP_HIST_HOLD], h->hold))
		sp_hist_view(&tmp->hold_hist, h->hold);
	if (r->n_frames) /* the pointer was stored before n_frames (release) */
		memcpy(tmp->frames, c->frames, r->n_frames * sizeof(*tmp->frames));
	if (tmp->hist.n || tmp->hold_hist.n || r->n_frames)
		r->detail = tmp;
}

/*
 * A site inside a lock library (Rust std's Thread::join, an older std's
 * pthread Mutex), recorded before the once-per-process scan that finds
 * such libraries (locklib.c) had ended: the row goes to the first frame of
 * its stack outside them, as the probe does once the scan is done.  The
 * old site is remembered in @remap for the blame records keyed by it.
 */
#define REMAP_MAX 64
struct site_remap {
	uintptr_t from, to;
};

static void resite_row(struct sp_row *r, struct sp_row_detail *tmp, struct site_remap *remap,
		       unsigned *n_remap)
{
	unsigned i = 0;

	if (!r->pc || r->file || !sp_pc_in_locklib(r->pc))
		return;
	while (i < r->n_frames && (sp_pc_in_locklib(tmp->frames[i]) || sp_pc_skipped(tmp->frames[i])))
		i++;
	if (i >= r->n_frames)
		return; /* no frame outside: the library's own frame stays */
	if (*n_remap < REMAP_MAX) {
		remap[*n_remap].from = r->pc;
		remap[*n_remap].to = tmp->frames[i];
		(*n_remap)++;
	}
	r->pc = tmp->frames[i];
	r->n_frames -= i + 1;
	memmove(tmp->frames, tmp->frames + i + 1, r->n_frames * sizeof(*tmp->frames));
	if (!tmp->hist.n && !tmp->hold_hist.n && !r->n_frames)
		r->detail = NULL;
}

struct collect_ctx {
	struct sp_rows *rows;
	struct sp_row_map map;
	uint32_t epoch;
	int err;
	struct entry_hists hists; /* the current entry's */
	/* with hold times: the hold sums of row i of @rows at [i] */
	struct sp_hold_sums *sums;
	size_t sums_cap;
	struct site_remap remap[REMAP_MAX];
	unsigned n_remap;
};

/* Entry @e's hold sums onto those of its row @d (sp_entry_hold_sums()), with
 * the acquisitions its row was given (one read of the counter for both). */
static int row_sums_add(struct collect_ctx *c, const struct sp_row *d, const struct sp_entry *e,
			uint64_t acquisitions)
{
	size_t i = (size_t)(d - c->rows->v);

	if (i >= c->sums_cap) {
		size_t cap = c->sums_cap * 2 > i + 64 ? c->sums_cap * 2 : i + 64;
		struct sp_hold_sums *v = realloc(c->sums, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + c->sums_cap, 0, (cap - c->sums_cap) * sizeof(*v));
		c->sums = v;
		c->sums_cap = cap;
	}
	sp_entry_hold_sums(e, acquisitions, &c->sums[i]);
	return 0;
}

static void collect_table(const struct sp_table *t, void *arg)
{
	struct collect_ctx *c = arg;
	size_t n = sp_table_span(t);

	for (size_t i = sp_table_next(t, 0); i < n && !c->err; i = sp_table_next(t, i + 1)) {
		const struct sp_entry *e = sp_table_at(t, i);
		struct sp_row_detail tmp;
		struct sp_row r;
		struct sp_row *d;

		if (!e)
			continue; /* a free home slot */
		entry_to_row(e, c->epoch, &r, &tmp, &c->hists);
		resite_row(&r, &tmp, c->remap, &c->n_remap);
		d = sp_row_map_get(&c->map, c->rows, &r);
		if (!d || sp_row_add(c->rows, d, &r) ||
		    (c->sums && row_sums_add(c, d, e, r.acquisitions))) {
			c->err = -ENOMEM;
			return;
		}
		d->n_objects = 1;
	}
}

/* Every row's holds from its sums: one ratio over the row's sample. */
static void collect_holds(struct collect_ctx *c)
{
	int all_timed = sp_hold_all_timed();

	for (size_t i = 0; i < c->rows->n && i < c->sums_cap; i++)
		sp_hold_sums_totals(&c->sums[i], all_timed, &c->rows->v[i].holds,
				    &c->rows->v[i].hold_ns);
}

static void count_table(const struct sp_table *t, void *arg)
{
	*(size_t *)arg += sp_table_count(t);
}

/* A blame record onto the row of its waiter's (site, object, type). */
static void collect_blame(const struct sp_blame_view *b, void *arg)
{
	struct collect_ctx *c = arg;
	struct sp_row key, *r;

	if (c->err)
		return;
	memset(&key, 0, sizeof(key));
	key.file = b->waiter.file;
	key.func = b->waiter.func;
	key.pc = b->waiter.pc;
	key.line = b->waiter.line;
	key.type = b->type;
	key.obj = b->obj;
	r = sp_row_map_find(&c->map, c->rows, &key);
	for (unsigned i = 0; !r && key.pc && i < c->n_remap; i++)
		if (c->remap[i].from == b->waiter.pc) {
			key.pc = c->remap[i].to;
			r = sp_row_map_find(&c->map, c->rows, &key);
		}
	if (r && sp_rows_blame_add_root(c->rows, r, &b->holder, NULL,
					b->root.pc || b->root.file ? &b->root : NULL, NULL,
					b->wait_ns, b->count))
		c->err = -ENOMEM;
}

/* "syscall:NAME" (or "syscall:NNN"), made once per number and kept for
 * the process's life: at most one string per system call.  Under
 * report_lock, as every collection. */
static const char *syscall_state_name(long nr)
{
	static char *names[512] SP_LARGE;
	const char *base;
	char buf[64], *copy;

	if (nr >= 0 && nr < 512 && names[nr])
		return names[nr];
	base = sp_syscall_name(nr);
	if (base)
		snprintf(buf, sizeof(buf), "syscall:%s", base);
	else
		snprintf(buf, sizeof(buf), "syscall:%ld", nr);
	copy = strdup(buf);
	if (!copy)
		return "syscall";
	if (nr >= 0 && nr < 512)
		names[nr] = copy;
	/* else: a number no table knows, rare; its string is the caller's
	 * until the process ends (not freed: rows may point to it) */
	return copy;
}

static const char *const fixed_state_names[SP_HS_FIXED] = {
	[SP_HS_RUNNING] = "running",
	[SP_HS_PREEMPTED] = "preempted",
	[SP_HS_LOCK] = "lock",
	[SP_HS_OTHER] = "other",
};

/* The row of a hold's (site, object, type), its site moved as the rows'
 * were (resite_row); NULL when there is none. */
static struct sp_row *hold_row(struct collect_ctx *c, uint8_t type, uintptr_t obj,
			       const struct sp_site *holder)
{
	struct sp_row key, *r;

	memset(&key, 0, sizeof(key));
	key.file = holder->file;
	key.func = holder->func;
	key.pc = holder->pc;
	key.line = holder->line;
	key.type = type;
	key.obj = obj;
	r = sp_row_map_find(&c->map, c->rows, &key);
	for (unsigned i = 0; !r && key.pc && i < c->n_remap; i++)
		if (c->remap[i].from == holder->pc) {
			key.pc = c->remap[i].to;
			r = sp_row_map_find(&c->map, c->rows, &key);
		}
	return r;
}

/* A hold-state record onto the row of its hold's (site, object, type). */
static void collect_hold_state(const struct sp_holdstate_view *v, void *arg)
{
	struct collect_ctx *c = arg;
	struct sp_row *r;

	if (c->err || !(r = hold_row(c, v->type, v->obj, &v->holder)))
		return;
	for (int k = 0; k < SP_HS_FIXED && !c->err; k++)
		if (sp_rows_hold_state_add(c->rows, r, fixed_state_names[k], v->ns[k]))
			c->err = -ENOMEM;
	for (unsigned k = 0; k < v->n_sys && !c->err; k++)
		if (sp_rows_hold_state_add(c->rows, r, syscall_state_name(v->sys_nr[k]),
					   v->sys_ns[k]))
			c->err = -ENOMEM;
}

/* A where record (frames=N) onto the row of its hold, as a hold state. */
static void collect_hold_where(const struct sp_holdwhere_view *v, void *arg)
{
	struct collect_ctx *c = arg;
	struct sp_row *r;
	const char *state;

	if (c->err || !(r = hold_row(c, v->type, v->obj, &v->holder)))
		return;
	state = v->class < SP_HS_FIXED ? fixed_state_names[v->class] : syscall_state_name(v->sys_nr);
	if (sp_rows_hold_where_add(c->rows, r, v->pc, NULL, state, v->ns))
		c->err = -ENOMEM;
}

int sp_collect(struct sp_rows *out, int with_blame)
{
	struct collect_ctx c = { .rows = out };
	size_t expect = 0;

	memset(out, 0, sizeof(*out));
	c.epoch = sp_load_relaxed(&sp_reset_epoch);
	/* The lock libraries known before any entry is read (resite_row). */
	sp_locklib_scan();
	/* Size for what is there now (more may come): no rehash, no regrowth. */
	sp_registry_foreach(count_table, &expect);
	if (sp_row_map_init(&c.map, expect + 64, 1))
		return -ENOMEM;
	if (sp_rows_reserve(out, expect + 64)) {
		sp_row_map_free(&c.map);
		return -ENOMEM;
	}
	if (sp_hold_times_are_on()) {
		c.sums = calloc(expect + 64, sizeof(*c.sums));
		c.sums_cap = c.sums ? expect + 64 : 0;
		if (!c.sums) {
			sp_row_map_free(&c.map);
			sp_rows_free(out);
			return -ENOMEM;
		}
	}
	sp_registry_foreach(collect_table, &c);
	if (c.sums && !c.err)
		collect_holds(&c);
	free(c.sums);
	if (with_blame && !c.err)
		sp_blame_foreach(collect_blame, &c);
	if (with_blame && !c.err)
		sp_holdstate_foreach(collect_hold_state, &c);
	if (with_blame && !c.err)
		sp_holdstate_where_foreach(collect_hold_where, &c);
	sp_row_map_free(&c.map);
	if (c.err)
		sp_rows_free(out);
	return c.err;
}


struct order_ctx {
	struct sp_profile *p;
	int err;
};

static void end_from_view(struct sp_order_end *e, const struct sp_order_end_view *v)
{
	memset(e, 0, sizeof(*e));
	e->obj = v->obj;
	e->type = v->type;
	e->site = v->site;
	e->n_frames = v->n_frames;
	memcpy(e->frames, v->frames, v->n_frames * sizeof(*e->frames));
}

static void collect_cycle(const struct sp_cycle_view *c, void *arg)
{
	struct order_ctx *o = arg;
	struct sp_order_edge edges[SP_ORDER_MAX_CYCLE];

	if (o->err)
		return;
	for (unsigned k = 0; k < c->n; k++) {
		end_from_view(&edges[k].held, &c->edges[k].held);
		end_from_view(&edges[k].acquired, &c->edges[k].acquired);
		edges[k].tid = c->edges[k].tid;
	}
	o->err = sp_profile_cycle_add(o->p, c->count, edges, c->n);
}

int sp_collect_order(struct sp_profile *p)
{
	struct order_ctx o = { p, 0 };
	struct sp_order_stats st;

	p->order.on = sp_order_is_on();
	sp_order_foreach_cycle(collect_cycle, &o, &st);
	p->order.edges_kept = st.edges_kept;
	p->order.edges_dropped = st.edges_dropped;
	p->order.cycles_dropped = st.cycles_dropped;
	p->order.searches_cut = st.searches_cut;
	return o.err;
}

void sp_collect_names(struct sp_profile *p)
{
	char name[SP_LOCK_NAME_MAX];

	p->names_lost = sp_lockname_lost();
	for (size_t i = 0; i < p->rows.n; i++) {
		struct sp_row *r = &p->rows.v[i];

		if (r->n_objects != 1 || !r->obj || r->type == SP_TYPE_JOIN)
			continue;
		r->created_how = (uint8_t)sp_lockname_get(r->obj, name, &r->created);
		/* glibc's own locks: named by what they are (glibc_lockname.c) */
		if (!name[0] && r->type == SP_TYPE_GLIBC_LOCK)
			sp_glibc_lock_name(r->obj, name, sizeof(name));
		if (name[0])
			r->lock_name = sp_profile_intern(p, name);
	}
}


/* A live thread of /proc/self/task while the account is collected. */
struct live_thread {
	pid_t tid;
	int registered, gone;
	uint64_t born_ns, start_ns, sync_wait_ns;
	struct sp_sched sched;
};

struct account_ctx {
	struct sp_profile *p;
	struct live_thread *live;
	size_t n_live;
	uint64_t seq0; /* exits accounted before the scan */
	int err;
};

static int tid_cmp(const void *a, const void *b)
{
	const struct live_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static struct live_thread *live_find(struct account_ctx *c, pid_t tid)
{
	struct live_thread key = { .tid = tid };

	return bsearch(&key, c->live, c->n_live, sizeof(key), tid_cmp);
}

static void account_live(const struct sp_thread *t, void *arg)
{
	struct account_ctx *c = arg;
	struct live_thread *l = live_find(c, t->tid);

	if (l) {
		l->registered = 1;
		l->born_ns = t->born_ns;
		l->start_ns = t->start_ns;
		l->sync_wait_ns = sp_table_sync_wait(&t->table);
	}
}

static void thread_set(struct sp_profile *p, struct sp_thread_account *a, pid_t tid,
		       const char *name, int exited, const struct sp_account_figs *f)
{
	a->tid = tid;
	a->name = sp_profile_intern(p, name);
	a->exited = exited;
	a->lifetime_ns = f->lifetime_ns;
	a->running_ns = f->running_ns;
	a->preempted_ns = f->preempted_ns;
	a->blocked_ns = f->blocked_ns;
	a->sync_wait_ns = f->sync_wait_ns;
}

static void account_exited(const struct sp_account_thread *e, void *arg)
{
	struct account_ctx *c = arg;
	struct sp_account *a = &c->p->account;

	/*
	 * Its exit's figures, not a live thread's, when its task is still in
	 * /proc/self/task: it exited during the scan, or before it and was
	 * not reaped yet (its record is no longer registered: a thread just
	 * joined can still be listed there a moment).  Counted as live as
	 * well, it was in the account twice (tests/preload/run_offline.sh saw
	 * one run list it, the other not).
	 */
	{
		struct live_thread *l = live_find(c, e->tid);

		if (l && (e->seq > c->seq0 || !l->registered))
			l->gone = 1;
	}
	thread_set(c->p, &a->v[a->n++], e->tid, e->name, 1, &e->f);
}

/* The tids of /proc/self/task, sorted; -errno. */
static int task_scan(struct account_ctx *c)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	size_t cap = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || *end || tid <= 0)
			continue;
		if (c->n_live == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct live_thread *v = realloc(c->live, ncap * sizeof(*v));

			if (!v) {
				closedir(d);
				return -ENOMEM;
			}
			c->live = v;
			cap = ncap;
		}
		memset(&c->live[c->n_live], 0, sizeof(*c->live));
		c->live[c->n_live++].tid = (pid_t)tid;
	}
	closedir(d);
	qsort(c->live, c->n_live, sizeof(*c->live), tid_cmp);
	return 0;
}

static int account_unavailable(struct sp_profile *p, const char *what, int err)
{
	char why[160];

	snprintf(why, sizeof(why), "%s: %s", what, strerror(-err));
	p->account.state = SP_ACCOUNT_UNAVAILABLE;
	p->account.unavailable = sp_profile_intern(p, why);
	return sp_profile_error(p);
}

/* Read each live thread's files; the profiler's own threads are dropped.
 * 0, or -errno of a kernel that gives none (the first thread's read). */
static int live_read(struct account_ctx *c)
{
	size_t k = 0;
	int rc = 0, read_one = 0;

	for (size_t i = 0; i < c->n_live; i++) {
		struct live_thread *l = &c->live[i];
		int r = sp_sched_read(l->tid, 0, &l->sched); /* stat: the name too */

		if (r) {
			if (!rc)
				rc = r; /* no schedstat, or the thread exited meanwhile */
			continue;
		}
		read_one = 1;
		if (!strncmp(l->sched.name, "syncprof-", 9))
			continue; /* the profiler's helper threads */
		c->live[k++] = *l;
	}
	c->n_live = k;
	return read_one ? 0 : rc;
}

int sp_collect_account(struct sp_profile *p)
{
	struct account_ctx c = { .p = p };
	struct sp_account *a = &p->account;
	struct sp_account_retired r;
	int rc;

	memset(a, 0, sizeof(*a));
	a->reset = sp_load_relaxed(&sp_reset_epoch) != 0;
	c.seq0 = sp_registry_account_seq();
	rc = task_scan(&c);
	if (rc == -ENOMEM)
		goto out;
	if (rc) {
		rc = account_unavailable(p, "/proc/self/task", rc);
		goto out;
	}
	rc = live_read(&c);
	if (rc) {
		rc = account_unavailable(p, "/proc/self/task/TID/schedstat", rc);
		goto out;
	}
	/* room for every live thread and every kept exit (more may have
	 * exited since the sequence number was read: at most the ring) */
	a->v = sp_profile_alloc(p, (c.n_live + SP_ACCOUNT_EXITED_KEPT) * sizeof(*a->v));
	if (!a->v) {
		rc = -ENOMEM;
		goto out;
	}
	sp_registry_account(account_live, account_exited, &c, &r);
	/* live threads first, by tid; then the exits, oldest first */
	{
		size_t n_exited = a->n, k = 0;

		memmove(a->v + c.n_live, a->v, n_exited * sizeof(*a->v));
		for (size_t i = 0; i < c.n_live; i++) {
			struct live_thread *l = &c.live[i];
			struct sp_account_figs f;

			if (l->gone)
				continue;
			if (l->registered)
				l->sched.start_ns = l->start_ns; /* exact, when known */
			sp_account_figures(&l->sched, l->registered ? l->born_ns : 0,
					   l->sync_wait_ns, &f);
			thread_set(p, &a->v[k++], l->tid, l->sched.name, 0, &f);
			a->lifetime_ns += f.lifetime_ns;
			a->running_ns += f.running_ns;
			a->preempted_ns += f.preempted_ns;
			a->blocked_ns += f.blocked_ns;
			a->sync_wait_ns += f.sync_wait_ns;
		}
		if (k < c.n_live)
			memmove(a->v + k, a->v + c.n_live, n_exited * sizeof(*a->v));
		a->n = k + n_exited;
		a->threads = k + r.threads;
	}
	a->exited = r.threads;
	a->unread = r.unread;
	a->skipped = r.skipped;
	a->lifetime_ns += r.sum.lifetime_ns;
	a->running_ns += r.sum.running_ns;
	a->preempted_ns += r.sum.preempted_ns;
	a->blocked_ns += r.sum.blocked_ns;
	a->sync_wait_ns += r.sum.sync_wait_ns;
	a->state = SP_ACCOUNT_KEPT;
	rc = sp_profile_error(p);
out:
	free(c.live);
	return rc;
}
