/*
 * render.c - one entry point for every output format.
 *
 * Design: report rows are built once (report.c) and handed to the renderer
 * that ctx->opts->format names.  The renderers share nothing but the row
 * model and names.c; each lives in its own file: table and JSON (the
 * core's), CSV, folded stacks and pprof (docs/formats.md describes them).
 * The same dispatch serves the report at exit, syncprof_report(), the
 * control socket's "report" and 'syncprof report' on a saved profile.
 */
#include <errno.h>

#include "internal.h"

int sp_render(FILE *out, const struct sp_rows *rows, const struct sp_render_ctx *ctx)
{
	switch (ctx->opts->format) {
	case SYNCPROF_FORMAT_TABLE: return sp_render_table(out, rows, ctx);
	case SYNCPROF_FORMAT_JSON: return sp_render_json(out, rows, ctx);
	case SYNCPROF_FORMAT_CSV: return sp_render_csv(out, rows, ctx);
	case SYNCPROF_FORMAT_FOLDED: return sp_render_folded(out, rows, ctx);
	case SYNCPROF_FORMAT_PPROF: return sp_render_pprof(out, rows, ctx);
	}
	return -EINVAL;
}
