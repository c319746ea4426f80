/*
 * chains.c - 'syncprof trace chains': from a trace, offline, the wait
 * chains (a thread waits for a lock whose holder is itself waiting for a
 * lock, and so on to the root holder, who runs) and, per lock, the
 * "who made whom wait" matrix: how long each thread waited while each
 * other thread held the lock.
 *
 * Design: the model (trace_model.c) gives every wait on a held lock as an
 * interval [asked, granted] and every hold as [granted, released] (from
 * the acquisition, or from the hold_ns of a release when a contended-only
 * trace lacks the acquisition: the holds that made someone wait are
 * exactly the ones whose release found waiters, so both kinds of trace
 * give the same answer).  Holds are sorted by (lock, start), waits by
 * (thread, start).  For a wait of W on L, each hold of L by another
 * thread H that overlaps it is charged to (L, W, H) for the overlap; what
 * no holder covers is the hand-off (the lock was free, W not yet
 * running), charged to "nobody".  Then, during each overlap, the waits of
 * H extend the chain: H waited at its site for L2 held by H2 ... to a
 * holder that is not waiting (the root), up to SP_CHAIN_MAX links; a
 * holder that is already a waiter of the chain closes a cycle (a
 * deadlock, or a lock-order inversion that resolved itself through a
 * timeout).  A chain is counted for the time all of its links stood at
 * once.
 *
 * Condition waits are not waits for a holder and are left out; read
 * holds charge writers like write holds do.
 *
 * Costs: O((waits + holds) log) for the sorts, and per wait the holds
 * that overlap it (a binary search, then a scan back over the lock's
 * longest hold).  Chains are merged through a hash of their links.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/trace_model.h"

#define NOBODY UINT32_MAX

struct chains_run {
	const struct sp_trace_model *m;
	struct sp_chains *c;
	struct sp_tm_span *holds, *waits; /* sorted copies */
	size_t *hold_lo, *wait_lo;        /* per lock, per thread: first index (+1 sentinel) */
	int64_t *hold_max;                /* per lock: longest hold */
	struct sp_u64map chain_index, cell_index;
	int rc;
};

static int hold_cmp(const void *a, const void *b)
{
	const struct sp_tm_span *x = a, *y = b;

	if (x->lock != y->lock)
		return x->lock < y->lock ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int wait_cmp(const void *a, const void *b)
{
	const struct sp_tm_span *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->lock < y->lock ? -1 : x->lock > y->lock;
}


/* ---- the matrix ------------------------------------------------------- */

struct cell_key {
	const struct sp_chains *c;
	uint32_t lock, waiter, holder;
};

static int cell_eq(const void *ctx, uint64_t v)
{
	const struct cell_key *k = ctx;
	const struct sp_blame_cell *e = &k->c->cells[v];

	return e->lock == k->lock && e->waiter == k->waiter && e->holder == k->holder;
}

static void charge(struct chains_run *p, uint32_t lock, uint32_t waiter, uint32_t holder,
		   int64_t ns)
{
	struct sp_chains *c = p->c;
	struct cell_key k = { c, lock, waiter, holder };
	uint64_t key = ((uint64_t)lock << 40) ^ ((uint64_t)waiter << 20) ^ holder;
	uint32_t v;
	int added;

	if (ns <= 0 || p->rc)
		return;
	if (sp_grow(&c->cells, &c->cap_cells, c->n_cells, sizeof(*c->cells))) {
		p->rc = -ENOMEM;
		return;
	}
	v = sp_tm_index_get(&p->cell_index, key, cell_eq, &k, (uint32_t)c->n_cells, &added);
	if (v == UINT32_MAX) {
		p->rc = -ENOMEM;
		return;
	}
	if (added) {
		c->cells[v] = (struct sp_blame_cell){ lock, waiter, holder, 0, 0 };
		c->n_cells++;
	}
	c->cells[v].count++;
	c->cells[v].ns = sp_tm_add(c->cells[v].ns, ns);
}

/* ---- chains ----------------------------------------------------------- */

struct chain_key {
	const struct sp_chains *c;
	const struct sp_chain *want;
};

static int chain_eq(const void *ctx, uint64_t v)
{
	const struct chain_key *k = ctx;
	const struct sp_chain *e = &k->c->chains[v];

	return e->n == k->want->n &&
	       !memcmp(e->link, k->want->link, e->n * sizeof(e->link[0]));
}

static uint64_t chain_hash(const struct sp_chain *ch)
{
	uint64_t h = 1469598103934665603ULL;

	for (unsigned i = 0; i < ch->n; i++) {
		const uint32_t *w = &ch->link[i].waiter;

		for (unsigned j = 0; j < 5; j++)
			h = (h ^ w[j]) * 1099511628211ULL;
	}
	return h;
}

static void record(struct chains_run *p, const struct sp_chain *ch, int64_t ns)
{
	struct sp_chains *c = p->c;
	struct chain_key k = { c, ch };
	uint32_t v;
	int added;

	if (ns <= 0 || p->rc)
		return;
	if (sp_grow(&c->chains, &c->cap_chains, c->n_chains, sizeof(*c->chains))) {
		p->rc = -ENOMEM;
		return;
	}
	v = sp_tm_index_get(&p->chain_index, chain_hash(ch), chain_eq, &k, (uint32_t)c->n_chains,
			    &added);
	if (v == UINT32_MAX) {
		p->rc = -ENOMEM;
		return;
	}
	if (added) {
		c->chains[v] = *ch;
		c->chains[v].count = 0;
		c->chains[v].ns = 0;
		c->n_chains++;
	}
	c->chains[v].count++;
	c->chains[v].ns = sp_tm_add(c->chains[v].ns, ns);
}

/* First hold of @lock that may overlap [x, y): binary search by start. */
static size_t holds_from(const struct chains_run *p, uint32_t lock, int64_t x)
{
	size_t lo = p->hold_lo[lock], hi = p->hold_lo[lock + 1];
	int64_t from = x - p->hold_max[lock];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->holds[mid].start < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First wait of thread @t that may overlap [x, ...): a thread's waits do
 * not overlap each other, so only the one before the first that starts at
 * or after @x can straddle it. */
static size_t waits_from(const struct chains_run *p, uint32_t t, int64_t x)
{
	size_t lo = p->wait_lo[t], hi = p->wait_lo[t + 1], first = lo;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->waits[mid].start < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > first ? lo - 1 : lo;
}

/*
 * The chain @ch stands during [x, y); its last holder may itself wait:
 * extend the chain through each of its waits during [x, y), and count
 * the rest of [x, y) for @ch as it is (when it has two links or more).
 */
static void extend(struct chains_run *p, struct sp_chain *ch, int64_t x, int64_t y)
{
	uint32_t h = ch->link[ch->n - 1].holder;
	int64_t covered = 0;

	for (size_t i = waits_from(p, h, x); i < p->wait_lo[h + 1] && !p->rc; i++) {
		const struct sp_tm_span *w = &p->waits[i];
		int64_t a = w->start > x ? w->start : x, b = w->end < y ? w->end : y;

		if (w->start >= y)
			break;
		if (a >= b)
			continue;
		covered = sp_tm_add(covered, b - a);
		for (size_t j = holds_from(p, w->lock, a); j < p->hold_lo[w->lock + 1]; j++) {
			const struct sp_tm_span *o = &p->holds[j];
			int64_t a2 = o->start > a ? o->start : a, b2 = o->end < b ? o->end : b;
			int cycle = 0;

			if (o->start >= b)
				break;
			if (a2 >= b2 || o->thread == h)
				continue;
			if (ch->n == SP_CHAIN_MAX) {
				record(p, ch, b2 - a2); /* long enough: counted as it is */
				continue;
			}
			for (unsigned k = 0; k < ch->n; k++)
				cycle |= ch->link[k].waiter == o->thread;
			ch->link[ch->n++] = (struct sp_chain_link){ h, w->lock, w->site, o->thread,
								    o->site };
			ch->cycle = cycle;
			if (cycle)
				record(p, ch, b2 - a2);
			else
				extend(p, ch, a2, b2);
			ch->n--;
			ch->cycle = 0;
		}
	}
	if (ch->n >= 2 && y - x - covered > 0)
		record(p, ch, y - x - covered);
}

static int by_ns(const void *a, const void *b)
{
	const struct sp_chain *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->n < y->n ? -1 : x->n > y->n;
}

/* @arg: the locks' wait totals, busiest lock first */
static int cell_cmp(const void *a, const void *b, void *arg)
{
	const struct sp_blame_cell *x = a, *y = b;
	const int64_t *cell_sort_lock_wait = arg;
	int64_t lx = cell_sort_lock_wait[x->lock], ly = cell_sort_lock_wait[y->lock];

	if (lx != ly)
		return lx > ly ? -1 : 1;
	if (x->lock != y->lock)
		return x->lock < y->lock ? -1 : 1;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	if (x->waiter != y->waiter)
		return x->waiter < y->waiter ? -1 : 1;
	return x->holder < y->holder ? -1 : x->holder > y->holder;
}

static void walk(struct chains_run *p)
{
	const struct sp_trace_model *m = p->m;

	for (size_t i = 0; i < m->n_waits && !p->rc; i++) {
		const struct sp_tm_span *w = &p->waits[i];
		size_t last = p->hold_lo[w->lock + 1];
		int64_t held = 0;

		p->c->lock_wait[w->lock] = sp_tm_add(p->c->lock_wait[w->lock], w->end - w->start);
		for (size_t j = holds_from(p, w->lock, w->start); j < last; j++) {
			const struct sp_tm_span *o = &p->holds[j];
			int64_t a = o->start > w->start ? o->start : w->start;
			int64_t b = o->end < w->end ? o->end : w->end;
			struct sp_chain ch;

			if (o->start >= w->end)
				break;
			if (a >= b || o->thread == w->thread)
				continue;
			held = sp_tm_add(held, b - a);
			charge(p, w->lock, w->thread, o->thread, b - a);
			memset(&ch, 0, sizeof(ch));
			ch.n = 1;
			ch.link[0] = (struct sp_chain_link){ w->thread, w->lock, w->site, o->thread,
							     o->site };
			extend(p, &ch, a, b);
		}
		if (w->end - w->start - held > 0)
			charge(p, w->lock, w->thread, NOBODY, w->end - w->start - held);
	}
}

int sp_chains_run(const struct sp_trace_model *m, struct sp_chains *c)
{
	struct chains_run p = { .m = m, .c = c };
	size_t nl = m->n_locks, nt = m->n_threads;

	memset(c, 0, sizeof(*c));
	c->waits = m->n_waits;
	c->hold_spans = m->n_holds;
	c->lock_wait = calloc(nl + 1, sizeof(*c->lock_wait));
	p.holds = malloc((m->n_holds + 1) * sizeof(*p.holds));
	p.waits = malloc((m->n_waits + 1) * sizeof(*p.waits));
	p.hold_lo = calloc(nl + 2, sizeof(*p.hold_lo));
	p.wait_lo = calloc(nt + 2, sizeof(*p.wait_lo));
	p.hold_max = calloc(nl + 1, sizeof(*p.hold_max));
	if (!c->lock_wait || !p.holds || !p.waits || !p.hold_lo || !p.wait_lo || !p.hold_max) {
		p.rc = -ENOMEM;
		goto out;
	}
	if (m->n_holds)
		memcpy(p.holds, m->holds, m->n_holds * sizeof(*p.holds));
	if (m->n_waits)
		memcpy(p.waits, m->waits, m->n_waits * sizeof(*p.waits));
	qsort(p.holds, m->n_holds, sizeof(*p.holds), hold_cmp);
	qsort(p.waits, m->n_waits, sizeof(*p.waits), wait_cmp);
	/* Index ranges: counts, then prefix sums. */
	for (size_t i = 0; i < m->n_holds; i++) {
		int64_t len = p.holds[i].end - p.holds[i].start;

		p.hold_lo[p.holds[i].lock + 1]++;
		if (len > p.hold_max[p.holds[i].lock])
			p.hold_max[p.holds[i].lock] = len;
	}
	for (size_t i = 0; i < m->n_waits; i++)
		p.wait_lo[p.waits[i].thread + 1]++;
	for (size_t i = 0; i < nl; i++)
		p.hold_lo[i + 1] += p.hold_lo[i];
	for (size_t i = 0; i < nt; i++)
		p.wait_lo[i + 1] += p.wait_lo[i];
	walk(&p);
	if (p.rc)
		goto out;
	if (c->n_chains)
		qsort(c->chains, c->n_chains, sizeof(*c->chains), by_ns);
	if (c->n_cells)
		qsort_r(c->cells, c->n_cells, sizeof(*c->cells), cell_cmp, c->lock_wait);
out:
	free(p.holds);
	free(p.waits);
	free(p.hold_lo);
	free(p.wait_lo);
	free(p.hold_max);
	sp_u64map_free(&p.chain_index);
	sp_u64map_free(&p.cell_index);
	return p.rc;
}

void sp_chains_free(struct sp_chains *c)
{
	free(c->chains);
	free(c->cells);
	free(c->lock_wait);
	memset(c, 0, sizeof(*c));
}
