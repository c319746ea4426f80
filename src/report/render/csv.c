/*
 * render/csv.c - one CSV line per report row, for spreadsheets and scripts.
 *
 * Design: RFC 4180 (comma separated, CRLF-free: lines end in "\n", fields
 * quoted when they hold a comma, quote or newline, quotes doubled).  The
 * first line names the columns; times are integer nanoseconds so that no
 * precision is lost and sums are exact; unknown values are empty fields.
 * Columns are fixed (docs/formats.md): a script can rely on them; the table's
 * --columns does not apply.  Columns are only ever added at the end
 * (wait_p90_ns came after hold_max_ns), so their positions stay.
 *
 * Alternatives considered: the table's columns with its units (seconds,
 * microseconds) - rounding makes totals disagree with the JSON profile.
 */
#include <string.h>

#include "report/profile.h"
#include "report/render/text.h"

int sp_render_csv(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o)
{
	const struct sp_rows *rows = &p->rows;
	char buf[1024];

	(void)o;
	fputs("type,object,n_objects,function,file,line,dso,address,acquisitions,contended,"
	      "wait_ns,wait_max_ns,wait_avg_ns,wait_p50_ns,wait_p99_ns,hold_ns,hold_max_ns,"
	      "wait_p90_ns,lock_name,created_at\n",
	      out);
	for (size_t i = 0; i < rows->n; i++) {
		const struct sp_row *r = &rows->v[i];
		const struct sp_frame *f = &r->names->site;

		fprintf(out, "%s,", sp_type_name(r->type));
		if (r->n_objects == 1)
			fprintf(out, "%#lx", (unsigned long)r->obj);
		fprintf(out, ",%llu,", (unsigned long long)r->n_objects);
		sp_csv_field(out, f->function);
		fputc(',', out);
		sp_csv_field(out, f->file);
		fputc(',', out);
		if (f->line)
			fprintf(out, "%u", f->line);
		fputc(',', out);
		sp_csv_field(out, f->dso);
		fputc(',', out);
		if (f->address)
			fprintf(out, "%#lx", (unsigned long)f->address);
		fprintf(out, ",%llu,%llu,%llu,%llu,%llu,%llu,%llu,",
			(unsigned long long)r->acquisitions, (unsigned long long)r->contended,
			(unsigned long long)r->wait_ns, (unsigned long long)r->wait_max_ns,
			(unsigned long long)(r->acquisitions ? r->wait_ns / r->acquisitions
							     : r->wait_ns),
			(unsigned long long)sp_row_percentile(r, 0.50),
			(unsigned long long)sp_row_percentile(r, 0.99));
		if (r->holds || r->hold_ns)
			fprintf(out, "%llu,%llu", (unsigned long long)r->hold_ns,
				(unsigned long long)r->hold_max_ns);
		else
			fputc(',', out);
		fprintf(out, ",%llu,", (unsigned long long)sp_row_percentile(r, 0.90));
		if (r->n_objects == 1 && r->lock_name)
			sp_csv_field(out, r->lock_name);
		fputc(',', out);
		if (r->n_objects == 1 && r->names->created)
			sp_csv_field(out, sp_frame_format(r->names->created, NULL, 0, buf,
							  sizeof(buf)));
		fputc('\n', out);
	}
	return 0;
}
