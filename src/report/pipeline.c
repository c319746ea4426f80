/*
 * report.c - from per-thread tables to sorted report rows.
 *
 * Pipeline (DESIGN.md, "Reports"):
 *   collect: every live thread's table plus the retired aggregate, merged
 *            into one row per (site, object, type), under the registry lock;
 *   subtract the snapshot of the last reset;
 *   coalesce objects per (site, type), if asked;
 *   sort, cut to the top N; symbolizing and rendering come after, so their
 *   cost is paid per printed row only.
 *
 * Rows are keyed by the *content* of file and function names, not their
 * addresses: the same inline function in a header has one __FILE__ string
 * per translation unit, and the user wants one row for it.
 *
 * Concurrency: collection reads other threads' counters with relaxed loads
 * (each value whole, values of one entry possibly from slightly different
 * moments).  Maxima of entries whose epoch predates the last reset are
 * read as 0.  report_lock (runtime.c) serialises reports and resets, so
 * the snapshot cannot change under a report.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const type_names[SP_TYPE_COUNT] = {
	"mutex", "rec_mutex", "condvar", "rwlock_read", "rwlock_write", "spinlock",
};

const char *sp_type_name(int type)
{
	return type >= 0 && type < SP_TYPE_COUNT ? type_names[type] : "?";
}

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

/* ---- row details: blocks of zeroed details, freed with their set ---- */

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

int sp_rows_push(struct sp_rows *r, const struct sp_row *row)
{
	struct sp_row *d;

	if (r->n == r->cap && sp_rows_reserve(r, r->cap ? r->cap * 2 : 64))
		return -ENOMEM;
	d = &r->v[r->n];
	*d = *row;
	if (row->detail) { /* the set owns the details of its rows */
		d->detail = NULL;
		if (!sp_rows_detail(r, d))
			return -ENOMEM;
		*d->detail = *row->detail;
	}
	r->n++;
	return 0;
}

void sp_rows_free(struct sp_rows *r)
{
	struct sp_detail_block *b = r->blocks, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* ---- a hash map from row keys to row indices -------------------------- */

struct row_map {
	size_t *slot; /* row index + 1; 0 is free */
	size_t mask;
	int with_obj;
};

static size_t str_hash(const char *s)
{
	size_t h = 1469598103934665603ull;

	if (!s)
		return 0;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The hash of a row's site, computed once and kept in the row. */
static uint64_t row_site_hash(const struct sp_row *r)
{
	uint64_t h = r->site_hash;

	if (!h) {
		h = str_hash(r->file) ^ (str_hash(r->func) * 31);
		h ^= (r->pc + ((uint64_t)r->line << 16) + r->type) * 0x9E3779B97F4A7C15ull;
		h = (h ^ (h >> 31)) | 1;
		((struct sp_row *)r)->site_hash = h; /* a cache, not a change of the key */
	}
	return h;
}

static size_t row_hash(const struct sp_row *r, int with_obj)
{
	uint64_t h = row_site_hash(r);

	if (with_obj)
		h ^= r->obj * 0xC2B2AE3D27D4EB4Full;
	h *= 0x9E3779B97F4A7C15ull;
	return (size_t)(h ^ (h >> 32));
}

static int row_key_eq(const struct sp_row *a, const struct sp_row *b, int with_obj)
{
	return row_site_hash(a) == row_site_hash(b) && a->line == b->line && a->pc == b->pc &&
	       a->type == b->type &&
	       (!with_obj || a->obj == b->obj) && str_eq(a->file, b->file) &&
	       str_eq(a->func, b->func);
}

static int map_init(struct row_map *m, size_t expect, int with_obj)
{
	size_t cap = 64;

	while (cap < expect * 2)
		cap *= 2;
	m->slot = calloc(cap, sizeof(*m->slot));
	m->mask = cap - 1;
	m->with_obj = with_obj;
	return m->slot ? 0 : -ENOMEM;
}

static void map_free(struct row_map *m)
{
	free(m->slot);
	m->slot = NULL;
}

/* Index of the row with @key's key in @rows, or where it would go. */
static size_t *map_probe(const struct row_map *m, const struct sp_rows *rows,
			 const struct sp_row *key)
{
	for (size_t i = row_hash(key, m->with_obj) & m->mask;; i = (i + 1) & m->mask) {
		size_t *s = &m->slot[i];

		if (!*s || row_key_eq(&rows->v[*s - 1], key, m->with_obj))
			return s;
	}
}

static int map_grow(struct row_map *m, const struct sp_rows *rows)
{
	struct row_map n;

	if (map_init(&n, (m->mask + 1), m->with_obj))
		return -ENOMEM;
	for (size_t i = 0; i < rows->n; i++)
		*map_probe(&n, rows, &rows->v[i]) = i + 1;
	map_free(m);
	*m = n;
	return 0;
}

/* The row for @key, added (zeroed, key copied) when new; NULL on ENOMEM. */
static struct sp_row *map_get(struct row_map *m, struct sp_rows *rows, const struct sp_row *key)
{
	size_t *s = map_probe(m, rows, key);
	struct sp_row fresh;

	if (*s)
		return &rows->v[*s - 1];
	if ((rows->n + 1) * 2 > m->mask + 1) {
		if (map_grow(m, rows))
			return NULL;
		s = map_probe(m, rows, key);
	}
	memset(&fresh, 0, sizeof(fresh));
	fresh.site_hash = row_site_hash(key);
	fresh.obj = key->obj;
	fresh.file = key->file;
	fresh.func = key->func;
	fresh.pc = key->pc;
	fresh.line = key->line;
	fresh.type = key->type;
	fresh.names = key->names;
	if (sp_rows_push(rows, &fresh))
		return NULL;
	*s = rows->n;
	return &rows->v[rows->n - 1];
}

/* Add @s into @d, a row of @rows; -ENOMEM when @d's detail could not be
 * allocated (its counters are then added, its histograms not). */
static int row_add(struct sp_rows *rows, struct sp_row *d, const struct sp_row *s)
{
	struct sp_row_detail *dd;

	d->acquisitions += s->acquisitions;
	d->contended += s->contended;
	d->wait_ns += s->wait_ns;
	d->hold_ns += s->hold_ns;
	d->holds += s->holds;
	if (s->wait_max_ns > d->wait_max_ns)
		d->wait_max_ns = s->wait_max_ns;
	if (s->hold_max_ns > d->hold_max_ns)
		d->hold_max_ns = s->hold_max_ns;
	d->owner_changes += s->owner_changes;
	if (!s->detail)
		return 0;
	dd = sp_rows_detail(rows, d);
	if (!dd)
		return -ENOMEM;
	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++) {
		dd->hist[b] += s->detail->hist[b];
		dd->hold_hist[b] += s->detail->hold_hist[b];
	}
	if (!d->n_frames && s->n_frames) {
		memcpy(dd->frames, s->detail->frames, sizeof(dd->frames));
		d->n_frames = s->n_frames;
		if (s->names)
			d->names = s->names; /* a saved profile's stack names */
	}
	return 0;
}

/* ---- collect ---------------------------------------------------------- */

struct collect_ctx {
	struct sp_rows *rows;
	struct row_map map;
	uint32_t epoch;
	int err;
};

/* @tmp receives the entry's histograms and stack; r->detail points to it
 * only when there is something in it. */
static void entry_to_row(const struct sp_entry *e, uint32_t epoch, struct sp_row *r,
			 struct sp_row_detail *tmp)
{
	const struct sp_entry_cold *c = e->cold;
	uint64_t any = 0;

	memset(r, 0, sizeof(*r));
	r->obj = e->obj;
	r->file = e->file;
	r->func = c->func;
	r->pc = e->pc;
	r->line = e->line;
	r->type = e->type;
	r->n_objects = 1;
	r->acquisitions = sp_load_relaxed(&e->acquisitions);
	r->contended = sp_load_relaxed(&e->contended);
	r->wait_ns = sp_load_relaxed(&e->wait_ns);
	r->hold_ns = sp_load_relaxed(&c->hold_ns);
	r->holds = sp_load_relaxed(&c->holds);
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
	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++) {
		tmp->hist[b] = sp_load_relaxed(&c->hist[b]);
		tmp->hold_hist[b] = sp_load_relaxed(&c->hold_hist[b]);
		any |= tmp->hist[b] | tmp->hold_hist[b];
	}
	memset(tmp->frames, 0, sizeof(tmp->frames));
	memcpy(tmp->frames, c->frames, r->n_frames * sizeof(*tmp->frames));
	if (any || r->n_frames)
		r->detail = tmp;
}

static void collect_table(const struct sp_table *t, void *arg)
{
	struct collect_ctx *c = arg;
	size_t n = sp_table_count(t);

	for (size_t i = 0; i < n && !c->err; i++) {
		struct sp_row_detail tmp;
		struct sp_row r;
		struct sp_row *d;

		entry_to_row(sp_table_at(t, i), c->epoch, &r, &tmp);
		d = map_get(&c->map, c->rows, &r);
		if (!d || row_add(c->rows, d, &r)) {
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

int sp_report_collect(struct sp_rows *out)
{
	struct collect_ctx c = { .rows = out };
	size_t expect = 0;

	memset(out, 0, sizeof(*out));
	c.epoch = sp_load_relaxed(&sp_reset_epoch);
	/* Size for what is there now (more may come): no rehash, no regrowth. */
	sp_registry_foreach(count_table, &expect);
	if (map_init(&c.map, expect + 64, 1))
		return -ENOMEM;
	if (sp_rows_reserve(out, expect + 64)) {
		map_free(&c.map);
		return -ENOMEM;
	}
	sp_registry_foreach(collect_table, &c);
	map_free(&c.map);
	if (c.err)
		sp_rows_free(out);
	return c.err;
}

/* ---- subtract, coalesce, sort, top ------------------------------------ */

static uint64_t sub_clamp(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

int sp_report_subtract(struct sp_rows *cur, const struct sp_rows *snap)
{
	struct row_map m;
	size_t kept = 0;

	if (!snap || !snap->n)
		return 0;
	if (map_init(&m, snap->n, 1))
		return -ENOMEM;
	for (size_t i = 0; i < snap->n; i++)
		*map_probe(&m, snap, &snap->v[i]) = i + 1;
	for (size_t i = 0; i < cur->n; i++) {
		struct sp_row *r = &cur->v[i];
		size_t *s = map_probe(&m, snap, r);

		if (*s) {
			const struct sp_row *o = &snap->v[*s - 1];

			r->acquisitions = sub_clamp(r->acquisitions, o->acquisitions);
			r->contended = sub_clamp(r->contended, o->contended);
			r->wait_ns = sub_clamp(r->wait_ns, o->wait_ns);
			r->hold_ns = sub_clamp(r->hold_ns, o->hold_ns);
			r->holds = sub_clamp(r->holds, o->holds);
			r->owner_changes = sub_clamp(r->owner_changes, o->owner_changes);
			if (r->detail) { /* no detail: nothing to subtract from */
				const struct sp_row_detail *od = sp_row_d(o);

				for (unsigned b = 0; b < SP_HIST_BUCKETS; b++) {
					r->detail->hist[b] = sub_clamp(r->detail->hist[b],
								       od->hist[b]);
					r->detail->hold_hist[b] =
						sub_clamp(r->detail->hold_hist[b], od->hold_hist[b]);
				}
			}
		}
		if (r->acquisitions || r->contended)
			cur->v[kept++] = *r;
	}
	cur->n = kept;
	map_free(&m);
	return 0;
}

int sp_report_coalesce(struct sp_rows *rows)
{
	struct sp_rows out = { 0 };
	struct row_map m;

	if (map_init(&m, rows->n, 0))
		return -ENOMEM;
	for (size_t i = 0; i < rows->n; i++) {
		struct sp_row *d = map_get(&m, &out, &rows->v[i]);

		if (!d || row_add(&out, d, &rows->v[i])) {
			map_free(&m);
			sp_rows_free(&out);
			return -ENOMEM;
		}
		d->n_objects += rows->v[i].n_objects;
	}
	map_free(&m);
	sp_rows_free(rows);
	*rows = out;
	return 0;
}

/* Wait per acquisition; per contended attempt where nothing was acquired
 * (a site whose timed waits all timed out). */
uint64_t sp_row_avg(const struct sp_row *r)
{
	if (r->acquisitions)
		return r->wait_ns / r->acquisitions;
	return r->contended ? r->wait_ns / r->contended : 0;
}

static uint64_t sort_value(const struct sp_row *r, enum syncprof_sort key)
{
	switch (key) {
	case SYNCPROF_SORT_AVG: return sp_row_avg(r);
	case SYNCPROF_SORT_MAX: return r->wait_max_ns;
	case SYNCPROF_SORT_COUNT: return r->acquisitions;
	case SYNCPROF_SORT_CONTENDED: return r->contended;
	case SYNCPROF_SORT_HOLD: return r->hold_ns;
	case SYNCPROF_SORT_TOTAL:
	default: return r->wait_ns;
	}
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static enum syncprof_sort sort_key;

static int row_order(const struct sp_row *a, const struct sp_row *b);

static int row_cmp(const void *pa, const void *pb)
{
	return row_order(*(const struct sp_row *const *)pa, *(const struct sp_row *const *)pb);
}

static int row_cmp_value(const void *pa, const void *pb)
{
	return row_order(pa, pb);
}

static int row_order(const struct sp_row *a, const struct sp_row *b)
{
	uint64_t va = sort_value(a, sort_key), vb = sort_value(b, sort_key);
	int c;

	if (va != vb)
		return va > vb ? -1 : 1;
	/* Ties: by total wait, then by site and object, so output is stable. */
	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	c = cmp_str(a->file, b->file);
	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	return a->obj < b->obj ? -1 : a->obj > b->obj;
}

/*
 * Called under report_lock, which makes the static sort_key safe.  Sorts
 * pointers, then applies the order in place by following its cycles, each
 * row moved once: rows are large (the histogram), and qsort moving them
 * spent more time in memmove than in comparisons, while a sorted copy
 * doubled the memory of a report.  Without memory for the pointers the
 * rows are sorted in place by qsort itself.
 */
void sp_report_sort(struct sp_rows *rows, enum syncprof_sort key)
{
	size_t n = rows->n;
	struct sp_row **p;
	size_t *dest;

	sort_key = key;
	if (n < 2)
		return;
	p = malloc(n * sizeof(*p));
	dest = malloc(n * sizeof(*dest));
	if (!p || !dest) {
		free(p);
		free(dest);
		qsort(rows->v, n, sizeof(*rows->v), row_cmp_value);
		return;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = &rows->v[i];
	qsort(p, n, sizeof(*p), row_cmp);
	/* dest[i] = the position that row i moves to. */
	for (size_t i = 0; i < n; i++)
		dest[p[i] - rows->v] = i;
	free(p);
	for (size_t i = 0; i < n; i++) {
		while (dest[i] != i) {
			size_t j = dest[i];
			struct sp_row tmp = rows->v[j];
			size_t dj = dest[j];

			rows->v[j] = rows->v[i];
			rows->v[i] = tmp;
			dest[j] = j;
			dest[i] = dj;
		}
	}
	free(dest);
}

void sp_report_top(struct sp_rows *rows, unsigned top)
{
	rows->n_total = rows->n;
	if (top && rows->n > top)
		rows->n = top;
}

/*
 * Percentile @q (0..1) of the waits of all acquisitions: uncontended ones
 * wait 0; a contended wait is taken as the upper bound of its log2 bucket,
 * but never more than the maximum seen.
 */
uint64_t sp_row_percentile(const struct sp_row *r, double q)
{
	uint64_t timed = 0, zeros, total, rank, seen;

	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
		timed += sp_row_d(r)->hist[b];
	zeros = r->acquisitions > timed ? r->acquisitions - timed : 0;
	total = zeros + timed;
	if (!total)
		return 0;
	rank = (uint64_t)(q * (double)total + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank <= zeros)
		return 0;
	seen = zeros;
	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++) {
		seen += sp_row_d(r)->hist[b];
		if (seen >= rank) {
			uint64_t hi = b + 1 < 64 ? (2ull << b) - 1 : UINT64_MAX;

			return r->wait_max_ns && hi > r->wait_max_ns ? r->wait_max_ns : hi;
		}
	}
	return r->wait_max_ns;
}

/*
 * Length of the directory prefix shared by the absolute source paths of
 * the rows: the instrumented ones' files and, for interposed ones, the
 * files their addresses symbolize to (which costs a second symbolization
 * of each printed row; reports print few rows).
 */
size_t sp_rows_common_prefix(const struct sp_rows *rows)
{
	char first[4096];
	size_t len = 0;
	int have = 0;

	for (size_t i = 0; i < rows->n; i++) {
		const char *f = rows->v[i].file;
		struct sp_symbol sym;
		size_t j = 0;

		if (!f && rows->v[i].pc) {
			sp_symbolize(rows->v[i].pc, &sym);
			f = sym.file;
		}
		if (!f || f[0] != '/')
			continue;
		if (!have) {
			snprintf(first, sizeof(first), "%s", f);
			len = strlen(first);
			have = 1;
			continue;
		}
		while (j < len && f[j] && f[j] == first[j])
			j++;
		len = j;
	}
	if (!have)
		return 0;
	while (len && first[len - 1] != '/')
		len--;
	return len > 1 ? len : 0; /* "/" alone is no common root */
}

const char *sp_path_strip(const char *file, const char *root, size_t auto_len)
{
	if (!file)
		return NULL;
	if (root && *root) {
		size_t n = strlen(root);

		if (!strncmp(file, root, n) && (file[n] == '/' || root[n - 1] == '/')) {
			file += n;
			while (*file == '/')
				file++;
		}
		return file;
	}
	return file[0] == '/' && strlen(file) > auto_len ? file + auto_len : file;
}
