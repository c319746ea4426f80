/*
 * profile_load.c - read a saved profile ("profile JSON version 1",
 * DESIGN.md) back into report rows, for 'syncprof report'.
 *
 * Design: json-c parses the file into a tree that stays alive while the
 * rows are rendered: the rows' strings (file, function, dso) point into
 * it, and each row gets an sp_names (names.c) with its already-resolved
 * site and stack, so renderers never symbolize addresses of another
 * process.  Row keys (file, function, line, address of the site) are
 * filled from the site too, so that coalescing and sorting work as on live
 * rows.  Every problem is one message naming the file, the row and the
 * key; unknown keys are ignored (version 1 allows added keys).
 *
 * Alternatives considered: a hand-written JSON reader (the issue asks for
 * a Debian library; json-c is in every Debian release).
 */
#include <errno.h>
#include <stdarg.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "internal.h"
#include "read/profile_load.h"

static char err_buf[512];

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err_buf, sizeof(err_buf), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

const char *cli_profile_error(void)
{
	return err_buf;
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

static int read_frame(json_object *o, struct sp_frame *f)
{
	uint64_t line;
	const char *addr;

	memset(f, 0, sizeof(*f));
	if (!json_object_is_type(o, json_type_object))
		return -EINVAL;
	f->function = get_str(o, "function");
	f->file = get_str(o, "file");
	f->dso = get_str(o, "dso");
	if (get_u64(o, "line", 1, &line, NULL) || line > UINT32_MAX)
		return -EINVAL;
	f->line = (unsigned)line;
	addr = get_str(o, "address");
	if (addr && parse_hex(addr, &f->address))
		return -EINVAL;
	return 0;
}

static const char *const counters[] = { "acquisitions", "contended", "wait_ns", "wait_max_ns" };

static int read_row(const char *path, size_t i, json_object *o, struct sp_row *r,
		    struct sp_names *nm, struct sp_row_detail *det)
{
	json_object *site, *stack, *hist;
	const char *type, *obj;
	uint64_t *dst[] = { &r->acquisitions, &r->contended, &r->wait_ns, &r->wait_max_ns };
	int null;

	memset(r, 0, sizeof(*r));
	memset(nm, 0, sizeof(*nm));
	memset(det, 0, sizeof(*det));
	r->detail = det; /* copied into the set by sp_rows_push() */
	if (!json_object_is_type(o, json_type_object))
		return fail("%s: row %zu is not an object", path, i);
	type = get_str(o, "type");
	r->type = SP_TYPE_COUNT;
	for (int t = 0; type && t < SP_TYPE_COUNT; t++)
		if (!strcmp(type, sp_type_name(t)))
			r->type = (uint8_t)t;
	if (r->type == SP_TYPE_COUNT)
		return fail("%s: row %zu: bad or missing \"type\"", path, i);
	obj = get_str(o, "object");
	if (obj && parse_hex(obj, &r->obj))
		return fail("%s: row %zu: bad \"object\" '%s'", path, i, obj);
	if (get_u64(o, "n_objects", 1, &r->n_objects, &null))
		return fail("%s: row %zu: bad \"n_objects\"", path, i);
	if (null)
		r->n_objects = 1;
	for (size_t k = 0; k < sizeof(counters) / sizeof(*counters); k++)
		if (get_u64(o, counters[k], 0, dst[k], NULL))
			return fail("%s: row %zu: missing or bad \"%s\"", path, i, counters[k]);
	if (get_u64(o, "hold_ns", 1, &r->hold_ns, NULL) ||
	    get_u64(o, "hold_max_ns", 1, &r->hold_max_ns, NULL))
		return fail("%s: row %zu: bad \"hold_ns\" or \"hold_max_ns\"", path, i);
	if (!json_object_object_get_ex(o, "site", &site) || read_frame(site, &nm->site))
		return fail("%s: row %zu: missing or bad \"site\"", path, i);
	if (json_object_object_get_ex(o, "stack", &stack) && stack) {
		if (!json_object_is_type(stack, json_type_array))
			return fail("%s: row %zu: \"stack\" is not an array", path, i);
		for (size_t k = 0; k < json_object_array_length(stack) && k < SP_MAX_FRAMES; k++) {
			if (read_frame(json_object_array_get_idx(stack, k), &nm->frames[k]))
				return fail("%s: row %zu: bad frame %zu in \"stack\"", path, i, k);
			det->frames[k] = nm->frames[k].address;
			nm->n_frames = (unsigned)k + 1;
		}
		r->n_frames = (uint8_t)nm->n_frames;
	}
	if (json_object_object_get_ex(o, "wait_hist", &hist) && hist) {
		if (!json_object_is_type(hist, json_type_array) ||
		    json_object_array_length(hist) > SP_HIST_BUCKETS)
			return fail("%s: row %zu: bad \"wait_hist\"", path, i);
		for (size_t b = 0; b < json_object_array_length(hist); b++) {
			json_object *v = json_object_array_get_idx(hist, b);

			if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
				return fail("%s: row %zu: bad \"wait_hist\"", path, i);
			det->hist[b] = json_object_get_uint64(v);
		}
	}
	r->file = nm->site.file;
	r->func = nm->site.function;
	r->line = nm->site.line;
	r->pc = nm->site.address;
	r->names = nm;
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	size_t cap = 65536, n = 0;
	char *buf;

	if (!f) {
		fail("cannot read '%s': %s", path, strerror(errno));
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
		fail("cannot read '%s': %s", path, buf ? strerror(errno) : "out of memory");
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int cli_profile_load(const char *path, struct cli_profile *p)
{
	size_t len;
	char *text = slurp(path, &len);
	int rc;

	if (!text) {
		memset(p, 0, sizeof(*p));
		return -EIO;
	}
	rc = cli_profile_parse(path, text, len, p);
	free(text);
	return rc;
}

int cli_profile_parse(const char *path, const char *text, size_t len, struct cli_profile *p)
{
	json_tokener *tok;
	json_object *rows, *v;
	size_t n;
	const char *fmt;
	uint64_t version = 0, u;

	memset(p, 0, sizeof(*p));
	p->path = path;
	tok = json_tokener_new();
	if (!tok)
		return fail("out of memory");
	p->root = json_tokener_parse_ex(tok, text, (int)len);
	if (!p->root || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		fail("%s is not valid JSON: %s at byte %zu", path,
		     e == json_tokener_continue ? "unexpected end of file"
						: json_tokener_error_desc(e),
		     json_tokener_get_parse_end(tok));
		json_tokener_free(tok);
		cli_profile_free(p);
		return -EINVAL;
	}
	json_tokener_free(tok);
	fmt = get_str(p->root, "format");
	if (!fmt || strcmp(fmt, "syncprof-profile")) {
		cli_profile_free(p);
		return fail("%s is not a syncprof profile (no \"format\":\"syncprof-profile\"; "
			    "write one with format=json or -f json)",
			    path);
	}
	if (get_u64(p->root, "version", 0, &version, NULL) || version != 1) {
		cli_profile_free(p);
		return fail("%s: profile version %llu is not supported (this syncprof reads "
			    "version 1)",
			    path, (unsigned long long)version);
	}
	if (!json_object_object_get_ex(p->root, "rows", &rows) ||
	    !json_object_is_type(rows, json_type_array)) {
		cli_profile_free(p);
		return fail("%s: no \"rows\" array", path);
	}
	p->command = get_str(p->root, "command");
	if (!get_u64(p->root, "pid", 0, &u, NULL))
		p->pid = (int)u;
	get_u64(p->root, "elapsed_ns", 1, &p->elapsed_ns, NULL);
	get_u64(p->root, "lost_events", 1, &p->lost, NULL);
	p->coalesced = json_object_object_get_ex(p->root, "coalesced", &v) &&
		       json_object_get_boolean(v);
	n = json_object_array_length(rows);
	p->names = calloc(n ? n : 1, sizeof(*p->names));
	if (!p->names) {
		cli_profile_free(p);
		return fail("out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		struct sp_row_detail det;
		struct sp_row r;
		int rc = read_row(path, i, json_object_array_get_idx(rows, i), &r, &p->names[i],
				  &det);

		if (!rc && sp_rows_push(&p->rows, &r))
			rc = fail("out of memory");
		if (rc) {
			cli_profile_free(p);
			return rc;
		}
	}
	return 0;
}

void cli_profile_ctx(const struct cli_profile *p, const struct syncprof_report_options *opts,
		     struct sp_render_ctx *ctx)
{
	ctx->opts = opts;
	ctx->elapsed_ns = p->elapsed_ns;
	ctx->lost = p->lost;
	ctx->pid = p->pid;
	ctx->command = p->command;
}

void cli_profile_free(struct cli_profile *p)
{
	sp_rows_free(&p->rows);
	free(p->names);
	if (p->root)
		json_object_put(p->root);
	p->names = NULL;
	p->root = NULL;
}
