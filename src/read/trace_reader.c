/*
 * trace_reader.c - reads a trace file (docs/trace-format.md) back: the
 * library side of 'syncprof trace' and of the fuzz target.
 *
 * Design: the whole file is in memory (the CLI reads it; the fuzzer hands
 * its input); next() decodes one record at a time, in file order, and
 * keeps the name tables (event definitions, threads, strings, maps) up to
 * date as definitions go by, so a caller sees every name defined before the
 * event that uses it.  Nothing is trusted: every length is checked against
 * what remains before anything is read (memcpy, so no alignment is
 * assumed), every string must end inside its record, and the first record
 * that cannot be decoded stops the reader with status TRUNCATED (the file
 * ends inside a record: the traced process was killed or is still writing)
 * or CORRUPT (a size or type no writer produces) and a message saying where
 * and why.  All records before it have been returned.  A file whose writer
 * hit a write error ends early on a record boundary and says so in its
 * header (sp_trace_reader_write_error()) and, room permitting, in a last
 * WRITE_LOSS record: it reads to its end with status OK, and the caller
 * says it is incomplete.
 *
 * The reader runs off the hot path in the CLI, so it uses malloc freely.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/containers.h"
#include "base/maps.h"
#include "read/trace_reader.h"

/* ---- u64 -> pointer maps (base/containers.h) ----------------------------- */

static void *map_get(const struct sp_u64map *m, uint64_t key)
{
	uint64_t v;

	return sp_u64map_find(m, key, NULL, NULL, &v) ? (void *)(uintptr_t)v : NULL;
}

static void free_val(uint64_t key, uint64_t val, void *arg)
{
	(void)key, (void)arg;
	free((void *)(uintptr_t)val);
}

static void map_free(struct sp_u64map *m, int free_vals)
{
	if (free_vals)
		sp_u64map_each(m, free_val, NULL);
	sp_u64map_free(m);
}

/* Insert or replace; returns the previous value (caller frees), or
 * (void *)-1 when out of memory. */
static void *map_put(struct sp_u64map *m, uint64_t key, void *val)
{
	void *old = map_get(m, key);

	if (sp_u64map_set(m, key, (uint64_t)(uintptr_t)val))
		return (void *)-1;
	return old;
}

/* ---- header ----------------------------------------------------------- */

int sp_trace_reader_init(struct sp_trace_reader *r, const void *data, size_t size)
{
	struct sp_trace_file_header *h = &r->hdr;

	memset(r, 0, sizeof(*r));
	r->data = data;
	r->size = size;
	r->maps_fresh = 1;
	if (size < sizeof(*h)) {
		r->status = size && !memcmp(data, SP_TRACE_MAGIC, size < 8 ? size : 8)
				    ? SP_TRACE_READ_TRUNCATED
				    : SP_TRACE_READ_CORRUPT;
		snprintf(r->error, sizeof(r->error),
			 r->status == SP_TRACE_READ_TRUNCATED
				 ? "file ends inside the header (%zu of 64 bytes)"
				 : "not a syncprof trace file (%zu bytes, too short for a header)",
			 size);
		return -EINVAL;
	}
	memcpy(h, data, sizeof(*h));
	r->status = SP_TRACE_READ_CORRUPT;
	if (memcmp(h->magic, SP_TRACE_MAGIC, 8)) {
		snprintf(r->error, sizeof(r->error), "not a syncprof trace file (bad magic)");
		return -EINVAL;
	}
	if (h->version != SP_TRACE_VERSION) {
		snprintf(r->error, sizeof(r->error),
			 "unsupported trace format version %u (this reader knows version %d)",
			 h->version, SP_TRACE_VERSION);
		return -EINVAL;
	}
	if (h->header_size < sizeof(*h) || h->header_size % 8 || h->header_size > 4096) {
		snprintf(r->error, sizeof(r->error), "corrupt header: header size %u",
			 h->header_size);
		return -EINVAL;
	}
	if ((h->clock != SP_TRACE_CLOCK_TSC && h->clock != SP_TRACE_CLOCK_MONOTONIC) ||
	    !h->ticks_per_sec) {
		snprintf(r->error, sizeof(r->error), "corrupt header: clock %u at %llu ticks/s",
			 h->clock, (unsigned long long)h->ticks_per_sec);
		return -EINVAL;
	}
	if (h->header_size > size) {
		r->status = SP_TRACE_READ_TRUNCATED;
		snprintf(r->error, sizeof(r->error), "file ends inside the header");
		return -EINVAL;
	}
	r->status = SP_TRACE_READ_OK;
	r->off = h->header_size;
	return 0;
}

void sp_trace_reader_fini(struct sp_trace_reader *r)
{
	map_free(&r->defs, 1);
	map_free(&r->strings, 0);
	map_free(&r->threads, 0);
	map_free(&r->lock_names, 0);
	free(r->maps);
	free(r->ranges);
	/* the maps are empty again (sp_u64map_free) */
	r->maps = NULL;
	r->ranges = NULL;
}

/* ---- records ---------------------------------------------------------- */

static int stop(struct sp_trace_reader *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int stop(struct sp_trace_reader *r, int status, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->error, sizeof(r->error), "offset %zu (after %llu records): ", r->off,
		     (unsigned long long)r->records);
	va_start(ap, fmt);
	vsnprintf(r->error + n, sizeof(r->error) - (size_t)n, fmt, ap);
	va_end(ap);
	r->status = status;
	return -1;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* @n NUL-terminated strings in [p, end): their starts into @out. */
static int get_strings(const uint8_t *p, const uint8_t *end, const char **out, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *z = memchr(p, 0, (size_t)(end - p));

		if (!z)
			return -1;
		out[i] = (const char *)p;
		p = z + 1;
	}
	return 0;
}

static int read_def(struct sp_trace_reader *r, struct sp_trace_rec *rec, const uint8_t *p,
		    const uint8_t *end)
{
	const char *s[SP_TRACE_MAX_ARGS + 1];
	struct sp_trace_def *d;
	void *old;

	rec->id = get32(p);
	rec->nargs = rec->aux;
	if (rec->aux > SP_TRACE_MAX_ARGS || rec->id == 0 || rec->id > SP_TRACE_MAX_ID)
		return stop(r, SP_TRACE_READ_CORRUPT, "event definition with id %u and %u arguments",
			    rec->id, rec->aux);
	if (get_strings(p + 8, end, s, rec->aux + 1u))
		return stop(r, SP_TRACE_READ_CORRUPT, "event definition %u: names not terminated",
			    rec->id);
	d = calloc(1, sizeof(*d));
	if (!d)
		return stop(r, SP_TRACE_READ_CORRUPT, "out of memory");
	d->name = s[0];
	d->nargs = rec->aux;
	for (unsigned i = 0; i < rec->aux; i++)
		d->args[i] = s[1 + i];
	old = map_put(&r->defs, rec->id, d);
	if (old == (void *)-1) {
		free(d);
		return stop(r, SP_TRACE_READ_CORRUPT, "out of memory");
	}
	free(old);
	rec->str = d->name;
	rec->def = d;
	return 1;
}

static int read_named(struct sp_trace_reader *r, struct sp_trace_rec *rec, const uint8_t *p,
		      const uint8_t *end, struct sp_u64map *map, uint64_t key)
{
	const char *s;

	if (get_strings(p, end, &s, 1))
		return stop(r, SP_TRACE_READ_CORRUPT, "record type %u: string not terminated",
			    rec->type);
	rec->str = s;
	rec->str_len = strlen(s);
	if (map_put(map, key, (void *)(uintptr_t)s) == (void *)-1)
		return stop(r, SP_TRACE_READ_CORRUPT, "out of memory");
	return 1;
}

static int range_cmp(const void *a, const void *b)
{
	const struct sp_trace_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Parse the maps text into sorted ranges (after each MAPS record, so a
 * lookup per event is a binary search).  Lines that do not parse are
 * skipped: MAPS is advisory. */
static void index_maps(struct sp_trace_reader *r)
{
	const char *p = r->maps, *text_end = r->maps + r->maps_len;

	r->n_ranges = 0;
	while (p < text_end) {
		const char *end = memchr(p, '\n', (size_t)(text_end - p));
		struct sp_trace_range g;
		struct sp_maps_line m;

		if (!end)
			end = text_end;
		if (!sp_maps_parse_line(p, end, &m)) {
			g.lo = m.lo;
			g.hi = m.hi;
			g.off = m.off;
			g.path = m.path;
			g.path_len = m.path_len;
			if (g.hi > g.lo) {
				if (r->n_ranges == r->cap_ranges) {
					size_t cap = r->cap_ranges ? r->cap_ranges * 2 : 256;
					void *v = realloc(r->ranges, cap * sizeof(*r->ranges));

					if (!v)
						break;
					r->ranges = v;
					r->cap_ranges = cap;
				}
				r->ranges[r->n_ranges++] = g;
			}
		}
		p = end + 1;
	}
	if (r->n_ranges)
		qsort(r->ranges, r->n_ranges, sizeof(*r->ranges), range_cmp);
}

static int read_maps(struct sp_trace_reader *r, struct sp_trace_rec *rec, const uint8_t *p,
		     const uint8_t *end)
{
	size_t n = (size_t)(end - p);

	while (n && !p[n - 1])
		n--;
	if (r->maps_fresh)
		r->maps_len = 0;
	if (r->maps_len + n + 1 > r->maps_cap) {
		size_t cap = (r->maps_len + n + 1) * 2;
		char *m = realloc(r->maps, cap);

		if (!m)
			return stop(r, SP_TRACE_READ_CORRUPT, "out of memory");
		r->maps = m;
		r->maps_cap = cap;
	}
	memcpy(r->maps + r->maps_len, p, n);
	r->maps_len += n;
	r->maps[r->maps_len] = '\0';
	rec->str = (const char *)p;
	rec->str_len = n;
	index_maps(r);
	return 1;
}

/* LOCK_NAME: the fixed part, then the name. */
static int decode_lock_name(struct sp_trace_rec *rec, const uint8_t *p, const uint8_t *end)
{
	const char *s[1];

	if (end - p < 48 || get_strings(p + 40, end, s, 1))
		return -1;
	rec->ts = get64(p);
	rec->args[SP_LA_OBJ] = get64(p + 8);
	rec->args[SP_LA_SITE] = get64(p + 16);
	rec->args[SP_LA_FUNC] = get64(p + 24);
	rec->args[SP_LA_LINE] = get32(p + 32);
	rec->nargs = SP_LA_LINE + 1;
	rec->str = s[0];
	rec->str_len = strlen(s[0]);
	return 0;
}

static int decode(struct sp_trace_reader *r, struct sp_trace_rec *rec, const uint8_t *p,
		  const uint8_t *end)
{
	size_t len = (size_t)(end - p);

	switch (rec->type) {
	case SP_REC_EVENT:
		if (rec->aux > SP_TRACE_MAX_ARGS || len != 16 + 8u * rec->aux)
			return stop(r, SP_TRACE_READ_CORRUPT,
				    "event record of %u bytes with %u arguments", rec->size, rec->aux);
		rec->ts = get64(p);
		rec->tid = get32(p + 8);
		rec->id = get32(p + 12);
		rec->nargs = rec->aux;
		for (unsigned i = 0; i < rec->nargs; i++)
			rec->args[i] = get64(p + 16 + 8 * i);
		rec->def = map_get(&r->defs, rec->id);
		return 1;
	case SP_REC_DROPPED:
		if (len != 32)
			return stop(r, SP_TRACE_READ_CORRUPT, "dropped record of %u bytes", rec->size);
		rec->ts = get64(p);
		rec->ts2 = get64(p + 8);
		rec->tid = get32(p + 16);
		rec->count = get64(p + 24);
		return 1;
	case SP_REC_EVENT_DEF:
		if (len < 16)
			break;
		return read_def(r, rec, p, end);
	case SP_REC_THREAD:
		if (len < 16)
			break;
		rec->tid = get32(p);
		return read_named(r, rec, p + 8, end, &r->threads, rec->tid);
	case SP_REC_STRING:
		if (len < 16)
			break;
		rec->key = get64(p);
		return read_named(r, rec, p + 8, end, &r->strings, rec->key);
	case SP_REC_PCSITE: {
		const char *s[2];

		if (len < 24 || get_strings(p + 16, end, s, 2))
			break;
		rec->key = get64(p);
		rec->count = get64(p + 8);
		rec->str = s[0];
		return 1;
	}
	case SP_REC_MAPS:
		return read_maps(r, rec, p, end);
	case SP_REC_CLOCK:
		if (len != 24)
			break;
		rec->key = get64(p);
		rec->ts = get64(p + 8);
		rec->ts2 = get64(p + 16);
		return 1;
	case SP_REC_WRITE_LOSS:
		if (len != 32)
			break;
		rec->ts = get64(p);
		rec->ts2 = get64(p + 8);
		rec->error = get32(p + 16);
		rec->count = get64(p + 24);
		return 1;
	case SP_REC_LOCK_MODE:
		if (len != 24 || get32(p + 8) > SP_TRACE_LOCKS_ALL)
			break;
		rec->ts = get64(p);
		rec->id = get32(p + 8);      /* the mode */
		rec->count = get64(p + 16);  /* min_wait_ns */
		r->lock_mode_seen = 1;
		r->lock_mode = rec->id;
		r->min_wait_ns = rec->count;
		return 1;
	case SP_REC_LOCK_NAME:
		if (decode_lock_name(rec, p, end))
			break;
		return 1;
	default:
		if (rec->type >= SP_REC_OPTIONAL_MIN)
			return 1; /* a later version's optional record: skipped */
		return stop(r, SP_TRACE_READ_CORRUPT, "unknown record type %u", rec->type);
	}
	return stop(r, SP_TRACE_READ_CORRUPT, "record type %u of impossible size %u", rec->type,
		    rec->size);
}

int sp_trace_reader_next(struct sp_trace_reader *r, struct sp_trace_rec *rec)
{
	size_t left = r->size - r->off;
	const uint8_t *p = r->data + r->off;
	int rc;

	if (r->status != SP_TRACE_READ_OK)
		return -1;
	if (!left)
		return 0;
	memset(rec, 0, sizeof(*rec));
	if (left < sizeof(struct sp_trace_rec_header))
		return stop(r, SP_TRACE_READ_TRUNCATED,
			    "the file ends inside a record header (%zu of 8 bytes)", left);
	memcpy(&rec->type, p, 2);
	memcpy(&rec->aux, p + 2, 2);
	rec->size = get32(p + 4);
	rec->off = r->off;
	if (rec->size < 8 || rec->size % 8 || rec->size > SP_TRACE_MAX_RECORD ||
	    (rec->type == 0 || (rec->type > SP_REC_CLOCK && rec->type < SP_REC_OPTIONAL_MIN)))
		return stop(r, SP_TRACE_READ_CORRUPT, "impossible record (type %u, size %u)",
			    rec->type, rec->size);
	if (rec->size > left)
		return stop(r, SP_TRACE_READ_TRUNCATED,
			    "the file ends inside a record (type %u needs %u bytes, %zu left)",
			    rec->type, rec->size, left);
	rc = decode(r, rec, p + 8, p + rec->size);
	if (rc < 0)
		return rc;
	if (rec->type == SP_REC_LOCK_NAME && rec->str[0] &&
	    map_put(&r->lock_names, rec->args[SP_LA_OBJ], (void *)p) == (void *)-1)
		return stop(r, SP_TRACE_READ_CORRUPT, "out of memory");
	if (rec->type == SP_REC_WRITE_LOSS) {
		r->write_loss_seen = 1;
		r->write_loss = rec->count;
		r->write_loss_first = rec->ts;
		r->write_loss_last = rec->ts2;
	}
	r->maps_fresh = rec->type != SP_REC_MAPS;
	r->last_type = rec->type;
	r->off += rec->size;
	r->records++;
	return 1;
}

int sp_trace_reader_read_at(const struct sp_trace_reader *r, uint64_t off,
			    struct sp_trace_rec *rec)
{
	struct sp_trace_reader tmp;
	const uint8_t *p;
	uint16_t type;
	uint32_t size;

	if (off < r->hdr.header_size || off > r->size || r->size - off < 8)
		return -1;
	p = r->data + off;
	memcpy(&type, p, 2);
	memcpy(&size, p + 4, 4);
	if ((type != SP_REC_EVENT && type != SP_REC_DROPPED && type != SP_REC_WRITE_LOSS &&
	     type != SP_REC_LOCK_NAME) ||
	    size < 8 || size > r->size - off)
		return -1;
	memset(rec, 0, sizeof(*rec));
	rec->type = type;
	memcpy(&rec->aux, p + 2, 2);
	rec->size = size;
	rec->off = off;
	/* decode() reads only the definitions for these types; a copy takes
	 * its error message, if any. */
	tmp = *r;
	tmp.status = SP_TRACE_READ_OK;
	return decode(&tmp, rec, p + 8, p + size) > 0 ? 0 : -1;
}

int sp_trace_reader_lock_name(const struct sp_trace_reader *r, uint64_t obj,
			      struct sp_trace_rec *rec)
{
	const uint8_t *p = map_get(&r->lock_names, obj);

	if (!p)
		return -1;
	memset(rec, 0, sizeof(*rec));
	rec->type = SP_REC_LOCK_NAME;
	memcpy(&rec->aux, p + 2, 2);
	rec->size = get32(p + 4);
	rec->off = (uint64_t)(p - r->data);
	return decode_lock_name(rec, p + 8, p + rec->size);
}

int sp_trace_reader_write_error(const struct sp_trace_reader *r)
{
	if (!(r->hdr.flags & SP_TRACE_FLAG_WRITE_ERROR))
		return 0;
	return r->hdr.write_errno ? (int)r->hdr.write_errno : EIO;
}

/* ---- names ------------------------------------------------------------ */

int64_t sp_trace_reader_rel_ns(const struct sp_trace_reader *r, uint64_t ts)
{
	__int128 d = (__int128)ts - (__int128)r->hdr.tick0;

	d = d * 1000000000 / (__int128)r->hdr.ticks_per_sec;
	if (d > INT64_MAX)
		return INT64_MAX;
	if (d < INT64_MIN)
		return INT64_MIN;
	return (int64_t)d;
}

const struct sp_trace_def *sp_trace_reader_def(const struct sp_trace_reader *r, uint32_t id)
{
	return map_get(&r->defs, id);
}

const char *sp_trace_reader_string(const struct sp_trace_reader *r, uint64_t key)
{
	return map_get(&r->strings, key);
}

const char *sp_trace_reader_thread(const struct sp_trace_reader *r, uint32_t tid)
{
	return map_get(&r->threads, tid);
}

const char *sp_trace_reader_pc_dso(const struct sp_trace_reader *r, uint64_t pc, char *buf,
				   size_t size, uint64_t *offset)
{
	size_t lo = 0, hi = r->n_ranges;

	/* The last range starting at or below pc. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ranges[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && pc < r->ranges[lo - 1].hi) {
		const struct sp_trace_range *g = &r->ranges[lo - 1];
		size_t len = g->path_len < size - 1 ? g->path_len : size - 1;

		memcpy(buf, g->path, len);
		buf[len] = '\0';
		*offset = pc - g->lo + g->off;
		return buf;
	}
	return NULL;
}

const char *sp_trace_reader_site(const struct sp_trace_reader *r, const struct sp_trace_rec *rec,
				 char *buf, size_t size)
{
	uint64_t site = rec->args[SP_LA_SITE], line = rec->args[SP_LA_LINE], off;
	char dso[512];

	if (rec->nargs <= SP_LA_LINE) {
		snprintf(buf, size, "?");
	} else if (line) {
		const char *file = sp_trace_reader_string(r, site);
		const char *func = sp_trace_reader_string(r, rec->args[SP_LA_FUNC]);

		snprintf(buf, size, "%s:%llu%s%s%s", file ? file : "?", (unsigned long long)line,
			 func ? " (" : "", func ? func : "", func ? ")" : "");
	} else if (sp_trace_reader_pc_dso(r, site, dso, sizeof(dso), &off)) {
		const char *base = strrchr(dso, '/');

		snprintf(buf, size, "%s+0x%llx", base ? base + 1 : *dso ? dso : "?",
			 (unsigned long long)off);
	} else {
		snprintf(buf, size, "0x%llx", (unsigned long long)site);
	}
	return buf;
}
