/*
 * libdw.c - loads elfutils' libdw when a caller first needs it
 * (sp_libdw_load(), libdw.h says why it is not linked in).
 *
 * Design: the table `sp_dw` is filled once, under a once-flag: from the
 * weak references when the program linked libdw itself (all bound at
 * load: no dlopen), else from dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL)
 * and dlsym() of each function.  RTLD_LOCAL keeps libdw's symbols out of
 * the program's lookup scope, as a DT_NEEDED of the preload library put
 * them before (a program with a libdw of its own is not disturbed).  The
 * handle is never closed: names and sessions outlive the call.
 *
 * Invariants: `sp_dw` is complete or unused - `loaded` is published with
 * a release store after every slot is written, and a missing function
 * (an older libdw) leaves it unpublished; state 2 (failed) is final, so
 * a process without libdw tries once and says so once.
 *
 * A static program (libsyncprof.a): libc.so.6 is not loaded, so there is
 * nothing for dlopen() to load next to; it has libdw only when it linked
 * -ldw (the weak references).
 *
 * Alternatives considered: weak references resolved by a later dlopen
 * with RTLD_GLOBAL (GOT entries bound at load stay NULL; only lazy PLT
 * calls would see it, and the preload is linked -z now by Debian's
 * defaults); a second shared object holding the report code, dlopen()ed
 * at exit (the report layers call into the runtime's hidden symbols: it
 * would need an exported internal API).
 */
#define SP_LIBDW_LOADER
#include "base/libdw.h"

#ifdef SYNCPROF_HAVE_LIBDW
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>

#include "base/base.h"

#define SP_LIBDW_WEAK(f) _Pragma(SP_STRINGIFY(weak f))
#define SP_STRINGIFY(x) #x
SP_LIBDW_FUNCTIONS(SP_LIBDW_WEAK)

struct sp_libdw sp_dw;
static int state; /* 0 not tried, 1 loading, 2 failed, 3 loaded */

static int from_weak(void)
{
#define SP_LIBDW_TAKE(f) sp_dw.f = f;
	SP_LIBDW_FUNCTIONS(SP_LIBDW_TAKE)
#undef SP_LIBDW_TAKE
#define SP_LIBDW_CHECK(f) && sp_dw.f
	return 1 SP_LIBDW_FUNCTIONS(SP_LIBDW_CHECK);
#undef SP_LIBDW_CHECK
}

static int from_dlopen(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *h;

	if (!libc)
		return 0; /* a static program */
	dlclose(libc); /* NOLOAD took a reference */
	h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "syncprof: libdw.so.1 (Debian: libdw1) cannot be loaded (%s): call "
				"sites are named by dladdr() only\n",
			dlerror());
		return 0;
	}
#define SP_LIBDW_SYM(f) *(void **)&sp_dw.f = dlsym(h, #f);
	SP_LIBDW_FUNCTIONS(SP_LIBDW_SYM)
#undef SP_LIBDW_SYM
#define SP_LIBDW_CHECK(f) && sp_dw.f
	if (1 SP_LIBDW_FUNCTIONS(SP_LIBDW_CHECK))
		return 1;
#undef SP_LIBDW_CHECK
	fputs("syncprof: the libdw.so.1 installed lacks functions syncprof needs: call sites are "
	      "named by dladdr() only\n",
	      stderr);
	return 0; /* the handle stays: it is loaded, only unused */
}

int sp_dw_proc_find_elf(Dwfl_Module *mod, void **userdata, const char *module_name,
			Dwarf_Addr base, char **file_name, Elf **elfp)
{
	return sp_dw.dwfl_linux_proc_find_elf(mod, userdata, module_name, base, file_name, elfp);
}

int sp_dw_build_id_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name,
				  const char *debuglink_file, GElf_Word debuglink_crc,
				  char **debuginfo_file_name)
{
	return sp_dw.dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
						  debuglink_file, debuglink_crc,
						  debuginfo_file_name);
}

int sp_libdw_loaded(void)
{
	return sp_load_acquire(&state) == 3;
}

int sp_libdw_load(void)
{
	int s = sp_load_acquire(&state), expect = 0;

	if (SP_LIKELY(s >= 2))
		return s == 3;
	if (!__atomic_compare_exchange_n(&state, &expect, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* another thread loads: wait for it (dlopen ends) */
		while ((s = sp_load_acquire(&state)) == 1)
			sched_yield();
		return s == 3;
	}
	s = from_weak() || from_dlopen() ? 3 : 2;
	sp_store_release(&state, s);
	return s == 3;
}
#endif
