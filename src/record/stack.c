/*
 * stack.c - call stacks of interposed lock calls: the frames kept for
 * contended waits (frames=N), and skipping lock wrappers (skip=REGEX and
 * the C/C++ runtime libraries) so that a site names the real caller.
 *
 * Design.  The site of an interposed call is its return address.  When
 * that address lies inside a lock wrapper - a function of libc, libpthread
 * or libstdc++ (std::condition_variable::wait calls pthread_cond_wait), or
 * one whose name matches a skip regex (yarn.c's possess(),
 * qemu_mutex_lock_impl) - the site becomes the first caller outside the
 * wrappers.  Deciding "inside a wrapper" must be cheap and must not
 * symbolize on the lock path, so the wrappers are turned into code address
 * ranges once at start-up (sp_stack_init(): dl_iterate_phdr for the
 * libraries' executable segments, libdw's symbol tables for the regexes)
 * and every call tests its return address with a binary search over that
 * sorted array (sp_pc_skipped() in internal.h, no shared write).  Only
 * calls whose return address is in a wrapper pay for an unwind
 * (sp_site_pc__slowpath(): glibc backtrace(), i.e. libgcc's unwinder,
 * which finds unwind tables through _dl_find_object without locks or
 * malloc once warmed up here).
 *
 * The unwinder may itself take pthread locks (libgcc's object mutex), so
 * the thread is marked busy around it (sp_thread_enter()): those calls
 * pass through unrecorded.
 *
 * Limits: wrappers in libraries dlopen()ed after start-up are not known;
 * skip regexes match symbol-table names as stored (C++ names mangled), and
 * need a symbol table (not stripped, or installed debug info).
 *
 * Alternatives considered: keying entries by the raw return address and
 * re-keying rows by their first non-wrapper frame at report time merges
 * every caller of a wrapper into the first one whose stack was kept;
 * symbolizing each new return address at record time would call dladdr
 * (the loader lock) and malloc (regcomp/regexec) inside the host's lock
 * calls, which deadlocks malloc replacements that take locks themselves.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SYNCPROF_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#include <gelf.h>
#endif

#include "record/record.h"

struct sp_range sp_skip_ranges[SP_MAX_RANGES];
unsigned sp_skip_n;
SP_TLS uintptr_t sp_site_ok[SP_SITE_CACHE];
static unsigned n_ranges; /* filled at start-up, published as sp_skip_n */
static int stack_ready;

#define MAX_UNWIND 64

static void range_add(uintptr_t lo, uintptr_t hi)
{
	if (lo < hi && n_ranges < SP_MAX_RANGES) {
		sp_skip_ranges[n_ranges].lo = lo;
		sp_skip_ranges[n_ranges].hi = hi;
		n_ranges++;
	}
}

static int range_cmp(const void *a, const void *b)
{
	const struct sp_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void ranges_finish(void)
{
	unsigned n = 0;

	qsort(sp_skip_ranges, n_ranges, sizeof(*sp_skip_ranges), range_cmp);
	for (unsigned i = 0; i < n_ranges; i++) {
		if (n && sp_skip_ranges[i].lo <= sp_skip_ranges[n - 1].hi) {
			if (sp_skip_ranges[i].hi > sp_skip_ranges[n - 1].hi)
				sp_skip_ranges[n - 1].hi = sp_skip_ranges[i].hi;
			continue;
		}
		sp_skip_ranges[n++] = sp_skip_ranges[i];
	}
	n_ranges = n;
}

/* The runtime libraries whose lock wrappers are skipped by default. */
static int default_wrapper_lib(const char *path)
{
	static const char *const libs[] = { "libc.so", "libpthread.so", "libstdc++.so" };
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(libs) / sizeof(*libs); i++)
		if (!strncmp(base, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}

static int add_lib_ranges(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	if (!info->dlpi_name || !default_wrapper_lib(info->dlpi_name))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			range_add(info->dlpi_addr + ph->p_vaddr,
				  info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
	}
	return 0;
}

#ifdef SYNCPROF_HAVE_LIBDW
struct regex_ctx {
	regex_t *re;
	unsigned n_re;
};

static int add_module_matches(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base,
			      void *arg)
{
	struct regex_ctx *c = arg;
	int n = dwfl_module_getsymtab(mod);

	(void)ud, (void)name, (void)base;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!s || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		for (unsigned k = 0; k < c->n_re; k++)
			if (!regexec(&c->re[k], s, 0, NULL, 0)) {
				range_add((uintptr_t)addr, (uintptr_t)(addr + sym.st_size));
				break;
			}
	}
	return DWARF_CB_OK;
}

static void add_regex_ranges(const char *const *skip, unsigned n_skip)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_build_id_find_debuginfo, /* no network at start-up */
	};
	regex_t re[SP_STACK_MAX_SKIP];
	struct regex_ctx c = { re, 0 };
	Dwfl *dwfl;

	for (unsigned i = 0; i < n_skip && i < SP_STACK_MAX_SKIP; i++) {
		if (regcomp(&re[c.n_re], skip[i], REG_EXTENDED | REG_NOSUB)) {
			fprintf(stderr, "syncprof: warning: skip='%s' is not a valid regular "
					"expression; ignored\n", skip[i]);
			continue;
		}
		c.n_re++;
	}
	if (!c.n_re)
		return;
	dwfl = dwfl_begin(&cb);
	if (dwfl && !dwfl_linux_proc_report(dwfl, getpid()) &&
	    !dwfl_report_end(dwfl, NULL, NULL))
		dwfl_getmodules(dwfl, add_module_matches, &c, 0);
	if (dwfl)
		dwfl_end(dwfl);
	for (unsigned i = 0; i < c.n_re; i++)
		regfree(&re[i]);
}
#else
static void add_regex_ranges(const char *const *skip, unsigned n_skip)
{
	(void)skip;
	if (n_skip)
		fputs("syncprof: warning: skip=REGEX needs libdw (built without it); ignored\n",
		      stderr);
}
#endif

unsigned sp_stack_frames;

/*
 * libgcc's _Unwind_FindEnclosingFunction(), found at start-up in the
 * libgcc_s that backtrace() loaded (no link-time dependency on it): the
 * start of the function that contains a code address, from the unwind
 * tables, without symbols.  NULL when it is not there (static programs).
 */
static void *(*enclosing_function)(void *pc);

static void enclosing_init(void)
{
	void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);

	if (!h)
		return;
	enclosing_function = (void *(*)(void *))dlsym(h, "_Unwind_FindEnclosingFunction");
	dlclose(h); /* NOLOAD took a reference; backtrace() keeps its own */
}

void sp_stack_init(const char *const *skip, unsigned n_skip, unsigned frames)
{
	struct sp_thread *saved = sp_thread_enter();
	void *warm[4];

	if (sp_load_acquire(&stack_ready)) {
		sp_thread_leave(saved);
		return;
	}
	backtrace(warm, 4); /* loads libgcc_s now, not inside a lock call */
	enclosing_init();
	dl_iterate_phdr(add_lib_ranges, NULL);
	sp_stack_frames = frames < SP_MAX_FRAMES ? frames : SP_MAX_FRAMES;
	add_regex_ranges(skip, n_skip);
	ranges_finish();
	sp_store_release(&sp_skip_n, n_ranges);
	sp_store_release(&stack_ready, 1);
	sp_thread_leave(saved);
}

/* Return addresses of the current stack, outermost last. */
static int unwind(uintptr_t *frames, int max)
{
	struct sp_thread *saved;
	int n;

	if (!sp_load_acquire(&stack_ready))
		return 0;
	saved = sp_thread_enter();
	n = backtrace((void **)frames, max);
	sp_thread_leave(saved);
	return n;
}

static int frame_index(const uintptr_t *frames, int n, uintptr_t pc)
{
	for (int i = 0; i < n; i++)
		if (frames[i] == pc)
			return i;
	return -1;
}

SP_NOINLINE uintptr_t sp_site_pc__slowpath(uintptr_t ret)
{
	uintptr_t frames[MAX_UNWIND];
	int n = unwind(frames, MAX_UNWIND);
	int i = frame_index(frames, n, ret);

	if (i < 0)
		return ret;
	while (++i < n)
		if (!sp_pc_skipped(frames[i]))
			return frames[i];
	return ret;
}

unsigned sp_stack_capture(uintptr_t site_pc, uintptr_t *out, unsigned max)
{
	uintptr_t frames[MAX_UNWIND];
	int n = unwind(frames, MAX_UNWIND);
	int i = frame_index(frames, n, site_pc);
	unsigned k = 0;

	if (i < 0)
		return 0;
	while (++i < n && k < max)
		out[k++] = frames[i];
	return k;
}

/*
 * Lock-order edges (lockorder.c).  The held lock's call was made by a
 * function that, in the common case, is still running: a caller of the
 * current call, or the current call's own function.  Its frame is found
 * by comparing enclosing functions (unwind tables, no symbols, no malloc;
 * the thread is busy during the unwind); its callers are then exactly the
 * held acquisition's stack.  When that function has returned meanwhile,
 * the held side gets no stack.
 */
void sp_stack_capture_edge(uintptr_t site_pc, uintptr_t held_pc, unsigned max, uintptr_t *out,
			   unsigned *n, uintptr_t *held_out, unsigned *n_held)
{
	uintptr_t frames[MAX_UNWIND];
	int nf = unwind(frames, MAX_UNWIND);
	int i = frame_index(frames, nf, site_pc);
	struct sp_thread *saved;
	void *fn;

	*n = *n_held = 0;
	if (i < 0)
		return;
	for (int k = i + 1; k < nf && *n < max; k++)
		out[(*n)++] = frames[k];
	if (!held_pc || !enclosing_function)
		return;
	saved = sp_thread_enter(); /* the unwinder's lookups may lock */
	fn = enclosing_function((void *)held_pc);
	for (int k = i; fn && k < nf; k++) {
		if (enclosing_function((void *)frames[k]) != fn)
			continue;
		while (++k < nf && *n_held < max)
			held_out[(*n_held)++] = frames[k];
		break;
	}
	sp_thread_leave(saved);
}
