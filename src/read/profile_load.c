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

static int read_hist(json_object *o, const char *key, uint64_t *hist)
{
	json_object *h;

	if (!json_object_object_get_ex(o, key, &h) || !h)
		return 0;
	if (!json_object_is_type(h, json_type_array) ||
	    json_object_array_length(h) > SP_HIST_BUCKETS)
		return -EINVAL;
	for (size_t b = 0; b < json_object_array_length(h); b++) {
		json_object *v = json_object_array_get_idx(h, b);

		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
			return -EINVAL;
		hist[b] = json_object_get_uint64(v);
	}
	return 0;
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

/* "blame": [{"site": frame, "wait_ns": N, "count": N}, ...], into @rows. */
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
		if (sp_rows_blame_add(rows, r, &holder, f, wait, count))
			return -ENOMEM;
	}
	return 0;
}

static const char *const counters[] = { "acquisitions", "contended", "wait_ns", "wait_max_ns" };

static int read_row(struct loader *l, size_t i, json_object *o, int *hold_seen)
{
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
	if (rc)
		return rc;
	if (read_hist(o, "wait_hist", det.hist))
		return fail(l, "%s: row %zu: bad \"wait_hist\"", l->name, i);
	if (read_hist(o, "hold_hist", det.hold_hist))
		return fail(l, "%s: row %zu: bad \"hold_hist\"", l->name, i);
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
	struct loader l = { path, p, err, err_size };
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
	if (!get_u64(root, "rows_total", 0, &u, NULL))
		p->rows.n_total = (size_t)u;
	return sp_profile_error(p);
}

int sp_profile_parse(const char *name, const char *text, size_t len, struct sp_profile *p,
		     char *err, size_t err_size)
{
	struct loader l = { name, p, err, err_size };
	json_tokener *tok;
	json_object *root, *rows;
	uint64_t version = 0;
	const char *fmt;
	int rc, hold_seen = 0;

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
	fmt = get_str(root, "format");
	if (!fmt || strcmp(fmt, "syncprof-profile"))
		rc = fail(&l, "%s is not a syncprof profile (no \"format\":\"syncprof-profile\"; "
			      "write one with format=json or -f json)", name);
	else if (get_u64(root, "version", 0, &version, NULL) || version != 1)
		rc = fail(&l, "%s: profile version %llu is not supported (this syncprof reads "
			      "version 1)", name, (unsigned long long)version);
	else if (!json_object_object_get_ex(root, "rows", &rows) ||
		 !json_object_is_type(rows, json_type_array))
		rc = fail(&l, "%s: no \"rows\" array", name);
	else
		rc = read_meta(&l, root);
	if (!rc)
		rc = sp_rows_reserve(&p->rows, json_object_array_length(rows));
	for (size_t i = 0; !rc && i < json_object_array_length(rows); i++)
		rc = read_row(&l, i, json_object_array_get_idx(rows, i), &hold_seen);
	if (!rc)
		rc = read_lock_order(&l, root);
	json_object_put(root);
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
