/*
 * names.c - naming a profile: sites, stacks and blame holders resolved to
 * frames (function, file:line, DSO, offset, inlined callers), and the one
 * way each renderer formats a frame.
 *
 * A live row's site is named in one of two ways: by __FILE__/__LINE__/
 * __func__ (instrumented code), or by a return address symbolized here
 * (interposed code, symbolize.c).  sp_profile_resolve() does that once per
 * printed row, after the top-N cut, and keeps the result in the profile's
 * arena (strings interned), so renderers read names and nothing else.  A
 * profile read back from JSON arrives with its names already resolved, in
 * the same structures: that is what makes a saved profile render to the
 * same bytes as the live one.
 *
 * Alternatives considered: symbolizing inside each renderer (what the
 * first versions did: every renderer then had a live and a loaded path,
 * and a loaded profile printed sites differently); naming every row before
 * the top-N cut (a symbolization per row of a million-row profile).
 *
 * Lock-order cycles (order.c) are named the same way, every end of every
 * edge: there are few, and none is cut.
 *
 * Thread-safety: sp_profile_resolve() and sp_site_name() symbolize, which
 * is not thread-safe: callers serialise reports (report_lock).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "report/profile.h"

/* @out from what is known of @pc, strings interned into @p. */
static int frame_from_symbol(struct sp_profile *p, uintptr_t pc, const struct sp_symbol *sym,
			     struct sp_frame *out)
{
	memset(out, 0, sizeof(*out));
	out->function = sp_profile_intern(p, sym->function);
	out->symbol = sp_profile_intern(p, sym->symbol);
	out->file = sp_profile_intern(p, sym->file);
	out->dso = sp_profile_intern(p, sym->dso);
	out->line = sym->line;
	out->address = pc;
	out->offset = sym->offset;
	if (sym->n_inline) {
		struct sp_inline *inl = sp_profile_alloc(p, sym->n_inline * sizeof(*inl));

		if (!inl)
			return -ENOMEM;
		for (unsigned i = 0; i < sym->n_inline; i++) {
			inl[i].function = sp_profile_intern(p, sym->inl[i].function);
			inl[i].symbol = sp_profile_intern(p, sym->inl[i].symbol);
			inl[i].file = sp_profile_intern(p, sym->inl[i].file);
			inl[i].line = sym->inl[i].line;
		}
		out->inlined = inl;
		out->n_inline = sym->n_inline;
	}
	return sp_profile_error(p);
}

/* @pc named in this process (sp_symbolize), or with its address alone
 * when @p->unnamed (names come later, from the files: sp_profile_name_files). */
static int frame_from_pc(struct sp_profile *p, uintptr_t pc, struct sp_frame *out)
{
	struct sp_symbol sym;

	if (p->unnamed) {
		memset(out, 0, sizeof(*out));
		out->address = pc;
		return 0;
	}
	sp_symbolize(pc, &sym);
	return frame_from_symbol(p, pc, &sym, out);
}

/* The frame of a site: instrumented sites are named by their key. */
static int frame_of_site(struct sp_profile *p, const struct sp_site *s, struct sp_frame *out)
{
	if (s->file || !s->pc) {
		memset(out, 0, sizeof(*out));
		out->function = sp_profile_intern(p, s->func);
		out->file = sp_profile_intern(p, s->file);
		out->line = s->line;
		return sp_profile_error(p);
	}
	return frame_from_pc(p, s->pc, out);
}

static int resolve_row(struct sp_profile *p, struct sp_row *r)
{
	struct sp_site site = { r->file, r->func, r->pc, r->line };
	struct sp_names *nm;
	struct sp_frame *frames = NULL;
	int rc;

	nm = sp_profile_alloc(p, sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	rc = frame_of_site(p, &site, &nm->site);
	if (!rc && r->n_frames) {
		frames = sp_profile_alloc(p, r->n_frames * sizeof(*frames));
		if (!frames)
			return -ENOMEM;
		for (unsigned i = 0; i < r->n_frames && !rc; i++)
			rc = frame_from_pc(p, sp_row_d(r)->frames[i], &frames[i]);
		nm->frames = frames;
		nm->n_frames = r->n_frames;
	}
	for (uint32_t i = 0; !rc && r->detail && i < r->detail->n_blame; i++) {
		struct sp_blame *b = &r->detail->blame[i];
		struct sp_frame *f;

		if (!b->root_names && sp_blame_has_root(b)) {
			f = sp_profile_alloc(p, sizeof(*f));
			if (!f)
				return -ENOMEM;
			rc = frame_of_site(p, &b->root, f);
			b->root_names = f;
		}
		if (b->names || rc)
			continue;
		f = sp_profile_alloc(p, sizeof(*f));
		if (!f)
			return -ENOMEM;
		rc = frame_of_site(p, &b->holder, f);
		b->names = f;
	}
	for (uint32_t i = 0; !rc && r->detail && i < r->detail->n_hold_where; i++) {
		struct sp_hold_where *w = &r->detail->hold_where[i];
		struct sp_frame *f;

		if (w->names || !w->pc)
			continue;
		f = sp_profile_alloc(p, sizeof(*f));
		if (!f)
			return -ENOMEM;
		rc = frame_from_pc(p, w->pc, f);
		w->names = f;
	}
	if (!rc && r->created_how != SP_CREATED_UNKNOWN) {
		struct sp_frame *f = sp_profile_alloc(p, sizeof(*f));

		if (!f)
			return -ENOMEM;
		rc = frame_of_site(p, &r->created, f);
		nm->created = f;
		nm->created_how = r->created_how;
	}
	r->names = nm;
	return rc;
}

/* One end of a lock-order edge: its site and stack, as a row's. */
static int resolve_end(struct sp_profile *p, struct sp_order_end *e)
{
	struct sp_names *nm;
	struct sp_frame *frames;
	int rc;

	if (e->names)
		return 0; /* read back from a saved profile */
	nm = sp_profile_alloc(p, sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	rc = frame_of_site(p, &e->site, &nm->site);
	if (!rc && e->n_frames) {
		frames = sp_profile_alloc(p, e->n_frames * sizeof(*frames));
		if (!frames)
			return -ENOMEM;
		for (unsigned i = 0; i < e->n_frames && !rc; i++)
			rc = frame_from_pc(p, e->frames[i], &frames[i]);
		nm->frames = frames;
		nm->n_frames = e->n_frames;
	}
	e->names = nm;
	return rc;
}

int sp_profile_resolve(struct sp_profile *p)
{
	for (size_t i = 0; i < p->rows.n; i++) {
		int rc;

		if (p->rows.v[i].names)
			continue; /* read back from a saved profile */
		rc = resolve_row(p, &p->rows.v[i]);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < p->order.n_cycles; i++) {
		struct sp_cycle *c = &p->order.cycles[i];

		for (unsigned k = 0; k < c->n_edges; k++) {
			int rc = resolve_end(p, &c->edges[k].held);

			if (rc || (rc = resolve_end(p, &c->edges[k].acquired)))
				return rc;
		}
	}
	return sp_profile_mappings(p); /* of the addresses just named */
}

int sp_profile_resolve_unnamed(struct sp_profile *p)
{
	int rc;

	p->unnamed = 1;
	rc = sp_profile_resolve(p);
	p->unnamed = 0;
	return rc;
}

/*
 * Offline naming ('syncprof run', run_report.c): a frame that has its
 * address and nothing else is named from the file of the mapping that
 * holds it, as the profiled process would have named it: the file as
 * /proc/PID/maps shows it (symbolic links resolved: the name the live
 * symbolizer's libdw session gives a module) at the file offset of the
 * address, through sp_symbolize_file(), which runs the same lookup
 * (function, file:line, inline chain, system-header wrappers skipped).
 * An address the file cannot name keeps the DSO and its offset from
 * where the file was mapped, as dladdr() gives them live.
 */
static int frame_name_file(struct sp_profile *p, const struct sp_frame *cf)
{
	struct sp_frame *f = (struct sp_frame *)cf; /* in @p's arena */
	const struct sp_mapping *m;
	struct sp_symbol sym;
	char real[PATH_MAX];
	const char *path;
	uintptr_t base;

	if (!f || !f->address || f->function || f->file || f->dso)
		return 0;
	m = sp_mapping_find(p, f->address);
	if (!m || !m->file)
		return 0;
	path = realpath(m->file, real) ? real : m->file;
	base = m->start - m->offset;
	if (sp_symbolize_file(path, m->build_id, f->address - base, &sym)) {
		memset(&sym, 0, sizeof(sym));
		sym.dso = path;
		sym.offset = f->address - base;
	}
	return frame_from_symbol(p, f->address, &sym, f);
}

static int names_name_files(struct sp_profile *p, const struct sp_names *nm)
{
	int rc;

	if (!nm)
		return 0;
	rc = frame_name_file(p, &nm->site);
	for (unsigned i = 0; !rc && i < nm->n_frames; i++)
		rc = frame_name_file(p, &nm->frames[i]);
	if (!rc)
		rc = frame_name_file(p, nm->created);
	return rc;
}

int sp_profile_name_files(struct sp_profile *p)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < p->rows.n; i++) {
		const struct sp_row *r = &p->rows.v[i];
		const struct sp_row_detail *d = sp_row_d(r);

		rc = names_name_files(p, r->names);
		for (uint32_t k = 0; !rc && k < d->n_blame; k++) {
			rc = frame_name_file(p, d->blame[k].names);
			if (!rc)
				rc = frame_name_file(p, d->blame[k].root_names);
		}
		for (uint32_t k = 0; !rc && k < d->n_hold_where; k++)
			rc = frame_name_file(p, d->hold_where[k].names);
	}
	for (size_t i = 0; !rc && i < p->order.n_cycles; i++)
		for (unsigned k = 0; !rc && k < p->order.cycles[i].n_edges; k++) {
			const struct sp_order_edge *e = &p->order.cycles[i].edges[k];

			rc = names_name_files(p, e->held.names);
			if (!rc)
				rc = names_name_files(p, e->acquired.names);
		}
	if (!rc)
		sp_profile_mappings_trim(p);
	return rc;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const char *sp_frame_format(const struct sp_frame *f, const char *src_root, size_t auto_len,
			    char *buf, size_t size)
{
	if (f->file && !f->address) /* instrumented */
		snprintf(buf, size, "%s:%u", sp_path_strip(f->file, src_root, auto_len), f->line);
	else if (f->function && f->file)
		snprintf(buf, size, "%s %s:%u", f->function,
			 sp_path_strip(f->file, src_root, auto_len), f->line);
	else if (f->function && f->offset)
		snprintf(buf, size, "%s+0x%lx", f->function, (unsigned long)f->offset);
	else if (f->function)
		snprintf(buf, size, "%s", f->function);
	else if (f->dso)
		snprintf(buf, size, "%s+0x%lx", base_name(f->dso), (unsigned long)f->offset);
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

const char *sp_inline_label(const struct sp_inline *in, char *buf, size_t size)
{
	if (in->function)
		snprintf(buf, size, "%s", in->function);
	else if (in->file)
		snprintf(buf, size, "%s:%u", base_name(in->file), in->line);
	else
		snprintf(buf, size, "??");
	return buf;
}

const char *sp_site_name(const struct sp_site *s, const char *src_root, char *buf, size_t size)
{
	struct sp_symbol sym;
	struct sp_frame f;

	memset(&f, 0, sizeof(f));
	if (s->file || !s->pc) {
		f.function = s->func;
		f.file = s->file;
		f.line = s->line;
	} else {
		sp_symbolize(s->pc, &sym);
		f.function = sym.function;
		f.file = sym.file;
		f.dso = sym.dso;
		f.line = sym.line;
		f.offset = sym.offset;
		f.address = s->pc;
	}
	return sp_frame_format(&f, src_root, 0, buf, size);
}
