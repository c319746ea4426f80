/*
 * render/pprof.c - the report as a pprof profile: gzipped profile.proto.
 *
 * Design: what Go's runtime writes for its mutex/block profiles, so that
 * `go tool pprof`, pprof's web UI, Pyroscope and speedscope read it:
 *   sample types  contentions/count (contended attempts of the row) and
 *                 delay/nanoseconds (its total wait); period contentions/1;
 *   one sample per report row with a contended attempt or a wait, its
 *   locations leaf first: the call site, then the recorded stack
 *   (innermost first), one Location per distinct frame with one Line
 *   pointing to a Function (name, file); labels "lock type", "object"
 *   (when the row is one object) and "acquisitions" (a number).
 * The message is encoded by protobuf-c from src/profile.proto (pprof's
 * published field numbers) and gzipped with zlib, in memory, then written.
 * Both libraries are weak references (pprof_proto.c says why): without
 * them this returns -ENOTSUP.
 *
 * Alternatives considered: a hand-written varint encoder (the issue asks
 * for Debian's protobuf-c and zlib, and a generated encoder cannot get a
 * field number wrong); one Location per row without functions (pprof then
 * shows bare addresses for instrumented sites, which have none).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report/profile.h"
#include "profile.pb-c.h"

/* Weak, like the protobuf-c references of pprof_proto.c: a static binary
 * that does not link -lz gets -ENOTSUP here instead of a link error. */
#pragma weak deflateInit2_
#pragma weak deflate
#pragma weak deflateEnd

int sp_pprof_proto_available(void); /* pprof_proto.c */

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* Interning: open addressing over a key array; index + 1 in slots. */
struct intern {
	size_t *slot;
	size_t mask;
	size_t n;
};

struct loc_key {
	uint64_t function_id, line, address;
};

struct builder {
	char **strings;
	size_t n_strings, cap_strings;
	struct intern string_map;
	Function *functions; /* functions[i].id == i + 1 */
	size_t n_functions, cap_functions;
	struct intern function_map;
	Location *locations;
	Line *lines;
	struct loc_key *loc_keys;
	size_t n_locations, cap_locations;
	struct intern location_map;
	int err;
};

static size_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ *s++) * 1099511628211ull;
	return h;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* Find the slot of a key equal under @eq, growing the map when half full. */
static size_t *intern_slot(struct intern *m, size_t h, int (*eq)(struct builder *, size_t, const void *),
			   struct builder *b, const void *key)
{
	for (size_t i = h & m->mask;; i = (i + 1) & m->mask)
		if (!m->slot[i] || eq(b, m->slot[i] - 1, key))
			return &m->slot[i];
}

static int intern_init(struct intern *m)
{
	m->mask = 1023;
	m->n = 0;
	m->slot = calloc(m->mask + 1, sizeof(*m->slot));
	return m->slot ? 0 : -ENOMEM;
}

static int intern_rehash(struct intern *m, size_t (*hash)(struct builder *, size_t),
			 struct builder *b)
{
	size_t cap = (m->mask + 1) * 2;
	size_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i <= m->mask; i++) {
		size_t v = m->slot[i], j;

		if (!v)
			continue;
		for (j = hash(b, v - 1) & (cap - 1); s[j]; j = (j + 1) & (cap - 1))
			;
		s[j] = v;
	}
	free(m->slot);
	m->slot = s;
	m->mask = cap - 1;
	return 0;
}

static int string_eq(struct builder *b, size_t i, const void *key)
{
	return !strcmp(b->strings[i], key);
}

static size_t string_hash(struct builder *b, size_t i)
{
	return hash_bytes(b->strings[i], strlen(b->strings[i]));
}

static int64_t string_id(struct builder *b, const char *s)
{
	size_t *slot;
	char *copy;

	if (!s)
		s = "";
	slot = intern_slot(&b->string_map, hash_bytes(s, strlen(s)), string_eq, b, s);
	if (*slot)
		return (int64_t)(*slot - 1);
	copy = strdup(s);
	if (!copy || grow((void **)&b->strings, &b->cap_strings, b->n_strings, sizeof(char *))) {
		free(copy);
		b->err = -ENOMEM;
		return 0;
	}
	b->strings[b->n_strings++] = copy;
	*slot = b->n_strings;
	if (++b->string_map.n * 2 > b->string_map.mask &&
	    intern_rehash(&b->string_map, string_hash, b))
		b->err = -ENOMEM;
	return (int64_t)(b->n_strings - 1);
}

static int function_eq(struct builder *b, size_t i, const void *key)
{
	const int64_t *k = key;

	return b->functions[i].name == k[0] && b->functions[i].filename == k[1];
}

static size_t function_hash(struct builder *b, size_t i)
{
	int64_t k[2] = { b->functions[i].name, b->functions[i].filename };

	return hash_bytes(k, sizeof(k));
}

static uint64_t function_id(struct builder *b, const char *name, const char *file)
{
	int64_t k[2];
	size_t *slot;
	Function init = PERFTOOLS__PROFILES__FUNCTION__INIT;

	k[0] = string_id(b, name);
	k[1] = string_id(b, file);
	slot = intern_slot(&b->function_map, hash_bytes(k, sizeof(k)), function_eq, b, k);
	if (*slot)
		return *slot;
	if (grow((void **)&b->functions, &b->cap_functions, b->n_functions, sizeof(Function))) {
		b->err = -ENOMEM;
		return 0;
	}
	init.id = b->n_functions + 1;
	init.name = k[0];
	init.system_name = k[0];
	init.filename = k[1];
	b->functions[b->n_functions++] = init;
	*slot = b->n_functions;
	if (++b->function_map.n * 2 > b->function_map.mask &&
	    intern_rehash(&b->function_map, function_hash, b))
		b->err = -ENOMEM;
	return init.id;
}

static int location_eq(struct builder *b, size_t i, const void *key)
{
	return !memcmp(&b->loc_keys[i], key, sizeof(struct loc_key));
}

static size_t location_hash(struct builder *b, size_t i)
{
	return hash_bytes(&b->loc_keys[i], sizeof(struct loc_key));
}

static uint64_t location_id(struct builder *b, const struct sp_frame *f, const char *name)
{
	struct loc_key k;
	size_t *slot, n = b->n_locations;
	Location init = PERFTOOLS__PROFILES__LOCATION__INIT;
	Line line = PERFTOOLS__PROFILES__LINE__INIT;

	memset(&k, 0, sizeof(k));
	k.function_id = function_id(b, name, f->file);
	k.line = f->line;
	k.address = f->address;
	slot = intern_slot(&b->location_map, hash_bytes(&k, sizeof(k)), location_eq, b, &k);
	if (*slot)
		return *slot;
	if (n >= b->cap_locations) {
		size_t cap = b->cap_locations ? b->cap_locations * 2 : 64;
		Location *l = realloc(b->locations, cap * sizeof(*l));
		Line *li = l ? realloc(b->lines, cap * sizeof(*li)) : NULL;
		struct loc_key *lk = li ? realloc(b->loc_keys, cap * sizeof(*lk)) : NULL;

		if (l)
			b->locations = l;
		if (li)
			b->lines = li;
		if (!lk) {
			b->err = -ENOMEM;
			return 0;
		}
		b->loc_keys = lk;
		b->cap_locations = cap;
	}
	init.id = n + 1;
	init.address = f->address;
	line.function_id = k.function_id;
	line.line = f->line;
	b->locations[n] = init;
	b->lines[n] = line;
	b->loc_keys[n] = k;
	b->n_locations++;
	*slot = b->n_locations;
	if (++b->location_map.n * 2 > b->location_map.mask &&
	    intern_rehash(&b->location_map, location_hash, b))
		b->err = -ENOMEM;
	return init.id;
}

static uint64_t frame_location(struct builder *b, const struct sp_frame *f)
{
	char buf[1024];

	if (f->function)
		return location_id(b, f, f->function);
	return location_id(b, f, sp_frame_label(f, buf, sizeof(buf)));
}

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->n_strings; i++)
		free(b->strings[i]);
	free(b->strings);
	free(b->string_map.slot);
	free(b->functions);
	free(b->function_map.slot);
	free(b->locations);
	free(b->lines);
	free(b->loc_keys);
	free(b->location_map.slot);
}

/* gzip @len bytes of @data to @out. */
static int write_gzip(FILE *out, const uint8_t *data, size_t len)
{
	unsigned char buf[16384];
	z_stream z;
	int zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			break;
		if (fwrite(buf, 1, sizeof(buf) - z.avail_out, out) != sizeof(buf) - z.avail_out) {
			zr = Z_ERRNO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

struct samples {
	Sample *v;
	Sample **ptr;
	uint64_t *loc_ids;
	int64_t *values;
	Label *labels;
	Label **label_ptrs;
};

/* Labels per sample: lock type, object, acquisitions. */
#define N_LABELS 3

static int samples_alloc(struct samples *s, size_t n)
{
	size_t m = n ? n : 1;

	s->v = calloc(m, sizeof(*s->v));
	s->ptr = calloc(m, sizeof(*s->ptr));
	s->loc_ids = calloc(m * (SP_MAX_FRAMES + 1), sizeof(*s->loc_ids));
	s->values = calloc(m * 2, sizeof(*s->values));
	s->labels = calloc(m * N_LABELS, sizeof(*s->labels));
	s->label_ptrs = calloc(m * N_LABELS, sizeof(*s->label_ptrs));
	return s->v && s->ptr && s->loc_ids && s->values && s->labels && s->label_ptrs ? 0
										       : -ENOMEM;
}

static void samples_free(struct samples *s)
{
	free(s->v);
	free(s->ptr);
	free(s->loc_ids);
	free(s->values);
	free(s->labels);
	free(s->label_ptrs);
}

static void add_sample(struct builder *b, struct samples *s, size_t k, const struct sp_row *r)
{
	Sample init = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Label label = PERFTOOLS__PROFILES__LABEL__INIT;
	uint64_t *ids = &s->loc_ids[k * (SP_MAX_FRAMES + 1)];
	unsigned n = r->names->n_frames;
	Label *lab = &s->labels[k * N_LABELS];
	char obj[32];
	size_t nl = 0, ni = 0;

	ids[ni++] = frame_location(b, &r->names->site);
	for (unsigned i = 0; i < n && i < SP_MAX_FRAMES; i++)
		ids[ni++] = frame_location(b, &r->names->frames[i]);
	init.n_location_id = ni;
	init.location_id = ids;
	s->values[2 * k] = (int64_t)r->contended;
	s->values[2 * k + 1] = (int64_t)r->wait_ns;
	init.n_value = 2;
	init.value = &s->values[2 * k];
	lab[nl] = label;
	lab[nl].key = string_id(b, "lock type");
	lab[nl++].str = string_id(b, sp_type_name(r->type));
	if (r->n_objects == 1) {
		snprintf(obj, sizeof(obj), "%#lx", (unsigned long)r->obj);
		lab[nl] = label;
		lab[nl].key = string_id(b, "object");
		lab[nl++].str = string_id(b, obj);
	}
	lab[nl] = label;
	lab[nl].key = string_id(b, "acquisitions");
	lab[nl++].num = (int64_t)r->acquisitions;
	for (size_t i = 0; i < nl; i++)
		s->label_ptrs[k * N_LABELS + i] = &lab[i];
	init.n_label = nl;
	init.label = &s->label_ptrs[k * N_LABELS];
	s->v[k] = init;
	s->ptr[k] = &s->v[k];
}

static int encode(FILE *out, struct builder *b, struct samples *s, size_t n_samples,
		  const struct sp_profile *prof)
{
	Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	ValueType vt[3] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
			    PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
			    PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	ValueType *vtp[2] = { &vt[0], &vt[1] };
	Function **fp = calloc(b->n_functions + 1, sizeof(*fp));
	Location **lp = calloc(b->n_locations + 1, sizeof(*lp));
	Line **linep = calloc(b->n_locations + 1, sizeof(*linep));
	uint8_t *buf = NULL;
	size_t len;
	int rc = -ENOMEM;

	vt[0].type = string_id(b, "contentions");
	vt[0].unit = string_id(b, "count");
	vt[1].type = string_id(b, "delay");
	vt[1].unit = string_id(b, "nanoseconds");
	vt[2].type = vt[0].type;
	vt[2].unit = vt[0].unit;
	if (!fp || !lp || !linep || b->err)
		goto out;
	for (size_t i = 0; i < b->n_functions; i++)
		fp[i] = &b->functions[i];
	for (size_t i = 0; i < b->n_locations; i++) {
		linep[i] = &b->lines[i];
		b->locations[i].n_line = 1;
		b->locations[i].line = &linep[i];
		lp[i] = &b->locations[i];
	}
	p.n_sample_type = 2;
	p.sample_type = vtp;
	p.n_sample = n_samples;
	p.sample = s->ptr;
	p.n_location = b->n_locations;
	p.location = lp;
	p.n_function = b->n_functions;
	p.function = fp;
	p.n_string_table = b->n_strings;
	p.string_table = b->strings;
	p.duration_nanos = (int64_t)prof->elapsed_ns;
	p.period_type = &vt[2];
	p.period = 1;
	len = perftools__profiles__profile__get_packed_size(&p);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	perftools__profiles__profile__pack(&p, buf);
	rc = write_gzip(out, buf, len);
out:
	free(buf);
	free(fp);
	free(lp);
	free(linep);
	return rc;
}

int sp_render_pprof(FILE *out, const struct sp_profile *prof, const struct syncprof_report_options *o)
{
	const struct sp_rows *rows = &prof->rows;
	struct builder b;
	struct samples s;
	size_t n = 0;
	int rc;

	if (!sp_pprof_proto_available() || !deflateInit2_ || !deflate || !deflateEnd)
		return -ENOTSUP; /* a static binary without -lprotobuf-c -lz */
	memset(&b, 0, sizeof(b));
	memset(&s, 0, sizeof(s));
	rc = intern_init(&b.string_map);
	if (!rc)
		rc = intern_init(&b.function_map);
	if (!rc)
		rc = intern_init(&b.location_map);
	if (!rc)
		rc = samples_alloc(&s, rows->n);
	if (!rc) {
		string_id(&b, ""); /* string_table[0] must be "" */
		for (size_t i = 0; i < rows->n && !b.err; i++)
			if (rows->v[i].contended || rows->v[i].wait_ns)
				add_sample(&b, &s, n++, &rows->v[i]);
		rc = b.err ? b.err : encode(out, &b, &s, n, prof);
	}
	samples_free(&s);
	builder_free(&b);
	return rc;
}
