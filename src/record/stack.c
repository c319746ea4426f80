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
 * sorted array (sp_pc_skipped() in record.h, no shared write).
 *
 * Finding a wrapper's caller.  At start-up the CFI of every --skip range
 * (regex or DSO+0xLO-0xHI; libdw: .eh_frame, else .debug_frame) becomes
 * rows "over [lo, hi), CFA = rsp + N" (or rbp + N; and where the caller's
 * rbp is saved).  A shim passes down its return address, its own CFA -
 * which is the wrapper's rsp at the call - and rbp as it found it; the
 * slow path (sp_site_pc__slowpath()) finds the row of the return address
 * by binary search, computes the wrapper's CFA and reads the caller's
 * return address at CFA - 8, again while that is inside a wrapper (at most
 * MAX_WRAP_DEPTH times).  No unwind, no lock, no malloc: the rows are a
 * fixed static array, read-only after start-up.  A return address without
 * a row (the default libraries, code without CFI, an expression rule) or
 * --skip-frames (any function may be the Nth) pays for an unwind until
 * its addresses' rules are learned (cfi.c, "--skip-frames N"):
 * sp_backtrace() (unwind.c, libgcc's unwinder linked in), which finds
 * unwind tables through _dl_find_object without locks or malloc once
 * warmed up here.
 *
 * Measured (bench/skipbench, -O2 -fomit-frame-pointer, a wrapper called in
 * a loop, shared 2-core VM, noisy): with the unwind, skip=^bench_lock$
 * cost 6.5-20 us per lock+unlock; with the rows, 48-65 ns more than glibc
 * against 17-24 ns without skip, i.e. 25-45 ns per skipped call.  A
 * return address inside a wrapper is cached per thread with its row
 * (wrap_cache[]), and the callers found outside the wrappers in
 * sp_site_ok[], so a repeated skipped call does no binary search: callgrind
 * counts 209 instructions more per wrapped lock+unlock than without skip
 * (246 without the caches).  Most of what is left is the entry's index lookup in
 * preload.c: its entry caches are keyed by the return address, which is
 * not a skipped call's site.

 * The unwinder may itself take pthread locks (libgcc's object mutex), so
 * the thread is marked busy around it (sp_thread_enter()): those calls
 * pass through unrecorded.
 *
 * Limits: wrappers in libraries dlopen()ed after start-up are not known;
 * skip regexes match symbol-table names (.symtab, or .dynsym when the
 * binary is stripped: libdw falls back to it) as stored, demangled
 * (base/demangle.h: "util::Locker::acquire()", Rust's "app::lock_it"), and
 * for C++ demangled without the parameter list ("util::Locker::acquire"),
 * so a pattern anchored with '$' matches too.  Demangling every function
 * symbol costs ~1.8 us each at start-up, and only when a regex is given.
 *
 * Alternatives considered: keying entries by the raw return address and
 * re-keying rows by their first non-wrapper frame at report time merges
 * every caller of a wrapper into the first one whose stack was kept;
 * symbolizing each new return address at record time would call dladdr
 * (the loader lock) and malloc (regcomp/regexec) inside the host's lock
 * calls, which deadlocks malloc replacements that take locks themselves;
 * filling rows lazily (first sight of a return address) would need libdw
 * or libgcc's FDE parser on the lock path (malloc), or an interpreter of
 * CFA programs of our own: the wrappers are few and small, their rows are
 * cheap to compute all at start-up (qemu's 8 wrappers: ~40 rows).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/demangle.h"
#include "base/libdw.h"
#include "record/record.h"
#include "record/cfi.h"
#include "record/ranges.h"
#include "record/unwind.h"

SP_TLS uintptr_t sp_site_ok[SP_SITE_CACHE];
unsigned sp_skip_frames;

#define MAX_UNWIND 64
#define MAX_WRAP_DEPTH 8 /* nested wrappers walked through their CFI */


#define MAX_CFI_ROWS 8192
#define NOT_PROGRAM_MAX 8

/*
 * Written at start-up (sp_stack_init(), and the point's set-up), read-only
 * once published: the skip regexes that matched no function
 * (sp_stack_unmatched()); the wrapper ranges filled, published as
 * sp_skip_n; the ranges of --skip patterns (not the default libraries),
 * whose CFI rows are computed at start-up; the CFI rows (sorted,
 * disjoint; cfi_n published last) and how many were sorted before
 * libstdc++'s copies' were added;
 * the code that is never the point of a sampled stack.
 */
static struct {
	/* first: what every start-up writes, on the struct's first page */
	unsigned n_unmatched;
	unsigned n_ranges;
	int stack_ready;
	unsigned n_user;
	unsigned cfi_n;
	unsigned n_sorted_rows;
	unsigned n_not_program;
	struct sp_range not_program[NOT_PROGRAM_MAX];
	const char *unmatched[SP_STACK_MAX_SKIP];
	struct sp_range user_ranges[SP_MAX_RANGES];
	struct sp_cfi_row cfi_rows[MAX_CFI_ROWS];
} setup SP_LARGE;

static int cfi_row_cmp(const void *a, const void *b)
{
	const struct sp_cfi_row *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void range_add(uintptr_t lo, uintptr_t hi)
{
	if (lo < hi && setup.n_ranges < SP_MAX_RANGES) {
		sp_skip_ranges[setup.n_ranges].lo = lo;
		sp_skip_ranges[setup.n_ranges].hi = hi;
		setup.n_ranges++;
	}
}

/* A --skip pattern's range: skipped, and its CFI rows wanted. */
static void user_range_add(uintptr_t lo, uintptr_t hi)
{
	range_add(lo, hi);
	if (lo < hi && setup.n_user < SP_MAX_RANGES) {
		setup.user_ranges[setup.n_user].lo = lo;
		setup.user_ranges[setup.n_user].hi = hi;
		setup.n_user++;
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

	qsort(sp_skip_ranges, setup.n_ranges, sizeof(*sp_skip_ranges), range_cmp);
	for (unsigned i = 0; i < setup.n_ranges; i++) {
		if (n && sp_skip_ranges[i].lo <= sp_skip_ranges[n - 1].hi) {
			if (sp_skip_ranges[i].hi > sp_skip_ranges[n - 1].hi)
				sp_skip_ranges[n - 1].hi = sp_skip_ranges[i].hi;
			continue;
		}
		sp_skip_ranges[n++] = sp_skip_ranges[i];
	}
	setup.n_ranges = n;
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

/*
 * DSO+0xLO-0xHI: a range of code in a loaded object named by its file name
 * (the program: its own name), at offsets from the object's first mapped
 * byte, as dladdr()'s dli_fbase and so the report's "prog+0xOFFSET".
 */
struct dso_range {
	char name[256];
	uintptr_t lo, hi;
	int found;
};

static int parse_dso_range(const char *s, struct dso_range *r)
{
	const char *plus = strrchr(s, '+');
	char *end;
	size_t n;

	if (!plus || plus == s || strncmp(plus + 1, "0x", 2))
		return -EINVAL;
	n = (size_t)(plus - s);
	if (n >= sizeof(r->name))
		return -EINVAL;
	errno = 0;
	r->lo = strtoull(plus + 1, &end, 16);
	if (errno || strncmp(end, "-0x", 3))
		return -EINVAL;
	r->hi = strtoull(end + 1, &end, 16);
	if (errno || *end || r->hi <= r->lo)
		return -EINVAL;
	memcpy(r->name, s, n);
	r->name[n] = 0;
	r->found = 0;
	return 0;
}

static const char *path_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static int add_dso_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct dso_range *r = arg;
	const char *name = info->dlpi_name;
	uintptr_t first = UINTPTR_MAX, page = (uintptr_t)sysconf(_SC_PAGESIZE);

	(void)size;
	if (!name || !*name) /* the program */
		name = program_invocation_name;
	if (strcmp(name, r->name) && strcmp(path_base(name), path_base(r->name)))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < first)
			first = info->dlpi_phdr[i].p_vaddr;
	if (first == UINTPTR_MAX)
		return 0;
	first = info->dlpi_addr + (first & ~(page - 1));
	user_range_add(first + r->lo, first + r->hi);
	r->found = 1;
	return 1;
}

/* Split the skip patterns: ranges are added now, regexes returned. */
static unsigned add_dso_ranges(const char *const *skip, unsigned n_skip, const char **regexes)
{
	unsigned n_re = 0;

	for (unsigned i = 0; i < n_skip && i < SP_STACK_MAX_SKIP; i++) {
		struct dso_range r;

		if (parse_dso_range(skip[i], &r)) {
			regexes[n_re++] = skip[i];
			continue;
		}
		dl_iterate_phdr(add_dso_range, &r);
		if (!r.found)
			fprintf(stderr, "syncprof: warning: skip='%s': no object named %s is "
					"loaded; ignored\n", skip[i], r.name);
	}
	return n_re;
}

#ifdef SYNCPROF_HAVE_LIBDW
struct regex_ctx {
	regex_t *re;
	unsigned n_re;
	const char *pattern[SP_STACK_MAX_SKIP];
	unsigned matched[SP_STACK_MAX_SKIP]; /* functions each pattern matched */
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

		char *dem, *bare;

		if (!s || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		/* the name as stored, as the language writes it, and that
		 * without its parameters (so '^std::mutex::lock$' matches) */
		dem = sp_demangle(s);
		bare = dem ? sp_demangle_no_params(s) : NULL;
		for (unsigned k = 0, added = 0; k < c->n_re; k++)
			if (!regexec(&c->re[k], s, 0, NULL, 0) ||
			    (dem && !regexec(&c->re[k], dem, 0, NULL, 0)) ||
			    (bare && !regexec(&c->re[k], bare, 0, NULL, 0))) {
				if (!added++)
					user_range_add((uintptr_t)addr,
						       (uintptr_t)(addr + sym.st_size));
				c->matched[k]++;
			}
		free(bare);
		free(dem);
	}
	return DWARF_CB_OK;
}

static void add_regex_ranges(Dwfl *dwfl, const char *const *skip, unsigned n_skip)
{
	regex_t re[SP_STACK_MAX_SKIP];
	struct regex_ctx c = { .re = re };

	if (n_skip && !sp_libdw_present()) {
		fputs("syncprof: warning: skip=REGEX needs libdw (link with -ldw); ignored\n",
		      stderr);
		return;
	}
	for (unsigned i = 0; i < n_skip && i < SP_STACK_MAX_SKIP; i++) {
		if (regcomp(&re[c.n_re], skip[i], REG_EXTENDED | REG_NOSUB)) {
			fprintf(stderr, "syncprof: warning: skip='%s' is not a valid regular "
					"expression; ignored\n", skip[i]);
			continue;
		}
		c.pattern[c.n_re++] = skip[i];
	}
	if (c.n_re && dwfl)
		dwfl_getmodules(dwfl, add_module_matches, &c, 0);
	for (unsigned i = 0; i < c.n_re; i++) {
		if (dwfl && !c.matched[i])
			setup.unmatched[setup.n_unmatched++] = c.pattern[i];
		regfree(&re[i]);
	}
}

/* The CFI rows of one --skip range; addresses without a usable row get
 * none (their calls unwind). */
static void add_cfi_rows(Dwfl *dwfl, uintptr_t lo, uintptr_t hi)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, lo);
	Dwarf_Addr eh_bias = 0, dw_bias = 0;
	Dwarf_CFI *eh = mod ? dwfl_module_eh_cfi(mod, &eh_bias) : NULL;
	Dwarf_CFI *dw = NULL;

	if (!mod)
		return;
	for (uintptr_t pc = lo; pc < hi && setup.cfi_n < MAX_CFI_ROWS;) {
		struct sp_cfi_row row;

		if (sp_cfi_row_at(eh, eh_bias, pc, hi, &row)) {
			if (!dw)
				dw = dwfl_module_dwarf_cfi(mod, &dw_bias);
			if (sp_cfi_row_at(dw, dw_bias, pc, hi, &row)) {
				pc = row.hi;
				continue;
			}
		}
		setup.cfi_rows[setup.cfi_n++] = row;
		pc = row.hi;
	}
}

static void add_skip_patterns(const char *const *skip, unsigned n_skip)
{
	const char *regexes[SP_STACK_MAX_SKIP];
	unsigned n_re = add_dso_ranges(skip, n_skip, regexes);
	Dwfl *dwfl;

	if (!n_re && !setup.n_user)
		return;
	if (!sp_libdw_present()) { /* a static link without -ldw */
		if (n_re)
			fputs("syncprof: warning: skip=REGEX needs libdw (link with -ldw); "
			      "ignored\n", stderr);
		return; /* ranges stay, found by unwinding */
	}
	dwfl = sp_cfi_session_open();
	if (!dwfl)
		return;
	add_regex_ranges(dwfl, regexes, n_re);
	for (unsigned i = 0; i < setup.n_user; i++)
		add_cfi_rows(dwfl, setup.user_ranges[i].lo, setup.user_ranges[i].hi);
	qsort(setup.cfi_rows, setup.cfi_n, sizeof(*setup.cfi_rows), cfi_row_cmp);
	dwfl_end(dwfl);
}
#else
static void add_skip_patterns(const char *const *skip, unsigned n_skip)
{
	const char *regexes[SP_STACK_MAX_SKIP];

	if (add_dso_ranges(skip, n_skip, regexes))
		fputs("syncprof: warning: skip=REGEX needs libdw (built without it); ignored\n",
		      stderr);
}
#endif

unsigned sp_stack_frames;

/* Code that is never the point of a sampled stack (sp_stack_point), on
 * top of the wrappers (setup.not_program): syncprof's own library
 * (preloaded, or libsyncprof.so), the dynamic loader and the vDSO
 * (clock_gettime). */
static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)&find_self;
	const char *base;
	int runtime;

	(void)size, (void)arg;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0; /* the program: compiled in, its code is the program's */
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	runtime = !strncmp(base, "ld-linux", 8) || !strncmp(base, "linux-vdso", 10) ||
		  !strncmp(base, "linux-gate", 10) || !strncmp(base, "libgcc_s", 8);
	for (int i = 0; i < info->dlpi_phnum && setup.n_not_program < NOT_PROGRAM_MAX; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    (runtime || (me >= lo && me < hi))) {
			setup.not_program[setup.n_not_program].lo = lo;
			setup.not_program[setup.n_not_program++].hi = hi;
		}
	}
	return 0;
}

/*
 * A copy of libstdc++'s header code (cxx_headers.c) is a wrapper range;
 * one that keeps a frame pointer - every function at -O0, which begins
 * "push %rbp; mov %rsp,%rbp" (after an endbr64) - also gets the CFI row
 * that this prologue implies past it (CFA = rbp + 16, the caller's rbp at
 * CFA - 16), read from its first bytes here instead of from libdw, so
 * that a call returning into it steps up from the rbp the shim passes
 * instead of unwinding: at -O0 every std::mutex lock returns into such
 * copies (__gthread_mutex_lock, std::mutex::lock, std::lock_guard), and
 * the unwind made a preloaded lock+unlock cost ~2.5 us (callgrind: 18,900
 * instructions against 218).  A row is only added where no --skip row
 * covers the copy already.
 */

static int row_overlaps(uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < setup.n_sorted_rows; i++)
		if (setup.cfi_rows[i].lo < hi && lo < setup.cfi_rows[i].hi)
			return 1;
	return 0;
}

static void cxx_copy_add(uintptr_t lo, uintptr_t hi)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const unsigned char frame[4] = { 0x55, 0x48, 0x89, 0xe5 };
	const unsigned char *code = (const unsigned char *)lo;
	uintptr_t body;

	range_add(lo, hi);
	if (hi - lo < 16 || setup.cfi_n >= MAX_CFI_ROWS)
		return;
	if (!memcmp(code, endbr64, 4))
		code += 4;
	if (memcmp(code, frame, 4))
		return;
	body = (uintptr_t)code + 4;
	if (row_overlaps(lo, hi))
		return;
	setup.cfi_rows[setup.cfi_n++] = (struct sp_cfi_row){ .lo = body, .hi = hi, .cfa_off = 16,
					      .rbp_off = -16, .cfa_rbp = 1, .rbp_saved = 1 };
}

void sp_stack_init(const char *const *skip, unsigned n_skip, unsigned frames,
		   unsigned skip_frames)
{
	struct sp_thread *saved = sp_thread_enter();
	uintptr_t warm[4];

	if (sp_load_acquire(&setup.stack_ready)) {
		sp_thread_leave(saved);
		return;
	}
	sp_backtrace(warm, 4); /* the unwinder's pthread_once, not inside a lock call */
	dl_iterate_phdr(add_lib_ranges, NULL);
	dl_iterate_phdr(find_self, NULL);
	sp_stack_frames = frames < SP_MAX_FRAMES ? frames : SP_MAX_FRAMES;
	sp_skip_frames = skip_frames;
	add_skip_patterns(skip, n_skip);
	/* libstdc++'s templates in the program (cxx_headers.c), last: where
	 * SP_MAX_RANGES runs out, the ranges asked for come first */
	setup.n_sorted_rows = setup.cfi_n;
	sp_cxx_header_ranges(cxx_copy_add);
	if (setup.cfi_n > setup.n_sorted_rows)
		qsort(setup.cfi_rows, setup.cfi_n, sizeof(*setup.cfi_rows), cfi_row_cmp);
	ranges_finish();
	sp_store_release(&sp_skip_n, setup.n_ranges);
	sp_store_release(&setup.stack_ready, 1);
	if (skip_frames)
		sp_cfi_learner_start();
	sp_thread_leave(saved);
}

void sp_stack_learn(void)
{
	struct sp_thread *saved = sp_thread_enter();

	sp_cfi_learner_start();
	sp_thread_leave(saved);
}

void sp_stack_fork_child(void)
{
	sp_cfi_fork_child();
}

/*
 * A skip regex that matched no function adds no range, so it costs the
 * lock path nothing; but the user meant it to move sites, and it moved
 * none: the report at exit says so (lifecycle.c).
 */
unsigned sp_stack_unmatched(const char *const **patterns)
{
	*patterns = setup.unmatched;
	return setup.n_unmatched;
}

unsigned long sp_stack_walks_learned;
/* Captures unwound since start-up: rules are asked for from the
 * LEARN_AFTER-th on, so that a process that keeps a few stacks never has
 * the learner load libdw (2 ms of CPU) for them. */
static unsigned long walks_unwound;
#define LEARN_AFTER 64

/*
 * The walk through learned rows (cfi.c): from this function's own frame -
 * gcc gives a function that takes __builtin_frame_address(0) a frame
 * pointer, so its caller's return address, stack pointer and rbp are at
 * hand - one sp_cfi_step() a frame, where libgcc's unwinder finds each
 * frame's FDE and runs its CFA program.  It stores what
 * sp_backtrace_while() would: frames[0] is the return address into its
 * caller, and the outermost frame (its return address undefined) is the
 * last.  -1 at the first return address whose row is not learned, asked
 * for then (or known unusable: an expression rule, a signal frame): the
 * caller unwinds instead, so a stack walks this way once the learner has
 * seen each of its return addresses (asked for after LEARN_AFTER unwound
 * captures).
 */
static SP_NOINLINE int walk_learned(uintptr_t *frames, int max,
				    int (*more)(const uintptr_t *frames, int n, void *arg),
				    void *arg)
{
	const uintptr_t *fp0 = __builtin_frame_address(0);
	uintptr_t pc = fp0[1], cfa = (uintptr_t)(fp0 + 2), fp = fp0[0];
	int n = 0;

	for (;;) {
		const struct sp_cfi_row *r;
		int known;

		if (pc < 4096)
			return n; /* libgcc ends at a null return address too */
		frames[n++] = pc;
		if (n == max || !more(frames, n, arg))
			return n;
		known = sp_cfi_learned(pc, &r);
		if (known == 0 && sp_load_relaxed(&walks_unwound) >= LEARN_AFTER)
			sp_cfi_learn(pc);
		if (known != 1)
			return -1;
		if (r->end)
			return n;
		if (sp_cfi_step(r, &pc, &cfa, &fp))
			return -1;
	}
}

/* Return addresses of the current stack, outermost last; with @more, only
 * as far as it goes on (sp_backtrace_while()), through learned rows when
 * a learner runs (lock order with frames=N, --skip-frames). */
static int unwind_while(uintptr_t *frames, int max,
			int (*more)(const uintptr_t *frames, int n, void *arg), void *arg)
{
	struct sp_thread *saved;
	int n = -1;

	if (!sp_load_acquire(&setup.stack_ready))
		return 0;
	saved = sp_thread_enter();
	if (more && (sp_cfi_learner_on() || sp_cfi_learner_restart()))
		n = walk_learned(frames, max, more, arg);
	if (n >= 0) {
		sp_add_relaxed(&sp_stack_walks_learned, 1);
	} else if (more) {
		sp_add_relaxed(&walks_unwound, 1);
		more(frames, 0, arg); /* forget the learned walk's part */
		n = sp_backtrace_while(frames, max, more, arg);
	} else {
		sp_add_relaxed(&walks_unwound, 1);
		n = sp_backtrace(frames, max);
	}
	sp_thread_leave(saved);
	return n;
}

static int unwind(uintptr_t *frames, int max)
{
	return unwind_while(frames, max, NULL, NULL);
}

static int frame_index(const uintptr_t *frames, int n, uintptr_t pc)
{
	for (int i = 0; i < n; i++)
		if (frames[i] == pc)
			return i;
	return -1;
}

/* The site by unwinding: @skip callers above @ret, then past wrappers. */
static uintptr_t site_by_unwind(uintptr_t ret, unsigned skip)
{
	uintptr_t frames[MAX_UNWIND];
	int n = unwind(frames, MAX_UNWIND);
	int i = frame_index(frames, n, ret);

	if (i < 0)
		return ret;
	if ((int)skip >= n - i)
		return frames[n - 1];
	/* With --skip-frames: learn the rules of the frames stepped through. */
	for (int k = i; skip && k < i + (int)skip; k++)
		sp_cfi_learn(frames[k]);
	i += (int)skip;
	if (!sp_pc_skipped(frames[i]) && !sp_pc_in_locklib(frames[i]))
		return frames[i];
	while (++i < n) {
		if (skip)
			sp_cfi_learn(frames[i - 1]);
		if (!sp_pc_skipped(frames[i]) && !sp_pc_in_locklib(frames[i]))
			return frames[i];
	}
	return ret;
}

static const struct sp_cfi_row *cfi_find(uintptr_t pc)
{
	unsigned lo = 0, hi = setup.cfi_n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (pc < setup.cfi_rows[mid].lo)
			hi = mid;
		else if (pc >= setup.cfi_rows[mid].hi)
			lo = mid + 1;
		else
			return &setup.cfi_rows[mid];
	}
	return NULL;
}

/*
 * Per thread, direct-mapped: return addresses inside a wrapper and the CFI
 * row that covers them, so that a skipped call repeated from the same
 * place pays no binary search over the rows nor over the ranges
 * (bench/skipbench, ns per wrapped lock+unlock pair: --skip adds 7-12,
 * --skip-frames 1 adds 5-7).  Rows and ranges never change after
 * start-up, so an entry never goes stale; a miss only costs the searches
 * it saves.
 */
#define WRAP_CACHE 16
static SP_TLS struct wrap_slot {
	uintptr_t ret;
	const struct sp_cfi_row *row;
} wrap_cache[WRAP_CACHE];

static struct wrap_slot *wrap_slot(uintptr_t ret)
{
	return &wrap_cache[(ret >> 2) & (WRAP_CACHE - 1)];
}

/* Whether @pc is known, or found, to lie outside every wrapper; found
 * ones are remembered in sp_site_ok[] as sp_site_pc() would. */
static int outside_wrappers(uintptr_t pc)
{
	uintptr_t *slot = &sp_site_ok[(pc >> 2) & (SP_SITE_CACHE - 1)];
	/* Read before the lock libraries' state: an entry made from a state
	 * the scan then changes carries the generation the scan ends. */
	uintptr_t gen = sp_load_acquire(&sp_site_gen);

	if (*slot == (pc ^ gen))
		return 1;
	if (sp_pc_skipped(pc) || sp_pc_in_locklib(pc))
		return 0;
	*slot = pc ^ gen;
	return 1;
}

/* The row of a return address @pc inside a wrapper, cached; NULL: none. */
static const struct sp_cfi_row *row_of(uintptr_t pc)
{
	struct wrap_slot *w = wrap_slot(pc);
	const struct sp_cfi_row *r;

	if (w->ret == pc)
		return w->row;
	r = cfi_find(pc - 1); /* the call, not what follows */
	if (!r && sp_skip_frames && sp_cfi_learned(pc, &r) != 1)
		r = NULL;
	if (r) {
		w->ret = pc;
		w->row = r;
	}
	return r;
}

SP_NOINLINE uintptr_t sp_site_pc__slowpath(uintptr_t ret, uintptr_t cfa, uintptr_t fp)
{
	uintptr_t pc = ret;
	unsigned skip = sp_skip_frames;

	if (!skip && wrap_slot(ret)->ret != ret && outside_wrappers(ret))
		return ret; /* not in a wrapper (sp_site_pc() missed its cache) */
	/* Up @skip frames (--skip-frames: their rules learned), then on while
	 * inside a wrapper; an address without a rule unwinds instead (and
	 * with --skip-frames has the rules of its frames learned). */
	for (unsigned k = 0; k < skip + MAX_WRAP_DEPTH; k++) {
		const struct sp_cfi_row *r = row_of(pc);

		if (!r || sp_cfi_step(r, &pc, &cfa, &fp))
			break;
		if (k + 1 >= skip && outside_wrappers(pc))
			return pc;
	}
	return site_by_unwind(ret, skip);
}

uintptr_t sp_site_pc_unwound(uintptr_t ret)
{
	unsigned skip = sp_load_relaxed(&sp_skip_frames);

	if (!sp_load_relaxed(&sp_skip_n))
		return ret;
	if (!skip && outside_wrappers(ret))
		return ret;
	return site_by_unwind(ret, skip);
}

void sp_entry_keep_stack(struct sp_thread *t, struct sp_entry *e)
{
	struct sp_entry_cold *c = e->cold;
	uintptr_t f[SP_MAX_FRAMES], *kept;
	unsigned n;

	if (!e->pc || !sp_stack_frames || sp_load_relaxed(&c->n_frames))
		return;
	n = sp_stack_capture(e->pc, f, sp_stack_frames);
	kept = n ? sp_table_alloc(&t->table, n * sizeof(*f)) : NULL;
	if (kept) {
		memcpy(kept, f, n * sizeof(*f));
		sp_entry_cold_w(e);
		c->frames = kept;
		sp_store_release(&c->n_frames, (uint8_t)n);
	}
}

/*
 * How far a stack capture walks (sp_backtrace_while()): to the frame of
 * the call's site, then @max callers above it; and, for a lock-order
 * edge's held end, on to the frame of the function that made the held
 * call (@held_fn), and @max callers above that one, instead of the whole
 * stack (docs/cost.md, "Lock-order edges in a server").
 */
struct capture {
	uintptr_t site_pc, held_fn;
	int max;
	int site_at, held_at; /* their frames' indexes; -1 until found */
};

static int capture_more(const uintptr_t *frames, int n, void *arg)
{
	struct capture *c = arg;
	int k = n - 1;

	if (!n) { /* a walk begins again (unwind_while()) */
		c->site_at = c->held_at = -1;
		return 1;
	}
	if (c->site_at < 0) {
		if (frames[k] != c->site_pc)
			return 1;
		c->site_at = k;
	}
	/* The held call's function: the site's own, or one of its callers (a
	 * return address into it lies above its start: no lookup below). */
	if (c->held_fn && c->held_at < 0 && frames[k] > c->held_fn &&
	    sp_enclosing_function(frames[k]) == c->held_fn)
		c->held_at = k;
	if (n < c->site_at + 1 + c->max)
		return 1;
	return c->held_fn && (c->held_at < 0 || n < c->held_at + 1 + c->max);
}

/* The frames above index @at of @frames (@n of them), at most @max. */
static unsigned frames_above(const uintptr_t *frames, int n, int at, uintptr_t *out,
			     unsigned max)
{
	unsigned k = 0;

	if (at < 0)
		return 0;
	while (++at < n && k < max)
		out[k++] = frames[at];
	return k;
}

unsigned sp_stack_capture(uintptr_t site_pc, uintptr_t *out, unsigned max)
{
	uintptr_t frames[MAX_UNWIND];
	struct capture c = { .site_pc = site_pc, .max = (int)max, .site_at = -1, .held_at = -1 };
	int n = unwind_while(frames, MAX_UNWIND, capture_more, &c);

	return frames_above(frames, n, c.site_at, out, max);
}

/*
 * Lock-order edges (lockorder.c).  The held lock's call was made by a
 * function that, in the common case, is still running: a caller of the
 * current call, or the current call's own function.  Its frame is found
 * by comparing enclosing functions (unwind tables, no symbols, no malloc;
 * the thread is busy during the unwind); its callers are then exactly the
 * held acquisition's stack.  When that function has returned meanwhile,
 * the held side gets no stack.  The walk stops once both stacks are
 * complete (capture_more()); a held side whose function returned walks to
 * the end.
 */
void sp_stack_capture_edge(uintptr_t site_pc, uintptr_t held_pc, unsigned max, uintptr_t *out,
			   unsigned *n, uintptr_t *held_out, unsigned *n_held)
{
	uintptr_t frames[MAX_UNWIND];
	struct capture c = { .site_pc = site_pc, .max = (int)max, .site_at = -1, .held_at = -1 };
	int nf;

	if (held_pc) {
		struct sp_thread *saved = sp_thread_enter(); /* the lookup may lock */

		c.held_fn = sp_enclosing_function(held_pc);
		sp_thread_leave(saved);
	}
	nf = unwind_while(frames, MAX_UNWIND, capture_more, &c);
	*n = frames_above(frames, nf, c.site_at, out, max);
	*n_held = frames_above(frames, nf, c.held_at, held_out, max); /* set after site_at */
}

/* ---- where other threads are: the hold sampler's stacks ------------------- */

static int program_pc(uintptr_t pc)
{
	if (pc < 4096 || sp_pc_skipped(pc) || sp_pc_in_locklib(pc))
		return 0;
	for (unsigned i = 0; i < setup.n_not_program; i++)
		if (pc >= setup.not_program[i].lo && pc < setup.not_program[i].hi)
			return 0;
	return 1;
}

uintptr_t sp_stack_point(const uintptr_t *frames, unsigned n, int *exact)
{
	*exact = 1;
	for (unsigned i = 0; i < n; i++)
		if (program_pc(frames[i])) {
			*exact = i == 0;
			return frames[i];
		}
	return n ? frames[0] : 0;
}

uintptr_t sp_stack_point_here(uintptr_t ip, int *exact)
{
	uintptr_t frames[MAX_UNWIND];
	int n = unwind(frames, MAX_UNWIND);
	int i = frame_index(frames, n, ip);

	/* libgcc gives the interrupted frame its exact ip (a signal frame) */
	if (i < 0) {
		*exact = 1;
		return ip;
	}
	return sp_stack_point(frames + i, (unsigned)(n - i), exact);
}

uintptr_t sp_stack_function_of(uintptr_t pc, int exact)
{
	uintptr_t f = pc ? sp_enclosing_function(exact ? pc : pc - 1) : 0;

	return f ? f : pc;
}

#ifdef SYNCPROF_HAVE_LIBDW
static int read_word(uintptr_t addr, uintptr_t *out)
{
	struct iovec local = { out, sizeof(*out) }, remote = { (void *)addr, sizeof(*out) };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof(*out) ? 0 : -1;
}

unsigned sp_stack_remote(uintptr_t pc, uintptr_t sp, uintptr_t *out, unsigned max, int to_program)
{
	static Dwfl *dwfl; /* the ticker's own session */
	static int no_libdw;
	uintptr_t cfa = sp, fp = 0;
	int fp_known = 0;
	unsigned n = 0;

	if (!max || !pc || no_libdw)
		return 0;
	if (!dwfl && !sp_libdw_load()) {
		no_libdw = 1;
		return 0;
	}
	out[n++] = pc;
	while (n < max && !(to_program && program_pc(pc))) {
		/* The row at the pc itself for the interrupted frame, at the
		 * call (before the return address) for the others. */
		uintptr_t at = n == 1 ? pc + 1 : pc;
		struct sp_cfi_row row;
		uintptr_t base, up, ret;

		if (dwfl && !dwfl_addrmodule(dwfl, at - 1)) {
			dwfl_end(dwfl); /* a module loaded since: report anew */
			dwfl = NULL;
		}
		if (!dwfl && !(dwfl = sp_cfi_session_open()))
			break;
		if (sp_cfi_learn_one(dwfl, at, &row) || (row.cfa_rbp && !fp_known))
			break;
		base = row.cfa_rbp ? fp : cfa;
		up = base + (uintptr_t)(intptr_t)row.cfa_off;
		if (up <= cfa || up - cfa > (1u << 20))
			break; /* frames go up the stack, and not far */
		if (row.rbp_saved) {
			if (read_word(up + (uintptr_t)(intptr_t)row.rbp_off, &fp))
				break;
			fp_known = 1;
		}
		if (read_word(up - 8, &ret) || ret < 4096)
			break;
		cfa = up;
		pc = ret;
		out[n++] = pc;
	}
	return n;
}
#else
unsigned sp_stack_remote(uintptr_t pc, uintptr_t sp, uintptr_t *out, unsigned max, int to_program)
{
	(void)pc, (void)sp, (void)out, (void)max, (void)to_program;
	return 0;
}
#endif
