/*
 * render.c - one entry point for every output format.
 *
 * Design: report rows are built once (collect.c, pipeline.c) and handed to the renderer
 * that o->format names.  The renderers share nothing but the row
 * model and names.c; each lives in its own file: table and JSON (the
 * core's), CSV, folded stacks, pprof and HTML (docs/formats.md describes
 * them).
 * The same dispatch serves the report at exit, syncprof_report(), the
 * control socket's "report" and 'syncprof report' on a saved profile.
 */
#include <errno.h>

#include "report/profile.h"

int sp_render(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o)
{
	switch (o->format) {
	case SYNCPROF_FORMAT_TABLE: return sp_render_table(out, p, o);
	case SYNCPROF_FORMAT_JSON: return sp_render_json(out, p, o);
	case SYNCPROF_FORMAT_CSV: return sp_render_csv(out, p, o);
	case SYNCPROF_FORMAT_FOLDED: return sp_render_folded(out, p, o);
	case SYNCPROF_FORMAT_PPROF: return sp_render_pprof(out, p, o);
	case SYNCPROF_FORMAT_HTML: return sp_render_html(out, p, o, NULL, NULL);
	}
	return -EINVAL;
}
