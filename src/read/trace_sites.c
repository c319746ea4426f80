/*
 * trace_sites.c - the call sites of a trace model (trace_model.c) named
 * as the reports name them, and matched against what a user types
 * (--site of 'syncprof trace what-if').
 *
 * Design: an instrumented site is "file:line" from the trace's STRING
 * records (its function, when the file has it, is matched too); an
 * interposed site is a return address, which the MAPS records place in a
 * file at a load address: report/symbolize.c names it from that file
 * offline, with the inline and wrapper rules of a live report, so
 * "function file:line" reads the same as in 'syncprof report'.  A site
 * matches a user's SITE when SITE is its printed name, its function, or
 * "file:line" with the line equal and the two files equal or one ending
 * in "/" + the other (so "bank.c:56" matches "examples/bank.c:56"):
 * sp_tm_site_matches(), in trace_model.c, which the fuzz target links
 * without the symbolizer.
 *
 * Costs: one symbolization per distinct site, never per event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/trace_model.h"
#include "report/profile.h"

/* Where the process mapped offset 0 of the file that holds @pc; 0 and
 * @path empty when no MAPS line holds it. */
static uint64_t load_base(const struct sp_trace_reader *r, uint64_t pc, char *path, size_t size)
{
	uint64_t off;
	const struct sp_trace_range *g = NULL;

	if (!sp_trace_reader_pc_dso(r, pc, path, size, &off))
		return 0;
	for (size_t i = 0; i < r->n_ranges; i++)
		if (r->ranges[i].lo <= pc && pc < r->ranges[i].hi)
			g = &r->ranges[i];
	if (!g)
		return 0;
	for (size_t i = 0; i < r->n_ranges; i++)
		if (r->ranges[i].off == 0 && r->ranges[i].path_len == g->path_len &&
		    !memcmp(r->ranges[i].path, g->path, g->path_len))
			return r->ranges[i].lo;
	return g->lo - g->off;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int name_site(struct sp_tm_site *s, const struct sp_trace_reader *r)
{
	struct sp_frame f;
	struct sp_symbol sym;
	char path[1024], buf[1536];

	memset(&f, 0, sizeof(f));
	if (s->line) {
		f.file = sp_trace_reader_string(r, s->site);
		f.function = sp_trace_reader_string(r, s->func);
		f.line = (unsigned)s->line;
		if (!f.file)
			f.file = "?";
	} else {
		uint64_t base = load_base(r, s->site, path, sizeof(path));

		f.address = s->site;
		if (base && path[0] == '/') {
			sp_symbolize_offline(path, base, s->site, &sym);
			f.function = sym.function;
			f.file = sym.file;
			f.line = sym.line;
			f.dso = sym.dso;
			f.offset = sym.offset;
		} else if (base) {
			f.dso = path;
			f.offset = s->site - base;
		}
	}
	sp_frame_format(&f, NULL, 0, buf, sizeof(buf));
	s->name = strdup(buf);
	s->function = dup_or_null(f.function);
	s->file = dup_or_null(f.file);
	s->fline = f.line;
	if (!s->name || (f.function && !s->function) || (f.file && !s->file))
		return -ENOMEM;
	return 0;
}

int sp_tm_name_sites(struct sp_trace_model *m, const struct sp_trace_reader *r)
{
	int rc = 0;

	for (size_t i = 0; i < m->n_sites && !rc; i++)
		if (!m->sites[i].name)
			rc = name_site(&m->sites[i], r);
	sp_symbolize_offline_end();
	return rc;
}
