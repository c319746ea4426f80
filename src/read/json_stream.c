/*
 * json_stream.c - a streaming JSON reader for saved profiles: yajl's
 * event parser (SAX) builds small trees in arenas, and the elements of the
 * top-level "rows" array are handed over one at a time, then forgotten.
 *
 * Why: a profile of a million rows is about 360 MB of JSON.  json-c has
 * no event interface; parsing each row into a json-c tree (a hash table
 * per object, a malloc per value) ran at ~20 MB/s, 19-30 s for such a
 * file.  yajl (Debian libyajl-dev) tokenizes and validates at ~240 MB/s
 * here; the trees it feeds are bump-allocated, a row's arena reset after
 * the row is read, so memory holds one row's tree, not the file's.  The
 * file itself is not held either: sp_profile_load() feeds it in chunks.
 *
 * Costs: one pass over the text; per value one struct jv (32 bytes) on a
 * stack while its container is open, then copied once into the arena;
 * lookups in an object are linear over its members (a row has ~17).
 * Nesting deeper than JS_MAX_DEPTH is refused (a profile nests 5 deep;
 * json-c refused beyond 32 too).
 *
 * Alternatives considered: json-c per row (the previous reader: correct
 * but 20 MB/s); yajl's own tree API (a malloc per node, and it needs the
 * whole text); a hand-written tokenizer (faster still, but one more
 * parser to get right where a Debian library does it).
 *
 * Thread-safety: none; a reader belongs to one load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "base/containers.h"
#include "read/json_stream.h"
#include "report/render/text.h"

#define JS_MAX_DEPTH 64
#define CHUNK (256 * 1024)

/* ---- values ----------------------------------------------------------- */

int jv_is(const struct jv *v, enum jv_type t)
{
	return v ? v->type == t : t == JV_NULL;
}

/* A key's signature: its length and three of its bytes, compared before
 * its bytes are (hashing every byte cost more than the compares saved). */
uint32_t jv_hash(const char *s, size_t n)
{
	if (!n)
		return 0;
	return (uint32_t)n ^ (uint32_t)(unsigned char)s[0] << 8 ^
	       (uint32_t)(unsigned char)s[n - 1] << 16 ^ (uint32_t)(unsigned char)s[n * 2 / 3] << 24;
}

static int key_is(const struct jv *m, const char *key, size_t len, uint32_t h)
{
	return m->key_hash == h && m->key_len == len && !memcmp(m->key, key, len);
}

int jv_get_ex(const struct jv *o, const char *key, const struct jv **out)
{
	const struct jv *m = NULL;
	size_t len;
	uint32_t h;

	if (!o || o->type != JV_OBJECT || !o->n)
		return 0;
	len = strlen(key);
	h = jv_hash(key, len);
	/* From the end: of two members of one name the last counts (json-c). */
	for (uint32_t i = o->n; i-- > 0;)
		if (key_is(&o->kids[i], key, len, h)) {
			m = &o->kids[i];
			break;
		}
	if (!m)
		return 0;
	*out = m->type == JV_NULL ? NULL : m;
	return 1;
}

size_t jv_len(const struct jv *v)
{
	return v && v->type == JV_ARRAY ? v->n : 0;
}

const struct jv *jv_idx(const struct jv *v, size_t i)
{
	if (!v || v->type != JV_ARRAY || i >= v->n || v->kids[i].type == JV_NULL)
		return NULL;
	return &v->kids[i];
}

const char *jv_str(const struct jv *v)
{
	return v && v->type == JV_STRING ? v->s : NULL;
}

int jv_bool(const struct jv *v)
{
	return v && ((v->type == JV_BOOL && v->b) || (v->type == JV_INT && v->u));
}

/* ---- arenas ----------------------------------------------------------- */

struct chunk {
	struct chunk *next;
	size_t size, used;
	char data[];
};

struct arena {
	struct chunk *head;
};

static void *arena_alloc(struct arena *a, size_t n)
{
	struct chunk *c = a->head;

	n = (n + 7) & ~(size_t)7;
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK ? n : CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	c->used += n;
	return c->data + c->used - n;
}

/* Empty @a, keeping one chunk for the next row. */
static void arena_reset(struct arena *a)
{
	struct chunk *c = a->head, *keep = NULL;

	while (c) {
		struct chunk *next = c->next;

		if (!keep && c->size == CHUNK) {
			keep = c;
			keep->used = 0;
		} else {
			free(c);
		}
		c = next;
	}
	if (keep)
		keep->next = NULL;
	a->head = keep;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct chunk *next = a->head->next;

		free(a->head);
		a->head = next;
	}
}

/* ---- the reader ------------------------------------------------------- */

struct frame {
	size_t start;  /* its first member on the value stack */
	const char *key; /* its own key in the object around it */
	uint32_t key_len, key_hash;
	int is_object;
	int is_rows;   /* the streamed array: its elements are not kept */
};

struct js {
	struct js_handler h;
	const char *name;
	char *err;
	size_t err_size;
	yajl_handle y;
	struct arena keep, row; /* the top level's values; the current row's */
	struct jv *st;          /* values whose container is still open */
	size_t top, cap;
	struct frame fr[JS_MAX_DEPTH];
	int depth;
	int in_rows, streamed, have_root, too_deep, twice;
	size_t n_rows, fed;
	const char *key;
	uint32_t key_len, key_hash;
	struct jv root;
	int rc; /* a callback's error, or -ENOMEM */
};

static struct arena *cur(struct js *s)
{
	return s->in_rows ? &s->row : &s->keep;
}

static int stop(struct js *s, int rc)
{
	s->rc = rc;
	return 0;
}

/* A complete value @v: into its container, to the row callback, or the root. */
static int add(struct js *s, struct jv v)
{
	struct frame *f = s->depth ? &s->fr[s->depth - 1] : NULL;

	if (f && f->is_object) {
		v.key = s->key;
		v.key_len = s->key_len;
		v.key_hash = s->key_hash;
	}
	if (!f) {
		s->root = v;
		s->have_root = 1;
		return 1;
	}
	if (f->is_rows) {
		int rc = s->h.row(s->h.ctx, s->n_rows++, &v);

		arena_reset(&s->row);
		return rc ? stop(s, rc) : 1;
	}
	if (sp_grow(&s->st, &s->cap, s->top, sizeof(*s->st)))
		return stop(s, -ENOMEM);
	s->st[s->top++] = v;
	return 1;
}

static int on_null(void *ctx)
{
	struct jv v = { .type = JV_NULL };

	return add(ctx, v);
}

static int on_bool(void *ctx, int b)
{
	struct jv v = { .type = JV_BOOL, .b = b };

	return add(ctx, v);
}

static int on_number(void *ctx, const char *t, size_t n)
{
	struct jv v = { .type = JV_INT };
	size_t i = 0;

	if (n && t[0] == '-') {
		v.neg = 1;
		i = 1;
	}
	for (; i < n; i++) {
		unsigned d = (unsigned)(t[i] - '0');

		if (d > 9 || v.u > (UINT64_MAX - d) / 10) {
			v.type = JV_DOUBLE; /* a fraction, an exponent or too large */
			v.u = 0;
			break;
		}
		v.u = v.u * 10 + d;
	}
	return add(ctx, v);
}

/*
 * A copy of @t with every byte that is not UTF-8 replaced by U+FFFD, as
 * the renderer writes it (sp_json_string()): a name read from a file
 * holding such bytes is then the name a re-read of its re-render gives,
 * and sorts the same (found by tests/fuzz/fuzz_profile_load).
 */
static char *utf8_copy(struct arena *a, const unsigned char *t, size_t n)
{
	size_t bad = 0, k = 0;
	char *c;

	for (size_t i = 0; i < n; i++)
		bad += t[i] >= 0x80;
	c = arena_alloc(a, n + 1 + 2 * bad); /* U+FFFD: 3 bytes for 1 */
	if (!c)
		return NULL;
	if (!bad) {
		memcpy(c, t, n);
		c[n] = '\0';
		return c;
	}
	for (size_t i = 0; i < n;) {
		unsigned char seq[5] = { 0 };
		size_t left = n - i < 4 ? n - i : 4;
		int len;

		memcpy(seq, t + i, left); /* NUL-terminated for sp_utf8_len() */
		len = t[i] ? sp_utf8_len(seq) : 1;
		if (len) {
			memcpy(c + k, t + i, (size_t)len);
			k += (size_t)len;
			i += (size_t)len;
		} else {
			memcpy(c + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	c[k] = '\0';
	return c;
}

static int on_string(void *ctx, const unsigned char *t, size_t n)
{
	struct js *s = ctx;
	struct jv v = { .type = JV_STRING };
	char *c;

	if (n > UINT32_MAX / 4)
		return stop(s, -ENOMEM);
	c = utf8_copy(cur(s), t, n);
	if (!c)
		return stop(s, -ENOMEM);
	v.n = (uint32_t)strlen(c);
	v.s = c;
	return add(s, v);
}

static int on_key(void *ctx, const unsigned char *t, size_t n)
{
	struct js *s = ctx;
	char *c;

	if (n > UINT32_MAX - 1)
		return stop(s, -ENOMEM);
	c = arena_alloc(cur(s), n + 1);
	if (!c)
		return stop(s, -ENOMEM);
	memcpy(c, t, n);
	c[n] = '\0';
	s->key = c;
	s->key_len = (uint32_t)n;
	s->key_hash = jv_hash(c, n);
	if (s->streamed && s->depth == 1 && n == 4 && !memcmp(c, "rows", 4)) {
		s->twice = 1; /* the first was read already: refuse, not guess */
		return stop(s, -EINVAL);
	}
	return 1;
}

static int open_container(struct js *s, int is_object)
{
	struct frame *f;

	if (s->depth == JS_MAX_DEPTH) {
		s->too_deep = 1;
		return stop(s, -EINVAL);
	}
	f = &s->fr[s->depth];
	f->start = s->top;
	f->is_object = is_object;
	f->is_rows = 0;
	f->key = s->key;
	f->key_len = s->key_len;
	f->key_hash = s->key_hash;
	if (!is_object && s->depth == 1 && s->fr[0].is_object && !s->in_rows &&
	    s->key_len == 4 && !memcmp(s->key, "rows", 4)) {
		struct jv so_far = { .type = JV_OBJECT, .n = (uint32_t)(s->top - s->fr[0].start),
				     .kids = s->st ? s->st + s->fr[0].start : NULL };
		int rc = s->h.rows_begin(s->h.ctx, &so_far);

		if (rc < 0)
			return stop(s, rc);
		if (!rc) {
			f->is_rows = 1;
			s->in_rows = 1;
			s->streamed = 1;
		}
	}
	s->depth++;
	return 1;
}

static int close_container(struct js *s)
{
	struct frame *f = &s->fr[--s->depth];
	struct jv v = { .type = f->is_object ? JV_OBJECT : JV_ARRAY };
	size_t n = s->top - f->start;

	if (f->is_rows) {
		s->in_rows = 0;
		s->key = NULL;
		s->key_len = 0;
		return 1; /* not a member of the top level: it was streamed */
	}
	if (n) {
		v.kids = arena_alloc(cur(s), n * sizeof(*v.kids));
		if (!v.kids)
			return stop(s, -ENOMEM);
		memcpy(v.kids, s->st + f->start, n * sizeof(*v.kids));
	}
	v.n = (uint32_t)n;
	s->top = f->start;
	s->key = f->key; /* overwritten by its own members' keys */
	s->key_len = f->key_len;
	s->key_hash = f->key_hash;
	return add(s, v);
}

static int on_start_map(void *ctx)
{
	return open_container(ctx, 1);
}

static int on_start_array(void *ctx)
{
	return open_container(ctx, 0);
}

static int on_end(void *ctx)
{
	return close_container(ctx);
}

static const yajl_callbacks callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_bool,
	.yajl_number = on_number,
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_key,
	.yajl_end_map = on_end,
	.yajl_start_array = on_start_array,
	.yajl_end_array = on_end,
};

struct js *js_new(const struct js_handler *h, const char *name, char *err, size_t err_size)
{
	struct js *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->h = *h;
	s->name = name;
	s->err = err;
	s->err_size = err_size;
	s->y = yajl_alloc(&callbacks, NULL, s);
	if (!s->y) {
		free(s);
		return NULL;
	}
	/* As json-c read them: strings are bytes, not checked as UTF-8. */
	yajl_config(s->y, yajl_dont_validate_strings, 1);
	return s;
}

/* The message for a yajl error or a callback's; @at_end: after the text. */
static int failed(struct js *s, int at_end)
{
	size_t at = s->fed + (at_end ? 0 : yajl_get_bytes_consumed(s->y));
	char where[48] = "";

	if (s->in_rows)
		snprintf(where, sizeof(where), " (in row %zu)", s->n_rows);
	if (s->twice) {
		snprintf(s->err, s->err_size, "%s: a second \"rows\" at byte %zu", s->name, at);
		return -EINVAL;
	}
	if (s->rc && !s->too_deep)
		return s->rc; /* the callback wrote its message */
	if (s->too_deep) {
		snprintf(s->err, s->err_size, "%s is not valid JSON: nested deeper than %d at byte %zu%s",
			 s->name, JS_MAX_DEPTH, at, where);
	} else {
		unsigned char *m = yajl_get_error(s->y, 0, NULL, 0);
		const char *t = m ? (const char *)m : "error";
		const char *colon = strstr(t, ": ");
		size_t len;

		if (colon)
			t = colon + 2;
		len = strcspn(t, "\n");
		snprintf(s->err, s->err_size, "%s is not valid JSON: %.*s at byte %zu%s", s->name,
			 (int)len, t, at, where);
		if (m)
			yajl_free_error(s->y, m);
	}
	return -EINVAL;
}

int js_feed(struct js *s, const char *buf, size_t n)
{
	yajl_status st = yajl_parse(s->y, (const unsigned char *)buf, n);

	if (st != yajl_status_ok)
		return failed(s, 0);
	s->fed += n;
	return 0;
}

int js_finish(struct js *s, const struct jv **root)
{
	yajl_status st = yajl_complete_parse(s->y);

	if (st != yajl_status_ok)
		return failed(s, 1);
	if (!s->have_root) {
		snprintf(s->err, s->err_size, "%s is not valid JSON: no value in it", s->name);
		return -EINVAL;
	}
	*root = &s->root;
	return 0;
}

int js_streamed(const struct js *s)
{
	return s->streamed;
}

void js_free(struct js *s)
{
	if (!s)
		return;
	yajl_free(s->y);
	arena_free(&s->keep);
	arena_free(&s->row);
	free(s->st);
	free(s);
}
