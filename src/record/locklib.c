/*
 * locklib.c - the code of lock libraries that wait with futexes of their
 * own (Rust std, parking_lot, lock_api, Abseil, folly, TBB), and the site
 * of such a wait: the first caller outside them.
 *
 * Design.  A futex wait reaches syscall() from inside its lock library
 * (std's Mutex::lock_contended, parking_lot_core's ThreadParker), which is
 * never the line a user wants to see.  The libraries are found by symbol
 * name, once per process, at the first futex wait or wake that syncprof
 * records (sp_locklib_site_pc()): every loaded object's symbol table
 * (libdw: .symtab, else .dynsym) is scanned for function names that begin
 * with a lock library's mangled prefix (Rust legacy `_ZN3std3sys`,
 * `_ZN11parking_lot`..., Rust v0 paths that contain `_3std3sys`..., C++
 * `_ZN4absl`...), and their ranges are sorted into a table published once
 * (release store of its state; threads that wait meanwhile wait for it,
 * 200 ms at most).  A site is then the first frame of the
 * calling thread's stack (sp_backtrace(), libgcc's unwinder) that lies
 * neither in those ranges nor in syncprof's other skipped ranges (libc,
 * libstdc++, --skip: sp_pc_skipped()).
 *
 * Cost: the scan, once per process (a few ms for a large Rust program,
 * and libdw's load where the preload has not loaded it yet: see
 * base/libdw.h), run by a scanner thread of its own that the first futex
 * wait starts and waits for, before the wait is timed; an unwind per
 * recorded futex wait whose return address lies in a lock library (a few
 * microseconds, also before the wait is timed: a thread that is about to
 * sleep).  Processes that never wait on a futex through syscall() pay
 * nothing.
 *
 * Invariants: the table is written by one thread - the scanner started
 * by the thread that wins `state` (0 -> 1, CAS), or that thread itself
 * for a report - and read only after `state` is 2 (acquire); a fork child
 * keeps the parent's table (the same code is mapped).  The scanning
 * thread is marked busy (sp_thread_enter()): libdw's own lock calls and
 * mallocs pass through unrecorded.  Others that wait meanwhile wait for
 * the scan, bounded: past 200 ms their site is their return address.
 *
 * Alternatives considered: default --skip regexes at start-up would make
 * every profiled process pay a symbol scan (issue 25: start-up <= 1 ms)
 * for libraries few use; a fixed number of frames above syscall() differs
 * per library and version (std: 1, parking_lot: 4-6); naming the frames at
 * report time would need every futex wait's whole stack kept and rows
 * re-keyed after the fact.
 * Limits: libraries loaded with dlopen() after the scan are not known;
 * a stripped program has no .symtab, so Rust's statically linked std is
 * not found in it (its waits are then at std's own frames).
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/libdw.h"
#include "record/record.h"
#include "record/ranges.h"
#include "record/unwind.h"

#define LOCKLIB_MAX 4096
static struct sp_range locklib[LOCKLIB_MAX] SP_LARGE;
static unsigned locklib_n;
static int state; /* 0: not scanned, 1: scanning, 2: done */

/* Mangled prefixes of lock libraries' functions (Rust legacy, C++). */
static const char *const prefixes[] = {
	"_ZN3std3sys",        /* std::sys: futex, locks, thread parker */
	"_ZN3std4sync",       /* std::sync: Mutex, RwLock, Condvar, Once, mpmc */
	"_ZN3std6thread",     /* std::thread::park, JoinInner::join */
	"_ZN11parking_lot",   /* parking_lot (and parking_lot_core below) */
	"_ZN16parking_lot_core",
	"_ZN8lock_api",
	"_ZN4absl",           /* Abseil (inline namespace or not) */
	"_ZNK4absl",          /* its const members: Notification::WaitForNotification */
	"AbslInternal",       /* Abseil's C-linkage hooks (spin lock waits) */
	"_ZN5folly",
	"_ZNK5folly",
	"_ZN3tbb",
	"_ZNK3tbb",
	"_ZN3rml",            /* TBB's thread pool */
	"_ZNK3rml",
};
/* The same crates inside Rust v0 paths: `Cs<hash>_3std3sys`... */
static const char *const v0_parts[] = {
	"_3std3sys", "_3std4sync", "_3std6thread", "_11parking_lot", "_16parking_lot_core",
	"_8lock_api",
};

static int locklib_name(const char *s)
{
	if (s[0] != '_' && s[0] != 'A')
		return 0;
	if (s[1] == 'R') {
		for (size_t i = 0; i < sizeof(v0_parts) / sizeof(*v0_parts); i++)
			if (strstr(s, v0_parts[i]))
				return 1;
		return 0;
	}
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(s, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static void locklib_add(uintptr_t lo, uintptr_t hi)
{
	if (lo < hi && locklib_n < LOCKLIB_MAX) {
		locklib[locklib_n].lo = lo;
		locklib[locklib_n].hi = hi;
		locklib_n++;
	}
}

static int range_cmp(const void *a, const void *b)
{
	const struct sp_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

#ifdef SYNCPROF_HAVE_LIBDW
/*
 * Files never scanned: libc and libstdc++, skipped whole already (stack.c);
 * glibc's other libraries (libm, libpthread, libresolv... hold none of the
 * lock libraries below, yet with libc6-dbg installed each has a debug file,
 * which made every program linking libm load libdw at start-up: issue 25,
 * 1.9 ms of it); the loader, GCC's runtime, and ours.
 */
static int scanned_already(const char *name)
{
	static const char *const skip[] = {
		"libc.so", "libstdc++.so", "ld-linux", "libsyncprof", "libdw", "libelf",
		"libm.so", "libpthread.so", "libdl.so", "librt.so", "libresolv.so",
		"libanl.so", "libutil.so", "libmvec.so", "libnss_", "libthread_db.so",
		"libBrokenLocale.so", "libc_malloc_debug.so", "libgcc_s.so",
	};
	const char *b = name ? strrchr(name, '/') : NULL;

	b = b ? b + 1 : name;
	if (!b)
		return 0;
	for (size_t i = 0; i < sizeof(skip) / sizeof(*skip); i++)
		if (!strncmp(b, skip[i], strlen(skip[i])))
			return 1;
	return 0;
}

/*
 * A library all of whose functions with a name are a lock library's (a
 * stripped libabsl_synchronization: only its exports are named) is one
 * whole: its unnamed internal functions are the library's too, and a wait
 * that one of them makes was sited inside it (locklib_waits_absl, once in
 * a loaded CI run: 1 wait of 37).  Not the program itself, whose own
 * functions may all be unnamed in a stripped binary; and only with a few
 * functions named, so that one stray export does not take a library.
 */
#define WHOLE_MIN_FUNCS 4

static int scan_module(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base, void *arg)
{
	uintptr_t program = (uintptr_t)getauxval(AT_PHDR);
	unsigned first = locklib_n, funcs = 0, named = 0;
	Dwarf_Addr lo, hi;
	int n;

	(void)ud, (void)base, (void)arg;
	if (scanned_already(name))
		return DWARF_CB_OK;
	n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!s || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		funcs++;
		if (locklib_name(s)) {
			named++;
			locklib_add((uintptr_t)addr, (uintptr_t)(addr + sym.st_size));
		}
	}
	if (funcs >= WHOLE_MIN_FUNCS && named == funcs &&
	    dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL) && lo < hi &&
	    !(program >= lo && program < hi)) {
		locklib_n = first; /* one range for them all */
		locklib_add((uintptr_t)lo, (uintptr_t)hi);
	}
	return DWARF_CB_OK;
}

/* @count symbols @sym, their names in @names (@size bytes, the last a
 * NUL): whether one is a defined function of a lock library. */
static int syms_define_locklib(const Elf64_Sym *sym, size_t count, const char *names,
			       size_t size)
{
	for (size_t i = 1; i < count; i++)
		if (sym[i].st_shndx != SHN_UNDEF && ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC &&
		    sym[i].st_name < size && locklib_name(names + sym[i].st_name))
			return 1;
	return 0;
}

/*
 * Whether the symbol table @sh (@m: the file mapped, @size bytes; @shs its
 * section headers, @n of them) defines a function of a lock library: the
 * full scan's test (locklib_name()) on each defined function's name, its
 * first bytes only.  Issue 25: looking for the prefixes anywhere in every
 * string table cost 9 million instructions at a preloaded sysbench's
 * start-up (30 libraries, libcrypto's and GnuTLS's tables among them),
 * 39% of its whole run under callgrind.
 */
static int symtab_names_locklib(const unsigned char *m, size_t size, const Elf64_Shdr *shs,
				unsigned n, const Elf64_Shdr *sh)
{
	const Elf64_Shdr *str;
	const Elf64_Sym *sym;
	const char *names;
	size_t count;

	if (sh->sh_link >= n || sh->sh_entsize != sizeof(Elf64_Sym))
		return 0;
	str = &shs[sh->sh_link];
	if (sh->sh_offset > size || sh->sh_size > size - sh->sh_offset ||
	    str->sh_offset > size || str->sh_size > size - str->sh_offset || !str->sh_size ||
	    m[str->sh_offset + str->sh_size - 1])
		return 1; /* unusual (a name could run off the table): the full scan decides */
	sym = (const void *)(m + sh->sh_offset);
	names = (const char *)m + str->sh_offset;
	count = sh->sh_size / sizeof(*sym);
	return syms_define_locklib(sym, count, names, str->sh_size);
}

/* Notes @notes (@len bytes): -1 without a build ID, else whether its
 * separate debug file exists. */
static int debug_file_of_notes(const unsigned char *notes, size_t len)
{
	char hex[129], path[256];

	if (!sp_build_id_hex(notes, len, hex))
		return -1;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	return !access(path, F_OK);
}

/* A separate debug file for the build ID in the notes of @m (@size bytes,
 * an ELF file mapped), where libdw would find the symbols of a stripped
 * file: /usr/lib/debug/.build-id/xx/yyyy.debug. */
static int has_debug_file(const unsigned char *m, size_t size, const Elf64_Shdr *sh, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		size_t at = sh[i].sh_offset, end = at + sh[i].sh_size;
		int has;

		if (sh[i].sh_type == SHT_NOTE && end <= size && end >= at &&
		    (has = debug_file_of_notes(m + at, sh[i].sh_size)) >= 0)
			return has;
	}
	return 0;
}

/*
 * Whether the ELF file @path may hold a lock library's functions: one of
 * its symbol tables defines one, or it is stripped and has a separate
 * debug file (whose symbols libdw would read).  Unreadable or unusual
 * files may (the full scan decides).  A few system calls and the pages of
 * the symbol tables, against libdw's load and a symbol table walk: most
 * programs (C, C++ without Abseil, folly or TBB) have no lock library, and
 * their reports no longer pay the scan (issue 25: 3 ms of CPU and 80 page
 * faults per process at exit, thread_churn 8 under perf stat).
 */
static int file_may_hold_locklib(const char *path)
{
	const unsigned char *m;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	struct stat st;
	int fd, may = 1, symtab = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(*eh)) {
		close(fd);
		return 1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 1;
	eh = (const void *)m;
	if (!memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shnum &&
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= (uint64_t)st.st_size) {
		sh = (const void *)(m + eh->e_shoff);
		may = 0;
		for (unsigned i = 0; i < eh->e_shnum && !may; i++) {
			symtab |= sh[i].sh_type == SHT_SYMTAB;
			if (sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM)
				may = symtab_names_locklib(m, (size_t)st.st_size, sh, eh->e_shnum,
							   &sh[i]);
		}
		if (!may && !symtab)
			may = has_debug_file(m, (size_t)st.st_size, sh, eh->e_shnum);
	}
	munmap((void *)m, (size_t)st.st_size);
	return may;
}

/* [@lo, @hi) lies inside one loaded segment of the module @info. */
static int in_module(const struct dl_phdr_info *info, uintptr_t lo, uintptr_t hi)
{
	return sp_segment_holds(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, lo, hi);
}

/* The number of entries of a dynamic symbol table from its GNU hash
 * table @gh: one past the highest index a chain reaches. */
static size_t gnu_hash_count(const struct dl_phdr_info *info, const uint32_t *gh)
{
	const uint32_t *buckets, *chain;
	uint32_t nbuckets, symoffset, max = 0;

	if (!in_module(info, (uintptr_t)gh, (uintptr_t)(gh + 4)))
		return 0;
	nbuckets = gh[0];
	symoffset = gh[1];
	buckets = gh + 4 + (size_t)gh[2] * (sizeof(ElfW(Addr)) / 4);
	chain = buckets + nbuckets;
	if (!in_module(info, (uintptr_t)buckets, (uintptr_t)chain))
		return 0;
	for (uint32_t i = 0; i < nbuckets; i++)
		max = buckets[i] > max ? buckets[i] : max;
	if (max < symoffset)
		return symoffset;
	for (;;) {
		const uint32_t *c = chain + (max - symoffset);

		if (!in_module(info, (uintptr_t)c, (uintptr_t)(c + 1)))
			return 0;
		if (*c & 1)
			return (size_t)max + 1;
		max++;
	}
}

/*
 * Whether the module's dynamic symbol table, read where the loader mapped
 * it, defines a function of a lock library: 1 or 0; -1 when it cannot be
 * read (no dynamic section, or addresses outside the module's segments).
 * No system call, and mostly pages the loader touched already: opening,
 * mapping and reading each file cost 60-390 us a library (sysbench, 26 of
 * them: 7 ms at start-up), the pages of a second mapping of each file
 * faulting in again.
 */
static int memory_dynsym_locklib(const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t symtab = 0, strtab = 0, strsz = 0, gnu_hash = 0, hash = 0, base = info->dlpi_addr;
	size_t count = 0;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const void *)(base + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return -1;
	for (const ElfW(Dyn) *d = dyn;; d++) {
		if (!in_module(info, (uintptr_t)d, (uintptr_t)(d + 1)))
			return -1;
		if (d->d_tag == DT_NULL)
			break;
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = sp_dyn_ptr(base, d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = sp_dyn_ptr(base, d->d_un.d_ptr); break;
		case DT_STRSZ: strsz = d->d_un.d_val; break;
		case DT_GNU_HASH: gnu_hash = sp_dyn_ptr(base, d->d_un.d_ptr); break;
		case DT_HASH: hash = sp_dyn_ptr(base, d->d_un.d_ptr); break;
		default: break;
		}
	}
	if (gnu_hash)
		count = gnu_hash_count(info, (const uint32_t *)gnu_hash);
	else if (hash && in_module(info, hash, hash + 8))
		count = ((const uint32_t *)hash)[1];
	if (!symtab || !strtab || !strsz || !count ||
	    !in_module(info, symtab, symtab + count * sizeof(ElfW(Sym))) ||
	    !in_module(info, strtab, strtab + strsz) || ((const char *)strtab)[strsz - 1])
		return -1;
	return syms_define_locklib((const void *)symtab, count, (const char *)strtab, strsz);
}

/* Whether the file @path has a .symtab, from its ELF header and section
 * headers alone (read, not mapped): 1 or 0; -1 when it cannot tell. */
static int file_has_symtab(const char *path)
{
	Elf64_Shdr sh[64];
	Elf64_Ehdr eh;
	int fd, rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum) {
		for (unsigned at = 0; at < eh.e_shnum; at += 64) {
			unsigned n = eh.e_shnum - at < 64 ? eh.e_shnum - at : 64;
			size_t len = n * sizeof(Elf64_Shdr);

			if (pread(fd, sh, len, (off_t)(eh.e_shoff + at * sizeof(Elf64_Shdr))) !=
			    (ssize_t)len) {
				rc = -1;
				break;
			}
			rc = 0;
			for (unsigned i = 0; i < n && !rc; i++)
				rc = sh[i].sh_type == SHT_SYMTAB;
			if (rc)
				break;
		}
	}
	close(fd);
	return rc;
}

/* The module's separate debug file exists (by the build ID in its notes,
 * read in memory): see has_debug_file(). */
static int memory_debug_file(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t at = info->dlpi_addr + ph->p_vaddr;
		int has;

		if (ph->p_type == PT_NOTE && in_module(info, at, at + ph->p_memsz) &&
		    (has = debug_file_of_notes((const unsigned char *)at, ph->p_memsz)) >= 0)
			return has;
	}
	return 0;
}

/*
 * Whether the module may hold a lock library, as file_may_hold_locklib()
 * answers for its file, mostly without opening it: its dynamic symbol
 * table where the loader mapped it; then, when that has none, whether the
 * file has a .symtab (its headers read: then the file is looked at whole,
 * as before), else whether it has a separate debug file.
 */
static int module_look(const struct dl_phdr_info *info, const char *path)
{
	int m = memory_dynsym_locklib(info);

	if (m < 0)
		return file_may_hold_locklib(path);
	if (m)
		return 1;
	if (file_has_symtab(path))
		return file_may_hold_locklib(path); /* a .symtab, or unreadable */
	return memory_debug_file(info);
}

/*
 * The look at start-up (sp_locklib_prepare()) found no module that may hold
 * a lock library when none_at_adds is set: the loader's count of loads
 * then, plus one.  A later scan with the same count (nothing loaded since)
 * knows the answer without opening every file again: a report at exit
 * under 'syncprof run' did that look a second time (the steps in
 * docs/cost.md, "Per process").
 */
static unsigned long long none_at_adds;

static int read_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size < offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		return -1; /* an old loader: no count */
	*(unsigned long long *)arg = info->dlpi_adds + 1;
	return 1;
}

/* The loader's count of loads so far, plus one; 0 when it has none. */
static unsigned long long loads_so_far(void)
{
	unsigned long long adds = 0;

	if (dl_iterate_phdr(read_adds, &adds) != 1)
		return 0;
	return adds;
}

static int module_may_hold(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name;

	(void)size;
	if (!name || !*name)
		name = "/proc/self/exe"; /* the program */
	else if (!strchr(name, '/') || scanned_already(name))
		return 0; /* the vDSO; skipped libraries */
	/* A relative name (dlopen("./libx.so")) is opened from the current
	 * directory; when that moved, the open fails and the answer is "may". */
	if (module_look(info, name)) {
		*(int *)arg = 1;
		return 1; /* one is enough: the full scan looks at all */
	}
	return 0;
}

static void scan(void)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = sp_dw_proc_find_elf,
		.find_debuginfo = sp_dw_build_id_find_debuginfo,
	};
	unsigned long long none = sp_load_relaxed(&none_at_adds);
	Dwfl *dwfl;
	int may = 0;

	if (none && loads_so_far() == none)
		return; /* the look at start-up said no, and nothing came since */
	dl_iterate_phdr(module_may_hold, &may);
	if (!may)
		return; /* no lock library: no libdw, no symbol walk */
	if (!sp_libdw_present() || !(dwfl = dwfl_begin(&cb)))
		return;
	if (!dwfl_linux_proc_report(dwfl, getpid()) && !dwfl_report_end(dwfl, NULL, NULL))
		dwfl_getmodules(dwfl, scan_module, NULL, 0);
	dwfl_end(dwfl);
}
#else
static void scan(void)
{
}
#endif

/* The scan itself, by the thread that won `state` (0 -> 1): publishes
 * state 2 and wakes the threads that wait for it. */
static void scan_publish(void)
{
	struct sp_thread *saved = sp_thread_enter();

	scan();
	qsort(locklib, locklib_n, sizeof(*locklib), range_cmp);
	sp_store_release(&state, 2);
	/* Addresses cached as outside every wrapper before now may lie in
	 * what was found: every thread's site cache misses once (stack.c). */
	if (locklib_n)
		__atomic_add_fetch(&sp_site_gen, SP_SITE_GEN_STEP, __ATOMIC_RELEASE);
	sp_futex(&state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	sp_thread_leave(saved);
}

static void *scanner_main(void *arg)
{
	(void)arg;
	scan_publish();
	return NULL;
}

/*
 * Scan in a thread of its own, not in the waiting thread: the scan may
 * have to dlopen() libdw (base/libdw.h), and dlopen() takes ld.so's load
 * lock, which a thread inside dlopen() - in a constructor waiting for a
 * lock this thread holds - could keep for ever.  The waiter waits for the
 * scanner 200 ms at most, as for any other thread's scan.  No thread (out
 * of resources): no scan; sites stay at their return addresses.
 */
static int scanner_start(void)
{
	return sp_start_detached(scanner_main, 256 * 1024, "syncprof-scan");
}

/* Once per process; @in_place: scan in this thread (a report: it holds
 * none of the program's locks), else in a scanner thread (a futex wait). */
static void locklib_scan_once(int in_place)
{
	int expect = 0;

	if (sp_load_acquire(&state) == 2)
		return;
	if (__atomic_compare_exchange_n(&state, &expect, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		/* libdw loaded already (sp_locklib_prepare()): nothing to
		 * dlopen, so the waiting thread scans itself, at once. */
		if (in_place || sp_libdw_loaded()) {
			scan_publish();
			return;
		}
		if (scanner_start()) {
			sp_store_release(&state, 2); /* no ranges: return addresses */
			sp_futex(&state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
			return;
		}
	}
	/* The scan runs elsewhere: wait for it, 200 ms at most (it waits for
	 * nothing of ours; a bound all the same, so that a scan stuck behind a
	 * lock this thread holds cannot stop it). */
	for (int i = 0; i < 20 && sp_load_acquire(&state) == 1; i++) {
		const struct timespec step = { 0, 10 * 1000 * 1000 };

		sp_futex(&state, FUTEX_WAIT_PRIVATE, 1, &step);
	}
}

void sp_locklib_scan(void)
{
	locklib_scan_once(1);
}

/*
 * At start-up (from a constructor, where dlopen() is safe): when a module
 * loaded now may hold a lock library (the string-table look above), load
 * libdw now, so that the first futex wait scans in its own thread at once
 * instead of starting a scanner thread and waiting for it to be scheduled
 * (on a loaded machine that wait is the scheduler's: a Rust program's
 * first wait lost 74 ms of its measured time to it in CI's
 * locklib_waits_std).  A program without one pays the look (each
 * module's dynamic symbol table read in memory, and its section headers
 * read from its file: module_look()) and no libdw; a library with one
 * dlopen()ed later is still found by the scan, through the scanner
 * thread (none_at_adds).
 */
void sp_locklib_prepare(void)
{
#ifdef SYNCPROF_HAVE_LIBDW
	unsigned long long adds;
	int may = 0;

	if (sp_load_acquire(&state) != 0 || sp_libdw_loaded())
		return;
	adds = loads_so_far();
	dl_iterate_phdr(module_may_hold, &may);
	if (may)
		sp_libdw_load();
	else
		sp_store_relaxed(&none_at_adds, adds);
#endif
}

int sp_pc_in_locklib(uintptr_t pc)
{
	return sp_load_acquire(&state) == 2 && sp_range_has(locklib, locklib_n, pc);
}

static int skipped(uintptr_t pc)
{
	return sp_pc_in_locklib(pc) || sp_pc_skipped(pc);
}

SP_NOINLINE uintptr_t sp_locklib_site_pc(uintptr_t ret)
{
	uintptr_t frames[64];
	struct sp_thread *saved;
	int n, i;

	locklib_scan_once(0);
	if (!skipped(ret))
		return ret;
	saved = sp_thread_enter();
	n = sp_backtrace(frames, 64);
	sp_thread_leave(saved);
	for (i = 0; i < n && frames[i] != ret; i++)
		;
	while (++i < n)
		if (!skipped(frames[i]))
			return frames[i];
	return ret;
}

