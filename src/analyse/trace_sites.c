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
 * "function file:line" reads the same as in 'syncprof report'; when the
 * file cannot be read back (deleted, another machine), the name the writer
 * recorded in a PCSITE record ("function+0x1f").  A site
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

#include "analyse/trace_model.h"
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

/* The writer's name for @pc (a PCSITE record), or NULL. */
static const struct sp_tm_pcsite *pcsite(const struct sp_trace_model *m, uint64_t pc)
{
	for (size_t i = 0; i < m->n_pcsites; i++)
		if (m->pcsites[i].pc == pc)
			return &m->pcsites[i];
	return NULL;
}

/* What is known of site @s: function, file:line, DSO. */
static int resolve_site(const struct sp_trace_model *m, struct sp_tm_site *s,
			const struct sp_trace_reader *r)
{
	struct sp_symbol sym;
	const char *function = NULL, *file = NULL, *dso = NULL;
	char path[1024];

	if (s->line) {
		file = sp_trace_reader_string(r, s->site);
		function = sp_trace_reader_string(r, s->func);
		s->fline = (unsigned)s->line;
		if (!file)
			file = "?";
	} else {
		uint64_t base = load_base(r, s->site, path, sizeof(path));

		if (base && path[0] == '/') {
			sp_symbolize_offline(path, base, s->site, &sym);
			function = sym.function;
			file = sym.file;
			s->fline = sym.line;
			dso = sym.dso;
			s->offset = sym.offset;
		} else if (base) {
			dso = path;
			s->offset = s->site - base;
		}
		if (!function) {
			/* the file could not be read back: the writer's dladdr() name */
			const struct sp_tm_pcsite *ps = pcsite(m, s->site);

			if (ps) {
				function = ps->function;
				s->offset = ps->offset;
			}
		}
	}
	s->function = dup_or_null(function);
	s->file = dup_or_null(file);
	s->dso = dup_or_null(dso);
	if ((function && !s->function) || (file && !s->file) || (dso && !s->dso))
		return -ENOMEM;
	return 0;
}

/* The directory prefix shared by the sites' absolute source paths
 * (sp_rows_common_prefix() for a report's rows). */
static size_t common_prefix(const struct sp_trace_model *m)
{
	const char *first = NULL;
	size_t len = 0;

	for (size_t i = 0; i < m->n_sites; i++) {
		const char *f = m->sites[i].file;
		size_t j = 0;

		if (!f || f[0] != '/')
			continue;
		if (!first) {
			first = f;
			len = strlen(f);
			continue;
		}
		while (j < len && f[j] == first[j])
			j++;
		len = j;
	}
	if (!first)
		return 0;
	while (len && first[len - 1] != '/')
		len--;
	return len > 1 ? len : 0;
}

static int name_site(struct sp_tm_site *s, size_t auto_len)
{
	struct sp_frame f;
	char buf[1536];

	memset(&f, 0, sizeof(f));
	f.function = s->function;
	f.file = s->file;
	f.line = s->fline;
	if (!s->line) {
		f.address = s->site;
		f.dso = s->dso;
		f.offset = s->offset;
	}
	sp_frame_format(&f, NULL, auto_len, buf, sizeof(buf));
	s->name = strdup(buf);
	return s->name ? 0 : -ENOMEM;
}

int sp_tm_name_sites(struct sp_trace_model *m, const struct sp_trace_reader *r)
{
	int rc = 0;
	size_t auto_len;

	for (size_t i = 0; i < m->n_sites && !rc; i++)
		rc = resolve_site(m, &m->sites[i], r);
	sp_symbolize_offline_end();
	auto_len = common_prefix(m);
	for (size_t i = 0; i < m->n_sites && !rc; i++)
		rc = name_site(&m->sites[i], auto_len);
	return rc;
}
