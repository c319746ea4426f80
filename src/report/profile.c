/*
 * profile.c - the storage of a profile: its arena of names and strings,
 * its row sets, their details and blame lists.
 *
 * Design.  A profile's names (sites, stacks, inlined callers, blame
 * holders) and strings are allocated from one arena of 64 KiB blocks that
 * is freed whole with the profile: row sets come and go during shaping
 * (coalescing builds a new set), names stay.  Strings are interned, so a
 * million rows of one source file hold one copy of its path; the intern
 * table is open addressing over pointers into the arena.
 *
 * Rows carry their key and counters inline (about 150 bytes) and their
 * histograms, stack and blame in details allocated from the set's own
 * blocks, so that a report over a million mostly uncontended entries does
 * not allocate (and page-fault in) a million details.  A histogram holds
 * the counts of its range of non-zero buckets only (struct sp_hist): a
 * row that waited in a few buckets costs a few counts, not the whole
 * layout (304 buckets: 2.4 KiB in 64-bit counts).  Histogram arrays and
 * blame lists are malloc'd, owned by their detail and freed with the set;
 * sp_rows_push() copies a row's detail, arrays included.
 * Lock-order cycles are an array owned by the profile (a report has a few;
 * the recorder keeps 256 at most), their edges in the arena.
 *
 * Thread-safety: none; a profile belongs to the thread that builds it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/profile.h"

/* ---- arena ------------------------------------------------------------- */

#define ARENA_BLOCK (64 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

struct sp_arena {
	struct arena_block *blocks;
	const char **strs; /* intern table: NULL is free */
	size_t mask, n_strs;
	int err;
};

void *sp_profile_alloc(struct sp_profile *p, size_t size)
{
	struct sp_arena *a = p->arena;
	struct arena_block *b = a->blocks;
	void *r;

	size = (size + 15) & ~(size_t)15;
	if (!b || b->size - b->used < size) {
		size_t bs = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;

		b = malloc(sizeof(*b) + bs);
		if (!b) {
			a->err = -ENOMEM;
			return NULL;
		}
		b->size = bs;
		b->used = 0;
		if (bs == size && a->blocks) { /* a large one: keep the current block */
			b->next = a->blocks->next;
			a->blocks->next = b;
		} else {
			b->next = a->blocks;
			a->blocks = b;
		}
	}
	r = b->data + b->used;
	b->used += size;
	memset(r, 0, size);
	return r;
}

static size_t str_hash(const char *s)
{
	size_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int intern_grow(struct sp_arena *a)
{
	size_t cap = a->mask ? (a->mask + 1) * 2 : 1024;
	const char **t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; a->mask && i <= a->mask; i++) {
		size_t j;

		if (!a->strs[i])
			continue;
		for (j = str_hash(a->strs[i]) & (cap - 1); t[j]; j = (j + 1) & (cap - 1))
			;
		t[j] = a->strs[i];
	}
	free(a->strs);
	a->strs = t;
	a->mask = cap - 1;
	return 0;
}

const char *sp_profile_intern(struct sp_profile *p, const char *s)
{
	struct sp_arena *a = p->arena;
	size_t i, len;
	char *copy;

	if (!s)
		return NULL;
	if ((a->n_strs + 1) * 2 > a->mask && intern_grow(a)) {
		a->err = -ENOMEM;
		return NULL;
	}
	for (i = str_hash(s) & a->mask; a->strs[i]; i = (i + 1) & a->mask)
		if (!strcmp(a->strs[i], s))
			return a->strs[i];
	len = strlen(s) + 1;
	copy = sp_profile_alloc(p, len);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	a->strs[i] = copy;
	a->n_strs++;
	return copy;
}

int sp_profile_error(const struct sp_profile *p)
{
	return p->arena ? p->arena->err : -ENOMEM;
}

int sp_profile_init(struct sp_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->sort = SYNCPROF_SORT_TOTAL;
	p->hold_sample = 1;
	p->arena = calloc(1, sizeof(*p->arena));
	return p->arena ? 0 : -ENOMEM;
}

void sp_profile_free(struct sp_profile *p)
{
	sp_rows_free(&p->rows);
	free(p->order.cycles);
	if (p->arena) {
		struct arena_block *b = p->arena->blocks, *next;

		for (; b; b = next) {
			next = b->next;
			free(b);
		}
		free(p->arena->strs);
		free(p->arena);
	}
	memset(p, 0, sizeof(*p));
}

/* ---- row sets ------------------------------------------------------------ */

int sp_rows_reserve(struct sp_rows *r, size_t n)
{
	struct sp_row *v;

	if (n <= r->cap)
		return 0;
	v = realloc(r->v, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	r->v = v;
	r->cap = n;
	return 0;
}

/* ---- histograms ----------------------------------------------------------- */

/* Make @h's range cover [lo, hi) (hi <= SP_HIST_BUCKETS); new counts 0. */
static int hist_cover(struct sp_hist *h, unsigned lo, unsigned hi)
{
	unsigned nlo, nhi;
	uint64_t *v;

	if (h->n) {
		nlo = lo < h->lo ? lo : h->lo;
		nhi = hi > (unsigned)h->lo + h->n ? hi : (unsigned)h->lo + h->n;
	} else {
		nlo = lo;
		nhi = hi;
	}
	if (h->n && nlo == h->lo && nhi == (unsigned)h->lo + h->n)
		return 0;
	v = calloc(nhi - nlo, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (h->n)
		memcpy(v + (h->lo - nlo), h->v, h->n * sizeof(*v));
	free(h->v);
	h->v = v;
	h->lo = (uint16_t)nlo;
	h->n = (uint16_t)(nhi - nlo);
	return 0;
}

int sp_hist_add(struct sp_hist *h, unsigned b, uint64_t count)
{
	if (b >= SP_HIST_BUCKETS)
		return -EINVAL;
	if (!count)
		return 0;
	if (hist_cover(h, b, b + 1))
		return -ENOMEM;
	h->v[b - h->lo] += count;
	return 0;
}

int sp_hist_merge(struct sp_hist *d, const struct sp_hist *s)
{
	if (!s->n)
		return 0;
	if (hist_cover(d, s->lo, (unsigned)s->lo + s->n))
		return -ENOMEM;
	for (unsigned i = 0; i < s->n; i++)
		d->v[s->lo - d->lo + i] += s->v[i];
	return 0;
}

int sp_hist_copy(struct sp_hist *d, const struct sp_hist *s)
{
	memset(d, 0, sizeof(*d));
	return sp_hist_merge(d, s);
}

void sp_hist_free(struct sp_hist *h)
{
	free(h->v);
	memset(h, 0, sizeof(*h));
}

void sp_hist_view(struct sp_hist *h, uint64_t *dense)
{
	unsigned lo = 0, hi = SP_HIST_BUCKETS;

	while (lo < hi && !dense[lo])
		lo++;
	while (hi > lo && !dense[hi - 1])
		hi--;
	h->v = lo < hi ? dense + lo : NULL;
	h->lo = (uint16_t)(lo < hi ? lo : 0);
	h->n = (uint16_t)(hi - lo);
}

uint64_t sp_hist_total(const struct sp_hist *h)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < h->n; i++)
		sum += h->v[i];
	return sum;
}

/* ---- details ------------------------------------------------------------- */

#define DETAIL_BLOCK 256

struct sp_detail_block {
	struct sp_detail_block *next;
	size_t used;
	struct sp_row_detail d[DETAIL_BLOCK];
};

const struct sp_row_detail sp_row_detail_zero;

struct sp_row_detail *sp_rows_detail(struct sp_rows *rows, struct sp_row *r)
{
	struct sp_detail_block *b = rows->blocks;

	if (r->detail)
		return r->detail;
	if (!b || b->used == DETAIL_BLOCK) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		b->next = rows->blocks;
		rows->blocks = b;
	}
	r->detail = &b->d[b->used++];
	return r->detail;
}

static int blame_reserve(struct sp_row_detail *d, uint32_t n)
{
	struct sp_blame *v;
	uint32_t cap;

	if (n <= d->cap_blame)
		return 0;
	cap = d->cap_blame ? d->cap_blame * 2 : 4;
	while (cap < n)
		cap *= 2;
	v = realloc(d->blame, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	d->blame = v;
	d->cap_blame = cap;
	return 0;
}

int sp_rows_push(struct sp_rows *r, const struct sp_row *row)
{
	struct sp_row *d;

	if (r->n == r->cap && sp_rows_reserve(r, r->cap ? r->cap * 2 : 64))
		return -ENOMEM;
	d = &r->v[r->n];
	*d = *row;
	if (row->detail) { /* the set owns the details of its rows */
		struct sp_row_detail *dd;

		d->detail = NULL;
		dd = sp_rows_detail(r, d);
		if (!dd)
			return -ENOMEM;
		*dd = *row->detail;
		dd->blame = NULL;
		dd->n_blame = dd->cap_blame = 0;
		if (sp_hist_copy(&dd->hist, &row->detail->hist) ||
		    sp_hist_copy(&dd->hold_hist, &row->detail->hold_hist))
			return -ENOMEM;
		if (row->detail->n_blame) {
			if (blame_reserve(dd, row->detail->n_blame))
				return -ENOMEM;
			memcpy(dd->blame, row->detail->blame,
			       row->detail->n_blame * sizeof(*dd->blame));
			dd->n_blame = row->detail->n_blame;
		}
	}
	r->n++;
	return 0;
}

void sp_rows_free(struct sp_rows *r)
{
	struct sp_detail_block *b = r->blocks, *next;

	for (; b; b = next) {
		next = b->next;
		for (size_t i = 0; i < b->used; i++) {
			free(b->d[i].blame);
			sp_hist_free(&b->d[i].hist);
			sp_hist_free(&b->d[i].hold_hist);
		}
		free(b);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int holder_eq(const struct sp_site *a, const struct sp_site *b)
{
	return a->pc == b->pc && a->line == b->line && str_same(a->file, b->file) &&
	       str_same(a->func, b->func);
}

/* Blame order: largest wait first, then count, then by holder address
 * and names, a total order that a saved list read back keeps. */
static int blame_before(const struct sp_blame *a, const struct sp_blame *b)
{
	int c;

	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns;
	if (a->count != b->count)
		return a->count > b->count;
	if (a->holder.pc != b->holder.pc)
		return a->holder.pc < b->holder.pc;
	c = strcmp(a->holder.file ? a->holder.file : "", b->holder.file ? b->holder.file : "");
	if (c)
		return c < 0;
	if (a->holder.line != b->holder.line)
		return a->holder.line < b->holder.line;
	/* Then the chain's root: none first. */
	if (a->root.pc != b->root.pc)
		return a->root.pc < b->root.pc;
	c = strcmp(a->root.file ? a->root.file : "", b->root.file ? b->root.file : "");
	if (c)
		return c < 0;
	return a->root.line < b->root.line;
}

/*
 * Kept sorted (blame_before), so that every renderer prints the same order
 * and a saved list reads back in its order; lists are short (the holder
 * sites of one waiting site).
 */
int sp_rows_blame_add(struct sp_rows *rows, struct sp_row *r, const struct sp_site *holder,
		      const struct sp_frame *names, uint64_t wait_ns, uint64_t count)
{
	return sp_rows_blame_add_root(rows, r, holder, names, NULL, NULL, wait_ns, count);
}

int sp_rows_blame_add_root(struct sp_rows *rows, struct sp_row *r, const struct sp_site *holder,
			   const struct sp_frame *names, const struct sp_site *root_or_null,
			   const struct sp_frame *root_names, uint64_t wait_ns, uint64_t count)
{
	static const struct sp_site none;
	const struct sp_site *root = root_or_null ? root_or_null : &none;
	struct sp_row_detail *d = sp_rows_detail(rows, r);
	struct sp_blame *b = NULL;
	uint32_t i;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < d->n_blame && !b; i++)
		if (holder_eq(&d->blame[i].holder, holder) && holder_eq(&d->blame[i].root, root))
			b = &d->blame[i];
	if (!b) {
		if (blame_reserve(d, d->n_blame + 1))
			return -ENOMEM;
		b = &d->blame[d->n_blame++];
		memset(b, 0, sizeof(*b));
		b->holder = *holder;
		b->names = names;
		b->root = *root;
		b->root_names = root_or_null ? root_names : NULL;
	}
	b->wait_ns += wait_ns;
	b->count += count;
	/* Move it up to its place; it only grew. */
	for (i = (uint32_t)(b - d->blame); i > 0 && blame_before(&d->blame[i], &d->blame[i - 1]);
	     i--) {
		struct sp_blame tmp = d->blame[i - 1];

		d->blame[i - 1] = d->blame[i];
		d->blame[i] = tmp;
	}
	return 0;
}

static int state_before(const struct sp_hold_state *a, const struct sp_hold_state *b)
{
	if (a->ns != b->ns)
		return a->ns > b->ns;
	return strcmp(a->name, b->name) < 0;
}

int sp_rows_hold_state_add(struct sp_rows *rows, struct sp_row *r, const char *name, uint64_t ns)
{
	struct sp_row_detail *d;
	struct sp_hold_state *s = NULL;
	uint32_t i;

	if (!ns)
		return 0;
	if (!(d = sp_rows_detail(rows, r)))
		return -ENOMEM;
	for (i = 0; i < d->n_hold_states && !s; i++)
		if (!strcmp(d->hold_states[i].name, name))
			s = &d->hold_states[i];
	if (!s && d->n_hold_states == SP_HOLD_STATES_MAX) {
		/* Full: into "other" (there, or taking the smallest's place). */
		for (i = 0; i < d->n_hold_states && !s; i++)
			if (!strcmp(d->hold_states[i].name, "other"))
				s = &d->hold_states[i];
		if (!s) {
			s = &d->hold_states[SP_HOLD_STATES_MAX - 1];
			ns += s->ns;
			s->ns = 0;
			s->name = "other";
		}
	}
	if (!s) {
		s = &d->hold_states[d->n_hold_states++];
		s->name = name;
		s->ns = 0;
	}
	s->ns += ns;
	for (i = (uint32_t)(s - d->hold_states);
	     i > 0 && state_before(&d->hold_states[i], &d->hold_states[i - 1]); i--) {
		struct sp_hold_state tmp = d->hold_states[i - 1];

		d->hold_states[i - 1] = d->hold_states[i];
		d->hold_states[i] = tmp;
	}
	return 0;
}

size_t sp_syscalls_under_lock(const struct sp_rows *rows, struct sp_syscall_under_lock *out,
			      size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < rows->n; i++) {
		const struct sp_row_detail *d = sp_row_d(&rows->v[i]);

		for (uint32_t k = 0; k < d->n_hold_states; k++) {
			const struct sp_hold_state *s = &d->hold_states[k];
			struct sp_syscall_under_lock e = { &rows->v[i], s->name + 8, s->ns };
			size_t j;

			if (strncmp(s->name, "syscall:", 8))
				continue;
			/* Insertion into the top @max, largest first (ties: row
			 * order, then name: the same order every render). */
			if (n < max) {
				j = n;
			} else if (max && e.ns > out[max - 1].ns) {
				j = max - 1;
			} else {
				n++;
				continue;
			}
			while (j > 0 && (out[j - 1].ns < e.ns ||
					 (out[j - 1].ns == e.ns && out[j - 1].row == e.row &&
					  strcmp(out[j - 1].syscall, e.syscall) > 0))) {
				if (j < max)
					out[j] = out[j - 1];
				j--;
			}
			out[j] = e;
			n++;
		}
	}
	return n;
}

static int where_before(const struct sp_hold_where *a, const struct sp_hold_where *b)
{
	if (a->ns != b->ns)
		return a->ns > b->ns;
	if (a->pc != b->pc)
		return a->pc < b->pc;
	return strcmp(a->state, b->state) < 0;
}

/*
 * Kept sorted (where_before); a full list folds its smallest entry into
 * "the rest" (pc 0), so the list's total stays the time sampled.
 */
int sp_rows_hold_where_add(struct sp_rows *rows, struct sp_row *r, uintptr_t pc,
			   const struct sp_frame *names, const char *state, uint64_t ns)
{
	struct sp_row_detail *d;
	struct sp_hold_where *w = NULL;
	uint32_t i;

	if (!ns)
		return 0;
	if (!(d = sp_rows_detail(rows, r)))
		return -ENOMEM;
	for (i = 0; i < d->n_hold_where && !w; i++)
		if (d->hold_where[i].pc == pc && !strcmp(d->hold_where[i].state, state))
			w = &d->hold_where[i];
	if (!w && d->n_hold_where == SP_HOLD_WHERE_MAX) {
		for (i = 0; i < d->n_hold_where && !w; i++)
			if (!d->hold_where[i].pc)
				w = &d->hold_where[i];
		if (w) {
			state = w->state;
		} else {
			w = &d->hold_where[SP_HOLD_WHERE_MAX - 1];
			ns += w->ns;
			w->ns = 0;
		}
		pc = 0;
		names = NULL;
		w->pc = 0;
		w->names = NULL;
		w->state = "other";
	}
	if (!w) {
		w = &d->hold_where[d->n_hold_where++];
		w->pc = pc;
		w->names = names;
		w->state = state;
		w->ns = 0;
	}
	if (!w->names)
		w->names = names;
	w->ns += ns;
	for (i = (uint32_t)(w - d->hold_where);
	     i > 0 && where_before(&d->hold_where[i], &d->hold_where[i - 1]); i--) {
		struct sp_hold_where tmp = d->hold_where[i - 1];

		d->hold_where[i - 1] = d->hold_where[i];
		d->hold_where[i] = tmp;
	}
	return 0;
}

const struct sp_frame *sp_hold_where_site(const struct sp_hold_where *w, struct sp_frame *buf)
{
	const struct sp_frame *f = w->names;
	const struct sp_inline *outer;

	if (!f || !f->n_inline || !f->inlined || strcmp(w->state, "running"))
		return f;
	outer = &f->inlined[f->n_inline - 1];
	*buf = *f;
	buf->function = outer->function;
	buf->symbol = outer->symbol;
	buf->file = outer->file;
	buf->line = outer->line;
	buf->offset = 0;
	buf->n_inline = 0;
	buf->inlined = NULL;
	return buf;
}

uint64_t sp_hold_where_total(const struct sp_row_detail *d)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < d->n_hold_where; i++)
		t += d->hold_where[i].ns;
	return t;
}

uint64_t sp_hold_states_total(const struct sp_row_detail *d)
{
	uint64_t t = 0;

	for (uint32_t i = 0; i < d->n_hold_states; i++)
		t += d->hold_states[i].ns;
	return t;
}

/* ---- lock-order cycles ------------------------------------------------------ */

int sp_profile_cycle_add(struct sp_profile *p, uint64_t count, const struct sp_order_edge *edges,
			 unsigned n)
{
	struct sp_lock_order *o = &p->order;
	struct sp_cycle *c;
	struct sp_order_edge *copy;

	if (o->n_cycles == o->cap_cycles) {
		size_t cap = o->cap_cycles ? o->cap_cycles * 2 : 8;
		struct sp_cycle *v = realloc(o->cycles, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		o->cycles = v;
		o->cap_cycles = cap;
	}
	copy = sp_profile_alloc(p, n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, edges, n * sizeof(*copy));
	c = &o->cycles[o->n_cycles++];
	c->count = count;
	c->n_edges = n;
	c->edges = copy;
	return 0;
}
