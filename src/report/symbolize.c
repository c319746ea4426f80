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
 * Frames inlined from the system's headers (/usr/include, /usr/lib/gcc,
 * /usr/lib/llvm-N, also as clang spells them, /usr/bin/../lib/gcc/...:
 * libstdc++'s std::mutex::lock, std::condition_variable::wait<Pred>) and
 * from instrument.h's wrappers are skipped in favour of the first function of
 * the inline chain outside them, so a C++ site - interposed, or compiled
 * in and given by its address (probe.c's _pc entry points) - names the
 * program's function and line.
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

/*
 * @path with "." and ".." taken out lexically, in @buf; @path itself when
 * it is relative or does not fit.  Clang names libstdc++'s headers
 * "/usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/mutex".
 */
static const char *path_lexical(const char *path, char *buf, size_t size)
{
	const char *p = path;
	size_t n = 0;

	if (path[0] != '/')
		return path;
	while (*p) {
		const char *s;
		size_t len;

		while (*p == '/')
			p++;
		s = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - s);
		if (!len || (len == 1 && s[0] == '.'))
			continue;
		if (len == 2 && s[0] == '.' && s[1] == '.') {
			while (n && buf[n - 1] != '/')
				n--;
			if (n)
				n--;
			continue;
		}
		if (n + 1 + len + 1 > size)
			return path;
		buf[n++] = '/';
		memcpy(buf + n, s, len);
		n += len;
	}
	if (!n)
		buf[n++] = '/';
	buf[n] = '\0';
	return buf;
}

/* A header of the system's: the C library's, the compilers' and their C++
 * libraries' (libstdc++ is under /usr/lib/gcc on some distributions, libc++
 * under /usr/lib/llvm-N on Debian).  instrument.h tests the same
 * directories at compile time. */
static int system_header(const char *file)
{
	static const char *const dirs[] = { "/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm-" };
	char buf[1024];

	if (!file)
		return 0;
	file = path_lexical(file, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		if (!strncmp(file, dirs[i], strlen(dirs[i])))
			return 1;
	return 0;
}

/* Make inl[k], the (k + 1)-th function out, the one named. */
static void name_caller(struct sp_symbol *out, unsigned k)
{
	out->function = out->inl[k].function;
	out->file = out->inl[k].file;
	out->line = out->inl[k].line;
	out->n_inline -= k + 1;
	memmove(out->inl, out->inl + k + 1, out->n_inline * sizeof(out->inl[0]));
}

/*
 * Code inlined from the system's headers (libstdc++'s std::mutex::lock,
 * __gthread_mutex_lock...) is a lock wrapper too: name the first function
 * of the inline chain whose source is not a system header.  Before that,
 * instrument.h's own wrappers (syncprof__*, which a compiled-in C++ site
 * inside those headers inlines, see probe.c) are never the site.
 */
static void skip_inlined_wrappers(struct sp_symbol *out)
{
	unsigned k = 0;

	if (out->function && !strncmp(out->function, "syncprof__", 10) && out->n_inline &&
	    out->inl[0].function)
		name_caller(out, 0);
	if (!system_header(out->file))
		return;
	while (k < out->n_inline && system_header(out->inl[k].file))
		k++;
	if (k == out->n_inline || !out->inl[k].function)
		return; /* all of it is header code: keep the innermost */
	name_caller(out, k);
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

void sp_symbolize_end(void)
{
#ifdef SYNCPROF_HAVE_LIBDW
	if (dwfl)
		dwfl_end(dwfl); /* its files' descriptors, maps and caches */
	dwfl = NULL;
#endif
}

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
