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
 */
#include <errno.h>
#include <string.h>

#include "record/glibc_lock.h"
#include "report/collect.h"

/* Counts of an entry's histograms, read into the stack of the collection. */
struct entry_hists {
	uint64_t wait[SP_HIST_BUCKETS], hold[SP_HIST_BUCKETS];
};

/* @tmp receives the entry's stack and views of its histograms, read into
 * @h; r->detail points to @tmp only when there is something in it. */
static void entry_to_row(const struct sp_entry *e, uint32_t epoch, struct sp_row *r,
			 struct sp_row_detail *tmp, struct entry_hists *h)
{
	const struct sp_entry_cold *c = e->cold;

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
	r->wait_ns = sp_load_relaxed(&e->wait_ns);
	if (sp_hold_times_are_on())
		sp_entry_hold_totals(e, r->acquisitions, sp_hold_all_timed(), &r->holds,
				     &r->hold_ns);
	if (sp_load_acquire(&c->epoch) == epoch) {
		r->wait_max_ns = sp_load_relaxed(&c->wait_max_ns);
		r->hold_max_ns = sp_load_relaxed(&c->hold_max_ns);
	}
	r->owner_changes = sp_load_relaxed(&c->owner_changes);
	r->n_frames = sp_load_acquire(&c->n_frames);
	if (r->n_frames > SP_MAX_FRAMES)
		r->n_frames = SP_MAX_FRAMES;
	/* Histograms are only written on contended waits and timed holds. */
	if (!r->contended && !r->holds && !r->n_frames)
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

struct collect_ctx {
	struct sp_rows *rows;
	struct sp_row_map map;
	uint32_t epoch;
	int err;
	struct entry_hists hists; /* the current entry's */
};

static void collect_table(const struct sp_table *t, void *arg)
{
	struct collect_ctx *c = arg;
	size_t n = sp_table_span(t);

	for (size_t i = 0; i < n && !c->err; i++) {
		const struct sp_entry *e = sp_table_at(t, i);
		struct sp_row_detail tmp;
		struct sp_row r;
		struct sp_row *d;

		if (!e)
			continue; /* a free home slot */
		entry_to_row(e, c->epoch, &r, &tmp, &c->hists);
		d = sp_row_map_get(&c->map, c->rows, &r);
		if (!d || sp_row_add(c->rows, d, &r)) {
			c->err = -ENOMEM;
			return;
		}
		d->n_objects = 1;
	}
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
	if (r && sp_rows_blame_add_root(c->rows, r, &b->holder, NULL,
					b->root.pc || b->root.file ? &b->root : NULL, NULL,
					b->wait_ns, b->count))
		c->err = -ENOMEM;
}

int sp_collect(struct sp_rows *out, int with_blame)
{
	struct collect_ctx c = { .rows = out };
	size_t expect = 0;

	memset(out, 0, sizeof(*out));
	c.epoch = sp_load_relaxed(&sp_reset_epoch);
	/* Size for what is there now (more may come): no rehash, no regrowth. */
	sp_registry_foreach(count_table, &expect);
	if (sp_row_map_init(&c.map, expect + 64, 1))
		return -ENOMEM;
	if (sp_rows_reserve(out, expect + 64)) {
		sp_row_map_free(&c.map);
		return -ENOMEM;
	}
	sp_registry_foreach(collect_table, &c);
	if (with_blame && !c.err)
		sp_blame_foreach(collect_blame, &c);
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
