/*
 * render/pprof.c - the report as a pprof profile: gzipped profile.proto.
 *
 * Design: what Go's runtime writes for its mutex/block profiles, so that
 * `go tool pprof`, pprof's web UI, Pyroscope and speedscope read it:
 *   sample types  contentions/count (contended attempts of the row) and
 *                 delay/nanoseconds (its total wait); with hold tracking
 *                 also holder_contentions/count and holder_delay/nanoseconds
 *                 (the holder side, below); period contentions/1;
 *                 default_sample_type "delay";
 *   waiter side   one sample per report row with a contended attempt or a
 *                 wait, its locations leaf first: the lock type as a frame
 *                 of its own ("[mutex]"), the call site, then the recorded
 *                 stack (innermost first); values (contentions, delay, 0, 0);
 *   holder side   with hold tracking, one sample per (row, blamed holder
 *                 site): the lock type, then the site where the holder
 *                 had taken the lock; values (0, 0, count, wait it caused).
 *                 Like Go's mutex profile, which charges a delay to the
 *                 unlocker's stack: `pprof -sample_index=holder_delay`
 *                 shows who made the others wait;
 *   locations     one per distinct frame, with its address; a frame that
 *                 libdw found inlined has one Line per function, innermost
 *                 first, the function it was inlined into last (pprof's
 *                 rule); each Line points to a Function (name, file);
 *   mappings      the profile's (mappings.c): file, address range, file
 *                 offset and GNU build ID, so that pprof -symbolize,
 *                 Pyroscope and Parca can find the binaries; a location
 *                 with an address points to its mapping, whose has_*
 *                 flags say whether every frame in it was named;
 *   labels        "lock type", "object" (when the row is one object),
 *                 "lock name" and "lock created at" (when its lock has
 *                 them), "acquisitions" (a number); holder samples have
 *                 "waiter site".
 * speedscope reads default_sample_type as an index into the sample types
 * (pprof reads it as a string): "delay" is string 1 and sample type 1, so
 * both open the delay in nanoseconds.
 * The message is encoded by protobuf-c from src/profile.proto (pprof's
 * published field numbers) and gzipped with zlib, in memory, then written.
 * Both libraries are weak references (pprof_proto.c says why): without
 * them this returns -ENOTSUP.
 *
 * Costs: memory for the interned strings, functions and locations of the
 * printed rows, and the encoded message, all freed before returning.
 *
 * Alternatives considered: a hand-written varint encoder (the issue asks
 * for Debian's protobuf-c and zlib, and a generated encoder cannot get a
 * field number wrong); one Location per row without functions (pprof then
 * shows bare addresses for instrumented sites, which have none); the
 * holder side as a second file (--pprof-blame): one more option and file
 * for what pprof already selects with -sample_index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/containers.h"
#include "report/profile.h"
#include "report/render/pprof_libs.h"
#include "profile.pb-c.h"

/* zlib through the table pprof_proto.c fills (pprof_libs.h). */
#define deflateInit2_ (sp_pprof_z.deflateInit2_)
#define deflate (sp_pprof_z.deflate)
#define deflateEnd (sp_pprof_z.deflateEnd)

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;

/* Interning: a hash of the key -> its index (base/containers.h), the
 * entries that share a hash told apart by comparing their keys. */
struct intern {
	struct sp_u64map map;
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
	Line **line_ptrs;        /* per location: n_line pointers into its lines */
	Line *line_store;        /* per location: its lines, SP_MAX_INLINE + 1 */
	struct loc_key *loc_keys;
	size_t n_locations, cap_locations;
	struct intern location_map;
	const struct sp_profile *prof;
	/* per mapping of prof: every frame in it had a function, a file, a
	 * line (then pprof need not symbolize it again) */
	struct map_flags {
		uint8_t used, functions, files, lines;
	} *map_flags;
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


struct intern_key {
	struct builder *b;
	const void *key;
	int (*eq)(struct builder *, size_t, const void *);
};

static int intern_eq(const void *ctx, uint64_t i)
{
	const struct intern_key *k = ctx;

	return k->eq(k->b, (size_t)i, k->key);
}

/* The index of the key equal to @key under @eq with hash @h, or -1. */
static int64_t intern_find(const struct intern *m, size_t h,
			   int (*eq)(struct builder *, size_t, const void *), struct builder *b,
			   const void *key)
{
	struct intern_key k = { b, key, eq };
	uint64_t i;

	return sp_u64map_find(&m->map, h, intern_eq, &k, &i) ? (int64_t)i : -1;
}

/* Index @i is the key of hash @h now. */
static void intern_add(struct intern *m, size_t h, size_t i, struct builder *b)
{
	if (sp_u64map_add(&m->map, h, i))
		b->err = -ENOMEM;
}

static int string_eq(struct builder *b, size_t i, const void *key)
{
	return !strcmp(b->strings[i], key);
}

static int64_t string_id(struct builder *b, const char *s)
{
	size_t h;
	int64_t i;
	char *copy;

	if (!s)
		s = "";
	h = hash_bytes(s, strlen(s));
	i = intern_find(&b->string_map, h, string_eq, b, s);
	if (i >= 0)
		return i;
	copy = strdup(s);
	if (!copy || sp_grow(&b->strings, &b->cap_strings, b->n_strings, sizeof(char *))) {
		free(copy);
		b->err = -ENOMEM;
		return 0;
	}
	b->strings[b->n_strings++] = copy;
	intern_add(&b->string_map, h, b->n_strings - 1, b);
	return (int64_t)(b->n_strings - 1);
}

static int function_eq(struct builder *b, size_t i, const void *key)
{
	const int64_t *k = key;

	return b->functions[i].name == k[0] && b->functions[i].filename == k[1];
}

static uint64_t function_id(struct builder *b, const char *name, const char *file)
{
	int64_t k[2], i;
	size_t h;
	Function init = PERFTOOLS__PROFILES__FUNCTION__INIT;

	k[0] = string_id(b, name);
	k[1] = string_id(b, file);
	h = hash_bytes(k, sizeof(k));
	i = intern_find(&b->function_map, h, function_eq, b, k);
	if (i >= 0)
		return (uint64_t)i + 1;
	if (sp_grow(&b->functions, &b->cap_functions, b->n_functions, sizeof(Function))) {
		b->err = -ENOMEM;
		return 0;
	}
	init.id = b->n_functions + 1;
	init.name = k[0];
	init.system_name = k[0];
	init.filename = k[1];
	b->functions[b->n_functions++] = init;
	intern_add(&b->function_map, h, b->n_functions - 1, b);
	return init.id;
}

static int location_eq(struct builder *b, size_t i, const void *key)
{
	return !memcmp(&b->loc_keys[i], key, sizeof(struct loc_key));
}

#define LINES_PER_LOC (SP_MAX_INLINE + 1)

static int locations_grow(struct builder *b)
{
	size_t cap = b->cap_locations ? b->cap_locations * 2 : 64;
	Location *l = realloc(b->locations, cap * sizeof(*l));
	Line **lp = l ? realloc(b->line_ptrs, cap * LINES_PER_LOC * sizeof(*lp)) : NULL;
	Line *ls = lp ? realloc(b->line_store, cap * LINES_PER_LOC * sizeof(*ls)) : NULL;
	struct loc_key *lk = ls ? realloc(b->loc_keys, cap * sizeof(*lk)) : NULL;

	if (l)
		b->locations = l;
	if (lp)
		b->line_ptrs = lp;
	if (ls)
		b->line_store = ls;
	if (!lk)
		return -ENOMEM;
	b->loc_keys = lk;
	b->cap_locations = cap;
	return 0;
}

/* The Location of frame @f named @name: its address (a frame of an
 * instrumented site has none), one Line for @name at f->file:f->line and,
 * when @f was inlined, one more per function it was inlined into. */
static uint64_t location_id(struct builder *b, const struct sp_frame *f, const char *name)
{
	struct loc_key k;
	size_t h, n = b->n_locations;
	int64_t known;
	Location init = PERFTOOLS__PROFILES__LOCATION__INIT;
	Line line = PERFTOOLS__PROFILES__LINE__INIT;
	Line *lines;
	unsigned n_lines = 0;

	memset(&k, 0, sizeof(k));
	k.function_id = function_id(b, name, f->file);
	k.line = f->line;
	k.address = f->address;
	h = hash_bytes(&k, sizeof(k));
	known = intern_find(&b->location_map, h, location_eq, b, &k);
	if (known >= 0)
		return (uint64_t)known + 1;
	if (n >= b->cap_locations && locations_grow(b)) {
		b->err = -ENOMEM;
		return 0;
	}
	lines = &b->line_store[n * LINES_PER_LOC];
	lines[n_lines] = line;
	lines[n_lines].function_id = k.function_id;
	lines[n_lines++].line = f->line;
	for (unsigned i = 0; i < f->n_inline && n_lines < LINES_PER_LOC; i++) {
		char buf[64];
		const char *fn = f->inlined[i].function;

		if (!fn) { /* unnamed: its file:line, as sp_frame_label() would */
			snprintf(buf, sizeof(buf), "%s:%u",
				 f->inlined[i].file ? f->inlined[i].file : "??", f->inlined[i].line);
			fn = buf;
		}
		lines[n_lines] = line;
		lines[n_lines].function_id = function_id(b, fn, f->inlined[i].file);
		lines[n_lines++].line = f->inlined[i].line;
	}
	init.id = n + 1;
	init.address = f->address;
	init.n_line = n_lines;
	if (f->address) {
		const struct sp_mapping *m = sp_mapping_find(b->prof, f->address);

		if (m) {
			struct map_flags *mf = &b->map_flags[m - b->prof->mappings];

			init.mapping_id = (uint64_t)(m - b->prof->mappings) + 1;
			mf->functions &= f->function != NULL;
			mf->files &= f->file != NULL;
			mf->lines &= f->line != 0;
			mf->used = 1;
		}
	}
	b->locations[n] = init;
	b->loc_keys[n] = k;
	b->n_locations++;
	intern_add(&b->location_map, h, n, b);
	return init.id;
}

static uint64_t frame_location(struct builder *b, const struct sp_frame *f)
{
	char buf[1024];

	if (f->function)
		return location_id(b, f, f->function);
	return location_id(b, f, sp_frame_label(f, buf, sizeof(buf)));
}

/* The lock type as a leaf frame: "[mutex]", no file, no address. */
static uint64_t type_location(struct builder *b, int type)
{
	struct sp_frame f;
	char name[64];

	memset(&f, 0, sizeof(f));
	snprintf(name, sizeof(name), "[%s]", sp_type_name(type));
	return location_id(b, &f, name);
}

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->n_strings; i++)
		free(b->strings[i]);
	free(b->strings);
	sp_u64map_free(&b->string_map.map);
	free(b->functions);
	sp_u64map_free(&b->function_map.map);
	free(b->locations);
	free(b->line_ptrs);
	free(b->line_store);
	free(b->loc_keys);
	sp_u64map_free(&b->location_map.map);
	free(b->map_flags);
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

/* Values per sample: contentions, delay, then with hold tracking
 * holder_contentions, holder_delay. */
#define MAX_VALUES 4
/* Locations per sample: the type, the site, the stack. */
#define MAX_LOCS (SP_MAX_FRAMES + 2)
/* Labels per sample: lock type, object, acquisitions (waiter side); lock
 * type, waiter site (holder side). */
#define N_LABELS 5

struct samples {
	Sample *v;
	Sample **ptr;
	uint64_t *loc_ids;
	int64_t *values;
	Label *labels;
	Label **label_ptrs;
	size_t n;
	unsigned n_values; /* 2, or 4 with the holder side */
};

static int samples_alloc(struct samples *s, size_t n)
{
	size_t m = n ? n : 1;

	s->v = calloc(m, sizeof(*s->v));
	s->ptr = calloc(m, sizeof(*s->ptr));
	s->loc_ids = calloc(m * MAX_LOCS, sizeof(*s->loc_ids));
	s->values = calloc(m * MAX_VALUES, sizeof(*s->values));
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

/* The next sample, its location, value and label arrays ready to fill. */
static Sample *sample_next(struct samples *s)
{
	size_t k = s->n++;
	Sample init = PERFTOOLS__PROFILES__SAMPLE__INIT;

	init.location_id = &s->loc_ids[k * MAX_LOCS];
	init.value = &s->values[k * MAX_VALUES];
	init.n_value = s->n_values;
	init.label = &s->label_ptrs[k * N_LABELS];
	s->v[k] = init;
	s->ptr[k] = &s->v[k];
	return &s->v[k];
}

static void label_str(struct builder *b, struct samples *s, Sample *smp, const char *key,
		      const char *value)
{
	Label init = PERFTOOLS__PROFILES__LABEL__INIT;
	Label *l = &s->labels[(size_t)(smp - s->v) * N_LABELS + smp->n_label];

	*l = init;
	l->key = string_id(b, key);
	l->str = string_id(b, value);
	smp->label[smp->n_label++] = l;
}

static void label_num(struct builder *b, struct samples *s, Sample *smp, const char *key,
		      int64_t value)
{
	Label init = PERFTOOLS__PROFILES__LABEL__INIT;
	Label *l = &s->labels[(size_t)(smp - s->v) * N_LABELS + smp->n_label];

	*l = init;
	l->key = string_id(b, key);
	l->num = value;
	smp->label[smp->n_label++] = l;
}

/* The waiter side of row @r: [type] <- site <- stack. */
static void add_waiter_sample(struct builder *b, struct samples *s, const struct sp_row *r)
{
	Sample *smp = sample_next(s);
	unsigned n = r->names->n_frames;
	char obj[32], created[512];

	smp->location_id[smp->n_location_id++] = type_location(b, r->type);
	smp->location_id[smp->n_location_id++] = frame_location(b, &r->names->site);
	for (unsigned i = 0; i < n && i < SP_MAX_FRAMES; i++)
		smp->location_id[smp->n_location_id++] = frame_location(b, &r->names->frames[i]);
	smp->value[0] = (int64_t)r->contended;
	smp->value[1] = (int64_t)r->wait_ns;
	label_str(b, s, smp, "lock type", sp_type_name(r->type));
	if (r->n_objects == 1) {
		snprintf(obj, sizeof(obj), "%#lx", (unsigned long)r->obj);
		label_str(b, s, smp, "object", obj);
	}
	if (r->n_objects == 1 && r->lock_name)
		label_str(b, s, smp, "lock name", r->lock_name);
	if (r->n_objects == 1 && r->names->created)
		label_str(b, s, smp, "lock created at",
			  sp_frame_format(r->names->created, NULL, 0, created, sizeof(created)));
	label_num(b, s, smp, "acquisitions", (int64_t)r->acquisitions);
}

/* The holder side of row @r: one sample per blamed holder site,
 * [type] <- holder site, valued with the waits it caused. */
static void add_holder_samples(struct builder *b, struct samples *s, const struct sp_row *r)
{
	const struct sp_row_detail *d = sp_row_d(r);
	char waiter[1024];

	sp_frame_format(&r->names->site, NULL, 0, waiter, sizeof(waiter));
	for (uint32_t i = 0; i < d->n_blame && !b->err; i++) {
		const struct sp_blame *bl = &d->blame[i];
		struct sp_frame unknown;
		Sample *smp;

		if (!bl->wait_ns && !bl->count)
			continue;
		memset(&unknown, 0, sizeof(unknown));
		unknown.function = "[unknown holder]";
		smp = sample_next(s);
		smp->location_id[smp->n_location_id++] = type_location(b, r->type);
		smp->location_id[smp->n_location_id++] =
			frame_location(b, bl->names ? bl->names : &unknown);
		smp->value[2] = (int64_t)bl->count;
		smp->value[3] = (int64_t)bl->wait_ns;
		label_str(b, s, smp, "lock type", sp_type_name(r->type));
		label_str(b, s, smp, "waiter site", waiter);
	}
}

static int encode(FILE *out, struct builder *b, struct samples *s, const struct sp_profile *prof)
{
	Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	ValueType vt[MAX_VALUES + 1];
	ValueType *vtp[MAX_VALUES];
	static const char *const names[MAX_VALUES][2] = {
		{ "contentions", "count" },
		{ "delay", "nanoseconds" },
		{ "holder_contentions", "count" },
		{ "holder_delay", "nanoseconds" },
	};
	Function **fp = calloc(b->n_functions + 1, sizeof(*fp));
	Location **lp = calloc(b->n_locations + 1, sizeof(*lp));
	size_t n_maps = prof->n_mappings;
	Mapping *maps = calloc(n_maps + 1, sizeof(*maps));
	Mapping **mp = calloc(n_maps + 1, sizeof(*mp));
	uint8_t *buf = NULL;
	size_t len;
	int rc = -ENOMEM;

	for (unsigned i = 0; i <= MAX_VALUES; i++) {
		ValueType init = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;

		vt[i] = init;
		if (i < MAX_VALUES) {
			vt[i].type = string_id(b, names[i][0]);
			vt[i].unit = string_id(b, names[i][1]);
			vtp[i] = &vt[i];
		}
	}
	vt[MAX_VALUES].type = vt[0].type; /* period type: contentions/count */
	vt[MAX_VALUES].unit = vt[0].unit;
	if (!fp || !lp || !maps || !mp || b->err)
		goto out;
	/* Every mapping is written, so that mapping ids are indexes + 1. */
	for (size_t i = 0; i < n_maps; i++) {
		const struct sp_mapping *m = &prof->mappings[i];
		const struct map_flags *mf = &b->map_flags[i];
		Mapping init = PERFTOOLS__PROFILES__MAPPING__INIT;

		init.id = i + 1;
		init.memory_start = m->start;
		init.memory_limit = m->limit;
		init.file_offset = m->offset;
		init.filename = string_id(b, m->file);
		init.build_id = string_id(b, m->build_id);
		init.has_functions = mf->used && mf->functions;
		init.has_filenames = mf->used && mf->files;
		init.has_line_numbers = mf->used && mf->lines;
		init.has_inline_frames = mf->used && mf->lines; /* libdw's, with the lines */
		maps[i] = init;
		mp[i] = &maps[i];
	}
	if (b->err)
		goto out;
	for (size_t i = 0; i < b->n_functions; i++)
		fp[i] = &b->functions[i];
	for (size_t i = 0; i < b->n_locations; i++) {
		Line **linep = &b->line_ptrs[i * LINES_PER_LOC];

		for (size_t k = 0; k < b->locations[i].n_line; k++)
			linep[k] = &b->line_store[i * LINES_PER_LOC + k];
		b->locations[i].line = linep;
		lp[i] = &b->locations[i];
	}
	p.n_sample_type = s->n_values;
	p.sample_type = vtp;
	p.n_sample = s->n;
	p.sample = s->ptr;
	p.n_mapping = n_maps;
	p.mapping = mp;
	p.n_location = b->n_locations;
	p.location = lp;
	p.n_function = b->n_functions;
	p.function = fp;
	p.n_string_table = b->n_strings;
	p.string_table = b->strings;
	p.duration_nanos = (int64_t)prof->elapsed_ns;
	p.period_type = &vt[MAX_VALUES];
	p.period = 1;
	p.default_sample_type = vt[1].type; /* "delay", string 1 (see the top) */
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
	free(maps);
	free(mp);
	return rc;
}

int sp_render_pprof(FILE *out, const struct sp_profile *prof, const struct syncprof_report_options *o)
{
	const struct sp_rows *rows = &prof->rows;
	struct builder b;
	struct samples s;
	size_t n = 0;
	int rc;

	if (!sp_pprof_libs_load())
		return -ENOTSUP; /* a static binary without -lprotobuf-c -lz */
	memset(&b, 0, sizeof(b));
	memset(&s, 0, sizeof(s));
	s.n_values = prof->hold ? 4 : 2;
	b.prof = prof;
	b.map_flags = calloc(prof->n_mappings + 1, sizeof(*b.map_flags));
	for (size_t i = 0; b.map_flags && i < prof->n_mappings; i++)
		b.map_flags[i].functions = b.map_flags[i].files = b.map_flags[i].lines = 1;
	for (size_t i = 0; i < rows->n; i++)
		n += 1 + (prof->hold ? sp_row_d(&rows->v[i])->n_blame : 0);
	rc = b.map_flags ? samples_alloc(&s, n) : -ENOMEM;
	if (!rc) {
		string_id(&b, "");      /* string_table[0] must be "" */
		string_id(&b, "delay"); /* string 1: default_sample_type (see the top) */
		for (size_t i = 0; i < rows->n && !b.err; i++)
			if (rows->v[i].contended || rows->v[i].wait_ns)
				add_waiter_sample(&b, &s, &rows->v[i]);
		for (size_t i = 0; i < rows->n && !b.err && prof->hold; i++)
			add_holder_samples(&b, &s, &rows->v[i]);
		rc = b.err ? b.err : encode(out, &b, &s, prof);
	}
	samples_free(&s);
	builder_free(&b);
	return rc;
}
