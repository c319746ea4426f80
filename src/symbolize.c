/*
 * symbolize.c - code addresses to names, at report time only.
 *
 * Design: the probe records return addresses of interposed calls and never
 * looks at them; a report symbolizes only the rows it prints, after
 * sorting and cutting to the top N.  This first version uses dladdr(),
 * which names exported functions and the containing DSO; debug-info
 * lookups (file:line, inlined frames) go behind the same interface.
 */
#include <dlfcn.h>
#include <string.h>

#include "internal.h"

void sp_symbolize(uintptr_t pc, struct sp_symbol *out)
{
	Dl_info info;

	memset(out, 0, sizeof(*out));
	if (!pc || !dladdr((void *)pc, &info))
		return;
	out->dso = info.dli_fname;
	if (info.dli_sname) {
		out->function = info.dli_sname;
		out->offset = pc - (uintptr_t)info.dli_saddr;
	} else {
		out->offset = pc - (uintptr_t)info.dli_fbase;
	}
}

const char *sp_site_format(const struct sp_row *r, const char *src_root, size_t auto_len,
			   char *buf, size_t size)
{
	struct sp_symbol sym;

	if (r->file) {
		snprintf(buf, size, "%s:%u", sp_path_strip(r->file, src_root, auto_len),
			 (unsigned)r->line);
		return buf;
	}
	sp_symbolize(r->pc, &sym);
	if (sym.function && sym.file)
		snprintf(buf, size, "%s %s:%u", sym.function,
			 sp_path_strip(sym.file, src_root, auto_len), sym.line);
	else if (sym.function)
		snprintf(buf, size, "%s+0x%lx", sym.function, (unsigned long)sym.offset);
	else if (sym.dso)
		snprintf(buf, size, "%s+0x%lx", strrchr(sym.dso, '/') ? strrchr(sym.dso, '/') + 1
								 : sym.dso,
			 (unsigned long)sym.offset);
	else
		snprintf(buf, size, "0x%lx", (unsigned long)r->pc);
	return buf;
}
