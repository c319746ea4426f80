/*
 * names.c - the names of a row's site and stack, for every renderer.
 *
 * A row's site is named in one of three ways: by __FILE__/__LINE__/__func__
 * (instrumented code), by a return address symbolized at render time
 * (interposed code, symbolize.c), or by names already resolved when the row
 * was read back from a saved profile (row->names, filled by
 * 'syncprof report').  Renderers ask here and need not know which.
 *
 * Alternatives considered: turning a saved profile's names into fake pcs
 * and teaching sp_symbolize() a lookup table (touches the symbolizer that
 * is being rewritten for libdw, and loses the DSO); storing resolved names
 * in every live row (costs a symbolization per row before the top-N cut,
 * which the design forbids).  One nullable pointer per row is the least.
 *
 * Thread-safety: report path only (callers hold report_lock, or are the
 * single-threaded CLI); strings in an sp_frame filled by symbolizing are
 * valid until the next call.
 */
#include <string.h>

#include "internal.h"

static void frame_from_symbol(uintptr_t pc, struct sp_frame *out)
{
	struct sp_symbol sym;

	sp_symbolize(pc, &sym);
	out->function = sym.function;
	out->file = sym.file;
	out->dso = sym.dso;
	out->line = sym.line;
	out->address = pc;
	out->offset = sym.offset;
}

void sp_row_site(const struct sp_row *r, struct sp_frame *out)
{
	memset(out, 0, sizeof(*out));
	if (r->names) {
		*out = r->names->site;
		return;
	}
	if (r->file || !r->pc) {
		out->function = r->func;
		out->file = r->file;
		out->line = r->line;
		return;
	}
	frame_from_symbol(r->pc, out);
}

void sp_row_frame(const struct sp_row *r, unsigned i, struct sp_frame *out)
{
	memset(out, 0, sizeof(*out));
	if (r->names) {
		if (i < r->names->n_frames)
			*out = r->names->frames[i];
		return;
	}
	if (i < r->n_frames)
		frame_from_symbol(sp_row_d(r)->frames[i], out);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const char *sp_row_site_format(const struct sp_row *r, const char *src_root, size_t auto_len,
			       char *buf, size_t size)
{
	const struct sp_frame *f;

	if (!r->names)
		return sp_site_format(r, src_root, auto_len, buf, size);
	f = &r->names->site;
	if (f->file && !f->address)
		snprintf(buf, size, "%s:%u", sp_path_strip(f->file, src_root, auto_len), f->line);
	else if (f->function && f->file)
		snprintf(buf, size, "%s %s:%u", f->function,
			 sp_path_strip(f->file, src_root, auto_len), f->line);
	else if (f->function)
		snprintf(buf, size, "%s", f->function);
	else if (f->file)
		snprintf(buf, size, "%s:%u", sp_path_strip(f->file, src_root, auto_len), f->line);
	else if (f->dso)
		snprintf(buf, size, "%s@0x%lx", base_name(f->dso), (unsigned long)f->address);
	else
		snprintf(buf, size, "0x%lx", (unsigned long)f->address);
	return buf;
}

const char *sp_frame_label(const struct sp_frame *f, char *buf, size_t size)
{
	if (f->function)
		snprintf(buf, size, "%s", f->function);
	else if (f->file)
		snprintf(buf, size, "%s:%u", base_name(f->file), f->line);
	else if (f->dso)
		snprintf(buf, size, "%s+0x%lx", base_name(f->dso), (unsigned long)f->offset);
	else
		snprintf(buf, size, "0x%lx", (unsigned long)f->address);
	return buf;
}
