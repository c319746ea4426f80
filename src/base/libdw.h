/*
 * libdw.h - elfutils' libdw, loaded when first needed.  Private to its
 * users: src/report/symbolize.c (names of code addresses), src/record/
 * stack.c (skip=REGEX, learned CFI) and src/record/locklib.c (lock
 * libraries' functions); src/base/libdw.c loads it.
 *
 * Why not a DT_NEEDED: loading libdw and what it needs (libelf, libz,
 * liblzma, libbz2) costs every profiled process about 1 ms of CPU and 50
 * page faults at start-up (issue 25, part 1: measured with perf stat on
 * /bin/true, the preload library linked with and without them), and most
 * processes never call it: under 'syncprof run' the processes hand their
 * profiles to run, which names them.  So the preload library and
 * libsyncprof.so do not link libdw; sp_libdw_load() dlopen()s libdw.so.1
 * the first time a caller needs it, from a context where that is safe
 * (never inside a lock call of libc's own: see locklib.c), and fills
 * `sp_dw`, a table of its functions.  Every libdw function the callers
 * use is renamed below to its entry in that table, so their code reads
 * as plain libdw.
 *
 * Where the program links libdw itself (the CLI, a program linked with
 * libsyncprof.a and -ldw), the weak references below are bound at load
 * and the table takes them, with no dlopen().  A static program (no
 * libc.so.6 to load a library next to) never dlopen()s: without -ldw it
 * has no libdw, and callers fall back as before (dladdr() names, skip
 * regexes ignored with a warning).
 *
 * A call to a libdw function that is not listed here is a strong
 * reference, which neither the static link of tests/install_test.sh nor
 * the preload (not linked with libdw) would resolve: add it to the list.
 */
#ifndef SP_BASE_LIBDW_H
#define SP_BASE_LIBDW_H

#ifdef SYNCPROF_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

/* Every libdw function syncprof calls, once. */
#define SP_LIBDW_FUNCTIONS(X)                                                        \
	X(dwarf_attr) X(dwarf_attr_integrate) X(dwarf_cfi_addrframe) X(dwarf_child)      \
	X(dwarf_diename) X(dwarf_filesrc) X(dwarf_formref_die) X(dwarf_formstring)       \
	X(dwarf_formudata) X(dwarf_frame_cfa) X(dwarf_frame_info) X(dwarf_frame_register) \
	X(dwarf_getscopes) X(dwarf_getscopes_die) X(dwarf_getsrcfiles) X(dwarf_hasattr)  \
	X(dwarf_haspc) X(dwarf_siblingof) X(dwarf_srclang) X(dwarf_tag)                  \
	X(dwfl_addrmodule) X(dwfl_begin) X(dwfl_build_id_find_debuginfo) X(dwfl_end)     \
	X(dwfl_getmodules) X(dwfl_lineinfo) X(dwfl_linux_proc_find_elf)                  \
	X(dwfl_linux_proc_report) X(dwfl_module_addrdie) X(dwfl_module_addrinfo)         \
	X(dwfl_module_addrname) X(dwfl_module_dwarf_cfi) X(dwfl_module_eh_cfi)           \
	X(dwfl_module_getsrc) X(dwfl_module_getsym_info) X(dwfl_module_getsymtab)        \
	X(dwfl_module_info) X(dwfl_report_elf) X(dwfl_report_end)                        \
	X(dwfl_standard_find_debuginfo)

struct sp_libdw {
#define SP_LIBDW_SLOT(f) __typeof__(f) *f;
	SP_LIBDW_FUNCTIONS(SP_LIBDW_SLOT)
#undef SP_LIBDW_SLOT
};
extern struct sp_libdw sp_dw;

/*
 * sp_libdw_load() - 1 when libdw's functions are in `sp_dw` (loaded now
 * or before), 0 when there is no libdw: a static program without -ldw,
 * or libdw.so.1 not installed (said once on stderr).  Thread-safe; the
 * first call may dlopen(), so it is never called from inside a lock call
 * of libc's own or a signal handler.  Later calls are one load.
 */
int sp_libdw_load(void);

/*
 * libdw's two callbacks for Dwfl_Callbacks, as functions of ours: a
 * static const initializer needs a constant address, which an entry of
 * the table is not.  Call only once sp_libdw_load() said 1.
 */
int sp_dw_proc_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name,
			Dwarf_Addr base, char **file_name, Elf **elfp);
int sp_dw_build_id_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name,
				  const char *debuglink_file, GElf_Word debuglink_crc,
				  char **debuginfo_file_name);

/* 1 when libdw is loaded already; never loads it. */
int sp_libdw_loaded(void);

/* The old name of the check: callers ask for libdw where they need it. */
static inline int sp_libdw_present(void)
{
	return sp_libdw_load();
}

#ifndef SP_LIBDW_LOADER
#define dwarf_attr (sp_dw.dwarf_attr)
#define dwarf_attr_integrate (sp_dw.dwarf_attr_integrate)
#define dwarf_cfi_addrframe (sp_dw.dwarf_cfi_addrframe)
#define dwarf_child (sp_dw.dwarf_child)
#define dwarf_diename (sp_dw.dwarf_diename)
#define dwarf_filesrc (sp_dw.dwarf_filesrc)
#define dwarf_formref_die (sp_dw.dwarf_formref_die)
#define dwarf_formstring (sp_dw.dwarf_formstring)
#define dwarf_formudata (sp_dw.dwarf_formudata)
#define dwarf_frame_cfa (sp_dw.dwarf_frame_cfa)
#define dwarf_frame_info (sp_dw.dwarf_frame_info)
#define dwarf_frame_register (sp_dw.dwarf_frame_register)
#define dwarf_getscopes (sp_dw.dwarf_getscopes)
#define dwarf_getscopes_die (sp_dw.dwarf_getscopes_die)
#define dwarf_getsrcfiles (sp_dw.dwarf_getsrcfiles)
#define dwarf_hasattr (sp_dw.dwarf_hasattr)
#define dwarf_haspc (sp_dw.dwarf_haspc)
#define dwarf_siblingof (sp_dw.dwarf_siblingof)
#define dwarf_srclang (sp_dw.dwarf_srclang)
#define dwarf_tag (sp_dw.dwarf_tag)
#define dwfl_addrmodule (sp_dw.dwfl_addrmodule)
#define dwfl_begin (sp_dw.dwfl_begin)
#define dwfl_build_id_find_debuginfo (sp_dw.dwfl_build_id_find_debuginfo)
#define dwfl_end (sp_dw.dwfl_end)
#define dwfl_getmodules (sp_dw.dwfl_getmodules)
#define dwfl_lineinfo (sp_dw.dwfl_lineinfo)
#define dwfl_linux_proc_find_elf (sp_dw.dwfl_linux_proc_find_elf)
#define dwfl_linux_proc_report (sp_dw.dwfl_linux_proc_report)
#define dwfl_module_addrdie (sp_dw.dwfl_module_addrdie)
#define dwfl_module_addrinfo (sp_dw.dwfl_module_addrinfo)
#define dwfl_module_addrname (sp_dw.dwfl_module_addrname)
#define dwfl_module_dwarf_cfi (sp_dw.dwfl_module_dwarf_cfi)
#define dwfl_module_eh_cfi (sp_dw.dwfl_module_eh_cfi)
#define dwfl_module_getsrc (sp_dw.dwfl_module_getsrc)
#define dwfl_module_getsym_info (sp_dw.dwfl_module_getsym_info)
#define dwfl_module_getsymtab (sp_dw.dwfl_module_getsymtab)
#define dwfl_module_info (sp_dw.dwfl_module_info)
#define dwfl_report_elf (sp_dw.dwfl_report_elf)
#define dwfl_report_end (sp_dw.dwfl_report_end)
#define dwfl_standard_find_debuginfo (sp_dw.dwfl_standard_find_debuginfo)
#endif
#endif

/*
 * fork(): a load in progress in another thread would never end in the
 * child, which would wait for it for ever (preload_fork_jemalloc hung in
 * CI: its child spun in sp_libdw_load() while the parent's hold ticker had
 * been loading libdw).  The prepare handler holds new loads off until the
 * parent's or the child's handler, and waits for one under way to end (1 s
 * at most: the loading thread may need a lock that another atfork handler
 * took already); a child that still sees one in progress goes without
 * libdw (dladdr() names), rather than dlopen() again over the loader's
 * half-made lists.
 *
 * Declared whether or not libdw's headers were found: callers (lifecycle.c)
 * are compiled without them; libdw.c defines both either way.
 */
void sp_libdw_fork_prepare(void);
void sp_libdw_fork_parent(void);
void sp_libdw_fork_child(void);

#endif /* SP_BASE_LIBDW_H */
