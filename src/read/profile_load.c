/*
 * profile_load.c - read a saved profile ("profile JSON version 1",
 * docs/formats.md) back into the profile model, for 'syncprof report' and
 * for the reports that 'syncprof ctl' receives.
 *
 * Design: json_stream.c parses the text with yajl and hands over each row
 * as a small tree, which is read at once and forgotten; every fact the
 * JSON renderer wrote is read back into the same structures a live report
 * builds (rows, details, blame, names with offsets and inlined callers,
 * metadata), strings interned into the profile's arena.  Row
 * keys (file, function, line, address of the site) and blame holder keys
 * come from the names, so that coalescing and sorting work as on live
 * rows, and the renderers, which read names only, print the same bytes.
 * "lock_order" (lock-order checking) is read back the same way: its
 * counts, and every cycle's edges with their ends' objects, types, names
 * and stacks, keyed from the names as rows are.  "accounting" and
 * "threads" (the threads' time) are read back whole.
 * Every problem is one message naming the file, the row and the key;
 * unknown keys are ignored (version 1 allows added keys).  Profiles
 * written before "hold_tracking" existed count as hold-tracked when a row
 * has a non-null "hold_ns".
 *
 * Histograms: a profile with the top-level "hist" layout has its
 * log-linear buckets in "wait_buckets" and "hold_buckets", read exactly
 * (its "wait_hist" and "hold_hist" are derived from them and ignored).
 * Older profiles have the log2 histograms only: each log2 bucket's count
 * goes to the log-linear bucket of that log2 bucket's largest value
 * (2^(k+1) - 1 ns), so their percentiles come out at most 1/32 below
 * that upper bound, about what the syncprof that wrote them printed.
 *
 * Costs: one pass over the file, read in 1 MB pieces: memory is the
 * profile model plus one row's tree (1M rows, 360 MB of JSON:
 * bench/memory.sh report; 100k rows, 36 MB: 0.29 s of CPU, 42 MB).
 *
 * Alternatives considered: json-c (a tree per row, ~20 MB/s, 19-30 s for
 * a million rows); keeping a whole-file
 * tree alive for its strings (the first version: a loaded profile then
 * held its text twice).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "read/json_stream.h"
#include "read/profile_load.h"

/* A row's histogram as read: dense, and the range of buckets touched, so
 * that a row costs what it holds (not 2 x 304 buckets cleared and scanned). */
struct dense {
	uint64_t v[SP_HIST_BUCKETS];
	unsigned lo, hi; /* [lo, hi): the non-zero buckets; lo >= hi: none */
};

static void dense_add(struct dense *d, unsigned b, uint64_t count)
{
	if (!count)
		return;
	d->v[b] += count;
	if (d->lo >= d->hi) {
		d->lo = b;
		d->hi = b + 1;
	} else if (b < d->lo) {
		d->lo = b;
	} else if (b >= d->hi) {
		d->hi = b + 1;
	}
}

static void dense_clear(struct dense *d)
{
	if (d->lo < d->hi)
		memset(d->v + d->lo, 0, (d->hi - d->lo) * sizeof(*d->v));
	d->lo = d->hi = 0;
}

/* @h views @d's non-zero buckets (as sp_hist_view() would find them). */
static void dense_view(struct dense *d, struct sp_hist *h)
{
	h->v = d->lo < d->hi ? d->v + d->lo : NULL;
	h->lo = (uint16_t)(d->lo < d->hi ? d->lo : 0);
	h->n = (uint16_t)(d->lo < d->hi ? d->hi - d->lo : 0);
}

struct loader {
	const char *name;
	struct sp_profile *p;
	char *err;
	size_t err_size;
	int buckets; /* the file describes the log-linear layout: "*_buckets" are read */
	struct dense *wait, *hold; /* the current row's histograms */
};

static int fail(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct loader *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(l->err, l->err_size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int get_u64(const struct jv *o, const char *key, int nullable, uint64_t *out, int *is_null)
{
	const struct jv *v;

	if (is_null)
		*is_null = 0;
	if (!jv_get_ex(o, key, &v) || !v) {
		if (nullable) {
			*out = 0;
			if (is_null)
				*is_null = 1;
			return 0;
		}
		return -ENOENT;
	}
	if (!jv_is(v, JV_INT) || (v->neg && v->u))
		return -EINVAL;
	*out = v->u;
	return 0;
}

static const char *get_str(const struct jv *o, const char *key)
{
	const struct jv *v;

	if (!jv_get_ex(o, key, &v) || !jv_is(v, JV_STRING))
		return NULL;
	return jv_str(v);
}

static int parse_hex(const char *s, uintptr_t *out)
{
	char *end;

	if (!s || strncmp(s, "0x", 2))
		return -EINVAL;
	errno = 0;
	*out = (uintptr_t)strtoull(s + 2, &end, 16);
	return errno || *end || end == s + 2 ? -EINVAL : 0;
}

static int read_inlined(struct loader *l, const struct jv *arr, struct sp_frame *f)
{
	size_t n = jv_len(arr);
	struct sp_inline *inl;

	if (!n)
		return 0;
	inl = sp_profile_alloc(l->p, n * sizeof(*inl));
	if (!inl)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct jv *o = jv_idx(arr, i);
		uint64_t line;

		if (!jv_is(o, JV_OBJECT) ||
		    get_u64(o, "line", 1, &line, NULL) || line > UINT32_MAX)
			return -EINVAL;
		inl[i].function = sp_profile_intern(l->p, get_str(o, "function"));
		inl[i].symbol = sp_profile_intern(l->p, get_str(o, "symbol"));
		inl[i].file = sp_profile_intern(l->p, get_str(o, "file"));
		inl[i].line = (unsigned)line;
	}
	f->inlined = inl;
	f->n_inline = (unsigned)n;
	return 0;
}

static int read_frame(struct loader *l, const struct jv *o, struct sp_frame *f)
{
	uint64_t line, offset;
	const char *addr;
	const struct jv *inl;

	memset(f, 0, sizeof(*f));
	if (!jv_is(o, JV_OBJECT))
		return -EINVAL;
	f->function = sp_profile_intern(l->p, get_str(o, "function"));
	f->symbol = sp_profile_intern(l->p, get_str(o, "symbol"));
	f->file = sp_profile_intern(l->p, get_str(o, "file"));
	f->dso = sp_profile_intern(l->p, get_str(o, "dso"));
	if (get_u64(o, "line", 1, &line, NULL) || line > UINT32_MAX)
		return -EINVAL;
	f->line = (unsigned)line;
	if (get_u64(o, "offset", 1, &offset, NULL))
		return -EINVAL;
	f->offset = (uintptr_t)offset;
	addr = get_str(o, "address");
	if (addr && parse_hex(addr, &f->address))
		return -EINVAL;
	if (jv_get_ex(o, "inlined", &inl) && inl) {
		if (!jv_is(inl, JV_ARRAY) || read_inlined(l, inl, f))
			return -EINVAL;
	}
	return sp_profile_error(l->p);
}

static int get_count(const struct jv *v, uint64_t *out)
{
	if (!jv_is(v, JV_INT) || (v->neg && v->u))
		return -EINVAL;
	*out = v->u;
	return 0;
}

/* "<what>_buckets": [[index, count], ...] of the log-linear layout, added
 * into @hist (SP_HIST_BUCKETS counts); 1 when read, 0 when absent. */
static int read_buckets(const struct jv *o, const char *key, struct dense *hist)
{
	const struct jv *h;

	if (!jv_get_ex(o, key, &h) || !h)
		return 0;
	if (!jv_is(h, JV_ARRAY))
		return -EINVAL;
	for (size_t i = 0; i < jv_len(h); i++) {
		const struct jv *pair = jv_idx(h, i);
		uint64_t b, count;

		if (!jv_is(pair, JV_ARRAY) ||
		    jv_len(pair) != 2 ||
		    get_count(jv_idx(pair, 0), &b) || b >= SP_HIST_BUCKETS ||
		    get_count(jv_idx(pair, 1), &count))
			return -EINVAL;
		dense_add(hist, (unsigned)b, count);
	}
	return 1;
}

/* "<what>_hist": the log2 histogram, each bucket's count put into the
 * log-linear bucket of its largest value (sp_hist_from_log2()). */
static int read_log2(const struct jv *o, const char *key, struct dense *hist)
{
	const struct jv *h;

	if (!jv_get_ex(o, key, &h) || !h)
		return 0;
	if (!jv_is(h, JV_ARRAY) ||
	    jv_len(h) > SP_LOG2_BUCKETS)
		return -EINVAL;
	for (size_t k = 0; k < jv_len(h); k++) {
		uint64_t count;

		if (get_count(jv_idx(h, k), &count))
			return -EINVAL;
		dense_add(hist, sp_hist_from_log2((unsigned)k), count);
	}
	return 0;
}

/* A row's histogram @what ("wait", "hold"): its buckets when the file has
 * them, else its log2 histogram. */
static int read_hist(struct loader *l, const struct jv *o, int hold, struct dense *hist)
{
	int rc = 0;

	if (l->buckets) {
		rc = read_buckets(o, hold ? "hold_buckets" : "wait_buckets", hist);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return read_log2(o, hold ? "hold_hist" : "wait_hist", hist);
}

static void site_key(const struct sp_frame *f, struct sp_site *s)
{
	s->file = f->file;
	s->func = f->function;
	s->line = f->line;
	s->pc = f->address;
}

static int read_stack(struct loader *l, size_t i, const struct jv *o, struct sp_row *r,
		      struct sp_names *nm, struct sp_row_detail *det)
{
	const struct jv *stack;
	struct sp_frame *frames;
	size_t n;

	if (!jv_get_ex(o, "stack", &stack) || !stack)
		return 0;
	if (!jv_is(stack, JV_ARRAY))
		return fail(l, "%s: row %zu: \"stack\" is not an array", l->name, i);
	n = jv_len(stack);
	if (n > SP_MAX_FRAMES)
		n = SP_MAX_FRAMES;
	if (!n)
		return 0;
	frames = sp_profile_alloc(l->p, n * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		if (read_frame(l, jv_idx(stack, k), &frames[k]))
			return fail(l, "%s: row %zu: bad frame %zu in \"stack\"", l->name, i, k);
		det->frames[k] = frames[k].address;
	}
	nm->frames = frames;
	nm->n_frames = (unsigned)n;
	r->n_frames = (uint8_t)n;
	return 0;
}

/* "hold_states": {"running": N, "syscall:fsync": N, ...}, into @rows. */
static int read_hold_states(struct loader *l, size_t i, const struct jv *o, struct sp_rows *rows,
			    struct sp_row *r)
{
	const struct jv *hs;

	if (!jv_get_ex(o, "hold_states", &hs) || !hs)
		return 0;
	if (!jv_is(hs, JV_OBJECT))
		return fail(l, "%s: row %zu: \"hold_states\" is not an object", l->name, i);
	for (uint32_t k = 0; k < hs->n; k++) {
		const struct jv *m = &hs->kids[k];
		char name[128];
		uint64_t ns;

		if (!m->key || !m->key_len || m->key_len >= sizeof(name) || get_count(m, &ns))
			return fail(l, "%s: row %zu: bad hold state %u", l->name, i, k);
		memcpy(name, m->key, m->key_len);
		name[m->key_len] = 0;
		if (sp_rows_hold_state_add(rows, r, sp_profile_intern(l->p, name), ns))
			return -ENOMEM;
	}
	return 0;
}

/* "hold_where": [{["site": frame,] "state": S, "ns": N}, ...], into @rows. */
static int read_hold_where(struct loader *l, size_t i, const struct jv *o, struct sp_rows *rows,
			   struct sp_row *r)
{
	const struct jv *arr;

	if (!jv_get_ex(o, "hold_where", &arr) || !arr)
		return 0;
	if (!jv_is(arr, JV_ARRAY))
		return fail(l, "%s: row %zu: \"hold_where\" is not an array", l->name, i);
	for (size_t k = 0; k < jv_len(arr); k++) {
		const struct jv *w = jv_idx(arr, k), *site;
		struct sp_frame *f = NULL;
		const char *state = w ? get_str(w, "state") : NULL;
		uint64_t ns;

		if (!jv_is(w, JV_OBJECT) || !state || !*state || strlen(state) > 127 ||
		    get_u64(w, "ns", 0, &ns, NULL))
			return fail(l, "%s: row %zu: bad \"hold_where\" entry %zu", l->name, i, k);
		if (jv_get_ex(w, "site", &site) && site) {
			f = sp_profile_alloc(l->p, sizeof(*f));
			if (!f)
				return -ENOMEM;
			if (read_frame(l, site, f) || !f->address)
				return fail(l, "%s: row %zu: bad site in \"hold_where\" entry %zu",
					    l->name, i, k);
		}
		if (sp_rows_hold_where_add(rows, r, f ? f->address : 0, f,
					   sp_profile_intern(l->p, state), ns))
			return -ENOMEM;
	}
	return 0;
}

/* "blame": [{"site": frame, ["root": frame,] "wait_ns": N, "count": N}, ...],
 * into @rows. */
static int read_blame(struct loader *l, size_t i, const struct jv *o, struct sp_rows *rows,
		      struct sp_row *r)
{
	const struct jv *arr;

	if (!jv_get_ex(o, "blame", &arr) || !arr)
		return 0;
	if (!jv_is(arr, JV_ARRAY))
		return fail(l, "%s: row %zu: \"blame\" is not an array", l->name, i);
	for (size_t k = 0; k < jv_len(arr); k++) {
		const struct jv *b = jv_idx(arr, k), *site;
		struct sp_frame *f = sp_profile_alloc(l->p, sizeof(*f));
		struct sp_site holder;
		uint64_t wait, count;

		if (!f)
			return -ENOMEM;
		if (!jv_is(b, JV_OBJECT) ||
		    !jv_get_ex(b, "site", &site) || read_frame(l, site, f) ||
		    get_u64(b, "wait_ns", 0, &wait, NULL) || get_u64(b, "count", 0, &count, NULL))
			return fail(l, "%s: row %zu: bad blame %zu", l->name, i, k);
		site_key(f, &holder);
		/* "root": where a wait chain's root holder took its lock. */
		if (jv_get_ex(b, "root", &site) && site) {
			struct sp_frame *rf = sp_profile_alloc(l->p, sizeof(*rf));
			struct sp_site root;

			if (!rf)
				return -ENOMEM;
			if (read_frame(l, site, rf))
				return fail(l, "%s: row %zu: bad blame %zu root", l->name, i, k);
			site_key(rf, &root);
			if (sp_rows_blame_add_root(rows, r, &holder, f, &root, rf, wait, count))
				return -ENOMEM;
			continue;
		}
		if (sp_rows_blame_add(rows, r, &holder, f, wait, count))
			return -ENOMEM;
	}
	return 0;
}

/* A per-object row's lock: "lock_name", "created_at" and "created_by"
 * (all optional; created_by goes with created_at). */
static int read_lock(struct loader *l, size_t i, const struct jv *o, struct sp_row *r,
		     struct sp_names *nm)
{
	const struct jv *v;

	if (jv_get_ex(o, "lock_name", &v) && v) {
		if (!jv_is(v, JV_STRING))
			return fail(l, "%s: row %zu: bad \"lock_name\"", l->name, i);
		r->lock_name = sp_profile_intern(l->p, jv_str(v));
		if (!r->lock_name)
			return -ENOMEM;
	}
	if (jv_get_ex(o, "created_at", &v) && v) {
		struct sp_frame *f = sp_profile_alloc(l->p, sizeof(*f));
		const char *by = get_str(o, "created_by");

		if (!f)
			return -ENOMEM;
		if (read_frame(l, v, f))
			return fail(l, "%s: row %zu: bad \"created_at\"", l->name, i);
		if (by && !strcmp(by, "init"))
			nm->created_how = SP_CREATED_INIT;
		else if (by && !strcmp(by, "first_use"))
			nm->created_how = SP_CREATED_USE;
		else
			return fail(l, "%s: row %zu: bad or missing \"created_by\"", l->name, i);
		nm->created = f;
	}
	return sp_profile_error(l->p);
}

static const char *const counters[] = { "acquisitions", "contended", "wait_ns", "wait_max_ns" };

static int read_row(struct loader *l, size_t i, const struct jv *o, int *hold_seen)
{
	struct sp_row_detail det;
	struct sp_row r, *d;
	struct sp_names *nm;
	const struct jv *site, *v;
	const char *type, *kind, *obj;
	uint64_t *dst[] = { &r.acquisitions, &r.contended, &r.wait_ns, &r.wait_max_ns };
	int null, rc;

	memset(&r, 0, sizeof(r));
	memset(&det, 0, sizeof(det));
	dense_clear(l->wait);
	dense_clear(l->hold);
	nm = sp_profile_alloc(l->p, sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	if (!jv_is(o, JV_OBJECT))
		return fail(l, "%s: row %zu is not an object", l->name, i);
	type = get_str(o, "type");
	r.type = SP_TYPE_COUNT;
	for (int t = 0; type && t < SP_TYPE_COUNT; t++)
		if (!strcmp(type, sp_type_name(t)))
			r.type = (uint8_t)t;
	if (r.type == SP_TYPE_COUNT)
		return fail(l, "%s: row %zu: bad or missing \"type\"", l->name, i);
	/* "kind" is the type's (absent before issue 26): one that says otherwise
	 * is a damaged file, not a choice. */
	kind = get_str(o, "kind");
	if (jv_get_ex(o, "kind", &v) && (!kind || strcmp(kind, sp_type_kind(r.type))))
		return fail(l, "%s: row %zu: \"kind\" is not \"%s\", the kind of a %s", l->name, i,
			    sp_type_kind(r.type), sp_type_name(r.type));
	obj = get_str(o, "object");
	if (obj && parse_hex(obj, &r.obj))
		return fail(l, "%s: row %zu: bad \"object\" '%s'", l->name, i, obj);
	if (get_u64(o, "n_objects", 1, &r.n_objects, &null) || (!null && !r.n_objects))
		return fail(l, "%s: row %zu: bad \"n_objects\"", l->name, i);
	if (null)
		r.n_objects = 1;
	if (r.n_objects != 1)
		r.obj = 0; /* a row of several objects has none (written as null) */
	for (size_t k = 0; k < sizeof(counters) / sizeof(*counters); k++)
		if (get_u64(o, counters[k], 0, dst[k], NULL))
			return fail(l, "%s: row %zu: missing or bad \"%s\"", l->name, i, counters[k]);
	if (get_u64(o, "hold_ns", 1, &r.hold_ns, &null) ||
	    get_u64(o, "hold_max_ns", 1, &r.hold_max_ns, NULL))
		return fail(l, "%s: row %zu: bad \"hold_ns\" or \"hold_max_ns\"", l->name, i);
	if (!null)
		*hold_seen = 1;
	if (get_u64(o, "holds", 1, &r.holds, NULL) ||
	    get_u64(o, "owner_changes", 1, &r.owner_changes, NULL))
		return fail(l, "%s: row %zu: bad \"holds\" or \"owner_changes\"", l->name, i);
	if (!jv_get_ex(o, "site", &site) || read_frame(l, site, &nm->site))
		return fail(l, "%s: row %zu: missing or bad \"site\"", l->name, i);
	rc = read_stack(l, i, o, &r, nm, &det);
	if (rc || (rc = read_lock(l, i, o, &r, nm)))
		return rc;
	if (read_hist(l, o, 0, l->wait))
		return fail(l, "%s: row %zu: bad \"wait_buckets\" or \"wait_hist\"", l->name, i);
	if (read_hist(l, o, 1, l->hold))
		return fail(l, "%s: row %zu: bad \"hold_buckets\" or \"hold_hist\"", l->name, i);
	dense_view(l->wait, &det.hist);
	dense_view(l->hold, &det.hold_hist);
	r.file = nm->site.file;
	r.func = nm->site.function;
	r.line = nm->site.line;
	r.pc = nm->site.address;
	r.names = nm;
	r.detail = &det; /* copied into the set by sp_rows_push() */
	if (sp_rows_push(&l->p->rows, &r))
		return -ENOMEM;
	d = &l->p->rows.v[l->p->rows.n - 1];
	if (jv_get_ex(o, "blame", &v) && (rc = read_blame(l, i, o, &l->p->rows, d)))
		return rc;
	if ((rc = read_hold_states(l, i, o, &l->p->rows, d)))
		return rc;
	return read_hold_where(l, i, o, &l->p->rows, d);
}

/* "held" or "acquired": {"object", "type", "site", "stack"}. */
static int read_order_end(struct loader *l, const struct jv *o, struct sp_order_end *e)
{
	struct sp_names *nm = sp_profile_alloc(l->p, sizeof(*nm));
	const char *type = get_str(o, "type"), *obj = get_str(o, "object");
	const struct jv *site, *stack;
	struct sp_frame *frames;
	size_t n;

	if (!nm)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	if (!jv_is(o, JV_OBJECT) || !obj || parse_hex(obj, &e->obj))
		return -EINVAL;
	e->type = SP_TYPE_COUNT;
	for (int t = 0; type && t < SP_TYPE_COUNT; t++)
		if (!strcmp(type, sp_type_name(t)))
			e->type = (uint8_t)t;
	if (e->type == SP_TYPE_COUNT || !jv_get_ex(o, "site", &site) ||
	    read_frame(l, site, &nm->site))
		return -EINVAL;
	site_key(&nm->site, &e->site);
	e->names = nm;
	if (!jv_get_ex(o, "stack", &stack) || !stack)
		return 0;
	if (!jv_is(stack, JV_ARRAY))
		return -EINVAL;
	n = jv_len(stack);
	if (n > SP_MAX_FRAMES)
		n = SP_MAX_FRAMES;
	if (!n)
		return 0;
	frames = sp_profile_alloc(l->p, n * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		if (read_frame(l, jv_idx(stack, k), &frames[k]))
			return -EINVAL;
		e->frames[k] = frames[k].address;
	}
	nm->frames = frames;
	nm->n_frames = (unsigned)n;
	e->n_frames = (uint8_t)n;
	return 0;
}

static int read_cycle(struct loader *l, size_t i, const struct jv *c)
{
	struct sp_order_edge edges[SP_MAX_CYCLE_EDGES];
	const struct jv *arr;
	uint64_t count;
	size_t n;

	if (!jv_is(c, JV_OBJECT) || get_u64(c, "count", 0, &count, NULL) ||
	    !jv_get_ex(c, "edges", &arr) ||
	    !jv_is(arr, JV_ARRAY))
		return fail(l, "%s: lock_order: cycle %zu: missing or bad \"count\" or \"edges\"",
			    l->name, i);
	n = jv_len(arr);
	if (n < 2 || n > sizeof(edges) / sizeof(*edges))
		return fail(l, "%s: lock_order: cycle %zu: %zu edges (2 to %zu)", l->name, i, n,
			    sizeof(edges) / sizeof(*edges));
	for (size_t k = 0; k < n; k++) {
		const struct jv *e = jv_idx(arr, k), *held, *acq;
		uint64_t tid;
		int rc;

		if (!jv_is(e, JV_OBJECT) ||
		    !jv_get_ex(e, "held", &held) ||
		    !jv_get_ex(e, "acquired", &acq) ||
		    get_u64(e, "thread", 0, &tid, NULL) || tid > INT32_MAX)
			return fail(l, "%s: lock_order: cycle %zu: bad edge %zu", l->name, i, k);
		rc = read_order_end(l, held, &edges[k].held);
		if (!rc)
			rc = read_order_end(l, acq, &edges[k].acquired);
		if (rc == -ENOMEM)
			return rc;
		if (rc)
			return fail(l, "%s: lock_order: cycle %zu: edge %zu: bad \"held\" or "
				       "\"acquired\"", l->name, i, k);
		edges[k].tid = (int)tid;
	}
	return sp_profile_cycle_add(l->p, count, edges, (unsigned)n);
}

/* "lock_order": {"edges_kept", "edges_dropped", "cycles_dropped",
 * "searches_cut", "cycles": [...]}; absent: lock order was off. */
static int read_lock_order(struct loader *l, const struct jv *root)
{
	struct sp_lock_order *o = &l->p->order;
	const struct jv *lo, *cycles;
	int rc = 0;

	if (!jv_get_ex(root, "lock_order", &lo) || !lo)
		return 0;
	if (!jv_is(lo, JV_OBJECT) ||
	    get_u64(lo, "edges_kept", 0, &o->edges_kept, NULL) ||
	    get_u64(lo, "edges_dropped", 0, &o->edges_dropped, NULL) ||
	    get_u64(lo, "cycles_dropped", 1, &o->cycles_dropped, NULL) ||
	    get_u64(lo, "searches_cut", 1, &o->searches_cut, NULL) ||
	    !jv_get_ex(lo, "cycles", &cycles) ||
	    !jv_is(cycles, JV_ARRAY))
		return fail(l, "%s: \"lock_order\" is not an object with \"edges_kept\", "
			       "\"edges_dropped\" and \"cycles\"", l->name);
	o->on = 1;
	for (size_t i = 0; !rc && i < jv_len(cycles); i++)
		rc = read_cycle(l, i, jv_idx(cycles, i));
	return rc;
}

static int read_figs(const struct jv *o, struct sp_thread_account *t)
{
	return get_u64(o, "lifetime_ns", 0, &t->lifetime_ns, NULL) ||
	       get_u64(o, "running_ns", 0, &t->running_ns, NULL) ||
	       get_u64(o, "preempted_ns", 0, &t->preempted_ns, NULL) ||
	       get_u64(o, "blocked_ns", 0, &t->blocked_ns, NULL) ||
	       get_u64(o, "sync_wait_ns", 0, &t->sync_wait_ns, NULL);
}

/* "accounting": {"threads", "exited", "exited_unread", "exited_skipped",
 * "rows_reset", the
 * figures} or {"unavailable": why}, and "threads": [{"tid", "name",
 * "exited", the figures}]; absent: a profile saved before the account. */
static int read_account(struct loader *l, const struct jv *root)
{
	struct sp_profile *p = l->p;
	struct sp_account *a = &p->account;
	struct sp_thread_account sum;
	const struct jv *acc, *list, *v;
	const char *why;
	size_t n;

	if (!jv_get_ex(root, "accounting", &acc) || !acc)
		return 0;
	if (!jv_is(acc, JV_OBJECT))
		return fail(l, "%s: \"accounting\" is not an object", l->name);
	why = get_str(acc, "unavailable");
	if (why) {
		a->state = SP_ACCOUNT_UNAVAILABLE;
		a->unavailable = sp_profile_intern(p, why);
		return sp_profile_error(p);
	}
	memset(&sum, 0, sizeof(sum));
	if (get_u64(acc, "threads", 0, &a->threads, NULL) ||
	    get_u64(acc, "exited", 0, &a->exited, NULL) ||
	    get_u64(acc, "exited_unread", 1, &a->unread, NULL) ||
	    get_u64(acc, "exited_skipped", 1, &a->skipped, NULL) || read_figs(acc, &sum))
		return fail(l, "%s: \"accounting\" needs \"threads\", \"exited\" and the "
			       "*_ns figures (unsigned integers)", l->name);
	a->reset = jv_get_ex(acc, "rows_reset", &v) && jv_bool(v);
	a->lifetime_ns = sum.lifetime_ns;
	a->running_ns = sum.running_ns;
	a->preempted_ns = sum.preempted_ns;
	a->blocked_ns = sum.blocked_ns;
	a->sync_wait_ns = sum.sync_wait_ns;
	a->state = SP_ACCOUNT_KEPT;
	if (!jv_get_ex(root, "threads", &list) || !list)
		return 0;
	if (!jv_is(list, JV_ARRAY))
		return fail(l, "%s: \"threads\" is not an array", l->name);
	n = jv_len(list);
	if (!n)
		return 0;
	a->v = sp_profile_alloc(p, n * sizeof(*a->v));
	if (!a->v)
		return fail(l, "%s: out of memory", l->name);
	for (size_t i = 0; i < n; i++) {
		const struct jv *o = jv_idx(list, i);
		struct sp_thread_account *t = &a->v[i];
		uint64_t tid = 0;

		memset(t, 0, sizeof(*t));
		if (!o || !jv_is(o, JV_OBJECT) || get_u64(o, "tid", 0, &tid, NULL) ||
		    tid > INT32_MAX || read_figs(o, t) ||
		    (jv_get_ex(o, "name", &v) && v && !jv_is(v, JV_STRING)))
			return fail(l, "%s: thread %zu: needs \"tid\", \"name\" (a string or "
				       "null) and the *_ns figures", l->name, i);
		t->tid = (int)tid;
		t->name = sp_profile_intern(p, get_str(o, "name"));
		t->exited = jv_get_ex(o, "exited", &v) && jv_bool(v);
	}
	a->n = n;
	return sp_profile_error(p);
}

/* "mappings": [{"start", "limit", "offset", "file", "build_id"}], as
 * render/json.c writes them (optional). */
static int read_mappings(struct loader *l, const struct jv *root)
{
	struct sp_profile *p = l->p;
	const struct jv *arr;
	size_t n;

	if (!jv_get_ex(root, "mappings", &arr) || !arr)
		return 0;
	if (!jv_is(arr, JV_ARRAY))
		return fail(l, "%s: \"mappings\" is not an array", l->name);
	n = jv_len(arr);
	if (!n)
		return 0;
	p->mappings = sp_profile_alloc(p, n * sizeof(*p->mappings));
	if (!p->mappings)
		return fail(l, "%s: out of memory", l->name);
	for (size_t i = 0; i < n; i++) {
		const struct jv *m = jv_idx(arr, i), *v;
		struct sp_mapping *d = &p->mappings[i];

		if (!m || !jv_is(m, JV_OBJECT) ||
		    parse_hex(get_str(m, "start"), &d->start) ||
		    parse_hex(get_str(m, "limit"), &d->limit) ||
		    parse_hex(get_str(m, "offset"), &d->offset) || d->limit <= d->start ||
		    (jv_get_ex(m, "file", &v) && v &&
		     !jv_is(v, JV_STRING)) ||
		    (jv_get_ex(m, "build_id", &v) && v &&
		     !jv_is(v, JV_STRING)))
			return fail(l, "%s: mapping %zu: needs \"start\" < \"limit\" and "
				       "\"offset\" (\"0x...\"), \"file\" and \"build_id\" "
				       "(strings or null)", l->name, i);
		d->file = sp_profile_intern(p, get_str(m, "file"));
		d->build_id = sp_profile_intern(p, get_str(m, "build_id"));
	}
	p->n_mappings = n;
	return 0;
}

static int read_meta(struct loader *l, const struct jv *root)
{
	struct sp_profile *p = l->p;
	const struct jv *v;
	uint64_t u;
	const char *s;

	p->command = sp_profile_intern(p, get_str(root, "command"));
	p->interrupted = sp_profile_intern(p, get_str(root, "interrupted"));
	if (!get_u64(root, "pid", 0, &u, NULL))
		p->pid = (int)u;
	s = get_str(root, "clock");
	p->clock = s && !strcmp(s, "tsc") ? "tsc" : "monotonic";
	get_u64(root, "elapsed_ns", 1, &p->elapsed_ns, NULL);
	get_u64(root, "lost_events", 1, &p->lost, NULL);
	p->coalesced = jv_get_ex(root, "coalesced", &v) &&
		       jv_bool(v);
	if (syncprof_parse_sort(get_str(root, "sort"), &p->sort))
		p->sort = SYNCPROF_SORT_TOTAL;
	p->hold = -1; /* not said: decided from the rows */
	if (jv_get_ex(root, "hold_tracking", &v) && v)
		p->hold = jv_bool(v);
	if (!get_u64(root, "hold_sample", 0, &u, NULL) && u && u <= UINT32_MAX)
		p->hold_sample = (unsigned)u;
	get_u64(root, "hold_untracked", 1, &p->hold_untracked, NULL);
	get_u64(root, "blame_lost", 1, &p->blame_lost, NULL);
	get_u64(root, "hold_ticker_late", 1, &p->hold_late_ticks, NULL);
	get_u64(root, "hold_state_samples", 1, &p->hold_state_samples, NULL);
	get_u64(root, "hold_state_cpu_ns", 1, &p->hold_state_cpu_ns, NULL);
	get_u64(root, "hold_clock_ns", 1, &p->hold_clock_ns, NULL);
	get_u64(root, "hold_clock_switches", 1, &p->hold_clock_switches, NULL);
	get_u64(root, "hold_state_unread", 1, &p->hold_state_unread, NULL);
	get_u64(root, "hold_where_points", 1, &p->hold_where_points, NULL);
	get_u64(root, "hold_where_lost", 1, &p->hold_where_lost, NULL);
	get_u64(root, "hold_ticker_gap_max_ns", 1, &p->hold_gap_max_ns, NULL);
	get_u64(root, "names_lost", 1, &p->names_lost, NULL);
	if (!get_u64(root, "rows_total", 0, &u, NULL))
		p->rows.n_total = (size_t)u;
	if (jv_get_ex(root, "hist", &v) && v) {
		uint64_t sub = 0, n = 0;

		s = get_str(v, "layout");
		if (!jv_is(v, JV_OBJECT) || !s || strcmp(s, "log-linear") ||
		    get_u64(v, "sub_buckets", 0, &sub, NULL) || sub != SP_HIST_SUB ||
		    get_u64(v, "buckets", 0, &n, NULL) || n != SP_HIST_BUCKETS)
			return fail(l, "%s: the histogram layout \"hist\" is not the one this "
				       "syncprof reads (log-linear, %u sub-buckets, %u buckets)",
				    l->name, SP_HIST_SUB, SP_HIST_BUCKETS);
		l->buckets = 1;
	}
	if (read_mappings(l, root))
		return -EINVAL; /* said by fail() */
	return sp_profile_error(p);
}


/*
 * Streaming (json_stream.c): the rows are handed over one at a time as
 * they are parsed and read at once, each row's tree then forgotten; the
 * rest of the top-level object is kept (a few hundred bytes, more with
 * "lock_order": at most 256 cycles).  The header is checked when "rows"
 * opens, from what came before it (the renderer writes it first); a file
 * with its rows before its "format" keeps its rows in the tree, read
 * after the header.  A file is read in pieces, never held whole.
 */
#define READ_PIECE (1 << 20)

struct stream {
	struct loader *l;
	int *hold_seen;
	int header_done;
};

static int check_header(struct loader *l, const struct jv *root)
{
	uint64_t version = 0;
	const char *fmt = get_str(root, "format");

	if (!fmt || strcmp(fmt, "syncprof-profile"))
		return fail(l, "%s is not a syncprof profile (no \"format\":\"syncprof-profile\"; "
			       "write one with format=json or -f json)", l->name);
	if (get_u64(root, "version", 0, &version, NULL) || version != 1)
		return fail(l, "%s: profile version %llu is not supported (this syncprof reads "
			       "version 1)", l->name, (unsigned long long)version);
	return read_meta(l, root);
}

static int on_rows_begin(void *ctx, const struct jv *so_far)
{
	struct stream *st = ctx;
	const struct jv *v;

	if (!get_str(so_far, "format") || !jv_get_ex(so_far, "version", &v))
		return 1; /* rows before the header: read after it */
	st->header_done = 1;
	return check_header(st->l, so_far);
}

static int on_row(void *ctx, size_t i, const struct jv *row)
{
	struct stream *st = ctx;

	return read_row(st->l, i, row, st->hold_seen);
}

/* After the whole text: the header if not yet read, rows kept in the
 * tree, "lock_order". */
static int parse_end(struct stream *st, struct js *js, const struct jv *root)
{
	struct loader *l = st->l;
	const struct jv *rows;
	int rc = 0;

	if (!st->header_done)
		rc = check_header(l, root);
	if (!rc && !js_streamed(js)) {
		if (!jv_get_ex(root, "rows", &rows) || !jv_is(rows, JV_ARRAY))
			rc = fail(l, "%s: no \"rows\" array", l->name);
		if (!rc)
			rc = sp_rows_reserve(&l->p->rows, jv_len(rows));
		for (size_t i = 0; !rc && i < jv_len(rows); i++)
			rc = read_row(l, i, jv_idx(rows, i), st->hold_seen);
	}
	if (!rc)
		rc = read_lock_order(l, root);
	if (!rc)
		rc = read_account(l, root);
	return rc;
}

/* Parse @text (@len bytes) or, when NULL, the file @path, into @p. */
static int parse(const char *name, const char *path, const char *text, size_t len,
		 struct sp_profile *p, char *err, size_t err_size)
{
	struct dense *hists = calloc(2, sizeof(*hists));
	struct loader l = { name, p, err, err_size, 0, hists, hists + 1 };
	int hold_seen = 0;
	struct stream st = { &l, &hold_seen, 0 };
	struct js_handler h = { &st, on_rows_begin, on_row };
	const struct jv *root;
	struct js *js;
	FILE *f = NULL;
	int rc;

	if (!hists)
		return -ENOMEM;
	if (path) {
		f = fopen(path, "re");
		if (!f) {
			fail(&l, "cannot read '%s': %s", path, strerror(errno));
			free(hists);
			return -EIO;
		}
	}
	if (sp_profile_init(p)) {
		if (f)
			fclose(f);
		free(hists);
		return -ENOMEM;
	}
	js = js_new(&h, name, err, err_size);
	if (!js) {
		rc = -ENOMEM;
	} else if (f) {
		char *buf = malloc(READ_PIECE);
		size_t n;

		rc = buf ? 0 : -ENOMEM;
		while (!rc && (n = fread(buf, 1, READ_PIECE, f)) > 0)
			rc = js_feed(js, buf, n);
		if (!rc && ferror(f)) {
			fail(&l, "cannot read '%s': %s", path, strerror(errno));
			rc = -EIO;
		}
		free(buf);
	} else {
		rc = js_feed(js, text, len);
	}
	if (!rc)
		rc = js_finish(js, &root);
	if (!rc)
		rc = parse_end(&st, js, root);
	js_free(js);
	free(hists);
	if (f)
		fclose(f);
	if (rc == -ENOMEM)
		fail(&l, "%s: out of memory", name);
	if (rc) {
		sp_profile_free(p);
		memset(p, 0, sizeof(*p));
		return rc;
	}
	if (p->hold < 0)
		p->hold = hold_seen;
	if (p->rows.n_total < p->rows.n)
		p->rows.n_total = p->rows.n;
	return 0;
}

int sp_profile_load(const char *path, struct sp_profile *p, char *err, size_t err_size)
{
	memset(p, 0, sizeof(*p));
	return parse(path, path, NULL, 0, p, err, err_size);
}

int sp_profile_parse(const char *name, const char *text, size_t len, struct sp_profile *p,
		     char *err, size_t err_size)
{
	return parse(name, NULL, text, len, p, err, err_size);
}
