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
 * Offline, 'syncprof trace export' names the code addresses of a traced
 * process the same way (sp_symbolize_file): the trace's MAPS records give
 * the DSO path and file offset, and the same lookup runs on a Dwfl of that
 * one file, reported at its link-time addresses; so a slice of the trace
 * and a row of the profile name a site alike.  One Dwfl per file (at most
 * 64), kept until sp_symbolize_files_end().
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
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/demangle.h"
#include "base/libdw.h"
#include "report/profile.h"

/*
 * Names as the language writes them.  Symbol tables and DWARF linkage
 * names are mangled; each name is demangled once per session and kept in
 * that session's cache (live, files, offline: each freed by its own
 * sp_symbolize*_end(), as the libdw strings they sit beside), so a
 * returned sp_symbol's strings live as long as before.  A name that does
 * not demangle is cached too (dem NULL).
 */
struct dm_entry {
	char *raw, *dem;
};

struct dm_cache {
	struct dm_entry *e;
	unsigned n, cap;
};

static struct dm_cache dm_live, dm_files, dm_offline;

static const char *dm_lookup(struct dm_cache *c, const char *raw)
{
	struct dm_entry *e;

	for (unsigned i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].raw, raw))
			return c->e[i].dem;
	if (c->n == c->cap) {
		unsigned cap = c->cap ? 2 * c->cap : 64;
		struct dm_entry *ne = realloc(c->e, cap * sizeof(*ne));

		if (!ne)
			return NULL;
		c->e = ne;
		c->cap = cap;
	}
	e = &c->e[c->n];
	e->raw = strdup(raw);
	if (!e->raw)
		return NULL;
	e->dem = sp_demangle(raw);
	c->n++;
	return e->dem;
}

static void dm_free(struct dm_cache *c)
{
	for (unsigned i = 0; i < c->n; i++) {
		free(c->e[i].raw);
		free(c->e[i].dem);
	}
	free(c->e);
	memset(c, 0, sizeof(*c));
}

/* @out's function names demangled; the raw ones kept as symbol. */
static void demangle_symbol(struct dm_cache *c, struct sp_symbol *out)
{
	const char *d;

	if (sp_mangled(out->function) && (d = dm_lookup(c, out->function))) {
		out->symbol = out->function;
		out->function = d;
	}
	for (unsigned i = 0; i < out->n_inline; i++)
		if (sp_mangled(out->inl[i].function) && (d = dm_lookup(c, out->inl[i].function))) {
			out->inl[i].symbol = out->inl[i].function;
			out->inl[i].function = d;
		}
}

#ifdef SYNCPROF_HAVE_LIBDW
static Dwfl *dwfl;
static pid_t session_pid;

/*
 * Whether libdw's path search for the separate debug file of @file could
 * find one: a file named @debuglink (or, with none, "BASENAME.debug")
 * where elfutils looks by default (its debuginfo_path ":.debug:/usr/lib/
 * debug"): next to @file, in its .debug directory, or under /usr/lib/debug
 * at @file's directory, for @file as named and as its symlinks resolve.
 * Only whether such a file exists: libdw's own search still opens it and
 * checks its CRC.
 */
static int debuglink_candidate(const char *file, const char *debuglink)
{
	char *real = file ? realpath(file, NULL) : NULL;
	const char *files[2] = { file, real };
	int found = 0;

	for (int i = 0; i < 2 && !found && files[i]; i++) {
		const char *f = files[i], *slash = strrchr(f, '/');
		const char *base = slash ? slash + 1 : f;
		int dir = slash ? (int)(slash - f) : 1;
		char path[4096];
		int n;

		if (i && !strcmp(f, file))
			break; /* no symlink on the way */
		if (!slash)
			f = "."; /* a relative name: its directory is the current one */
		for (int where = 0; where < 3 && !found; where++) {
			const char *pre = where == 2 ? "/usr/lib/debug" : "";
			const char *mid = where == 1 ? "/.debug" : "";

			if (debuglink)
				n = snprintf(path, sizeof(path), "%s%.*s%s/%s", pre, dir, f, mid,
					     debuglink);
			else
				n = snprintf(path, sizeof(path), "%s%.*s%s/%s.debug", pre, dir, f,
					     mid, base);
			found = n > 0 && (size_t)n < sizeof(path) && !access(path, F_OK);
		}
	}
	free(real);
	return found;
}

/*
 * Debug info: build-id paths first (Debian's -dbgsym packages, libc6-dbg),
 * then libdw's standard search (.gnu_debuglink).  The standard search ends
 * with a debuginfod query when DEBUGINFOD_URLS is set (Debian's
 * libdebuginfod-common sets it for login shells): a report - often run
 * while the program exits - must not wait on the network, so that last
 * step is taken only when SYNCPROF_DEBUGINFOD=1 asks for it.
 *
 * And libdw 0.188 dlopen()s libdebuginfod (with libcurl, GnuTLS and
 * Kerberos: 12 ms here, issue 25) at the end of every standard search that
 * found nothing, even with DEBUGINFOD_URLS unset, where it can fetch
 * nothing.  So without debuginfod asked for, the standard search runs only
 * when a file it looks for exists (debuglink_candidate()); a stripped
 * module with none - every system library without its -dbgsym - costs a
 * few access() calls instead.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const char *allow = getenv("SYNCPROF_DEBUGINFOD");
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file, debuglink, crc,
					      debuginfo_file_name);
	int have_urls = urls && *urls;
	int network = have_urls && allow && !strcmp(allow, "1");

	if (fd >= 0 || (have_urls && !network))
		return fd;
	if (!network && !debuglink_candidate(file, debuglink)) {
		errno = ENOENT;
		return -1;
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file, debuglink, crc,
					    debuginfo_file_name);
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = sp_dw_proc_find_elf,
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

/*
 * The DIE's linkage (mangled) name, through its abstract origin and
 * specification (an inlined instance, an out-of-class member definition):
 * demangled later, it carries namespace, class, template arguments and
 * parameters where DW_AT_name is the short "put" or "operator()".
 */
static const char *linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	if (!dwarf_formstring)
		return NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		return dwarf_formstring(&a);
	return NULL;
}

/*
 * The scopes of @pc inside @die's children, innermost first, as
 * dwarf_getscopes() gives them, for the DWARF it finds nothing in: rustc
 * nests a function's definition inside the DIEs of its modules
 * (DW_TAG_namespace, and structure types for methods), which carry no
 * addresses, and libdw's walk prunes every DIE without the pc, those
 * included.  Here a DIE without any address attribute is a container and
 * is looked into; one with addresses is entered only when it holds @pc.
 * Appends to @out (at most @max), outermost first; returns how many.
 */
#define SCOPE_MAX 64
static int scopes_walk(Dwarf_Die *die, Dwarf_Addr pc, Dwarf_Die *out, int n, int depth)
{
	Dwarf_Die c;

	if (depth > SCOPE_MAX || dwarf_child(die, &c) != 0)
		return n;
	do {
		int has = dwarf_haspc(&c, pc);

		if (has > 0 && n < SCOPE_MAX) {
			out[n] = c;
			return scopes_walk(&c, pc, out, n + 1, depth + 1);
		}
		if (has == 0 && !dwarf_hasattr(&c, DW_AT_low_pc) && !dwarf_hasattr(&c, DW_AT_ranges) &&
		    !dwarf_hasattr(&c, DW_AT_entry_pc)) {
			int m = scopes_walk(&c, pc, out, n, depth + 1);

			if (m > n)
				return m;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return n;
}

/* dwarf_getscopes(), or the walk above where it finds nothing: a malloc'd
 * array in *@scopes, innermost first; its length (<= 0: none). */
static int scopes_of(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes, int *concrete)
{
	Dwarf_Die path[SCOPE_MAX];
	int n = dwarf_getscopes(cu, pc, scopes);

	*concrete = 0;
	/* Rust's compilation units only: C and C++ keep libdw's answer (a
	 * walk there found libstdc++'s inline frames that libdw leaves out). */
	if (n > 0 || !dwarf_child || !dwarf_siblingof || !dwarf_haspc || !dwarf_hasattr ||
	    !dwarf_srclang || dwarf_srclang(cu) != 0x1c /* DW_LANG_Rust */)
		return n;
	free(*scopes);
	*scopes = NULL;
	n = scopes_walk(cu, pc, path, 0, 0);
	if (n <= 0 || !(*scopes = malloc((size_t)n * sizeof(**scopes))))
		return 0;
	for (int i = 0; i < n; i++)
		(*scopes)[i] = path[n - 1 - i];
	*concrete = 1; /* the inlined instances themselves, callers outward */
	return n;
}

/* Function, inline chain, file:line of @addr (already pc - 1). */
static void dwarf_lookup(Dwfl_Module *mod, Dwarf_Addr addr, struct sp_symbol *out)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	Dwfl_Line *line = dwfl_module_getsrc(mod, addr);
	Dwarf_Die *scopes = NULL;
	const char *symtab = out->function; /* the ELF symbol's name, or NULL */
	int n, lineno = 0, concrete;

	if (line) {
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file && lineno > 0) {
			out->file = file;
			out->line = (unsigned)lineno;
		}
	}
	if (!cu)
		return;
	n = scopes_of(cu, addr - bias, &scopes, &concrete);
	/* dwarf_getscopes() follows an inlined instance to its abstract
	 * definition; the concrete chain of callers (as eu-addr2line -i
	 * prints it) comes from dwarf_getscopes_die() on that instance. */
	for (int i = 0; i < n && !concrete; i++)
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
		name = linkage_name(&scopes[i]);
		/* GCC gives a lambda's operator() no linkage name: out of line,
		 * its symbol ("_ZZ4mainENKUlvE_clEv") says which lambda */
		if (!name && tag == DW_TAG_subprogram && symtab && symtab[0] == '_' &&
		    symtab[1] == 'Z')
			name = symtab;
		if (!name)
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
 * under /usr/lib/llvm-N on Debian), Abseil's among them.  instrument.h
 * tests the same directories at compile time.  Also the sources of lock
 * libraries that a Rust program inlines: std (its library/ tree, as
 * Debian's rustc and rustup's record it) and the parking_lot crates. */
static int system_header(const char *file)
{
	static const char *const dirs[] = { "/usr/include/", "/usr/lib/gcc/", "/usr/lib/llvm-" };
	static const char *const parts[] = { "/library/std/src/", "/library/core/src/",
					     "/library/alloc/src/", "/parking_lot-",
					     "/parking_lot_core-", "/lock_api-" };
	char buf[1024];

	if (!file)
		return 0;
	file = path_lexical(file, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		if (!strncmp(file, dirs[i], strlen(dirs[i])))
			return 1;
	for (size_t i = 0; i < sizeof(parts) / sizeof(*parts); i++)
		if (strstr(file, parts[i]))
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

/* instrument.h's syncprof__* wrappers, by their C name or, compiled as
 * C++ (static inline: internal linkage), by their mangled one
 * ("_ZL20syncprof__mutex_lockP15pthread_mutex_t"). */
static int instrument_wrapper(const char *name)
{
	if (!name)
		return 0;
	if (name[0] == '_' && name[1] == 'Z') {
		name += 2;
		if (*name == 'L')
			name++;
		while (*name >= '0' && *name <= '9')
			name++;
	}
	return !strncmp(name, "syncprof__", 10);
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

	if (instrument_wrapper(out->function) && out->n_inline &&
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

/*
 * The C and C++ runtime libraries (libc, the loader, libstdc++, libgcc_s,
 * libm): their frames - start_thread, clone3, execute_native_thread_routine
 * in the callers of contended sites; sites never, they are skipped as lock
 * wrappers (record/stack.c) - are named by their symbol alone.  Their line
 * tables are in separate debug files when installed (libc6-dbg), whose
 * compressed DWARF libdw inflates whole at the first lookup: ~100 ms of
 * every profiled process's report (perf: zlib's inflate the largest part
 * of `SYNCPROF_OPTIONS=output=/dev/null ./small`, 124 ms against 17 ms
 * without the report), for a line in glibc's sources.
 */
static int runtime_library(const char *path)
{
	static const char *const libs[] = { "libc.so", "ld-linux", "libstdc++.so", "libgcc_s.so",
					    "libm.so", "libpthread.so" };
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	for (size_t i = 0; base && i < sizeof(libs) / sizeof(*libs); i++)
		if (!strncmp(base, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}

/* Name @addr (already pc - 1) inside @mod: function, file:line, inlines. */
static void module_symbolize(Dwfl_Module *mod, Dwarf_Addr addr, struct sp_symbol *out)
{
	const char *name;

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
	if (runtime_library(out->dso))
		return;
	dwarf_lookup(mod, addr, out);
	skip_inlined_wrappers(out);
}

static void dw_symbolize(uintptr_t pc, struct sp_symbol *out)
{
	Dwarf_Addr addr = pc - 1;
	Dwfl *d = sp_libdw_present() ? session(0) : NULL;
	Dwfl_Module *mod = d ? dwfl_addrmodule(d, addr) : NULL;

	if (d && !mod && (d = session(1)))
		mod = dwfl_addrmodule(d, addr);
	if (mod)
		module_symbolize(mod, addr, out);
}

/*
 * Offline: a code address of another process, given as a DSO path and a
 * file offset (a trace's MAPS records), named from the file now at that
 * path.  One Dwfl per file, each module reported at its link-time
 * addresses (base 0); the file offset becomes a link-time address
 * through the file's PT_LOAD program headers, read here with bounds
 * checks (the file may be anything: a library rebuilt since the trace).
 */
#define SP_SYM_FILES 64
#define SP_SYM_LOADS 16

struct sym_file {
	char *path;
	Dwfl *dwfl; /* NULL: no libdw session for the file */
	Elf64_Phdr loads[SP_SYM_LOADS];
	unsigned n_loads;
	char id[129];        /* its GNU build ID, hex; "": none */
	struct stat st;      /* the file when it was read: a rebuild changes it */
	int gone;            /* replaced on disk since: kept only for its memory */
};

static struct sym_file sym_files[SP_SYM_FILES] SP_LARGE;
static unsigned n_sym_files;

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = find_debuginfo,
};

/* The GNU build ID in the PT_NOTE segment @ph of the file @fd, as hex
 * into @hex (129 bytes), as mappings.c reads it from memory. */
static void read_build_id(int fd, const Elf64_Phdr *ph, char *hex)
{
	unsigned char buf[1024];
	size_t len = ph->p_filesz < sizeof(buf) ? ph->p_filesz : sizeof(buf);

	if (pread(fd, buf, len, (off_t)ph->p_offset) == (ssize_t)len)
		sp_build_id_hex(buf, len, hex);
}

static void read_loads(struct sym_file *f)
{
	/* O_NONBLOCK: a path in a corrupt trace may name a FIFO */
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	Elf64_Ehdr eh;

	if (fd < 0)
		return;
	if (fstat(fd, &st)) {
		close(fd);
		return;
	}
	f->st = st;
	if (S_ISREG(st.st_mode) &&
	    pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 4096) {
		for (unsigned i = 0; i < eh.e_phnum && f->n_loads < SP_SYM_LOADS; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				break;
			if (ph.p_type == PT_LOAD)
				f->loads[f->n_loads++] = ph;
			else if (ph.p_type == PT_NOTE && !f->id[0])
				read_build_id(fd, &ph, f->id);
		}
	}
	close(fd);
}

/* The same file as when @f was read: same inode, size and mtime (a
 * rebuild replaces or rewrites it). */
static int sym_file_current(const struct sym_file *f, const struct stat *now)
{
	return f->st.st_dev == now->st_dev && f->st.st_ino == now->st_ino &&
	       f->st.st_size == now->st_size && f->st.st_mtim.tv_sec == now->st_mtim.tv_sec &&
	       f->st.st_mtim.tv_nsec == now->st_mtim.tv_nsec;
}

/*
 * The session of the file now at @path, kept until
 * sp_symbolize_files_end(): 'syncprof run' names the profiles of all its
 * processes with the same sessions, so 300 runs of one program read its
 * debug information once.  A file replaced on disk since it was read (a
 * rebuild) gets a new session; the old one stays, unused, until the end
 * (its strings may be in use).
 */
static struct sym_file *sym_file_get(const char *path)
{
	struct sym_file *f;
	struct stat now;
	int have = !stat(path, &now);

	for (unsigned i = 0; i < n_sym_files; i++) {
		f = &sym_files[i];
		if (f->gone || strcmp(f->path, path))
			continue;
		if (!have || sym_file_current(f, &now))
			return f;
		f->gone = 1;
	}
	if (n_sym_files == SP_SYM_FILES)
		return NULL;
	f = &sym_files[n_sym_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	n_sym_files++;
	read_loads(f);
	if (!f->n_loads)
		return f;
	f->dwfl = dwfl_begin(&file_callbacks);
	if (f->dwfl && (!dwfl_report_elf(f->dwfl, path, path, -1, 0, false) ||
			dwfl_report_end(f->dwfl, NULL, NULL))) {
		dwfl_end(f->dwfl);
		f->dwfl = NULL;
	}
	return f;
}

/*
 * The names already found, by (file session, offset): 'syncprof run'
 * names the same addresses in every profile of one program, and each
 * lookup walks the file's symbol table (libdw's dwfl_module_addrname(),
 * gelf_getsymshndx() per symbol): 300 runs of a small program paid about
 * 1 ms each for it.  A session is the file as it was read (a rebuilt
 * file gets a new one, sym_file_get()), so a memo never names another
 * build.  The names point into the sessions and dm_files, which live as
 * long; freed with them by sp_symbolize_files_end().
 */
struct sym_memo {
	const struct sym_file *f; /* NULL: free */
	uint64_t offset;
	int rc;
	struct sp_symbol sym;
};

static struct sym_memo *memo;
static size_t memo_cap, memo_n; /* capacity a power of 2, at most half full */

static size_t memo_hash(const struct sym_file *f, uint64_t offset, size_t cap)
{
	return (size_t)((((uintptr_t)f >> 4) ^ offset) * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
}

/* The memo of (@f, @offset), or the free slot to fill; NULL when the
 * table cannot grow (the name is then looked up every time). */
static struct sym_memo *memo_slot(const struct sym_file *f, uint64_t offset)
{
	size_t i;

	if ((memo_n + 1) * 2 > memo_cap) {
		size_t cap = memo_cap ? memo_cap * 2 : 256;
		struct sym_memo *m = calloc(cap, sizeof(*m));

		if (!m)
			return NULL;
		for (size_t k = 0; k < memo_cap; k++) {
			if (!memo[k].f)
				continue;
			for (i = memo_hash(memo[k].f, memo[k].offset, cap); m[i].f; i = (i + 1) & (cap - 1))
				;
			m[i] = memo[k];
		}
		free(memo);
		memo = m;
		memo_cap = cap;
	}
	for (i = memo_hash(f, offset, memo_cap); memo[i].f; i = (i + 1) & (memo_cap - 1))
		if (memo[i].f == f && memo[i].offset == offset)
			break;
	return &memo[i];
}

static int file_symbolize(struct sym_file *f, uint64_t offset, struct sp_symbol *out)
{
	Dwfl_Module *mod;
	uint64_t vaddr = 0;
	unsigned i;

	for (i = 0; i < f->n_loads; i++)
		if (offset >= f->loads[i].p_offset &&
		    offset - f->loads[i].p_offset < f->loads[i].p_filesz) {
			vaddr = offset - f->loads[i].p_offset + f->loads[i].p_vaddr;
			break;
		}
	if (i == f->n_loads || !vaddr)
		return -ENOENT;
	mod = dwfl_addrmodule(f->dwfl, vaddr - 1);
	if (!mod)
		return -ENOENT;
	module_symbolize(mod, vaddr - 1, out);
	out->dso = f->path;
	demangle_symbol(&dm_files, out);
	return out->function || out->file ? 0 : -ENOENT;
}

int sp_symbolize_file(const char *path, const char *build_id, uint64_t offset,
		      struct sp_symbol *out)
{
	struct sym_file *f;
	struct sym_memo *m;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!sp_libdw_present() || !path || path[0] != '/' || !(f = sym_file_get(path)) ||
	    !f->dwfl)
		return -ENOENT;
	/* The process ran another build of the file than the one there now:
	 * its names would be the new build's, at the old offsets. */
	if (build_id && *build_id && strcmp(build_id, f->id))
		return -ESTALE;
	m = memo_slot(f, offset);
	if (m && m->f) {
		*out = m->sym;
		return m->rc;
	}
	rc = file_symbolize(f, offset, out);
	if (m) {
		m->f = f;
		m->offset = offset;
		m->rc = rc;
		m->sym = *out;
		memo_n++;
	}
	return rc;
}

void sp_symbolize_files_end(void)
{
	free(memo);
	memo = NULL;
	memo_cap = memo_n = 0;
	for (unsigned i = 0; i < n_sym_files; i++) {
		if (sym_files[i].dwfl)
			dwfl_end(sym_files[i].dwfl);
		free(sym_files[i].path);
	}
	n_sym_files = 0;
	dm_free(&dm_files);
}
#else
int sp_symbolize_file(const char *path, const char *build_id, uint64_t offset,
		      struct sp_symbol *out)
{
	memset(out, 0, sizeof(*out));
	return -ENOTSUP;
}

void sp_symbolize_files_end(void)
{
}
#endif

void sp_symbolize_end(void)
{
#ifdef SYNCPROF_HAVE_LIBDW
	if (dwfl)
		dwfl_end(dwfl); /* its files' descriptors, maps and caches */
	dwfl = NULL;
#endif
	dm_free(&dm_live);
}

/*
 * Test point: SYNCPROF_TEST_NO_SYMBOLIZE=1 makes naming an address of this
 * process abort it, so that a test can tell that a process never did
 * (tests/preload/run_offline.sh: under 'syncprof run' the program must not).
 * Read once; the report path only.
 */
static int test_no_symbolize(void)
{
	static int v = -1;

	if (v < 0) {
		const char *e = getenv("SYNCPROF_TEST_NO_SYMBOLIZE");

		v = e && !strcmp(e, "1");
	}
	return v;
}

void sp_symbolize(uintptr_t pc, struct sp_symbol *out)
{
	Dl_info info;

	if (test_no_symbolize())
		abort();
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
	demangle_symbol(&dm_live, out);
}

/*
 * Offline: a code address of another process, named from the file it was
 * mapped from (a trace's PCSITE and MAPS records).  The file is reported
 * to a Dwfl session of its own at the address where the process had it
 * (@base: where its file offset 0 was mapped), so that @pc is looked up as
 * the live symbolizer looks it up, with the same inline and wrapper rules;
 * sessions are kept, one per (file, base), until sp_symbolize_offline_end().
 * Without libdw, or when the file is gone, @out names only the DSO.
 */
#ifdef SYNCPROF_HAVE_LIBDW
#define OFFLINE_MAX 64
static struct offline_file {
	char *path;
	uintptr_t base;
	Dwfl *dwfl;
	Dwfl_Module *mod;
} offline[OFFLINE_MAX] SP_LARGE;
static unsigned n_offline;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = sp_dw_proc_find_elf, /* unused: dwfl_report_elf opens the file */
	.find_debuginfo = find_debuginfo,
};

static Dwfl_Module *offline_module(const char *path, uintptr_t base)
{
	struct offline_file *f;

	for (unsigned i = 0; i < n_offline; i++)
		if (offline[i].base == base && !strcmp(offline[i].path, path))
			return offline[i].mod;
	if (n_offline == OFFLINE_MAX || !sp_libdw_present() || !dwfl_report_elf)
		return NULL;
	f = &offline[n_offline];
	f->path = strdup(path);
	f->base = base;
	f->dwfl = f->path ? dwfl_begin(&offline_callbacks) : NULL;
	if (f->dwfl) {
		f->mod = dwfl_report_elf(f->dwfl, path, path, -1, base, false);
		dwfl_report_end(f->dwfl, NULL, NULL);
	}
	n_offline++; /* kept when it failed too: a missing file is tried once */
	return f->mod;
}
#endif

void sp_symbolize_offline(const char *path, uintptr_t base, uintptr_t pc, struct sp_symbol *out)
{
	memset(out, 0, sizeof(*out));
	out->dso = path;
	out->offset = pc - base;
#ifdef SYNCPROF_HAVE_LIBDW
	{
		Dwfl_Module *mod = offline_module(path, base);

		if (!mod)
			return;
		module_symbolize(mod, pc - 1, out);
		out->dso = path; /* the path the trace names, not the module's */
		demangle_symbol(&dm_offline, out);
	}
#endif
}

void sp_symbolize_offline_end(void)
{
#ifdef SYNCPROF_HAVE_LIBDW
	for (unsigned i = 0; i < n_offline; i++) {
		if (offline[i].dwfl)
			dwfl_end(offline[i].dwfl);
		free(offline[i].path);
	}
	memset(offline, 0, sizeof(offline));
	n_offline = 0;
#endif
	dm_free(&dm_offline);
}
