/*
 * symbolize.c - code addresses to names, at report time only.
 *
 * Design: the probe records return addresses of interposed calls and never
 * looks at them; a report symbolizes only the rows it prints, after
 * sorting and cutting to the top N.  With elfutils' libdw (the default
 * when its headers are found at build time) an address becomes function,
 * source file:line and DSO, and when the address lies in inlined code the
 * innermost inlined function is named, with the chain of functions it was
 * inlined into (sp_symbol.inl).  Debug info is found as gdb does
 * (.gnu_debuglink, /usr/lib/debug/.build-id).  Without debug info, or
 * without libdw, dladdr() gives the exported symbol and the DSO.
 *
 * Frames inlined from the system's headers (/usr/include: libstdc++'s
 * std::mutex::lock, std::condition_variable::wait<Pred>) are skipped in
 * favour of the first function of the inline chain outside them, so a C++
 * site names the program's function and line.
 *
 * libdw is referred to weakly (base/libdw.h): libsyncprof.so and the
 * preload library link it; a static program has it when it links -ldw,
 * and otherwise gets the dladdr() names.  Alternatives considered for the
 * compiled-in library: dladdr() alone (no file:line, no inline chain: a
 * C++ site inside libstdc++'s headers would be "dso+0x1234"); dlopen() of
 * libdw.so.1 at report time (a second way to load the same library, and
 * none in a static binary).
 *
 * A return address points after the call; file:line and the inline chain
 * are looked up at pc - 1 so that they name the call itself.
 *
 * The Dwfl session is built at the first lookup and rebuilt after fork()
 * or when an address falls outside every module it knows (a dlopen()
 * since).  Callers hold report_lock, so one session is enough.
 *
 * Alternatives considered: addr2line subprocesses (a fork per report,
 * unavailable in a process that is exiting), libbacktrace (no DSO names;
 * not packaged for Debian as a library).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/libdw.h"
#include "report/profile.h"

#ifdef SYNCPROF_HAVE_LIBDW
static Dwfl *dwfl;
static pid_t session_pid;

/*
 * Debug info: build-id paths first (Debian's -dbgsym packages, libc6-dbg),
 * then libdw's standard search (.gnu_debuglink).  The standard search ends
 * with a debuginfod query when DEBUGINFOD_URLS is set (Debian's
 * libdebuginfod-common sets it for login shells): a report - often run
 * while the program exits - must not wait on the network, so that last
 * step is taken only when SYNCPROF_DEBUGINFOD=1 asks for it.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const char *allow = getenv("SYNCPROF_DEBUGINFOD");
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file, debuglink, crc,
					      debuginfo_file_name);

	if (fd >= 0 || (urls && *urls && !(allow && !strcmp(allow, "1"))))
		return fd;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, debuglink, crc,
					    debuginfo_file_name);
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = find_debuginfo,
};

static Dwfl *session(int refresh)
{
	if (dwfl && !refresh && session_pid == getpid())
		return dwfl;
	if (dwfl)
		dwfl_end(dwfl);
	dwfl = dwfl_begin(&dwfl_callbacks);
	session_pid = getpid();
	if (dwfl && (dwfl_linux_proc_report(dwfl, session_pid) ||
		     dwfl_report_end(dwfl, NULL, NULL))) {
		dwfl_end(dwfl);
		dwfl = NULL;
	}
	return dwfl;
}

/* Function, inline chain, file:line of @addr (already pc - 1). */
static void dwarf_lookup(Dwfl_Module *mod, Dwarf_Addr addr, struct sp_symbol *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	Dwarf_Die *scopes = NULL;
	int n, lineno = 0;

	if (line) {
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && lineno > 0) {
			out->file = file;
			out->line = (unsigned)lineno;
		}
	}
	if (!cu)
		return;
	n = dwarf_getscopes(cu, addr - bias, &scopes);
	/* dwarf_getscopes() follows an inlined instance to its abstract
	 * definition; the concrete chain of callers (as eu-addr2line -i
	 * prints it) comes from dwarf_getscopes_die() on that instance. */
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			Dwarf_Die *chain = NULL;
			int m = dwarf_getscopes_die(&scopes[i], &chain);

			if (m > 0) {
				free(scopes);
				scopes = chain;
				n = m;
			} else {
				free(chain);
			}
			break;
		}
	/* scopes[0] is innermost; walk out through inlined subroutines to the
	 * real function.  The innermost named one is the function reported;
	 * each inlined one records where it was called from in its parent. */
	for (int i = 0, named = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		const char *name;

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		name = dwarf_diename(&scopes[i]);
		if (!name) {
			Dwarf_Attribute a;
			Dwarf_Die origin;

			if (dwarf_attr_integrate(&scopes[i], DW_AT_abstract_origin, &a) &&
			    dwarf_formref_die(&a, &origin))
				name = dwarf_diename(&origin);
		}
		if (!named) {
			if (name)
				out->function = name;
			named = 1;
		} else if (out->n_inline < SP_MAX_INLINE) {
			out->inl[out->n_inline].function = name;
			out->n_inline++;
		}
		if (tag == DW_TAG_inlined_subroutine && out->n_inline < SP_MAX_INLINE) {
			Dwarf_Attribute a;
			Dwarf_Word cl = 0;
			Dwarf_Files *files;
			Dwarf_Word cf = 0;

			/* The call site inside the caller, for the next entry. */
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0)
				out->inl[out->n_inline].line = (unsigned)cl;
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 &&
			    dwarf_getsrcfiles(cu, &files, NULL) == 0)
				out->inl[out->n_inline].file = dwarf_filesrc(files, cf, NULL, NULL);
		}
		if (tag == DW_TAG_subprogram)
			break;
	}
	free(scopes);
}

/* Code inlined from the system's headers (libstdc++'s std::mutex::lock,
 * __gthread_mutex_lock...) is a lock wrapper too: name the first function
 * of the inline chain whose source is not under /usr/include. */
static int system_header(const char *file)
{
	return file && !strncmp(file, "/usr/include/", 13);
}

static void skip_inlined_wrappers(struct sp_symbol *out)
{
	unsigned k = 0;

	if (!system_header(out->file))
		return;
	while (k < out->n_inline && system_header(out->inl[k].file))
		k++;
	if (k == out->n_inline || !out->inl[k].function)
		return; /* all of it is header code: keep the innermost */
	out->function = out->inl[k].function;
	out->file = out->inl[k].file;
	out->line = out->inl[k].line;
	out->n_inline -= k + 1;
	memmove(out->inl, out->inl + k + 1, out->n_inline * sizeof(out->inl[0]));
}

static void dw_symbolize(uintptr_t pc, struct sp_symbol *out)
{
	Dwarf_Addr addr = pc - 1;
	Dwfl *d = sp_libdw_present() ? session(0) : NULL;
	Dwfl_Module *mod = d ? dwfl_addrmodule(d, addr) : NULL;
	const char *name;

	if (d && !mod && (d = session(1)))
		mod = dwfl_addrmodule(d, addr);
	if (!mod)
		return;
	/* The module's path as mapped (dladdr gives argv[0] for the program). */
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	if (name && name[0] == '/')
		out->dso = name;
	name = dwfl_module_addrname(mod, addr);
	if (name) {
		GElf_Sym sym;
		GElf_Off off = 0;

		if (dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL))
			out->offset = (uintptr_t)off + 1;
		out->function = name;
	}
	dwarf_lookup(mod, addr, out);
	skip_inlined_wrappers(out);
}
#endif

void sp_symbolize(uintptr_t pc, struct sp_symbol *out)
{
	Dl_info info;

	memset(out, 0, sizeof(*out));
	if (!pc)
		return;
	if (dladdr((void *)pc, &info)) {
		out->dso = info.dli_fname;
		if (info.dli_sname) {
			out->function = info.dli_sname;
			out->offset = pc - (uintptr_t)info.dli_saddr;
		} else {
			out->offset = pc - (uintptr_t)info.dli_fbase;
		}
	}
#ifdef SYNCPROF_HAVE_LIBDW
	dw_symbolize(pc, out);
#endif
}
