/*
 * profile_load.c - read a saved profile ("profile JSON version 1",
 * docs/formats.md) back into the profile model, for 'syncprof report' and
 * for the reports that 'syncprof ctl' receives.
 *
 * Design: json-c parses the text into a tree; every fact the JSON renderer
 * wrote is read back into the same structures a live report builds
 * (rows, details, blame, names with offsets and inlined callers, metadata),
 * strings interned into the profile's arena, and the tree is freed.  Row
 * keys (file, function, line, address of the site) and blame holder keys
 * come from the names, so that coalescing and sorting work as on live
 * rows, and the renderers, which read names only, print the same bytes.
 * "lock_order" (lock-order checking) is read back the same way: its
 * counts, and every cycle's edges with their ends' objects, types, names
 * and stacks, keyed from the names as rows are.
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
 * Alternatives considered: a hand-written JSON reader (json-c is in every
 * Debian release); keeping the tree alive for its strings (the first
 * version: a loaded profile then held its text twice).
 */
#include <errno.h>
#include <stdarg.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "read/profile_load.h"

struct loader {
	const char *name;
	struct sp_profile *p;
	char *err;
	size_t err_size;
	int buckets; /* the file describes the log-linear layout: "*_buckets" are read */
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

static int get_u64(json_object *o, const char *key, int nullable, uint64_t *out, int *is_null)
{
	json_object *v;

	if (is_null)
		*is_null = 0;
	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (nullable) {
			*out = 0;
			if (is_null)
				*is_null = 1;
			return 0;
		}
		return -ENOENT;
	}
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return -EINVAL;
	*out = json_object_get_uint64(v);
	return 0;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
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

static int read_inlined(struct loader *l, json_object *arr, struct sp_frame *f)
{
	size_t n = json_object_array_length(arr);
	struct sp_inline *inl;

	if (!n)
		return 0;
	inl = sp_profile_alloc(l->p, n * sizeof(*inl));
	if (!inl)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		uint64_t line;

		if (!json_object_is_type(o, json_type_object) ||
		    get_u64(o, "line", 1, &line, NULL) || line > UINT32_MAX)
			return -EINVAL;
		inl[i].function = sp_profile_intern(l->p, get_str(o, "function"));
		inl[i].file = sp_profile_intern(l->p, get_str(o, "file"));
		inl[i].line = (unsigned)line;
	}
	f->inlined = inl;
	f->n_inline = (unsigned)n;
	return 0;
}

static int read_frame(struct loader *l, json_object *o, struct sp_frame *f)
{
	uint64_t line, offset;
	const char *addr;
	json_object *inl;

	memset(f, 0, sizeof(*f));
	if (!json_object_is_type(o, json_type_object))
		return -EINVAL;
	f->function = sp_profile_intern(l->p, get_str(o, "function"));
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
	if (json_object_object_get_ex(o, "inlined", &inl) && inl) {
		if (!json_object_is_type(inl, json_type_array) || read_inlined(l, inl, f))
			return -EINVAL;
	}
	return sp_profile_error(l->p);
}

static int get_count(json_object *v, uint64_t *out)
{
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return -EINVAL;
	*out = json_object_get_uint64(v);
	return 0;
}

/* "<what>_buckets": [[index, count], ...] of the log-linear layout, added
 * into @hist (SP_HIST_BUCKETS counts); 1 when read, 0 when absent. */
static int read_buckets(json_object *o, const char *key, uint64_t *hist)
{
	json_object *h;

	if (!json_object_object_get_ex(o, key, &h) || !h)
		return 0;
	if (!json_object_is_type(h, json_type_array))
		return -EINVAL;
	for (size_t i = 0; i < json_object_array_length(h); i++) {
		json_object *pair = json_object_array_get_idx(h, i);
		uint64_t b, count;

		if (!json_object_is_type(pair, json_type_array) ||
		    json_object_array_length(pair) != 2 ||
		    get_count(json_object_array_get_idx(pair, 0), &b) || b >= SP_HIST_BUCKETS ||
		    get_count(json_object_array_get_idx(pair, 1), &count))
			return -EINVAL;
		hist[b] += count;
	}
	return 1;
}

/* "<what>_hist": the log2 histogram, each bucket's count put into the
 * log-linear bucket of its largest value (sp_hist_from_log2()). */
static int read_log2(json_object *o, const char *key, uint64_t *hist)
{
	json_object *h;

	if (!json_object_object_get_ex(o, key, &h) || !h)
		return 0;
	if (!json_object_is_type(h, json_type_array) ||
	    json_object_array_length(h) > SP_LOG2_BUCKETS)
		return -EINVAL;
	for (size_t k = 0; k < json_object_array_length(h); k++) {
		uint64_t count;

		if (get_count(json_object_array_get_idx(h, k), &count))
			return -EINVAL;
		hist[sp_hist_from_log2((unsigned)k)] += count;
	}
	return 0;
}

/* A row's histogram @what ("wait", "hold"): its buckets when the file has
 * them, else its log2 histogram. */
static int read_hist(struct loader *l, json_object *o, const char *what, uint64_t *hist)
{
	char key[32];
	int rc = 0;

	if (l->buckets) {
		snprintf(key, sizeof(key), "%s_buckets", what);
		rc = read_buckets(o, key, hist);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	snprintf(key, sizeof(key), "%s_hist", what);
	return read_log2(o, key, hist);
}

static void site_key(const struct sp_frame *f, struct sp_site *s)
{
	s->file = f->file;
	s->func = f->function;
	s->line = f->line;
	s->pc = f->address;
}

static int read_stack(struct loader *l, size_t i, json_object *o, struct sp_row *r,
		      struct sp_names *nm, struct sp_row_detail *det)
{
	json_object *stack;
	struct sp_frame *frames;
	size_t n;

	if (!json_object_object_get_ex(o, "stack", &stack) || !stack)
		return 0;
	if (!json_object_is_type(stack, json_type_array))
		return fail(l, "%s: row %zu: \"stack\" is not an array", l->name, i);
	n = json_object_array_length(stack);
	if (n > SP_MAX_FRAMES)
		n = SP_MAX_FRAMES;
	if (!n)
		return 0;
	frames = sp_profile_alloc(l->p, n * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		if (read_frame(l, json_object_array_get_idx(stack, k), &frames[k]))
			return fail(l, "%s: row %zu: bad frame %zu in \"stack\"", l->name, i, k);
		det->frames[k] = frames[k].address;
	}
	nm->frames = frames;
	nm->n_frames = (unsigned)n;
	r->n_frames = (uint8_t)n;
	return 0;
}

/* "blame": [{"site": frame, ["root": frame,] "wait_ns": N, "count": N}, ...],
 * into @rows. */
static int read_blame(struct loader *l, size_t i, json_object *o, struct sp_rows *rows,
		      struct sp_row *r)
{
	json_object *arr;

	if (!json_object_object_get_ex(o, "blame", &arr) || !arr)
		return 0;
	if (!json_object_is_type(arr, json_type_array))
		return fail(l, "%s: row %zu: \"blame\" is not an array", l->name, i);
	for (size_t k = 0; k < json_object_array_length(arr); k++) {
		json_object *b = json_object_array_get_idx(arr, k), *site;
		struct sp_frame *f = sp_profile_alloc(l->p, sizeof(*f));
		struct sp_site holder;
		uint64_t wait, count;

		if (!f)
			return -ENOMEM;
		if (!json_object_is_type(b, json_type_object) ||
		    !json_object_object_get_ex(b, "site", &site) || read_frame(l, site, f) ||
		    get_u64(b, "wait_ns", 0, &wait, NULL) || get_u64(b, "count", 0, &count, NULL))
			return fail(l, "%s: row %zu: bad blame %zu", l->name, i, k);
		site_key(f, &holder);
		/* "root": where a wait chain's root holder took its lock. */
		if (json_object_object_get_ex(b, "root", &site) && site) {
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
static int read_lock(struct loader *l, size_t i, json_object *o, struct sp_row *r,
		     struct sp_names *nm)
{
	json_object *v;

	if (json_object_object_get_ex(o, "lock_name", &v) && v) {
		if (!json_object_is_type(v, json_type_string))
			return fail(l, "%s: row %zu: bad \"lock_name\"", l->name, i);
		r->lock_name = sp_profile_intern(l->p, json_object_get_string(v));
		if (!r->lock_name)
			return -ENOMEM;
	}
	if (json_object_object_get_ex(o, "created_at", &v) && v) {
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

static int read_row(struct loader *l, size_t i, json_object *o, int *hold_seen)
{
	uint64_t wait_hist[SP_HIST_BUCKETS] = { 0 }, hold_hist[SP_HIST_BUCKETS] = { 0 };
	struct sp_row_detail det;
	struct sp_row r, *d;
	struct sp_names *nm;
	json_object *site, *v;
	const char *type, *obj;
	uint64_t *dst[] = { &r.acquisitions, &r.contended, &r.wait_ns, &r.wait_max_ns };
	int null, rc;

	memset(&r, 0, sizeof(r));
	memset(&det, 0, sizeof(det));
	nm = sp_profile_alloc(l->p, sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	if (!json_object_is_type(o, json_type_object))
		return fail(l, "%s: row %zu is not an object", l->name, i);
	type = get_str(o, "type");
	r.type = SP_TYPE_COUNT;
	for (int t = 0; type && t < SP_TYPE_COUNT; t++)
		if (!strcmp(type, sp_type_name(t)))
			r.type = (uint8_t)t;
	if (r.type == SP_TYPE_COUNT)
		return fail(l, "%s: row %zu: bad or missing \"type\"", l->name, i);
	obj = get_str(o, "object");
	if (obj && parse_hex(obj, &r.obj))
		return fail(l, "%s: row %zu: bad \"object\" '%s'", l->name, i, obj);
	if (get_u64(o, "n_objects", 1, &r.n_objects, &null))
		return fail(l, "%s: row %zu: bad \"n_objects\"", l->name, i);
	if (null)
		r.n_objects = 1;
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
	if (!json_object_object_get_ex(o, "site", &site) || read_frame(l, site, &nm->site))
		return fail(l, "%s: row %zu: missing or bad \"site\"", l->name, i);
	rc = read_stack(l, i, o, &r, nm, &det);
	if (rc || (rc = read_lock(l, i, o, &r, nm)))
		return rc;
	if (read_hist(l, o, "wait", wait_hist))
		return fail(l, "%s: row %zu: bad \"wait_buckets\" or \"wait_hist\"", l->name, i);
	if (read_hist(l, o, "hold", hold_hist))
		return fail(l, "%s: row %zu: bad \"hold_buckets\" or \"hold_hist\"", l->name, i);
	sp_hist_view(&det.hist, wait_hist);
	sp_hist_view(&det.hold_hist, hold_hist);
	r.file = nm->site.file;
	r.func = nm->site.function;
	r.line = nm->site.line;
	r.pc = nm->site.address;
	r.names = nm;
	r.detail = &det; /* copied into the set by sp_rows_push() */
	if (sp_rows_push(&l->p->rows, &r))
		return -ENOMEM;
	d = &l->p->rows.v[l->p->rows.n - 1];
	if (json_object_object_get_ex(o, "blame", &v))
		return read_blame(l, i, o, &l->p->rows, d);
	return 0;
}

/* "held" or "acquired": {"object", "type", "site", "stack"}. */
static int read_order_end(struct loader *l, json_object *o, struct sp_order_end *e)
{
	struct sp_names *nm = sp_profile_alloc(l->p, sizeof(*nm));
	const char *type = get_str(o, "type"), *obj = get_str(o, "object");
	json_object *site, *stack;
	struct sp_frame *frames;
	size_t n;

	if (!nm)
		return -ENOMEM;
	memset(e, 0, sizeof(*e));
	if (!json_object_is_type(o, json_type_object) || !obj || parse_hex(obj, &e->obj))
		return -EINVAL;
	e->type = SP_TYPE_COUNT;
	for (int t = 0; type && t < SP_TYPE_COUNT; t++)
		if (!strcmp(type, sp_type_name(t)))
			e->type = (uint8_t)t;
	if (e->type == SP_TYPE_COUNT || !json_object_object_get_ex(o, "site", &site) ||
	    read_frame(l, site, &nm->site))
		return -EINVAL;
	site_key(&nm->site, &e->site);
	e->names = nm;
	if (!json_object_object_get_ex(o, "stack", &stack) || !stack)
		return 0;
	if (!json_object_is_type(stack, json_type_array))
		return -EINVAL;
	n = json_object_array_length(stack);
	if (n > SP_MAX_FRAMES)
		n = SP_MAX_FRAMES;
	if (!n)
		return 0;
	frames = sp_profile_alloc(l->p, n * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		if (read_frame(l, json_object_array_get_idx(stack, k), &frames[k]))
			return -EINVAL;
		e->frames[k] = frames[k].address;
	}
	nm->frames = frames;
	nm->n_frames = (unsigned)n;
	e->n_frames = (uint8_t)n;
	return 0;
}

static int read_cycle(struct loader *l, size_t i, json_object *c)
{
	struct sp_order_edge edges[SP_MAX_CYCLE_EDGES];
	json_object *arr;
	uint64_t count;
	size_t n;

	if (!json_object_is_type(c, json_type_object) || get_u64(c, "count", 0, &count, NULL) ||
	    !json_object_object_get_ex(c, "edges", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return fail(l, "%s: lock_order: cycle %zu: missing or bad \"count\" or \"edges\"",
			    l->name, i);
	n = json_object_array_length(arr);
	if (n < 2 || n > sizeof(edges) / sizeof(*edges))
		return fail(l, "%s: lock_order: cycle %zu: %zu edges (2 to %zu)", l->name, i, n,
			    sizeof(edges) / sizeof(*edges));
	for (size_t k = 0; k < n; k++) {
		json_object *e = json_object_array_get_idx(arr, k), *held, *acq;
		uint64_t tid;
		int rc;

		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "held", &held) ||
		    !json_object_object_get_ex(e, "acquired", &acq) ||
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
static int read_lock_order(struct loader *l, json_object *root)
{
	struct sp_lock_order *o = &l->p->order;
	json_object *lo, *cycles;
	int rc = 0;

	if (!json_object_object_get_ex(root, "lock_order", &lo) || !lo)
		return 0;
	if (!json_object_is_type(lo, json_type_object) ||
	    get_u64(lo, "edges_kept", 0, &o->edges_kept, NULL) ||
	    get_u64(lo, "edges_dropped", 0, &o->edges_dropped, NULL) ||
	    get_u64(lo, "cycles_dropped", 1, &o->cycles_dropped, NULL) ||
	    get_u64(lo, "searches_cut", 1, &o->searches_cut, NULL) ||
	    !json_object_object_get_ex(lo, "cycles", &cycles) ||
	    !json_object_is_type(cycles, json_type_array))
		return fail(l, "%s: \"lock_order\" is not an object with \"edges_kept\", "
			       "\"edges_dropped\" and \"cycles\"", l->name);
	o->on = 1;
	for (size_t i = 0; !rc && i < json_object_array_length(cycles); i++)
		rc = read_cycle(l, i, json_object_array_get_idx(cycles, i));
	return rc;
}

static char *slurp(struct loader *l, const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	size_t cap = 65536, n = 0;
	char *buf;

	if (!f) {
		fail(l, "cannot read '%s': %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n - 1, f);

		n += r;
		if (r == 0)
			break;
		if (n + 1 == cap) {
			char *b = realloc(buf, cap *= 2);

			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
		}
	}
	if (!buf || ferror(f)) {
		fail(l, "cannot read '%s': %s", path, buf ? strerror(errno) : "out of memory");
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int sp_profile_load(const char *path, struct sp_profile *p, char *err, size_t err_size)
{
	struct loader l = { path, p, err, err_size, 0 };
	size_t len;
	char *text = slurp(&l, path, &len);
	int rc;

	memset(p, 0, sizeof(*p));
	if (!text)
		return -EIO;
	rc = sp_profile_parse(path, text, len, p, err, err_size);
	free(text);
	return rc;
}

/* "mappings": [{"start", "limit", "offset", "file", "build_id"}], as
 * render/json.c writes them (optional). */
static int read_mappings(struct loader *l, json_object *root)
{
	struct sp_profile *p = l->p;
	json_object *arr;
	size_t n;

	if (!json_object_object_get_ex(root, "mappings", &arr) || !arr)
		return 0;
	if (!json_object_is_type(arr, json_type_array))
		return fail(l, "%s: \"mappings\" is not an array", l->name);
	n = json_object_array_length(arr);
	if (!n)
		return 0;
	p->mappings = sp_profile_alloc(p, n * sizeof(*p->mappings));
	if (!p->mappings)
		return fail(l, "%s: out of memory", l->name);
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(arr, i), *v;
		struct sp_mapping *d = &p->mappings[i];

		if (!m || !json_object_is_type(m, json_type_object) ||
		    parse_hex(get_str(m, "start"), &d->start) ||
		    parse_hex(get_str(m, "limit"), &d->limit) ||
		    parse_hex(get_str(m, "offset"), &d->offset) || d->limit <= d->start ||
		    (json_object_object_get_ex(m, "file", &v) && v &&
		     !json_object_is_type(v, json_type_string)) ||
		    (json_object_object_get_ex(m, "build_id", &v) && v &&
		     !json_object_is_type(v, json_type_string)))
			return fail(l, "%s: mapping %zu: needs \"start\" < \"limit\" and "
				       "\"offset\" (\"0x...\"), \"file\" and \"build_id\" "
				       "(strings or null)", l->name, i);
		d->file = sp_profile_intern(p, get_str(m, "file"));
		d->build_id = sp_profile_intern(p, get_str(m, "build_id"));
	}
	p->n_mappings = n;
	return 0;
}

static int read_meta(struct loader *l, json_object *root)
{
	struct sp_profile *p = l->p;
	json_object *v;
	uint64_t u;
	const char *s;

	p->command = sp_profile_intern(p, get_str(root, "command"));
	if (!get_u64(root, "pid", 0, &u, NULL))
		p->pid = (int)u;
	s = get_str(root, "clock");
	p->clock = s && !strcmp(s, "tsc") ? "tsc" : "monotonic";
	get_u64(root, "elapsed_ns", 1, &p->elapsed_ns, NULL);
	get_u64(root, "lost_events", 1, &p->lost, NULL);
	p->coalesced = json_object_object_get_ex(root, "coalesced", &v) &&
		       json_object_get_boolean(v);
	if (syncprof_parse_sort(get_str(root, "sort"), &p->sort))
		p->sort = SYNCPROF_SORT_TOTAL;
	p->hold = -1; /* not said: decided from the rows */
	if (json_object_object_get_ex(root, "hold_tracking", &v) && v)
		p->hold = json_object_get_boolean(v);
	if (!get_u64(root, "hold_sample", 0, &u, NULL) && u && u <= UINT32_MAX)
		p->hold_sample = (unsigned)u;
	get_u64(root, "hold_untracked", 1, &p->hold_untracked, NULL);
	get_u64(root, "blame_lost", 1, &p->blame_lost, NULL);
	get_u64(root, "names_lost", 1, &p->names_lost, NULL);
	if (!get_u64(root, "rows_total", 0, &u, NULL))
		p->rows.n_total = (size_t)u;
	if (json_object_object_get_ex(root, "hist", &v) && v) {
		uint64_t sub = 0, n = 0;

		s = get_str(v, "layout");
		if (!json_object_is_type(v, json_type_object) || !s || strcmp(s, "log-linear") ||
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
 * Streaming.  A profile of a million rows is hundreds of MB of JSON, and
 * json-c's tree of it took 4.9 GB and 49 s to build (json-c has no
 * streaming interface).  So the rows are parsed one at a time: a scanner
 * that knows only strings, escapes and nesting (it validates nothing:
 * json-c does that on each piece) finds the top-level "rows" array and the
 * extent of each of its elements; the top-level object without its rows
 * is parsed whole (a few hundred bytes, more with "lock_order": at most
 * 256 cycles), then each row by itself into a small tree that is freed
 * once read; "lock_order" is read from that object after the rows.
 * Anything the scanner does not recognise falls back to parsing the whole
 * text, which then gives the usual error messages.
 */

/* The end of the string starting at @i (a '"'): the index after its
 * closing quote, or @len. */
static size_t skip_string(const char *t, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return len;
}

static size_t skip_space(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\n' || t[i] == '\t' || t[i] == '\r'))
		i++;
	return i;
}

/* The end (exclusive) of the value starting at @i, scanning brackets and
 * strings; @len when it does not end. */
static size_t skip_value(const char *t, size_t len, size_t i)
{
	int depth = 0;

	while (i < len) {
		char c = t[i];

		if (c == '"') {
			i = skip_string(t, len, i);
			if (!depth)
				return i;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth <= 0)
				return depth < 0 ? i : i + 1;
		} else if (!depth && (c == ',' || c == ' ' || c == '\n' || c == '\t' ||
				      c == '\r')) {
			return i; /* a number, true, false or null ends */
		}
		i++;
	}
	return len;
}

/* [*lo, *hi): the top-level "rows" array, '[' to ']'.  0, or -1. */
static int find_rows(const char *t, size_t len, size_t *lo, size_t *hi)
{
	size_t i = skip_space(t, len, 0);

	if (i >= len || t[i] != '{')
		return -1;
	for (i++;;) {
		size_t k0, k1;

		i = skip_space(t, len, i);
		if (i >= len || t[i] != '"')
			return -1;
		k0 = i + 1;
		i = skip_string(t, len, i);
		k1 = i - 1;
		i = skip_space(t, len, i);
		if (i >= len || t[i] != ':')
			return -1;
		i = skip_space(t, len, i + 1);
		if (k1 - k0 == 4 && !memcmp(t + k0, "rows", 4)) {
			if (i >= len || t[i] != '[')
				return -1;
			*lo = i;
			*hi = skip_value(t, len, i);
			return *hi <= len && *hi > i && t[*hi - 1] == ']' ? 0 : -1;
		}
		i = skip_value(t, len, i);
		i = skip_space(t, len, i);
		if (i >= len || t[i] != ',')
			return -1;
		i++;
	}
}

static json_object *parse_piece(json_tokener *tok, const char *t, size_t n, size_t *err_at,
				enum json_tokener_error *e)
{
	json_object *o;

	json_tokener_reset(tok);
	o = json_tokener_parse_ex(tok, t, (int)n);
	*e = json_tokener_get_error(tok);
	if (o && *e == json_tokener_success &&
	    skip_space(t, n, json_tokener_get_parse_end(tok)) == n)
		return o;
	if (o && *e == json_tokener_success)
		*e = json_tokener_error_parse_unexpected; /* trailing bytes */
	*err_at = json_tokener_get_parse_end(tok);
	if (o)
		json_object_put(o);
	return NULL;
}

static int check_header(struct loader *l, json_object *root)
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

/* 1: not for the streaming path (the caller parses the whole text). */
static int parse_streaming(struct loader *l, const char *t, size_t len, int *hold_seen)
{
	size_t lo, hi, i, err_at = 0, n_rows = 0;
	enum json_tokener_error e;
	json_tokener *tok;
	json_object *root;
	char *outer;
	int rc = 0;

	if (find_rows(t, len, &lo, &hi))
		return 1;
	/* The object without its rows: "...\"rows\":[]...". */
	outer = malloc(lo + 2 + (len - hi) + 1);
	tok = json_tokener_new();
	if (!outer || !tok) {
		free(outer);
		if (tok)
			json_tokener_free(tok);
		return -ENOMEM;
	}
	memcpy(outer, t, lo);
	memcpy(outer + lo, "[]", 2);
	memcpy(outer + lo + 2, t + hi, len - hi);
	root = parse_piece(tok, outer, lo + 2 + (len - hi), &err_at, &e);
	free(outer);
	if (!root) {
		json_tokener_free(tok);
		return 1; /* the whole-text parse says what is wrong */
	}
	rc = check_header(l, root);
	for (i = skip_space(t, hi, lo + 1); !rc && i < hi - 1; n_rows++) {
		size_t end = skip_value(t, hi - 1, i);
		json_object *row = parse_piece(tok, t + i, end - i, &err_at, &e);

		if (!row) {
			rc = fail(l, "%s is not valid JSON: %s at byte %zu (in row %zu)", l->name,
				  e == json_tokener_continue ? "unexpected end of row"
							     : json_tokener_error_desc(e),
				  i + err_at, n_rows);
			break;
		}
		rc = read_row(l, n_rows, row, hold_seen);
		json_object_put(row);
		i = skip_space(t, hi - 1, end);
		if (i < hi - 1) {
			if (t[i] != ',') {
				rc = fail(l, "%s is not valid JSON: expected ',' at byte %zu", l->name, i);
				break;
			}
			i = skip_space(t, hi - 1, i + 1);
		}
	}
	if (!rc) /* after the rows, as in the file */
		rc = read_lock_order(l, root);
	json_object_put(root);
	json_tokener_free(tok);
	return rc;
}

int sp_profile_parse(const char *name, const char *text, size_t len, struct sp_profile *p,
		     char *err, size_t err_size)
{
	struct loader l = { name, p, err, err_size, 0 };
	json_tokener *tok;
	json_object *root, *rows;
	int rc, hold_seen = 0;

	if (sp_profile_init(p))
		return -ENOMEM;
	rc = parse_streaming(&l, text, len, &hold_seen);
	if (rc != 1)
		goto done;
	sp_profile_free(p); /* not streamable: the whole text, as a tree */
	if (sp_profile_init(p))
		return -ENOMEM;
	tok = json_tokener_new();
	if (!tok) {
		sp_profile_free(p);
		return -ENOMEM;
	}
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		rc = fail(&l, "%s is not valid JSON: %s at byte %zu", name,
			  e == json_tokener_continue ? "unexpected end of file"
						     : json_tokener_error_desc(e),
			  json_tokener_get_parse_end(tok));
		json_tokener_free(tok);
		if (root)
			json_object_put(root);
		sp_profile_free(p);
		return rc;
	}
	json_tokener_free(tok);
	rc = check_header(&l, root);
	if (!rc && (!json_object_object_get_ex(root, "rows", &rows) ||
		    !json_object_is_type(rows, json_type_array)))
		rc = fail(&l, "%s: no \"rows\" array", name);
	if (!rc)
		rc = sp_rows_reserve(&p->rows, json_object_array_length(rows));
	for (size_t i = 0; !rc && i < json_object_array_length(rows); i++)
		rc = read_row(&l, i, json_object_array_get_idx(rows, i), &hold_seen);
	if (!rc)
		rc = read_lock_order(&l, root);
	json_object_put(root);
done:
	if (rc == -ENOMEM)
		fail(&l, "%s: out of memory", name);
	if (rc) {
		sp_profile_free(p);
		return rc;
	}
	if (p->hold < 0)
		p->hold = hold_seen;
	if (p->rows.n_total < p->rows.n)
		p->rows.n_total = p->rows.n;
	return 0;
}
