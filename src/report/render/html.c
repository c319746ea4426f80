/*
 * render/html.c - "--format html": one self-contained HTML page that
 * draws the profile: the rows as a sortable table with a wait and a hold
 * histogram per row, a flame graph of waits and one of holds, the
 * lock-order cycles and the blame (when the profile has them) and, when
 * 'syncprof report --trace' gives a trace, a timeline of its threads.
 *
 * Design: the page is data plus a program.  The data is the profile JSON
 * (json.c, every fact of the model, unchanged) with a small "view" beside
 * it: the names the other renderers print, made here by the same
 * functions (names.c), so the page's call sites read as the table's: a
 * row's site as its Call site cell (src_root or the common prefix
 * stripped), its stack as the folded output's frames, outermost first,
 * inlined callers as frames of their own (the site's last, so that the
 * stack, then the site, is the folded line's path and the flame graphs'),
 * and the names of its blame and of the cycles' ends.  All of it is one
 * JSON value in a <script type="application/json">, read with JSON.parse;
 * the program (html_page.js) and the style (html_page.css) are embedded
 * at build time (cmake/embed.cmake makes them C strings), written by us,
 * with no library: the page fetches nothing and works offline, from a
 * file:// URL or an e-mail attachment.
 *
 * Escaping: a data block ends at the first "</script" whatever the JSON
 * says, and "<!--" inside it changes how the parser looks for that end.
 * In JSON text '<' can only stand inside a string, where "\u003c" means
 * the same, so every '<' is written as "\u003c" and no markup can appear
 * in the block.  The <title> (the command line) is escaped as HTML text.
 *
 * The timeline is the caller's (src/read, which reads traces: this layer
 * cannot): sp_render_html() takes a function that writes it as one JSON
 * value, or NULL; the format is in docs/formats.md ("html").
 *
 * Costs: the JSON is built in a memory stream first (it is escaped on the
 * way out), so the report takes about the JSON's size of memory once
 * more; the script and style add some 25 KB.  The browser builds the
 * flame graphs from the rows, so the file holds no tree twice.
 *
 * Alternatives considered: drawing the SVG here, in C (no script at all,
 * but no sorting, no zoom, and the page would hold each stack once per
 * drawn frame; the data drawn by a script is the profile itself, which
 * 'syncprof report' could read back one day); a page that loads
 * d3-flame-graph or speedscope from a CDN (not self-contained: the issue
 * asks for nothing fetched); base64 of the JSON (safe too, but 4/3 the
 * size and unreadable in the file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/profile.h"
#include "report/render/text.h"

#include "html_assets.h" /* generated: html_page_css[], html_page_js[] */

/* @s as HTML text: & < > " escaped. */
static void html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* A frame's name as the table's Call site cell, as a JSON string. */
static void view_site(FILE *out, const struct sp_frame *f, const char *root, size_t auto_len)
{
	char buf[1024];

	sp_json_string(out, sp_frame_format(f, root, auto_len, buf, sizeof(buf)));
}

/* One name of a stack's JSON array, after a ',' unless it is the first. */
static void view_name(FILE *out, const char *name, int *first)
{
	if (!*first)
		fputc(',', out);
	*first = 0;
	sp_json_string(out, name);
}

/* The functions @f was inlined into, outermost first. */
static void view_inlined(FILE *out, const struct sp_frame *f, int *first)
{
	char buf[1024];

	for (unsigned i = f->n_inline; i-- > 0;)
		view_name(out, sp_inline_label(&f->inlined[i], buf, sizeof(buf)), first);
}

/* A stack's frames as the folded output names them, outermost first: each
 * frame after the functions it was inlined into, and last the functions
 * the site was inlined into (the page puts the site after them). */
static void view_stack(FILE *out, const struct sp_names *nm)
{
	char buf[1024];
	int first = 1;

	fputc('[', out);
	for (unsigned k = nm->n_frames; k-- > 0;) {
		view_inlined(out, &nm->frames[k], &first);
		view_name(out, sp_frame_label(&nm->frames[k], buf, sizeof(buf)), &first);
	}
	view_inlined(out, &nm->site, &first);
	fputc(']', out);
}

static void view_row(FILE *out, const struct sp_row *r, const char *root, size_t auto_len)
{
	const struct sp_row_detail *d = sp_row_d(r);
	static const struct sp_frame unknown;

	fputs("{\"site\":", out);
	view_site(out, &r->names->site, root, auto_len);
	fputs(",\"stack\":", out);
	view_stack(out, r->names);
	fputs(",\"blame\":[", out);
	for (uint32_t i = 0; i < d->n_blame; i++) {
		fputs(i ? ",[" : "[", out);
		view_site(out, d->blame[i].names ? d->blame[i].names : &unknown, root, auto_len);
		fputc(',', out);
		if (sp_blame_has_root(&d->blame[i]))
			view_site(out, d->blame[i].root_names ? d->blame[i].root_names : &unknown,
				  root, auto_len);
		else
			fputs("null", out);
		fputc(']', out);
	}
	/* the long holds' points (frames=N), as the row's hold_where */
	fputs("],\"where\":[", out);
	for (uint32_t i = 0; i < d->n_hold_where; i++) {
		struct sp_frame buf;

		if (i)
			fputc(',', out);
		if (d->hold_where[i].pc && d->hold_where[i].names)
			view_site(out, sp_hold_where_site(&d->hold_where[i], &buf), root, auto_len);
		else
			fputs("null", out);
	}
	fputs("]}", out);
}

static void view_end(FILE *out, const struct sp_order_end *e, const char *root, size_t auto_len)
{
	static const struct sp_names unknown;
	const struct sp_names *nm = e->names ? e->names : &unknown;

	fputs("{\"site\":", out);
	view_site(out, &nm->site, root, auto_len);
	fputs(",\"stack\":", out);
	view_stack(out, nm);
	fputc('}', out);
}

/*
 * "view": {"rows": [{"site", "stack", "blame": [[holder, root|null]],
 * "where": [site|null]}],
 * "cycles": [[[held, acquired], ...]], "merged": bool}, in the order of
 * the profile's rows, blame and cycles; "merged" (merged=1, --merged):
 * the page's table is one list, else the rows of locks come first and
 * the waits for an event follow in their own part, as in the table.
 */
static void write_view(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o)
{
	size_t auto_len = sp_rows_common_prefix(&p->rows);

	fputs("{\"rows\":[", out);
	for (size_t i = 0; i < p->rows.n; i++) {
		fputs(i ? ",\n" : "\n", out);
		view_row(out, &p->rows.v[i], o->src_root, auto_len);
	}
	fputs("],\"cycles\":[", out);
	for (size_t i = 0; p->order.on && i < p->order.n_cycles; i++) {
		const struct sp_cycle *c = &p->order.cycles[i];

		fputs(i ? ",[" : "[", out);
		for (unsigned k = 0; k < c->n_edges; k++) {
			fputs(k ? ",[" : "[", out);
			view_end(out, &c->edges[k].held, o->src_root, auto_len);
			fputc(',', out);
			view_end(out, &c->edges[k].acquired, o->src_root, auto_len);
			fputc(']', out);
		}
		fputc(']', out);
	}
	fprintf(out, "],\"merged\":%s}", o->merged ? "true" : "false");
}

/* @n bytes of JSON text into a <script> element: every '<' as \u003c. */
static void write_escaped(FILE *out, const char *s, size_t n)
{
	for (const char *end = s + n; s < end;) {
		const char *lt = memchr(s, '<', (size_t)(end - s));
		size_t run = lt ? (size_t)(lt - s) : (size_t)(end - s);

		fwrite(s, 1, run, out);
		s += run;
		if (lt) {
			fputs("\\u003c", out);
			s++;
		}
	}
}

int sp_render_html(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o,
		   sp_html_timeline_fn timeline, void *ctx)
{
	char *data = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&data, &len);
	int rc;

	if (!m)
		return -ENOMEM;
	fputs("{\"profile\":", m);
	rc = sp_render_json(m, p, o);
	fputs(",\"view\":", m);
	write_view(m, p, o);
	fputs(",\n\"timeline\":", m);
	if (!rc && timeline)
		rc = timeline(m, ctx);
	else
		fputs("null", m);
	fputs("}\n", m);
	if (fclose(m) || !data) {
		free(data);
		return -ENOMEM;
	}
	if (rc) {
		free(data);
		return rc;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"syncprof\">\n<title>syncprof: ",
	      out);
	html_text(out, p->command && *p->command ? p->command : "profile");
	fprintf(out, " (pid %d)</title>\n<style>\n", p->pid);
	fputs(html_page_css, out);
	fputs("</style>\n</head>\n<body>\n<main id=\"sp-main\">\n<h1>syncprof</h1>\n"
	      "<noscript><p>This page draws the report with JavaScript; the profile is the "
	      "JSON in the page's source, in the element sp-data.</p></noscript>\n"
	      "</main>\n<script type=\"application/json\" id=\"sp-data\">\n",
	      out);
	write_escaped(out, data, len);
	free(data);
	fputs("</script>\n<script>\n", out);
	fputs(html_page_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
	return 0;
}
