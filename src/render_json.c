/*
 * render_json.c - "profile JSON version 1" (DESIGN.md, "Formats").
 *
 * One object per report; the keys of DESIGN.md keep their meaning, and
 * these are added: top-level "lost_events" and "threads"; per row
 * "wait_p50_ns", "wait_p99_ns" and "wait_hist" (the log2 histogram of
 * contended waits, bucket b counting waits in [2^b, 2^(b+1)) ns, trailing
 * zero buckets left out), so that a saved profile can be re-rendered.
 * Strings are escaped per RFC 8259; file paths are written as recorded,
 * not shortened.
 */
#include <string.h>

#include "internal.h"

static void json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

static void json_frame(FILE *out, const char *function, const char *file, unsigned line,
		       const char *dso, uintptr_t address)
{
	fputs("{\"function\":", out);
	json_string(out, function);
	fputs(",\"file\":", out);
	json_string(out, file);
	if (line)
		fprintf(out, ",\"line\":%u", line);
	else
		fputs(",\"line\":null", out);
	fputs(",\"dso\":", out);
	json_string(out, dso);
	if (address)
		fprintf(out, ",\"address\":\"%#lx\"}", (unsigned long)address);
	else
		fputs(",\"address\":null}", out);
}

static void json_site(FILE *out, const struct sp_row *r)
{
	struct sp_frame f;

	sp_row_site(r, &f); /* names.c: live or read back from a profile */
	json_frame(out, f.function, f.file, f.line, f.dso, f.address);
}

static void json_row(FILE *out, const struct sp_row *r, int hold)
{
	unsigned last = SP_HIST_BUCKETS;

	fprintf(out, "{\"type\":\"%s\",\"object\":", sp_type_name(r->type));
	if (r->n_objects == 1)
		fprintf(out, "\"%#lx\"", (unsigned long)r->obj);
	else
		fputs("null", out);
	fprintf(out, ",\"n_objects\":%llu,\"site\":", (unsigned long long)r->n_objects);
	json_site(out, r);
	fputs(",\"stack\":[", out);
	for (unsigned i = 0; i < (r->names ? r->names->n_frames : r->n_frames); i++) {
		struct sp_frame f;

		sp_row_frame(r, i, &f);
		if (i)
			fputc(',', out);
		json_frame(out, f.function, f.file, f.line, f.dso, f.address);
	}
	fprintf(out,
		"],\"acquisitions\":%llu,\"contended\":%llu,\"wait_ns\":%llu,\"wait_max_ns\":%llu",
		(unsigned long long)r->acquisitions, (unsigned long long)r->contended,
		(unsigned long long)r->wait_ns, (unsigned long long)r->wait_max_ns);
	if (hold)
		fprintf(out, ",\"hold_ns\":%llu,\"hold_max_ns\":%llu",
			(unsigned long long)r->hold_ns, (unsigned long long)r->hold_max_ns);
	else
		fputs(",\"hold_ns\":null,\"hold_max_ns\":null", out);
	fprintf(out, ",\"wait_p50_ns\":%llu,\"wait_p99_ns\":%llu,\"wait_hist\":[",
		(unsigned long long)sp_row_percentile(r, 0.50),
		(unsigned long long)sp_row_percentile(r, 0.99));
	while (last > 0 && !r->hist[last - 1])
		last--;
	for (unsigned b = 0; b < last; b++)
		fprintf(out, "%s%llu", b ? "," : "", (unsigned long long)r->hist[b]);
	fputs("]}", out);
}

int sp_render_json(FILE *out, const struct sp_rows *rows, const struct sp_render_ctx *ctx)
{
	const struct syncprof_report_options *o = ctx->opts;

	fprintf(out, "{\"format\":\"syncprof-profile\",\"version\":1,\"pid\":%d,\"command\":",
		(int)ctx->pid);
	json_string(out, ctx->command ? ctx->command : "");
	fprintf(out,
		",\"clock\":\"%s\",\"elapsed_ns\":%llu,\"coalesced\":%s,\"sort\":\"%s\","
		"\"lost_events\":%llu,\"rows\":[",
		sp_clock_name(), (unsigned long long)ctx->elapsed_ns, o->coalesce ? "true" : "false",
		sp_sort_name(o->sort), (unsigned long long)ctx->lost);
	for (size_t i = 0; i < rows->n; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_row(out, &rows->v[i], 0);
	}
	fputs("]}\n", out);
	return 0;
}
