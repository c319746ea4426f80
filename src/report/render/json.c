/*
 * render_json.c - "profile JSON version 1" (DESIGN.md, "Formats").
 *
 * One object per report; the keys of DESIGN.md keep their meaning, and
 * these are added: top-level "lost_events" and "threads"; per row
 * "wait_p50_ns", "wait_p99_ns" and "wait_hist" (the log2 histogram of
 * contended waits, bucket b counting waits in [2^b, 2^(b+1)) ns, trailing
 * zero buckets left out), so that a saved profile can be re-rendered.
 * With hold tracking on (hold.c), rows also carry "holds",
 * "owner_changes", "hold_hist" and "blame" (a list of {site, wait_ns,
 * count}: the sites where holders had taken the lock this row waited
 * for); symbolized frames may carry "inlined" (symbolize.c).
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

static void json_frame_end(FILE *out, const struct sp_symbol *sym);

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
		fprintf(out, ",\"address\":\"%#lx\"", (unsigned long)address);
	else
		fputs(",\"address\":null", out);
}

/* A symbolized frame: the keys of json_frame, plus "inlined" (the
 * functions the named one was inlined into, each with the file:line of
 * the inlined call) when libdw found inlining. */
static void json_symbol(FILE *out, const struct sp_symbol *sym, uintptr_t address)
{
	json_frame(out, sym->function, sym->file, sym->line, sym->dso, address);
	json_frame_end(out, sym);
}

static void json_frame_end(FILE *out, const struct sp_symbol *sym)
{
	if (sym && sym->n_inline) {
		fputs(",\"inlined\":[", out);
		for (unsigned i = 0; i < sym->n_inline; i++) {
			fputs(i ? ",{\"function\":" : "{\"function\":", out);
			json_string(out, sym->inl[i].function);
			fputs(",\"file\":", out);
			json_string(out, sym->inl[i].file);
			if (sym->inl[i].line)
				fprintf(out, ",\"line\":%u}", sym->inl[i].line);
			else
				fputs(",\"line\":null}", out);
		}
		fputc(']', out);
	}
	fputc('}', out);
}

static void json_site(FILE *out, const struct sp_row *r)
{
	struct sp_symbol sym;

	if (r->names) { /* read back from a saved profile (names.c) */
		const struct sp_frame *f = &r->names->site;

		json_frame(out, f->function, f->file, f->line, f->dso, f->address);
		json_frame_end(out, NULL);
		return;
	}
	if (r->file || !r->pc) {
		json_frame(out, r->func, r->file, r->line, NULL, 0);
		json_frame_end(out, NULL);
		return;
	}
	sp_symbolize(r->pc, &sym);
	json_symbol(out, &sym, r->pc);
}

static void json_site_of(FILE *out, const struct sp_site *s)
{
	struct sp_row r;

	memset(&r, 0, sizeof(r));
	r.file = s->file;
	r.func = s->func;
	r.line = s->line;
	r.pc = s->pc;
	json_site(out, &r);
}

static void json_hist(FILE *out, const char *key, const uint64_t *hist)
{
	unsigned last = SP_HIST_BUCKETS;

	fprintf(out, ",\"%s\":[", key);
	while (last > 0 && !hist[last - 1])
		last--;
	for (unsigned b = 0; b < last; b++)
		fprintf(out, "%s%llu", b ? "," : "", (unsigned long long)hist[b]);
	fputc(']', out);
}

/* With hold tracking: hold statistics, owner changes and blame. */
static void json_hold(FILE *out, const struct sp_row *r, int coalesced)
{
	struct sp_blame b[16];
	size_t n = sp_blame_for_row(r, coalesced, b, 16);

	fprintf(out, ",\"holds\":%llu,\"owner_changes\":%llu",
		(unsigned long long)r->holds, (unsigned long long)r->owner_changes);
	json_hist(out, "hold_hist", sp_row_d(r)->hold_hist);
	fputs(",\"blame\":[", out);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",{\"site\":" : "{\"site\":", out);
		json_site_of(out, &b[i].holder);
		fprintf(out, ",\"wait_ns\":%llu,\"count\":%llu}",
			(unsigned long long)b[i].wait_ns, (unsigned long long)b[i].count);
	}
	fputc(']', out);
}

static void json_row(FILE *out, const struct sp_row *r, int hold, int coalesced)
{
	fprintf(out, "{\"type\":\"%s\",\"object\":", sp_type_name(r->type));
	if (r->n_objects == 1)
		fprintf(out, "\"%#lx\"", (unsigned long)r->obj);
	else
		fputs("null", out);
	fprintf(out, ",\"n_objects\":%llu,\"site\":", (unsigned long long)r->n_objects);
	json_site(out, r);
	fputs(",\"stack\":[", out);
	for (unsigned i = 0; i < (r->names ? r->names->n_frames : r->n_frames); i++) {
		if (i)
			fputc(',', out);
		if (r->names) {
			const struct sp_frame *f = &r->names->frames[i];

			json_frame(out, f->function, f->file, f->line, f->dso, f->address);
			json_frame_end(out, NULL);
		} else {
			struct sp_symbol sym;

			sp_symbolize(sp_row_d(r)->frames[i], &sym);
			json_symbol(out, &sym, sp_row_d(r)->frames[i]);
		}
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
	fprintf(out, ",\"wait_p50_ns\":%llu,\"wait_p99_ns\":%llu",
		(unsigned long long)sp_row_percentile(r, 0.50),
		(unsigned long long)sp_row_percentile(r, 0.99));
	json_hist(out, "wait_hist", sp_row_d(r)->hist);
	if (hold)
		json_hold(out, r, coalesced);
	fputc('}', out);
}

int sp_render_json(FILE *out, const struct sp_rows *rows, const struct sp_render_ctx *ctx)
{
	const struct syncprof_report_options *o = ctx->opts;

	fprintf(out, "{\"format\":\"syncprof-profile\",\"version\":1,\"pid\":%d,\"command\":",
		(int)ctx->pid);
	json_string(out, ctx->command ? ctx->command : "");
	fprintf(out,
		",\"clock\":\"%s\",\"elapsed_ns\":%llu,\"coalesced\":%s,\"sort\":\"%s\","
		"\"lost_events\":%llu,",
		sp_clock_name(), (unsigned long long)ctx->elapsed_ns, o->coalesce ? "true" : "false",
		sp_sort_name(o->sort), (unsigned long long)ctx->lost);
	if (sp_load_relaxed(&sp_hold_on))
		fprintf(out, "\"hold_sample\":%u,", sp_opts.hold_sample ? sp_opts.hold_sample : 1);
	fputs("\"rows\":[", out);
	for (size_t i = 0; i < rows->n; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_row(out, &rows->v[i], sp_load_relaxed(&sp_hold_on), o->coalesce);
	}
	fputs("]}\n", out);
	return 0;
}
