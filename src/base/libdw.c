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
#include <time.h>

#include "base/base.h"

#define SP_LIBDW_WEAK(f) _Pragma(SP_STRINGIFY(weak f))
#define SP_STRINGIFY(x) #x
SP_LIBDW_FUNCTIONS(SP_LIBDW_WEAK)

struct sp_libdw sp_dw;
static int state; /* 0 not tried, 1 loading, 2 failed, 3 loaded, 4 fork() under way */

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

/* fork() (libdw.h): no load starts between the prepare and the parent's
 * or child's handler (state 4), and one under way is waited for. */
void sp_libdw_fork_prepare(void)
{
	const struct timespec ms = { 0, 1000 * 1000 };

	for (int i = 0; i < 1000; i++) {
		int expect = 0;

		if (__atomic_compare_exchange_n(&state, &expect, 4, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) || expect != 1)
			return; /* held off (4), or settled (2, 3) */
		nanosleep(&ms, NULL);
	}
}

void sp_libdw_fork_parent(void)
{
	int expect = 4;

	__atomic_compare_exchange_n(&state, &expect, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void sp_libdw_fork_child(void)
{
	int s = sp_load_acquire(&state);

	if (s == 4)
		sp_store_release(&state, 0);
	else if (s == 1)
		sp_store_release(&state, 2); /* its loader is not in this process */
}

int sp_libdw_load(void)
{
	int s = sp_load_acquire(&state), expect = 0;

	if (SP_LIKELY(s == 3 || s == 2))
		return s == 3;
	if (!__atomic_compare_exchange_n(&state, &expect, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* another thread loads, or fork() holds loads off: wait */
		while ((s = sp_load_acquire(&state)) == 1 || s == 4)
			sched_yield();
		if (s == 0)
			return sp_libdw_load(); /* fork() is done: try again */
		return s == 3;
	}
	s = from_weak() || from_dlopen() ? 3 : 2;
	sp_store_release(&state, s);
	return s == 3;
}
#else
void sp_libdw_fork_prepare(void)
{
}

void sp_libdw_fork_parent(void)
{
}

void sp_libdw_fork_child(void)
{
}
#endif
