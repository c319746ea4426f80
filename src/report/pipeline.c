/*
 * pipeline.c - shaping a profile's rows: merge (the row map), subtract a
 * snapshot, coalesce objects per call site, sort, cut to the top N; and
 * the values derived from a row (average, percentiles, common path).
 *
 * The pipeline (docs/layout.md, "Data flow"):
 *   collect (collect.c, live) or load (src/read, saved) -> subtract the
 *   snapshot of the last reset (live) -> coalesce -> sort and top N (a
 *   heap of N when N is small, sp_report_sort_top()) ->
 *   resolve names (names.c) -> render (render/).
 * Names come after the cut, so their cost is paid per printed row only.
 * Every step works on rows of either origin: a live row is keyed by
 * file/function/line or by address, a loaded row by its names; the
 * orders chosen here (sort ties, the stack kept by a coalesced row) are
 * decided by the address first, so both give the same result.
 *
 * Rows are keyed by the *content* of file and function names, not their
 * addresses: the same inline function in a header has one __FILE__ string
 * per translation unit, and the user wants one row for it.
 *
 * Thread-safety: none needed; a row set belongs to the report being made.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/profile.h"

/* ---- a hash map from row keys to row indices -------------------------- */


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

int sp_row_map_init(struct sp_row_map *m, size_t expect, int with_obj)
{
	size_t cap = 64;

	while (cap < expect * 2)
		cap *= 2;
	m->slot = calloc(cap, sizeof(*m->slot));
	m->mask = cap - 1;
	m->with_obj = with_obj;
	return m->slot ? 0 : -ENOMEM;
}

void sp_row_map_free(struct sp_row_map *m)
{
	free(m->slot);
	m->slot = NULL;
}

/* Index of the row with @key's key in @rows, or where it would go. */
static size_t *map_probe(const struct sp_row_map *m, const struct sp_rows *rows,
			 const struct sp_row *key);

struct sp_row *sp_row_map_find(const struct sp_row_map *m, struct sp_rows *rows,
			       const struct sp_row *key)
{
	size_t *s = map_probe(m, rows, key);

	return *s ? &rows->v[*s - 1] : NULL;
}

static size_t *map_probe(const struct sp_row_map *m, const struct sp_rows *rows,
			 const struct sp_row *key)
{
	for (size_t i = row_hash(key, m->with_obj) & m->mask;; i = (i + 1) & m->mask) {
		size_t *s = &m->slot[i];

		if (!*s || row_key_eq(&rows->v[*s - 1], key, m->with_obj))
			return s;
	}
}

static int map_grow(struct sp_row_map *m, const struct sp_rows *rows)
{
	struct sp_row_map n;

	if (sp_row_map_init(&n, (m->mask + 1), m->with_obj))
		return -ENOMEM;
	for (size_t i = 0; i < rows->n; i++)
		*map_probe(&n, rows, &rows->v[i]) = i + 1;
	sp_row_map_free(m);
	*m = n;
	return 0;
}

/* The row for @key, added (zeroed, key copied) when new; NULL on ENOMEM. */
struct sp_row *sp_row_map_get(struct sp_row_map *m, struct sp_rows *rows, const struct sp_row *key)
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
	/* a lock's name and creation site: shown while the row is one object */
	fresh.lock_name = key->lock_name;
	fresh.created = key->created;
	fresh.created_how = key->created_how;
	if (sp_rows_push(rows, &fresh))
		return NULL;
	*s = rows->n;
	return &rows->v[rows->n - 1];
}

/* Add @s into @d, a row of @rows; -ENOMEM when @d's detail could not be
 * allocated (its counters are then added, its histograms not). */
int sp_row_add(struct sp_rows *rows, struct sp_row *d, const struct sp_row *s)
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
	if (sp_hist_merge(&dd->hist, &s->detail->hist) ||
	    sp_hist_merge(&dd->hold_hist, &s->detail->hold_hist))
		return -ENOMEM;
	/*
	 * The stack of a merged row is that of the part that waited longest
	 * (ties: the smaller first frame), not of the first part merged: the
	 * order of the parts differs between a live collection and a saved
	 * profile read back, the choice must not.
	 */
	if (s->n_frames && (!d->n_frames || s->wait_ns > dd->stack_wait_ns ||
			    (s->wait_ns == dd->stack_wait_ns &&
			     memcmp(s->detail->frames, dd->frames, sizeof(dd->frames)) < 0))) {
		memcpy(dd->frames, s->detail->frames, sizeof(dd->frames));
		d->n_frames = s->n_frames;
		dd->stack_wait_ns = s->wait_ns;
		if (s->names)
			d->names = s->names; /* a saved profile's stack names */
	}
	for (uint32_t i = 0; i < s->detail->n_hold_states; i++)
		if (sp_rows_hold_state_add(rows, d, s->detail->hold_states[i].name,
					   s->detail->hold_states[i].ns))
			return -ENOMEM;
	for (uint32_t i = 0; i < s->detail->n_hold_where; i++) {
		const struct sp_hold_where *w = &s->detail->hold_where[i];

		if (sp_rows_hold_where_add(rows, d, w->pc, w->names, w->state, w->ns))
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->detail->n_blame; i++) {
		const struct sp_blame *b = &s->detail->blame[i];

		if (sp_rows_blame_add_root(rows, d, &b->holder, b->names,
					   sp_blame_has_root(b) ? &b->root : NULL, b->root_names,
					   b->wait_ns, b->count))
			return -ENOMEM;
	}
	return 0;
}

/* ---- subtract, coalesce, sort, top ------------------------------------ */

static uint64_t sub_clamp(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* @d -= @s, bucket by bucket, never below 0; @d's range stays. */
static void hist_sub(struct sp_hist *d, const struct sp_hist *s)
{
	for (unsigned i = 0; i < d->n; i++)
		d->v[i] = sub_clamp(d->v[i], sp_hist_at(s, d->lo + i));
}

int sp_report_subtract(struct sp_rows *cur, const struct sp_rows *snap)
{
	struct sp_row_map m;
	size_t kept = 0;

	if (!snap || !snap->n)
		return 0;
	if (sp_row_map_init(&m, snap->n, 1))
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
				hist_sub(&r->detail->hist, &sp_row_d(o)->hist);
				hist_sub(&r->detail->hold_hist, &sp_row_d(o)->hold_hist);
			}
		}
		if (r->acquisitions || r->contended)
			cur->v[kept++] = *r;
	}
	cur->n = kept;
	sp_row_map_free(&m);
	return 0;
}

int sp_report_coalesce(struct sp_rows *rows)
{
	struct sp_rows out = { 0 };
	struct sp_row_map m;

	if (sp_row_map_init(&m, rows->n, 0))
		return -ENOMEM;
	for (size_t i = 0; i < rows->n; i++) {
		struct sp_row *d = sp_row_map_get(&m, &out, &rows->v[i]);

		if (!d || sp_row_add(&out, d, &rows->v[i])) {
			sp_row_map_free(&m);
			sp_rows_free(&out);
			return -ENOMEM;
		}
		d->n_objects += rows->v[i].n_objects;
	}
	sp_row_map_free(&m);
	out.n_total = rows->n_total > rows->n ? 0 : out.n; /* a cut set cannot know */
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

static int row_order(const struct sp_row *a, const struct sp_row *b, enum syncprof_sort key);

static int row_cmp(const void *pa, const void *pb, void *key)
{
	return row_order(*(const struct sp_row *const *)pa, *(const struct sp_row *const *)pb,
			 *(enum syncprof_sort *)key);
}

static int row_cmp_value(const void *pa, const void *pb, void *key)
{
	return row_order(pa, pb, *(enum syncprof_sort *)key);
}

static int row_order(const struct sp_row *a, const struct sp_row *b, enum syncprof_sort key)
{
	uint64_t va = sort_value(a, key), vb = sort_value(b, key);
	int c;

	if (va != vb)
		return va > vb ? -1 : 1;
	/*
	 * Ties: by total wait, then by site and object, so output is stable.
	 * The address comes first: a live interposed row is keyed by its
	 * address alone, the same row read back from JSON by its address and
	 * names, and only an order that the address decides is the same for
	 * both (same bytes from a saved profile as from the live one).
	 */
	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	c = cmp_str(a->file, b->file);
	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	c = cmp_str(a->func, b->func);
	if (c)
		return c;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	return a->obj < b->obj ? -1 : a->obj > b->obj;
}

/*
 * Sorts pointers, then applies the order in place by following its cycles, each
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

	if (n < 2)
		return;
	p = malloc(n * sizeof(*p));
	dest = malloc(n * sizeof(*dest));
	if (!p || !dest) {
		free(p);
		free(dest);
		qsort_r(rows->v, n, sizeof(*rows->v), row_cmp_value, &key);
		return;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = &rows->v[i];
	qsort_r(p, n, sizeof(*p), row_cmp, &key);
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

/* The heap of the top N: a max-heap by row order, its root the row that
 * would be printed last, the one a better row replaces. */
static void heap_down(struct sp_row **h, size_t n, size_t i, enum syncprof_sort key)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct sp_row *t;

		if (l < n && row_order(h[l], h[m], key) > 0)
			m = l;
		if (r < n && row_order(h[r], h[m], key) > 0)
			m = r;
		if (m == i)
			return;
		t = h[i];

		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_up(struct sp_row **h, size_t i, enum syncprof_sort key)
{
	while (i) {
		size_t up = (i - 1) / 2;
		struct sp_row *t;

		if (row_order(h[i], h[up], key) <= 0)
			return;
		t = h[i];
		h[i] = h[up];
		h[up] = t;
		i = up;
	}
}

/*
 * Sort and cut to the first @top rows, as sp_report_sort() then
 * sp_report_top() would (the order is total, so the same rows in the same
 * order), in O(n log top) comparisons instead of O(n log n): a heap of
 * the best @top seen so far, sorted at the end, and only those rows moved.
 * Without memory for the heap: the full sort.
 */
void sp_report_sort_top(struct sp_rows *rows, enum syncprof_sort key, unsigned top)
{
	size_t n = rows->n, k = 0;
	struct sp_row **h, *kept;

	if (!top || n <= top || top > n / 4) {
		sp_report_sort(rows, key);
		sp_report_top(rows, top);
		return;
	}
	h = malloc(top * sizeof(*h));
	kept = malloc(top * sizeof(*kept));
	if (!h || !kept) {
		free(h);
		free(kept);
		sp_report_sort(rows, key);
		sp_report_top(rows, top);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct sp_row *r = &rows->v[i];

		if (k < top) {
			h[k] = r;
			heap_up(h, k++, key);
		} else if (row_order(r, h[0], key) < 0) {
			h[0] = r;
			heap_down(h, k, 0, key);
		}
	}
	qsort_r(h, k, sizeof(*h), row_cmp, &key);
	for (size_t i = 0; i < k; i++)
		kept[i] = *h[i];
	memcpy(rows->v, kept, k * sizeof(*kept));
	free(kept);
	free(h);
	if (rows->n_total < n)
		rows->n_total = n;
	rows->n = k;
}

void sp_report_top(struct sp_rows *rows, unsigned top)
{
	if (rows->n_total < rows->n)
		rows->n_total = rows->n;
	if (top && rows->n > top)
		rows->n = top;
}

/*
 * Percentile @q (0..1) of the waits of all acquisitions, by nearest rank:
 * uncontended ones wait 0; a contended wait is taken as the midpoint of its
 * bucket (rounded down), but never more than the maximum seen.  A bucket
 * is at most 1/8 of its lower bound wide (base/types.h), so the midpoint
 * is within 1/16 of every wait in it; waits below 16 ns are exact.
 *
 * Alternatives considered: the bucket's upper bound (what the log2
 * buckets reported: up to 2x off, and still up to 1/8 with these); a value
 * interpolated by rank inside the bucket (exact for waits spread evenly
 * over it, but up to 1/8 off when they bunch at one end, and it changes
 * with every count added to the bucket).
 */
uint64_t sp_row_percentile(const struct sp_row *r, double q)
{
	const struct sp_hist *h = &sp_row_d(r)->hist;
	uint64_t timed = sp_hist_total(h), zeros, total, rank, seen;

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
	for (unsigned i = 0; i < h->n; i++) {
		unsigned b = h->lo + i;

		seen += h->v[i];
		if (seen >= rank) {
			uint64_t lo = sp_hist_lower(b), mid = lo + (sp_hist_upper(b) - lo) / 2;

			return r->wait_max_ns && mid > r->wait_max_ns ? r->wait_max_ns : mid;
		}
	}
	return r->wait_max_ns;
}

/*
 * Length of the directory prefix shared by the absolute source paths of
 * the rows' sites (resolved names: the instrumented ones' files and, for
 * interposed ones, the files their addresses symbolized to).
 */
size_t sp_rows_common_prefix(const struct sp_rows *rows)
{
	char first[4096];
	size_t len = 0;
	int have = 0;

	for (size_t i = 0; i < rows->n; i++) {
		const char *f = rows->v[i].names ? rows->v[i].names->site.file : rows->v[i].file;
		size_t j = 0;

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

int sp_profile_shape(struct sp_profile *p, const struct syncprof_report_options *o)
{
	int rc = 0;

	if (o->coalesce && !p->coalesced) {
		rc = sp_report_coalesce(&p->rows);
		if (rc)
			return rc;
		p->coalesced = 1;
	}
	sp_report_sort_top(&p->rows, o->sort, o->top);
	p->sort = o->sort;
	sp_order_sort(&p->order);
	return 0;
}
