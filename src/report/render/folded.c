/*
 * render/folded.c - collapsed stacks ("folded") weighted by wait time, the
 * input of flamegraph.pl, speedscope and inferno.
 *
 * Design: one line per row with a non-zero wait: the frames from outermost
 * to innermost separated by ';', then a space and the row's wait in
 * nanoseconds.  The leaf is the lock type in brackets ("[mutex]", and the
 * lock's name after it once locks have names), so a flame graph's top
 * shows what kind of lock each tower waited for, as pprof's leaf does;
 * below it the call site; the recorded stack (row->frames, innermost
 * first) precedes the site outermost first.  A frame that libdw found
 * inlined is preceded by the functions it was inlined into, outermost
 * first, each a frame of its own named as a frame is (pprof's Lines of one
 * Location, json's "inlined"): at -O2, bank's transfer() is inlined into
 * teller(), and "teller;transfer (bank.c:78)" keeps the teller frame that
 * a -O0 build shows as a real one.  A frame is named by its
 * function, else "file:line", else "dso+0xoffset", else its address; a
 * site whose function and file are both known (instrumented, or an
 * interposed address with debug info) is "function (file:line)", so that
 * two sites in one function (transfer:78 and transfer:79) stay two frames.
 * ';' cannot appear in a name (replaced by ':'), nor a newline (by ' ').
 * So the weights of all lines sum to the report's total wait exactly.
 * Weights carry no unit in this format: speedscope shows them as plain
 * numbers; the pprof output (delay/nanoseconds) is the one to open there
 * for times (docs/formats.md).
 *
 * Costs: one pass over the rows, no allocation.
 *
 * Alternatives considered: weighting by contended count (the pprof output
 * carries both); one line per object (flame graphs then split one site's
 * bar by lock address, which hides the hot site).
 */
#include <string.h>

#include "report/profile.h"

static void folded_name(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

/* The functions @f was inlined into, outermost first, each followed by ';'. */
static void folded_inlined(FILE *out, const struct sp_frame *f)
{
	char buf[1024];

	for (unsigned i = f->n_inline; i-- > 0;) {
		folded_name(out, sp_inline_label(&f->inlined[i], buf, sizeof(buf)));
		fputc(';', out);
	}
}

int sp_render_folded(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o)
{
	const struct sp_rows *rows = &p->rows;
	size_t auto_len = sp_rows_common_prefix(rows);
	char buf[1024];

	for (size_t i = 0; i < rows->n; i++) {
		const struct sp_row *r = &rows->v[i];
		unsigned n = r->names->n_frames;
		const struct sp_frame *f;

		if (!r->wait_ns)
			continue;
		for (unsigned k = n; k-- > 0;) {
			folded_inlined(out, &r->names->frames[k]);
			folded_name(out, sp_frame_label(&r->names->frames[k], buf, sizeof(buf)));
			fputc(';', out);
		}
		f = &r->names->site;
		folded_inlined(out, f);
		if (f->file && f->function) {
			snprintf(buf, sizeof(buf), "%s (%s:%u)", f->function,
				 sp_path_strip(f->file, o->src_root, auto_len), f->line);
			folded_name(out, buf);
		} else if (f->file && !f->address) {
			snprintf(buf, sizeof(buf), "%s:%u",
				 sp_path_strip(f->file, o->src_root, auto_len), f->line);
			folded_name(out, buf);
		} else {
			folded_name(out, sp_frame_label(f, buf, sizeof(buf)));
		}
		/* The leaf: the lock's type, and its name when it has one. */
		fprintf(out, ";[%s", sp_type_name(r->type));
		if (r->n_objects == 1 && r->lock_name) {
			fputc(' ', out);
			folded_name(out, r->lock_name);
		}
		fprintf(out, "] %llu\n", (unsigned long long)r->wait_ns);
	}
	return 0;
}
